-- Programs of one shape (core/memo.c): a program built anew over other arrays, while a
-- program of the same shape lives, runs that one's plan and kernels over its own arrays.
-- Each result is checked against plain Lua; programs of other shapes (another array read
-- twice, other types, ranks or places) get plans of their own; a program found again
-- keeps its plan for the others once freed, not its arrays, and its messages' places.
local H = require "helper"
local lacc = H.lacc

local compiled = {}
for _, b in ipairs(H.backends) do if b ~= "interp" then compiled[#compiled + 1] = b end end

local NAN = 0 / 0
-- n f64 values: integers and halves (sums exact), a NaN at 5 where n >= 5
local function values(n, seed)
  local t = {}
  for i = 1, n do t[i] = ((i * 37 + seed * 11) % 23 - 11) / 2 end
  if n >= 5 then t[5] = NAN end
  return t
end

-- the shape every test builds again: a fused map, a fold and a zip over two arrays
local function build(a, b)
  local m = lacc.map(function(x) return x * 2 + 1 end, a)
  return { m, lacc.sum(m), lacc.zipWith(function(x, y) return x - y end, a, b) }
end
local function expect(ta, tb)
  local m, s, z = {}, 0, {}
  for i = 1, #ta do
    m[i] = ta[i] * 2 + 1
    s = s + m[i]
    z[i] = ta[i] - tb[i]
  end
  return m, s, z
end

for _, backend in ipairs(compiled) do
  describe("programs of one shape on " .. backend, function()
    local opts = { backend = backend }
    -- every run (where the functions are traced, and so the place the nodes name) at
    -- this one line: programs of one shape are found again
    local function run(p) return lacc.run(p, opts) end

    it("a program built anew over new arrays runs on their values and extents", function()
      local first
      for k, n in ipairs { 3, 0, 1, 7, 1000, 13, 7 } do
        local ta, tb = values(n, k), values(n, k + 5)
        local p = build(lacc.fromtable(ta, "f64"), lacc.fromtable(tb, "f64"))
        first = first or p   -- alive throughout: the others find its plan
        local r = { run(p) }
        local m, s, z = expect(ta, tb)
        H.check_array(r[1], m)
        assert.is_true(H.same(r[2]:get(), s), ("n=%d: sum %s, want %s"):format(n, tostring(r[2]:get()), s))
        H.check_array(r[3], z)
      end
      H.check_array(run(first), (expect(values(3, 1), values(3, 6))))   -- its own arrays still
    end)

    it("a result that is an input is the new program's array", function()
      local function same_array(a) return lacc.map(function(x) return x end, a) end
      local keep = same_array(lacc.fromtable({ 1, 2 }, "i32"))
      run(keep)
      for _, t in ipairs { { 5, 6, 7 }, {}, { -1 } } do
        H.check_array(run(same_array(lacc.fromtable(t, "i32"))), t)
      end
    end)

    it("an array read twice and two arrays are other shapes", function()
      local function zip(a, b) return lacc.zipWith(function(x, y) return x * 10 + y end, a, b) end
      local a, b = lacc.fromtable({ 1, 2, 3 }, "i64"), lacc.fromtable({ 4, 5, 6 }, "i64")
      local twice = zip(a, a)
      H.check_array(run(twice), { 11, 22, 33 })
      H.check_array(run(zip(a, b)), { 14, 25, 36 })
      H.check_array(run(zip(b, b)), { 44, 55, 66 })
      H.check_array(run(twice), { 11, 22, 33 })
    end)

    it("other element types and ranks get plans of their own", function()
      local function inc(a) return lacc.map(function(x) return x + 1 end, a) end
      local keep = inc(lacc.fromtable({ 1.5, 2.5 }, "f64"))
      H.check_array(run(keep), { 2.5, 3.5 })
      H.check_array(run(inc(lacc.fromtable({ 1.5, 2.5 }, "f32"))), { 2.5, 3.5 })
      H.check_array(run(inc(lacc.fromtable({ 127, -128 }, "i8"))), { -128, -127 })
      H.check_array(run(inc(lacc.fromtable({ { 1, 2 }, { 3, 4 } }, "f64"))), { 2, 3, 4, 5 })
    end)

    it("errors name the place of the program that met them", function()
      -- one shape, run (and so traced) at two places: each run's error names its own
      local a = lacc.fromtable({ 1, 2, 3 }, "f64")
      local function bad() return lacc.backpermute({ 3 }, function(i) return i + 5 end, a) end
      local keep = bad()
      for _, place in ipairs { "one", "two", "one" } do
        local ok, e
        if place == "one" then
          ok, e = pcall(lacc.run, bad(), opts) --@one
        else
          ok, e = pcall(lacc.run, bad(), opts) --@two
        end
        assert.is_false(ok)
        assert.is_truthy(tostring(e):find("memo_spec.lua:" .. H.line_of(place) .. ")", 1, true), tostring(e))
      end
      assert.is_false((pcall(lacc.run, keep, opts)))
    end)

    it("the first program freed, one of its shape still runs; its arrays are not kept", function()
      local function total(a) return lacc.sum(lacc.map(function(x) return x * 3 end, a)) end
      local n = 2 ^ 21 + 1024
      local base = lacc.memory()
      local big = lacc.run(lacc.fill({ n }, lacc.constant(1, "f64")), opts)
      local ps = {}
      for k, a in ipairs { big, lacc.fromtable({ 4, 5, 6 }, "f64"), lacc.fromtable({ 7 }, "f64") } do
        ps[k] = total(a)   -- built at one place: one shape
      end
      assert.are.equal(3 * n, run(ps[1]):get())
      assert.are.equal(45, run(ps[2]):get())   -- on the first's plan
      big, ps[1] = nil, nil   -- luacheck: ignore
      collectgarbage()
      collectgarbage()
      assert.is_true(lacc.memory() < base + 8 * n / 2, "the big array is still held")
      assert.are.equal(45, run(ps[2]):get())
      assert.are.equal(21, run(ps[3]):get())   -- finds the first's plan still
      assert.are.equal(45, run(ps[2]):get())
    end)

    it("a shape freed by every program is kept, without its arrays, for the next", function()
      -- each program collected before the next of its shape is built (none lives to be
      -- found): the kept one's plan runs over the new arrays, the old ones are freed
      local base = lacc.memory()
      for k, n in ipairs { 2 ^ 21, 5, 0, 1, 2 ^ 21 + 3, 7 } do
        local ta = {}
        for i = 1, math.min(n, 9) do ta[i] = (i * 7 + k) % 11 - 5 end
        local a = n <= 9 and lacc.fromtable(ta, "f64")
                  or lacc.run(lacc.generate({ n }, function(i) return lacc.cast(i % 11, "f64") - 5 end), opts)
        local r = { run(build(a, a)) }   -- one place: one shape
        local m, sum = {}, 0
        for i = 1, n do
          local x = n <= 9 and ta[i] or (i % 11 - 5)
          m[i] = x * 2 + 1
          sum = sum + m[i]
        end
        assert.are.equal(sum, r[2]:get())
        if n <= 9 then H.check_array(r[1], m) else assert.are.equal(m[n], r[1][n]) end
        assert.are.equal(0, r[3][n > 0 and n or 1] or 0)
        a, r = nil, nil   -- luacheck: ignore
        collectgarbage()
        collectgarbage()
        assert.is_true(lacc.memory() < base + 2 ^ 20, "arrays of a kept program are held")
      end
    end)

    it("a program found again names its place in errors after the first is freed", function()
      -- the first program's graph (and the places its nodes name) is let go of while
      -- the second lives: the second's errors still name the place
      local progs = {}
      for k, t in ipairs { { 1, 2, 3 }, { 4, 5, 6 }, { 1, 2, 3, 4, 5, 6 } } do
        progs[k] = lacc.backpermute({ 3 }, function(i) return i + 3 end, lacc.fromtable(t, "f64")) --@shifted
      end
      local place = "memo_spec.lua:" .. H.line_of("shifted") .. ")"
      local ok, e = pcall(run, progs[1])
      assert.is_false(ok)
      assert.is_truthy(tostring(e):find(place, 1, true), tostring(e))
      local ok2, e2 = pcall(run, progs[2])   -- (on the first's plan)
      assert.is_false(ok2)
      assert.are.equal(tostring(e), tostring(e2))
      progs[1] = nil
      collectgarbage()
      collectgarbage()
      local ok3, e3 = pcall(run, progs[2])
      assert.is_false(ok3)
      assert.are.equal(tostring(e), tostring(e3))
      H.check_array(run(progs[3]), { 4, 5, 6 })
    end)
  end)
end

-- Programs that differ only in their constants (a time step, a coefficient, a size, a
-- rank's offset): on the cpu backend, which reads a plan's table of constants at each run,
-- they share one plan, each run with its own values; a constant whose value the plan was
-- made by (a float division by a power of two, a shift count written into the code, a
-- division that cannot fail, two terms the same only for equal constants, a grouped
-- producer's index algebra) gets a plan of its own for each value. Every result against
-- plain Lua or the interpreter.
local function interp(p)
  local ok, r = pcall(function() return { lacc.run(p, { backend = "interp" }) } end)
  return ok, r
end
local function same_as_interp(p, opts, what)
  local ok, want = interp(p)
  local ok2, got = pcall(function() return { lacc.run(p, opts) } end)
  assert.are.equal(ok, ok2, what .. ": " .. tostring(ok and got or want))
  if not ok then
    assert.are.equal(tostring(want):gsub("^.-: ", ""), tostring(got):gsub("^.-: ", ""), what)
    return
  end
  for i = 1, #want do
    if #want[i]:shape() == 0 then
      assert.is_true(H.same(want[i]:get(), got[i]:get()), what)
    else
      H.check_array(got[i], want[i]:totable())
    end
  end
end

for _, backend in ipairs(compiled) do
  describe("programs that differ only in their constants on " .. backend, function()
    local opts = { backend = backend }

    it("a coefficient, a size and a fill value of each run: each run's own values", function()
      local function made(c, n, v)   -- one place: one shape
        local xs = lacc.generate({ n }, function(i) return lacc.cast(i, "f64") end)
        local m = lacc.map(function(x) return x * c + 0.5 end, xs)
        return { m, lacc.sum(m), lacc.fill({ n, 2 }, lacc.constant(v, "i64")) }
      end
      local cases = { { 2.5, 3, 7 }, { -0.0, 5, 2 ^ 62 }, { 0 / 0, 4, -7 }, { 1e308, 2, 0 },
                      { 0, 3, 1 }, { 1, 1, -1 }, { -1, 0, 5 }, { 7.25, 6, -2 ^ 63 },
                      { 1 / 0, 2, 2 ^ 62 + 2 ^ 10 }, { 2.5, 3, 7 } }
      local keep = {}
      for k, c in ipairs(cases) do
        local p = made(c[1], c[2], c[3])
        keep[k] = p   -- alive: each later one finds the plans of the earlier ones
        local r = { lacc.run(p, opts) }
        local m, s, f = {}, 0, {}
        for i = 1, c[2] do
          m[i] = i * c[1] + 0.5
          s = s + m[i]
          f[2 * i - 1], f[2 * i] = c[3], c[3]
        end
        H.check_array(r[1], m)
        assert.is_true(H.same(r[2]:get(), s), ("case %d: sum %s, want %s"):format(k, tostring(r[2]:get()), s))
        H.check_array(r[3], f)
      end
      H.check_array(lacc.run(keep[1], opts), { 3, 5.5, 8 })   -- the first's own values still
    end)

    it("a constant written into the code (0, 1, -1) and one read from the table are other shapes", function()
      local xs = lacc.fromtable({ 3, -4, 5 }, "i64")
      for _, c in ipairs { -1, 5, -1, 1, 7, 0, 2 } do
        H.check_array(lacc.run(lacc.map(function(x) return x * c end, xs), opts), { 3 * c, -4 * c, 5 * c })
      end
    end)

    it("a float division by a constant: by a power of two and by others", function()
      local xs = lacc.fromtable({ 1, -3, 7.5, 1e-310, 0 / 0, 1 / 0 }, "f64")
      for _, c in ipairs { 2, 3, 0.5, 0.1, -4, 3, 2, 1 / 0, 2 ^ -1074 } do
        local r = lacc.run(lacc.map(function(x) return x / c end, xs), opts)
        local want = {}
        for i, x in ipairs(xs:totable()) do want[i] = x / c end
        H.check_array(r, want)
      end
    end)

    it("shifts by a constant count, in range and past it", function()
      local xs = lacc.fromtable({ 7, -9, 100, 2 ^ 31 - 1, -2 ^ 31 }, "i32")
      local ys = lacc.fromtable({ 7, -9, 2 ^ 62, -1 }, "i64")
      for _, c in ipairs { 3, 5, 40, -2, 31, 63, 64, 3, 0, 1, -1 } do
        same_as_interp(lacc.map(function(x) return lacc.shl(x, c) end, xs), opts, "shl " .. c)
        same_as_interp(lacc.map(function(x) return lacc.shr(x, c) end, ys), opts, "shr " .. c)
      end
    end)

    it("integer division by a constant that is 0 on some runs", function()
      local xs = lacc.fromtable({ 7, -9, 100, -2 ^ 63 }, "i64")
      for _, c in ipairs { 2, 0, 3, 0, 5, -1, 2 } do
        -- sibling folds over the same rows (one loop where neither can fail)
        local function q(x) return lacc.idiv(x, c) end
        same_as_interp({ lacc.sum(lacc.map(q, xs)), lacc.maximum(lacc.map(function(x) return lacc.idiv(x, 7) + c end, xs)) },
          opts, "idiv " .. c)
      end
    end)

    it("sibling permutes whose targets are the same term only for equal constants", function()
      local xs = lacc.fromtable({ 3, 8, 1, 6, 5, 2, 9 }, "i64")
      for _, c in ipairs { { 2, 2 }, { 2, 3 }, { 3, 2 }, { 5, 5 }, { 2, 3 } } do
        local function to(k) return function(i) return (xs[i] * k) % 4 + 1 end end
        local zero = lacc.fill({ 4 }, lacc.constant(0, "i64"))
        same_as_interp({ lacc.permute(function(a, b) return a + b end, zero, to(c[1]), xs),
                         lacc.permute(function(a, b) return a + b end, zero, to(c[2]),
                                      lacc.map(function(x) return x * 10 end, xs)) },
          opts, ("permutes %d %d"):format(c[1], c[2]))
      end
    end)

    it("a generate's index algebra by constant shifts and masks (grouped elements)", function()
      for _, c in ipairs { { 2, 3 }, { 3, 7 }, { 2, 5 }, { 3, 3 }, { 1, 7 }, { 5, 15 }, { 2, 3 } } do
        same_as_interp(lacc.generate({ 37 }, function(i)
          return lacc.bxor(lacc.shr(i, c[1]) * 2654435761, lacc.band(i, c[2]))
        end), opts, ("generate %d %d"):format(c[1], c[2]))
      end
    end)
  end)
end

do
  describe("programs that differ only in their constants, on the cpu backend", function()
    it("share one plan where it does not depend on their values, and not otherwise", function()
      -- a new plan prints "a program ... runs on the fast tier's kernels" (LACC_VERBOSE)
      local out, status = H.child([[
        local lacc = require "lacc"
        local xs = lacc.fromtable({ 1, 2, 3 }, "f64")
        local function run(p) return lacc.run(p, { backend = "cpu" }) end
        io.stderr:write("-- coefficients\n")
        for _, c in ipairs { 2.5, 3.5, 0 / 0, 1e300, 4.5 } do
          assert(run(lacc.sum(lacc.map(function(x) return x * c + 0.25 end, xs))):get() == 6 * c + 0.75 or c ~= c)
        end
        io.stderr:write("-- divisions\n")
        for _, c in ipairs { 2, 3, 2, 3, 5 } do
          run(lacc.map(function(x) return x / c end, xs))
        end
        io.stderr:write("-- end\n")
      ]], nil, "LACC_TIER=fast LACC_VERBOSE=1")
      assert.are.equal(0, status, out)
      local function plans(from, to)
        local part = out:match(from .. "\n(.-)" .. to)
        local n = 0
        for _ in part:gmatch("runs on the fast tier's kernels") do n = n + 1 end
        return n
      end
      assert.are.equal(1, plans("%-%- coefficients", "%-%- divisions"), out)
      -- the plan depends on the divisor's value (a power of two is a multiplication by
      -- its reciprocal): 2, 3 and 5 a plan each, 2 and 3 found again
      assert.are.equal(3, plans("%-%- divisions", "%-%- end"), out)
    end)
  end)
end
