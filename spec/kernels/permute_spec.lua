-- permute (issue 5): scatter with a combining function into a copy of the defaults, with
-- lacc.ignore, on every backend against plain-Lua loops.
local H = require "helper"
local lacc = H.lacc

local function add(a, b) return a + b end

-- Reference: out = copy of defaults (flat); for each source element k (1-based, flat) with
-- target t (flat 1-based, or nil to drop): out[t] = combine(x, out[t]).
local function ref_permute(combine, defaults, targets, xs)
  local out = {}
  for i, v in ipairs(defaults) do out[i] = v end
  for k, x in ipairs(xs) do
    local t = targets[k]
    if t then out[t] = combine(x, out[t]) end
  end
  return out
end

local wrap32 = function(v) v = v % 4294967296; if v >= 2147483648 then v = v - 4294967296 end return v end

for _, b in ipairs(H.backends) do
  describe("permute on " .. b, function()
    local opts = { backend = b }

    it("histograms and sums into bins, dropping with lacc.ignore", function()
      H.seed(701)
      for _, n in ipairs { 0, 1, 17, 300 } do
        for _, bins in ipairs { 1, 7, 64 } do
          local vals, bin = {}, {}
          for k = 1, n do
            vals[k] = H.randint(-1000, 1000)
            bin[k] = H.randint(0, bins)      -- 0: dropped
          end
          local xs = lacc.fromtable(n > 0 and vals or {}, "i32")
          local bs = lacc.fromtable(n > 0 and bin or {}, "i64")
          local defaults = {}
          for i = 1, bins do defaults[i] = i * 3 end
          local p = lacc.permute(add, lacc.fromtable(defaults, "i32"), function(i)
            return lacc.cond(lacc.eq(bs[i], 0), lacc.ignore, bs[i])
          end, xs)
          local targets = {}
          for k = 1, n do targets[k] = bin[k] > 0 and bin[k] or nil end
          local want = ref_permute(function(x, o) return wrap32(x + o) end, defaults, targets, vals)
          H.check_array(lacc.run(p, opts), want)
        end
      end
    end)

    it("scatters into rank 2 and rank 0 targets", function()
      local xs = lacc.fromtable({ 3, 1, 4, 1, 5, 9, 2, 6, 5, 3 }, "i32")
      local m = lacc.fill({ 2, 2 }, lacc.constant(0, "i32"))
      local one = lacc.ignore + 1
      local p = lacc.permute(add, m, function(i)
        local drop = lacc.eq(i, 3)
        return lacc.cond(drop, lacc.ignore, lacc.cond(lacc.lt(i, 5), one, one + 1)),
               lacc.cond(drop, lacc.ignore, one)
      end, xs)
      assert.are.same({ { 5, 0 }, { 30, 0 } }, lacc.run(p, opts):totable())
      local all = lacc.permute(add, m, function() return lacc.ignore end, xs)
      assert.are.same({ { 0, 0 }, { 0, 0 } }, lacc.run(all, opts):totable())
      local s = lacc.permute(add, lacc.unit(lacc.constant(1, "i32")), function() end, xs)
      assert.are.equal(40, lacc.run(s, opts):get())
    end)

    it("combines tuples, and a non-commutative function leaves one of the writers", function()
      local xs = lacc.fromtable({ { 1, 2.5 }, { 7, -1 }, { 3, 9 }, { 2, 0 } }, lacc.tuple("i32", "f64"))
      local d = lacc.fromtable({ { 0, 0 }, { 5, 5 } }, lacc.tuple("i32", "f64"))
      local p = lacc.permute(function(x, o) return lacc.max(x[1], o[1]), lacc.min(x[2], o[2]) end, d,
        function(i) return lacc.cond(lacc.le(i, 2), lacc.ignore + 1, lacc.ignore + 2) end, xs)
      assert.are.same({ { 7, -1 }, { 5, 0 } }, lacc.run(p, opts):totable())
      local last = lacc.permute(function(x, o) return x end, lacc.fill({ 1 }, lacc.constant(0, "i32")),
        function() return lacc.ignore + 1 end, lacc.fromtable({ 4, 8, 6 }, "i32"))
      local v = lacc.run(last, opts):get(1)
      assert.truthy(v == 4 or v == 8 or v == 6)
    end)

    it("a target outside the defaults is an error, as is a partly ignored one", function()
      local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
      local z = lacc.fill({ 3 }, lacc.constant(0, "i32"))
      local ok, err = pcall(lacc.run, lacc.permute(add, z, function(i) return i + 1 end, xs), opts)
      assert.is_false(ok)
      assert.truthy(err:find("permute: target index out of bounds (at ", 1, true))
      local m = lacc.fill({ 2, 2 }, lacc.constant(0, "i32"))
      ok, err = pcall(lacc.run, lacc.permute(add, m, function(i) return lacc.ignore, i end, xs), opts)
      assert.is_false(ok)
      assert.truthy(err:find("permute: target index out of bounds (at ", 1, true), err)
    end)
  end)
