-- The cpu backend's parallel paths: loops split between the pool's threads, fold
-- partials, per-lane accumulators and the first failing element of a parallel run, on
-- sizes above every grain, against plain Lua loops and the interpreter.
local lacc = require "lacc"

-- Bitwise references for Lua 5.4 and LuaJIT alike (the values here fit in 31 bits).
local bitop = rawget(_G, "bit") or load([[return {
  band = function(a, b) return a & b end, bor = function(a, b) return a | b end,
  bxor = function(a, b) return a ~ b end }]])()

local function add(a, b) return a + b end

describe("cpu backend on large arrays (parallel loops and fold partials)", function()
  local N = 200003   -- odd, above every grain

  it("map and zipWith agree with a Lua loop", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return (i * 7) % 1000 end))
    local b = lacc.run(lacc.map(function(x) return x * 3 - 1 end, a), { backend = "cpu" })
    local at, bt = a:totable(), b:totable()
    for i = 1, N, 997 do assert.are.equal(at[i] * 3 - 1, bt[i]) end
    assert.are.equal(at[N] * 3 - 1, bt[N])
  end)

  it("a whole-array integer sum (split into partials) is exact", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i, "i64") end))
    local s = lacc.run(lacc.sum(a)):get()
    assert.are.equal(math.floor(N * (N + 1) / 2), s)
    local m = lacc.run(lacc.maximum(lacc.map(function(x) return (x * 31) % 1009 end, a))):get()
    assert.are.equal(1008, m)
  end)

  it("a fold of tuples over many elements matches the interpreter", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i % 13, "i32") end))
    local p = lacc.fold(function(x, y) return lacc.tuple(x[1] + y[1], lacc.max(x[2], y[2])) end,
      lacc.tuple(lacc.constant(0, "i32"), lacc.constant(-1, "i32")),
      lacc.map(function(x) return lacc.tuple(x, x * 2) end, a))
    local c = lacc.run(p)
    local i = lacc.run(p, { backend = "interp" })
    assert.are.same(i:totable(), c:totable())
  end)

  it("float sums reassociate within a small relative error", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.sin(lacc.cast(i, "f64")) end))
    local c = lacc.run(lacc.sum(a)):get()
    local ref = 0
    for i = 1, N do ref = ref + math.sin(i) end
    assert.is_true(math.abs(c - ref) <= 1e-9 * N)
  end)

  it("many segments fold in parallel, each in order", function()
    local a = lacc.run(lacc.generate({ 999, 301 }, function(i, j) return lacc.cast(i * j, "i64") end))
    local r = lacc.run(lacc.fold(add, 0, a)):totable()
    for i = 1, 999, 37 do assert.are.equal(i * 301 * 151, r[i]) end
  end)

  it("per-lane accumulators: commutative folds over few long rows are exact", function()
    local M = 70001   -- two rows, each long enough for partials with lanes
    local a = lacc.run(lacc.generate({ 2, M }, function(i, j) return lacc.cast(i * 1000003 + j * 7919, "i64") end))
    local function ref(f, z, conv)
      local r = {}
      for i = 1, 2 do
        local acc = z
        for j = 1, M do acc = f(acc, conv(i * 1000003 + j * 7919)) end
        r[i] = acc
      end
      return r
    end
    local id = function(x) return x end
    local u8 = function(x) return x % 256 end
    local cases = {
      { "sum i64", lacc.fold(add, 0, a), ref(function(x, y) return x + y end, 0, id) },
      { "band", lacc.fold(lacc.band, -1, a), ref(bitop.band, -1, id) },
      { "bor", lacc.fold(lacc.bor, 0, a), ref(bitop.bor, 0, id) },
      { "bxor", lacc.fold(lacc.bxor, 0, a), ref(bitop.bxor, 0, id) },
      { "max", lacc.fold1(lacc.max, a), ref(math.max, -2 ^ 53, id) },
      { "min", lacc.fold1(lacc.min, a), ref(math.min, 2 ^ 53, id) },
      { "u8 sum wraps", lacc.fold(add, lacc.constant(0, "u8"), lacc.map(function(x) return lacc.cast(x % 256, "u8") end, a)),
        ref(function(x, y) return (x + y) % 256 end, 0, u8) },
    }
    for _, c in ipairs(cases) do
      assert.are.same(c[3], lacc.run(c[2], { backend = "cpu" }):totable(), c[1])
    end
  end)

  it("folds that are associative but not commutative keep the order", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i * 3 + 1, "i32") end))
    local first = lacc.fold1(function(x, y) return x end, a)
    local last = lacc.fold1(function(x, y) return y end, a)
    assert.are.equal(4, lacc.run(first, { backend = "cpu" }):get())
    assert.are.equal(N * 3 + 1, lacc.run(last, { backend = "cpu" }):get())
    -- float min and max are not commutative in which NaN wins: the interpreter's order
    -- 33334: the first element of the second chunk, were the row split into partials
    for _, nans in ipairs { { 1 }, { 70001 }, { 5, 150001, N }, { N }, { 33334 }, { 33334, 66668 } } do
      local set = {}
      for _, k in ipairs(nans) do set[k] = true end
      local v = {}
      for i = 1, N do v[i] = set[i] and 0 / 0 or ((i * 37) % 1001) - 500.5 end
      v[40000], v[40001] = -9999, 9999   -- the extremes, inside the second chunk
      local x = lacc.fromtable(v, "f32")
      for _, f in ipairs { lacc.minimum, lacc.maximum } do
        local c = lacc.run(f(x), { backend = "cpu" }):get()
        local r = lacc.run(f(x), { backend = "interp" }):get()
        if r ~= r then assert.is_true(c ~= c) else assert.are.equal(r, c) end
      end
    end
    -- nor in which zero wins: the first of -0.0 (element 2) and 0.0 (element 33)
    local v = {}
    for i = 1, N do v[i] = 1 + i % 7 end
    v[2], v[33] = -0.0, 0.0
    local z = lacc.run(lacc.minimum(lacc.fromtable(v, "f64")), { backend = "cpu" }):get()
    assert.are.equal(-math.huge, 1 / z)
  end)

  it("an error at a late index is reported like the interpreter's", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(N - i, "i32") end))
    local p = lacc.map(function(x) return lacc.idiv(100, x) end, a)
    local ok1, e1 = pcall(lacc.run, p, { backend = "cpu" })
    local ok2, e2 = pcall(lacc.run, p, { backend = "interp" })
    assert.is_false(ok1)
    assert.is_false(ok2)
    assert.are.equal(e2, e1)
    assert.truthy(e1:find("integer division by zero", 1, true))
  end)
end)
