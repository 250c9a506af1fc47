-- awhile and acond over several arrays (issue 46): a loop's state as a list of arrays of
-- any types and ranks, against plain Lua loops, on every backend; one loop however many
-- of its arrays are used; acond over lists; the misuse messages.
local H = require "helper"
local lacc = H.lacc
-- the integer extremes (LuaJIT has no math.maxinteger: there the largest integers a
-- number holds exactly)
local IMAX, IMIN = math.maxinteger or 2 ^ 53, math.mininteger or -2 ^ 53

-- Game of Life on an n x m torus, plain Lua: the reference.
local function life_ref(g, steps)
  local n, m = #g, #g[1]
  for _ = 1, steps do
    local nx = {}
    for i = 1, n do
      nx[i] = {}
      for j = 1, m do
        local s = 0
        for di = -1, 1 do
          for dj = -1, 1 do
            if di ~= 0 or dj ~= 0 then
              s = s + g[(i - 1 + di + n) % n + 1][(j - 1 + dj + m) % m + 1]
            end
          end
        end
        nx[i][j] = (s == 3 or (g[i][j] == 1 and s == 2)) and 1 or 0
      end
    end
    g = nx
  end
  return g
end

-- One step of the same on a lacc array of i32 (1 alive, 0 dead).
local function life_step(g)
  local sh = lacc.shape(g)
  return lacc.generate(sh, function(i, j)
    local n, m = sh[1], sh[2]
    local s = lacc.constant(0, "i32")
    for di = -1, 1 do
      for dj = -1, 1 do
        if di ~= 0 or dj ~= 0 then
          s = s + g:at(lacc.imod(i - 1 + di + n, n) + 1, lacc.imod(j - 1 + dj + m, m) + 1)
        end
      end
    end
    local alive = lacc.eq(g:at(i, j), 1)
    return lacc.cast(lacc.lor(lacc.eq(s, 3), lacc.land(alive, lacc.eq(s, 2))), "i32")
  end)
end

local function grid(n, m)
  local g = {}
  for i = 1, n do
    g[i] = {}
    for j = 1, m do g[i][j] = (i * 7 + j * 13 + i * j) % 5 < 2 and 1 or 0 end
  end
  return g
end

local function plus1(v) return v + 1 end