end

describe("permute on cpu, many elements", function()
  it("a histogram of 200003 values into 1000 bins matches a Lua loop", function()
    local n, bins = 200003, 1000
    local xs = lacc.run(lacc.generate({ n }, function(i) return lacc.imod(i * 7919, bins) end))
    local ones = lacc.map(function() return lacc.constant(1, "i32") end, xs)
    local h = lacc.permute(add, lacc.fill({ bins }, lacc.constant(0, "i32")),
      function(i) return xs[i] + 1 end, ones)
    local want = {}
    for k = 1, bins do want[k] = 0 end
    for i = 1, n do local t = (i * 7919) % bins + 1; want[t] = want[t] + 1 end
    H.check_array(lacc.run(h, { backend = "cpu" }), want)
    local _, stats = lacc.explain(h)
    assert.are.equal(1, stats.kernels)   -- the map of ones fuses into the scatter
  end)
end)

describe("permute on cpu, in parallel with compare-and-swap", function()
  it("float sums, integer maxima and bool ors per bin match Lua loops", function()
    -- enough targets for the parallel scatter (fewer are scattered on one thread)
    local n, bins = 300007, 70001
    local xs = lacc.run(lacc.generate({ n }, function(i) return lacc.imod(i * 31, 7) end))
    local function bin_of(i) return (i * 7919) % bins + 1 end
    for _, t in ipairs { "f32", "f64", "i64", "bool" } do
      local combine, z, want = add, 0, {}
      if t == "i64" then combine = lacc.max end
      if t == "bool" then combine, z = lacc.lor, false end
      for b = 1, bins do want[b] = z end
      for i = 1, n do
        local v = (i * 31) % 7
        local b = bin_of(i)
        if t == "bool" then want[b] = want[b] or v == 3
        elseif t == "i64" then want[b] = math.max(want[b], v * 1000 + b)
        else want[b] = want[b] + v end
      end
      local vals = lacc.map(function(v)
        if t == "bool" then return lacc.eq(v, 3) end
        if t == "i64" then return v * 1000 end
        return lacc.cast(v, t)
      end, xs)
      local p = lacc.permute(function(a, b)
          if t == "i64" then return lacc.max(a, b) end
          return combine(a, b)
        end,
        lacc.fill({ bins }, lacc.constant(z, t)), function(i) return lacc.imod(i * 7919, bins) + 1 end,
        t == "i64" and lacc.imap(function(i, v) return v + lacc.imod(i * 7919, bins) + 1 end, vals) or vals)
      H.check_array(lacc.run(p, { backend = "cpu" }), want)
    end
  end)
end)

