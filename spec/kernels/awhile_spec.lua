-- awhile (issue 5): a loop of array programs, against plain Lua loops, on every backend:
-- shapes that change, captured arrays, nesting, layouts, compile, errors.
local H = require "helper"
local lacc = H.lacc

local function twice(v) return v * 2 end

-- plain Lua references
local function collatz_steps(n)
  local c = 0
  while n ~= 1 do
    n = n % 2 == 0 and math.floor(n / 2) or 3 * n + 1
    c = c + 1
  end
  return c
end

for _, b in ipairs(H.backends) do
  describe("awhile on " .. b, function()
    local opts = { backend = b }

    it("repeats the body while the condition holds", function()
      local xs = lacc.fromtable({ 1, 2, 3, 4, 5 }, "i32")
      local p = lacc.awhile(function(a) return lacc.lt(lacc.the(lacc.sum(a)), 1000) end,
                            function(a) return lacc.map(twice, a) end, xs)
      local want, sum = { 1, 2, 3, 4, 5 }, 15
      while sum < 1000 do
        for i = 1, #want do want[i] = want[i] * 2 end
        sum = sum * 2
      end
      assert.are.same(want, lacc.run(p, opts):totable())
    end)

    it("runs the body zero times when the condition is false at once", function()
      local xs = lacc.fromtable({ 7, 8 }, "i64")
      local p = lacc.awhile(function() return lacc.constant(false) end,
                            function(a) return lacc.map(function(v) return lacc.idiv(v, v - v) end, a) end, xs)
      assert.are.same({ 7, 8 }, lacc.run(p, opts):totable())
    end)

    it("reads arrays from outside the loop (computed once) and scalars of them", function()
      local ys = lacc.fromtable({ 27, 1, 6, 97, 871 }, "i64")
      local three = lacc.fromtable({ 3 }, "i64")
      local one = lacc.map(function(v) return v - 2 end, three)   -- computed outside
      local init = lacc.map(function(v) return lacc.tuple(v, lacc.constant(0, "i64")) end, ys)
      local p = lacc.awhile(
        function(a) return lacc.any(function(t) return lacc.ne(t[1], one[1]) end, a) end,
        function(a)
          return lacc.map(function(t)
            local n, c = t[1], t[2]
            local nxt = lacc.cond(lacc.eq(n % 2, 0), lacc.idiv(n, 2), n * three[1] + one[1])
            return lacc.cond(lacc.eq(n, 1), lacc.tuple(n, c), lacc.tuple(nxt, c + 1))
          end, a)
        end, init)
      local got = lacc.run(p, opts):totable()
      for i, n in ipairs { 27, 1, 6, 97, 871 } do
        assert.are.same({ 1, collatz_steps(n) }, got[i])
      end
    end)

    it("lets the body change the shape (pairwise sums down to one element)", function()
      for _, n in ipairs { 1, 2, 7, 64, 1000 } do
        local t = {}
        for i = 1, n do t[i] = (i * 37) % 101 - 50 end
        local xs = lacc.fromtable(t, "i64")
        local p = lacc.awhile(
          function(a) return lacc.gt(lacc.size(a), 1) end,
          function(a)
            local m = lacc.size(a)
            local h = lacc.idiv(m + 1, 2)
            return lacc.generate({ h }, function(i)
              local j = 2 * i
              return lacc.cond(lacc.le(j, m), a[j - 1] + a[j], a[j - 1])
            end)
          end, xs)
        local want = 0
        for i = 1, n do want = want + t[i] end
        local r = lacc.run(p, opts)
        assert.are.same({ 1 }, r:shape())
        assert.are.equal(want, r:get(1))
      end
    end)

    it("keeps an empty array and a rank-0 array as they are shaped", function()
      local e = lacc.array("f32", { 0 })
      local n = 0
      local p = lacc.awhile(function(a) return lacc.lt(lacc.size(a), 3) end,
                            function(a) return lacc.fill({ lacc.size(a) + 1 }, lacc.constant(1.5, "f32")) end, e)
      local r = lacc.run(p, opts)
      assert.are.same({ 1.5, 1.5, 1.5 }, r:totable())
      -- Newton's method for sqrt(2) on a rank-0 array, against the same iteration in Lua
      local x0 = lacc.unit(lacc.constant(1, "f64"))
      local q = lacc.awhile(
        function(a) return lacc.gt(lacc.abs(lacc.the(a) * lacc.the(a) - 2), 1e-12) end,
        function(a) return lacc.map(function(v) return (v + 2 / v) / 2 end, a) end, x0)
      local want = 1
      while math.abs(want * want - 2) > 1e-12 do want = (want + 2 / want) / 2; n = n + 1 end
      assert.are.equal(want, lacc.run(q, opts):get())
      assert.is_true(n > 2)
    end)

    it("passes the loop's array through unchanged, or an array from outside", function()
      local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
      local ys = lacc.fromtable({ 9, 9 }, "i32")
      -- body returns an outside array: one iteration, then the condition sees ys
      local p = lacc.awhile(function(a) return lacc.eq(lacc.size(a), 3) end,
                            function() return ys end, xs)
      assert.are.same({ 9, 9 }, lacc.run(p, opts):totable())
      -- body returns its argument: the condition must end the loop itself
      local count = lacc.fromtable({ 0 }, "i32")
      local q = lacc.awhile(function(a) return lacc.lt(a[1], 5) end,
                            function(a) return lacc.map(function(v) return v + 1 end, a) end, count)
      local r = lacc.awhile(function(a) return lacc.lt(a[1], 0) end, function(a) return a end, q)
      assert.are.same({ 5 }, lacc.run(r, opts):totable())
    end)

    it("nests, with the inner loop reading the outer loop's array", function()
      -- outer: rows of a running total; inner: add the outer's first element until > 50
      local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
      local p = lacc.awhile(
        function(a) return lacc.lt(a[1], 40) end,
        function(a)
          local inner = lacc.awhile(
            function(c) return lacc.lt(c[1], a[1] * 3) end,
            function(c) return lacc.map(function(v) return v + a[1] end, c) end, a)
          return lacc.map(function(v) return v + 1 end, inner)
        end, xs)
      local want = { 1, 2, 3 }
      while want[1] < 40 do
        local c = { want[1], want[2], want[3] }
        local a1 = want[1]
        while c[1] < a1 * 3 do for i = 1, 3 do c[i] = c[i] + a1 end end
        for i = 1, 3 do want[i] = c[i] + 1 end
      end
      assert.are.same(want, lacc.run(p, opts):totable())
    end)

    it("feeds consumers and shares terms with the rest of the program", function()
      local xs = lacc.fromtable({ 3, 1, 2 }, "i32")
      local m = lacc.map(twice, xs)          -- used by the loop and after it
      local loop = lacc.awhile(function(a) return lacc.lt(lacc.the(lacc.maximum(a)), 100) end,
                               function(a) return lacc.zipWith(function(u, v) return u + v end, a, m) end,
                               m)
      local p = lacc.zipWith(function(u, v) return u - v end, loop, m)
      -- m = {6,2,4}; a = k*m until 6k >= 100: k = 17; loop - m = 16*m
      assert.are.same({ 96, 32, 64 }, lacc.run(p, opts):totable())
      local r1, r2 = lacc.run({ loop, lacc.sum(loop) }, opts)
      assert.are.same({ 102, 34, 68 }, r1:totable())
      assert.are.equal(204, r2:get())
    end)

    it("works inside acond, compile, and with fusion and sharing off", function()
      local f = lacc.compile(function(xs, limit)
        return lacc.awhile(function(a) return lacc.lt(lacc.the(lacc.sum(a)), limit[1]) end,
                           function(a) return lacc.map(twice, a) end, xs)
      end, opts)
      local xs = lacc.fromtable({ 1, 1 }, "i32")
      assert.are.same({ 64, 64 }, f(xs, lacc.fromtable({ 100 }, "i32")):totable())
      assert.are.same({ 1, 1 }, f(xs, lacc.fromtable({ 1 }, "i32")):totable())
      assert.are.same({ 8, 8 }, f(xs, lacc.fromtable({ 10 }, "i32")):totable())
      local s = lacc.sum(xs)
      local loop = lacc.awhile(function(a) return lacc.lt(a[1], 10) end,
                               function(a) return lacc.map(twice, a) end, xs)
      for _, pick in ipairs { 2, 3 } do
        local p = lacc.acond(lacc.eq(lacc.the(s), pick), loop, lacc.reverse(xs))
        for _, sw in ipairs { {}, { fusion = false }, { sharing = false } } do
          sw.backend = b
          assert.are.same(pick == 2 and { 16, 16 } or { 1, 1 }, lacc.run(p, sw):totable())
        end
      end
    end)

    it("carries sum types across layouts", function()
      local T = lacc.Either("i32", "f32")
      lacc.set_layout("unboxed")
      local init = lacc.fromtable({ { tag = "Left", 5 }, { tag = "Right", 2.5 }, { tag = "Left", 1 } }, T)
      lacc.set_layout("compact")
      local step = function(m)
        return lacc.match(m, {
          Left = function(v)
            return lacc.cond(lacc.gt(v, 1), T.Left(v - 1), T.Right(lacc.cast(v, "f32") * 0.5))
          end,
          Right = function(f) return T.Right(f) end,
        })
      end
      local p = lacc.awhile(function(a)
        return lacc.any(function(m) return lacc.match(m, { Left = function() return true end,
                                                          Right = function() return false end }) end, a)
      end, function(a) return lacc.map(step, a) end, init)
      for _, layout in ipairs { "compact", "unboxed", "rtu" } do
        local t = lacc.run(p, { backend = b, layout = layout }):totable()
        assert.are.same({ { tag = "Right", 0.5 }, { tag = "Right", 2.5 }, { tag = "Right", 0.5 } }, t)
      end
    end)

    it("reports errors of the body and keeps working", function()
      local xs = lacc.fromtable({ 4, 2, 0 }, "i32")
      local p = lacc.awhile(function(a) return lacc.gt(lacc.the(lacc.sum(a)), 0) end,
                            function(a) return lacc.map(function(v) return lacc.idiv(8, v - 1) end, a) end, xs)
      local ok, err = pcall(lacc.run, p, opts)
      assert.is_false(ok)
      assert.truthy(err:find("division by zero", 1, true), err)
      local r = lacc.run(lacc.map(twice, xs), opts)
      assert.are.same({ 8, 4, 0 }, r:totable())
    end)

    it("refuses a loop's array used outside the loop, and bad conditions and bodies", function()
      local xs = lacc.fromtable({ 1, 2 }, "i32")
      local leaked
      local p = lacc.awhile(function(a) leaked = a; return lacc.constant(false) end,
                            function(a) return a end, xs)
      assert.are.same({ 1, 2 }, lacc.run(p, opts):totable())
      local ok, err = pcall(lacc.run, lacc.map(twice, leaked), opts)
      assert.is_false(ok)
      assert.truthy(err:find("outside the function", 1, true), err)
      ok, err = pcall(lacc.awhile, function(a) return a end, function(a) return a end, xs)
      assert.is_false(ok)
      assert.truthy(err:find("condition", 1, true), err)
      ok, err = pcall(lacc.awhile, function() return lacc.constant(true) end,
                      function(a) return lacc.sum(a) end, xs)
      assert.is_false(ok)
      assert.truthy(err:find("rank", 1, true), err)
      ok, err = pcall(lacc.awhile, function() return lacc.constant(true) end,
                      function(a) return lacc.map(function(v) return lacc.cast(v, "f32") end, a) end, xs)
      assert.is_false(ok)
      assert.truthy(err:find("body", 1, true), err)
      ok, err = pcall(lacc.awhile, 1, function(a) return a end, xs)
      assert.is_false(ok)
      assert.truthy(err:find("two functions", 1, true), err)
    end)
  end)
end

describe("awhile explained", function()
  it("shows the condition's and the body's kernels, what is read from outside once", function()
    local xs = lacc.fromtable({ 1, 2 }, "i32")
    local ys = lacc.map(twice, lacc.fromtable({ 5, 6 }, "i32"))
    local p = lacc.awhile(function(a) return lacc.lt(a[1], 100) end,
                          function(a) return lacc.zipWith(function(u, v) return u + v end, a, ys) end, xs)
    local text, st = lacc.explain(p)
    assert.truthy(text:find("awhile: a%d+ from a%d+, reading a%d+"), text)
    assert.truthy(text:find("condition:", 1, true) and text:find("body:", 1, true), text)
    -- ys (a map) is one kernel outside; the condition one, the body one
    assert.are.equal(3, st.kernels)
  end)
end)