for _, b in ipairs(H.backends) do
  describe("awhile over several arrays on " .. b, function()
    local opts = { backend = b }

    it("Game of Life with a step counter (i32 rank 2, i64 rank 0), odd sizes", function()
      for _, nm in ipairs { { 7, 9 }, { 1, 5 }, { 12, 3 } } do
        local g0 = grid(nm[1], nm[2])
        local steps = 5
        local g, k = lacc.awhile(
          function(_, k) return lacc.lt(lacc.the(k), steps) end,
          function(g, k) return life_step(g), lacc.map(plus1, k) end,
          { lacc.fromtable(g0, "i32"), lacc.unit(lacc.constant(0, "i64")) })
        assert.are.same(life_ref(g0, steps), lacc.run(g, opts):totable())
        assert.are.same(steps, lacc.run(k, opts):totable())
      end
    end)

    it("arrays of different types and ranks whose shapes change; the condition reads two", function()
      -- halve xs by pairwise sums, adding each round's first element to a total and counting
      -- rounds, until one element is left or the total passes a bound
      local function ref(xs, bound)
        local total, rounds = 0, 0
        while #xs > 1 and total <= bound do
          total = total + xs[1]
          local h = {}
          for i = 1, #xs, 2 do h[#h + 1] = xs[i] + (xs[i + 1] or 0) end
          xs, rounds = h, rounds + 1
        end
        return xs, total, rounds
      end
      for _, case in ipairs { { { 3, 1, 4, 1, 5, 9, 2 }, 1e9 }, { { 3, 1, 4, 1, 5, 9, 2, 6, 5 }, 10 },
                              { { 2.5 }, 0 }, { { -1.5, 0.25, 8, 3 }, -100 } } do
        local xs, bound = case[1], case[2]
        local a, t, r = lacc.awhile(
          function(a, t) return lacc.land(lacc.gt(lacc.size(a), 1), lacc.le(lacc.the(t), bound)) end,
          function(a, t, r)
            local n = lacc.size(a)
            local h = lacc.generate({ lacc.idiv(n + 1, 2) }, function(i)
              return lacc.cond(lacc.le(2 * i, n), a[2 * i - 1] + a[2 * i], a[2 * i - 1])
            end)
            return h, lacc.unit(lacc.the(t) + a[1]), lacc.map(plus1, r)
          end,
          { lacc.fromtable(xs, "f64"), lacc.unit(lacc.constant(0, "f64")),
            lacc.unit(lacc.constant(0, "i32")) })
        local wx, wt, wr = ref(xs, bound)
        assert.are.same(wx, lacc.run(a, opts):totable())
        assert.are.same(wt, lacc.run(t, opts):totable())
        assert.are.same(wr, lacc.run(r, opts):totable())
      end
    end)

    it("runs the body zero times when the condition is false at once: the arrays as given", function()
      local nan = 0 / 0
      local xs = lacc.fromtable({ nan, 1.5, -0.0 }, "f32")
      local ks = lacc.fromtable({ IMAX, IMIN }, "i64")
      local e = lacc.fromtable({}, "i32")
      local a, k, z = lacc.awhile(function() return lacc.constant(false) end,
        function(a, k, z)
          return a, lacc.map(function(v) return lacc.idiv(v, v - v) end, k), z
        end, { xs, ks, e })
      local got = lacc.run(a, opts):totable()
      assert.is_true(got[1] ~= got[1])
      assert.are.same({ 1.5, -0.0 }, { got[2], got[3] })
      assert.are.same({ IMAX, IMIN }, lacc.run(k, opts):totable())
      assert.are.same({}, lacc.run(z, opts):totable())
    end)

    it("one loop however many of its arrays a program uses (explain shows one awhile)", function()
      local a = lacc.fromtable({ 1, 2, 3, 4 }, "f32")
      local x, k = lacc.awhile(function(_, k) return lacc.lt(lacc.the(k), 3) end,
        function(x, k) return lacc.map(function(v) return v * 2 end, x), lacc.map(plus1, k) end,
        { a, lacc.unit(lacc.constant(0, "i32")) })
      local y = lacc.zipWith(function(p, q) return p + lacc.cast(q, "f32") end, x,
        lacc.replicate({ 4 }, k))
      assert.are.same({ 11, 19, 27, 35 }, lacc.run(y, opts):totable())
      local text = lacc.explain(y, opts)
      local _, loops = text:gsub("\nawhile: ", "")
      assert.are.equal(1, loops)
      assert.truthy(text:find("awhile[2 of 2]", 1, true))
    end)

    it("only one array of the loop used: the loop still runs whole", function()
      local x, k = lacc.awhile(function(x) return lacc.lt(lacc.the(lacc.sum(x)), 100) end,
        function(x, k) return lacc.map(function(v) return v * 3 end, x), lacc.map(plus1, k) end,
        { lacc.fromtable({ 1, 2 }, "i64"), lacc.unit(lacc.constant(0, "u8")) })
      -- 3, 9, 27, 81, 243: four rounds
      assert.are.same(4, lacc.run(k, opts):totable())
      assert.are.same({ 81, 162 }, lacc.run(x, opts):totable())
    end)

    it("in a compiled program: both arrays its results, run twice on other inputs", function()
      local f = lacc.compile(function(g0)
        return lacc.awhile(function(_, k) return lacc.lt(lacc.the(k), 3) end,
          function(g, k) return life_step(g), lacc.map(plus1, k) end,
          { g0, lacc.unit(lacc.constant(0, "i64")) })
      end, opts)
      for _, nm in ipairs { { 6, 6 }, { 5, 8 } } do
        local g0 = grid(nm[1], nm[2])
        local g, k = f(lacc.fromtable(g0, "i32"))
        assert.are.same(life_ref(g0, 3), g:totable())
        assert.are.same(3, k:totable())
      end
    end)

    it("a body may return one list of arrays; arrays read from outside are computed once", function()
      local step = lacc.map(function(v) return v * 10 end, lacc.fromtable({ 2 }, "i32"))
      local x, n = lacc.awhile(function(_, n) return lacc.lt(lacc.the(n), 4) end,
        function(x, n) return { lacc.map(function(v) return v + step[1] end, x), lacc.map(plus1, n) } end,
        { lacc.fromtable({ 1, 2, 3 }, "i32"), lacc.unit(lacc.constant(0, "i16")) })
      assert.are.same({ 81, 82, 83 }, lacc.run(x, opts):totable())
      assert.are.same(4, lacc.run(n, opts):totable())
    end)

    it("loops of several arrays nest", function()
      -- outer: 3 rounds; inner: doubles xs until its sum reaches 50, counting doublings
      local xs, outer, inner = lacc.awhile(function(_, o) return lacc.lt(lacc.the(o), 3) end,
        function(xs, o, c)
          local ys, c2 = lacc.awhile(function(ys) return lacc.lt(lacc.the(lacc.sum(ys)), 50) end,
            function(ys, d) return lacc.map(function(v) return v * 2 end, ys), lacc.map(plus1, d) end,
            { xs, c })
          return lacc.map(function(v) return v - 20 end, ys), lacc.map(plus1, o), c2
        end,
        { lacc.fromtable({ 1, 2 }, "i64"), lacc.unit(lacc.constant(0, "i32")),
          lacc.unit(lacc.constant(0, "i64")) })
      local v, c = { 1, 2 }, 0
      for _ = 1, 3 do
        while v[1] + v[2] < 50 do v, c = { v[1] * 2, v[2] * 2 }, c + 1 end
        v = { v[1] - 20, v[2] - 20 }
      end
      assert.are.same(v, lacc.run(xs, opts):totable())
      assert.are.same(3, lacc.run(outer, opts):totable())
      assert.are.same(c, lacc.run(inner, opts):totable())
    end)

    it("a loop of 12 arrays (past the 16 arguments of other nodes), each its own type", function()
      local types_ = { "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64", "i32", "f64" }
      local init, want = {}, {}
      for i, t in ipairs(types_) do
        init[i] = lacc.fromtable({ i, 2 * i }, t)
        want[i] = { i, 2 * i }
      end
      -- each turn adds the array's position to each element, 5 turns (counted by array 11)
      for _ = 1, 5 do
        for i = 1, #types_ do
          for j = 1, 2 do want[i][j] = want[i][j] + i end
        end
      end
      local r = { lacc.awhile(function(...) return lacc.lt(lacc.the(lacc.sum((select(11, ...)))), 33 + 5 * 22) end,
        function(...)
          local xs = { ... }
          for i = 1, #xs do xs[i] = lacc.map(function(v) return v + i end, xs[i]) end
          return xs
        end, init) }
      assert.are.equal(12, #r)
      local got = { lacc.run(r, opts) }
      for i = 1, #types_ do
        assert.are.same(want[i], { H.num(got[i]:at_linear(0)), H.num(got[i]:at_linear(1)) })
      end
    end)

    it("a list of one array is that array's loop", function()
      local x = lacc.awhile(function(x) return lacc.lt(lacc.the(lacc.sum(x)), 20) end,
        function(x) return lacc.map(plus1, x) end, { lacc.fromtable({ 1, 2 }, "i32") })
      assert.are.same({ 10, 11 }, lacc.run(x, opts):totable())   -- sums 3, 5, .. 19, 21
    end)

    it("acond over lists of arrays: each array from the branch taken", function()
      local a1, a2 = lacc.fromtable({ 1, 2, 3 }, "i32"), lacc.unit(lacc.constant(1.5, "f64"))
      local b1, b2 = lacc.fromtable({ 9 }, "i32"), lacc.unit(lacc.constant(-2, "f64"))
      for _, flag in ipairs { 0, 1 } do
        local f = lacc.fromtable({ flag }, "i32")
        local x, y = lacc.acond(lacc.eq(f[1], 1), { a1, a2 }, { b1, b2 })
        assert.are.same(flag == 1 and { 1, 2, 3 } or { 9 }, lacc.run(x, opts):totable())
        assert.are.same(flag == 1 and 1.5 or -2, lacc.run(y, opts):totable())
      end
      local x, y = lacc.acond(false, { a1, a2 }, { b1, b2 })
      assert.are.same({ 9 }, lacc.run(x, opts):totable())
      assert.are.same(-2, lacc.run(y, opts):totable())
    end)
  end)
end

describe("awhile and acond over several arrays: misuse", function()
  local xs, k = lacc.fromtable({ 1, 2 }, "i32"), lacc.unit(lacc.constant(0, "i64"))
  local function cond() return lacc.constant(false) end

  it("an empty list", function()
    local ok, err = pcall(lacc.awhile, cond, function() end, {})
    assert.is_false(ok)
    assert.truthy(err:find("awhile: expected an array or a list of arrays to start from, got an empty list", 1, true))
  end)

  it("a body returning fewer arrays than the loop has", function()
    local ok, err = pcall(lacc.awhile, cond, function(x) return x end, { xs, k })
    assert.is_false(ok)
    assert.truthy(err:find("awhile: the body must return as many arrays as the loop has (2), got 1", 1, true))
  end)

  it("a body changing an array's type or rank", function()
    local ok, err = pcall(lacc.awhile, cond,
      function(x, n) return x, lacc.map(function(v) return lacc.cast(v, "f32") end, n) end, { xs, k })
    assert.is_false(ok)
    assert.truthy(err:find("awhile: the body's array 2 must keep the type and rank of the loop's " ..
                           "(i64, rank 0), got f32, rank 0", 1, true))
  end)

  it("a condition of rank 1", function()
    local ok, err = pcall(lacc.awhile, function(x) return lacc.map(function(v) return lacc.gt(v, 0) end, x) end,
      function(x, n) return x, n end, { xs, k })
    assert.is_false(ok)
    assert.truthy(err:find("the condition must give an array of rank 0", 1, true))
  end)

  it("acond over lists of different lengths", function()
    local ok, err = pcall(lacc.acond, true, { xs, k }, { xs })
    assert.is_false(ok)
    assert.truthy(err:find("acond: expected two arrays or two lists of as many arrays, got a list of 2 and a list of 1", 1, true))
  end)
end)