describe("permute on cpu onto few targets: a private copy per thread, merged", function()
  -- one commutative primitive onto fewer than 64K targets, with at least twice as many
  -- elements as targets: each thread scatters into a copy of its own (lower_push.c)
  local n = 100003
  local function bin_of(i, bins) return (i * 7919) % bins + 1 end
  local function check(bins, t, combine, z, lua_combine, value, drop)
    local xs = lacc.run(lacc.generate({ n }, function(i) return lacc.imod(i * 31, 7) end))
    local want = {}
    for b = 1, bins do want[b] = z end
    for i = 1, n do
      if not (drop and i % 5 == 0) then
        local b = bin_of(i, bins)
        want[b] = lua_combine(value((i * 31) % 7, i), want[b])
      end
    end
    local vals = lacc.imap(function(i, v)
      local x = value(v, i)
      if t == "bool" then return x end
      return lacc.cast(x, t)
    end, xs)
    local p = lacc.permute(combine, lacc.fill({ bins }, lacc.constant(z, t)), function(i)
      local target = lacc.imod(i * 7919, bins) + 1
      if drop then return lacc.cond(lacc.eq(lacc.imod(i, 5), 0), lacc.ignore, target) end
      return target
    end, vals)
    H.check_array(lacc.run(p, { backend = "cpu" }), want)
    H.check_array(lacc.run(p, { backend = "interp" }), want)
  end
  local function plus(a, b) return a + b end
  local function bits(a, b, keep)   -- or / xor of non-negative integers, on both VMs
    local r, p = 0, 1
    while a > 0 or b > 0 do
      if keep(a % 2, b % 2) then r = r + p end
      a, b, p = math.floor(a / 2), math.floor(b / 2), p * 2
    end
    return r
  end
  -- element values written once for Lua numbers and for lacc expressions
  local function mod(a, b) if type(a) == "number" then return a % b end return lacc.imod(a, b) end
  local function pow2(v)
    if type(v) == "number" then return 2 ^ v end
    return lacc.shl(lacc.constant(1, "i64"), v)
  end
  local function is3(v) if type(v) == "number" then return v == 3 end return lacc.eq(v, 3) end
  local function bor(a, b) return bits(a, b, function(x, y) return x + y > 0 end) end
  local function bxor(a, b) return bits(a, b, function(x, y) return x + y == 1 end) end
  it("integer sums into 1, 1024 and 100000 bins (past 64K: compare-and-swap)", function()
    for _, bins in ipairs { 1, 1024, 100000 } do
      check(bins, "i32", add, 0, plus, function(v) return v end)
    end
  end)
  it("with lacc.ignore, and products, minima, maxima and bit operations", function()
    check(1024, "i64", add, 5, plus, function(v) return v end, true)
    check(64, "i64", function(a, b) return a * b end, 1, function(a, b) return a * b end,
          function(v) return 1 - 2 * mod(v, 2) end)
    check(300, "i32", lacc.min, 1000, math.min, function(v, i) return v * 100 - mod(i, 13) end)
    check(300, "i16", lacc.max, -1000, math.max, function(v, i) return v * 10 - mod(i, 13) end)
    check(100, "u8", lacc.bor, 0, bor, pow2)
    check(100, "i32", lacc.bxor, 0, bxor, function(v, i) return v * 9 + mod(i, 4) end)
    check(100, "bool", lacc.lor, false, function(a, b) return a or b end, is3)
  end)
  it("float sums: reassociated, so near the Lua sum; -0.0 defaults stay -0.0 in empty bins", function()
    check(777, "f64", add, 0, plus, function(v) return v / 8 end)   -- exact in any order
    local xs = lacc.run(lacc.generate({ n }, function() return lacc.constant(1, "f32") end))
    local p = lacc.permute(add, lacc.fill({ 9 }, lacc.constant(-0.0, "f32")),
      function(i) return lacc.cond(lacc.lt(i, 9), lacc.ignore, 1) end, xs)
    local r = lacc.run(p, { backend = "cpu" }):totable()
    assert.are.equal(n - 8, r[1])
    for b = 2, 9 do assert.are.equal("-0.0", string.format("%.1f", r[b])) end
  end)
  it("a combine that is not one primitive keeps the ordered path, with the same answer", function()
    check(1024, "i64", function(a, b) return a + b + 1 end, 0, function(a, b) return a + b + 1 end,
          function(v) return v end)
  end)
end)

describe("permute errors at build time", function()
  it("name the wrong element type, index arity and function", function()
    local xs = lacc.fromtable({ 1, 2 }, "i32")
    local ok, err = pcall(lacc.permute, add, lacc.fromtable({ 0 }, "f32"), function(i) return i end, xs)
    assert.is_false(ok)
    assert.truthy(err:find("permute: source element: expected f32, got i32 (at ", 1, true), err)
    ok, err = pcall(lacc.permute, add, lacc.fill({ 2, 2 }, lacc.constant(0, "i32")), function(i) return i end, xs)
    assert.is_false(ok)
    assert.truthy(err:find("permute: the index function must return 2 indices, got 1", 1, true))
    ok, err = pcall(lacc.permute, add, xs, 5, xs)
    assert.is_false(ok)
    assert.truthy(err:find("permute: expected a function", 1, true))
  end)
end)
