-- Integer powers (lacc.ipow), bit casts (lacc.bitcast) and fused multiply-add (lacc.fma)
-- on every backend: ipow against repeated multiplication in spec/intref.lua's model
-- (each product wrapped), bitcast against hand-computed IEEE 754 encodings, fma against
-- hand-computed exact values where a*b+c rounded twice differs.
local H = require "helper"
local sweep = H.sweeper(it)   -- the type sweeps run where spec/helper.lua says
local R = require "intref"
local lacc = H.lacc

local INF, NAN = math.huge, 0 / 0

local function host(t, list)
  local arr = lacc.array(t, { #list })
  for i, v in ipairs(list) do arr[i] = v end
  return arr
end

-- x^n by n wrapped multiplications (n >= 0), or the guide's rule for n < 0
local function ipow_ref(t, x, n)
  if n < 0 then
    if R.eq(x, 1) then return R.wrap(t, 1) end
    if R.eq(x, -1) then return R.wrap(t, (n % 2 == 0) and 1 or -1) end
    return R.wrap(t, 0)
  end
  local r = R.wrap(t, 1)
  for _ = 1, n do r = R.wrap(t, r * x) end
  return r
end

local function bases(t)
  local v = { R.wrap(t, 0), R.wrap(t, 1), R.wrap(t, 2), R.wrap(t, 3), R.wrap(t, 7), R.max(t),
              R.min(t), R.wrap(t, R.max(t) - 1), R.wrap(t, 10) }
  if R.signed[t] then
    for _, x in ipairs { -1, -2, -3, -10 } do v[#v + 1] = R.wrap(t, R.I(x)) end
  end
  return v
end

local function exponents(t)
  local e = { 0, 1, 2, 3, 5, 7, 8, 13, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100 }
  local out = {}
  for _, n in ipairs(e) do
    if n <= 127 then out[#out + 1] = n end
  end
  if R.signed[t] then
    for _, n in ipairs { -1, -2, -3, -8 } do out[#out + 1] = n end
  end
  return out
end

local function same(g, w)
  if w ~= w then return g ~= g end
  return g == w and (w ~= 0 or 1 / g == 1 / w)
end

for _, backend in ipairs(H.backends) do
  describe("ipow on " .. backend, function()
    for _, t in ipairs(R.types) do
      sweep(t, backend, "wraps as repeated multiplication on " .. t, function()
        local xs, ns, want = {}, {}, {}
        for _, x in ipairs(bases(t)) do
          for _, n in ipairs(exponents(t)) do
            if not (R.eq(x, 0) and n < 0) then
              xs[#xs + 1], ns[#ns + 1], want[#want + 1] = x, R.wrap(t, R.I(n)), ipow_ref(t, x, n)
            end
          end
        end
        local got = lacc.run(lacc.zipWith(lacc.ipow, host(t, xs), host(t, ns)),
                             { backend = backend }):totable()
        assert.are.equal(#want, #got)
        for i = 1, #want do
          assert(R.eq(got[i], want[i]), ("ipow(%s, %s) on %s: %s, expected %s"):format(
            tostring(xs[i]), tostring(ns[i]), t, tostring(got[i]), tostring(want[i])))
        end
      end)

      sweep(t, backend, "takes the largest exponents of " .. t, function()
        -- x^n for n the type's largest (odd) value: 0 for even x, x for x = 1 and x = -1
        local big = R.max(t)
        local xs = { R.wrap(t, 0), R.wrap(t, 1), R.wrap(t, 2), R.wrap(t, 4), R.max(t) }
        local want = { R.wrap(t, 0), R.wrap(t, 1), R.wrap(t, 0), R.wrap(t, 0), nil }
        -- max(t)^max(t): max is -1 mod 2^bits for unsigned types (odd power: itself); for
        -- signed ones max = 2^(b-1) - 1, and its square is 1 - 2^b + 2^(2b-2) = 1 mod 2^b,
        -- so an odd power is max itself
        want[5] = R.max(t)
        local ns = {}
        for i = 1, #xs do ns[i] = big end
        local got = lacc.run(lacc.zipWith(lacc.ipow, host(t, xs), host(t, ns)),
                             { backend = backend }):totable()
        for i = 1, #xs do
          assert(R.eq(got[i], want[i]), ("ipow(%s, max) on %s: %s"):format(tostring(xs[i]), t,
            tostring(got[i])))
        end
      end)
    end

    it("raises division by zero for 0 to a negative power, and not for 0^0", function()
      local z = lacc.fromtable({ 0, 0 }, "i32")
      local ok, err = pcall(lacc.run, lacc.zipWith(lacc.ipow, z, lacc.fromtable({ 0, -1 }, "i32")),
                            { backend = backend })
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find("ipow: integer division by zero", 1, true))
      local one = lacc.run(lacc.map(function(x) return lacc.ipow(x, x) end, z), { backend = backend })
      assert.are.same({ 1, 1 }, one:totable())
      -- unsigned exponents are never negative: 0^(2^32 - 1) is 0
      local u = lacc.run(lacc.map(function(x) return lacc.ipow(x, lacc.constant(4294967295, "u32")) end,
                                  lacc.fromtable({ 0, 1, 3 }, "u32")), { backend = backend })
      -- 3^(2^32 - 1) = the product of 3^(2^k) for k = 0..31, each factor squared from the last
      local r, p = R.wrap("u32", 1), R.wrap("u32", 3)
      for _ = 1, 32 do r, p = R.wrap("u32", r * p), R.wrap("u32", p * p) end
      local got = u:totable()
      assert.are.same({ 0, 1 }, { got[1], got[2] })
      assert(R.eq(got[3], r), "3^(2^32-1) on u32: " .. tostring(got[3]))
    end)
  end)

  describe("bitcast on " .. backend, function()
    it("reads the bits of f32 and f64 as integers, hand-computed", function()
      local f = lacc.fromtable({ 1.5, -0.0, 0, INF, -2, 1e-45 }, "f32")
      local i = lacc.run(lacc.map(function(x) return lacc.bitcast(x, "i32") end, f),
                         { backend = backend }):totable()
      assert.are.same({ 1069547520, -2147483648, 0, 2139095040, -1073741824, 1 }, i)
      local u = lacc.run(lacc.map(function(x) return x:bitcast("u32") end, f),
                         { backend = backend }):totable()
      assert.are.same({ 1069547520, 2147483648, 0, 2139095040, 3221225472, 1 }, u)
      local d = lacc.fromtable({ 1, -2, 0.5 }, "f64")
      local l = lacc.run(lacc.map(function(x) return lacc.bitcast(x, "i64") end, d),
                         { backend = backend }):totable()
      -- 0x3FF0000000000000, 0xC000000000000000, 0x3FE0000000000000
      local function p2(n) local r = R.I(1); for _ = 1, n do r = r + r end; return r end
      local want = { R.I(1023) * p2(52), R.I(-1) * p2(62), R.I(1022) * p2(52) }
      for k = 1, 3 do want[k] = R.wrap("i64", want[k]) end
      for k = 1, 3 do assert(R.eq(l[k], want[k]), ("bitcast f64->i64 %d: %s"):format(k, tostring(l[k]))) end
    end)

    it("makes floats of integer bits and keeps NaN a NaN", function()
      local i = lacc.fromtable({ 1069547520, -2147483648, 2139095040, -4194304, 2143289344 }, "i32")
      local f = lacc.run(lacc.map(function(x) return lacc.bitcast(x, "f32") end, i),
                         { backend = backend }):totable()
      local want = { 1.5, -0.0, INF, NAN, NAN }
      for k = 1, #want do assert(same(f[k], want[k]), ("bitcast i32->f32 %d: %s"):format(k, tostring(f[k]))) end
      -- round trip of every value, NaN included, through the other type of the width
      local back = lacc.run(lacc.map(function(x) return lacc.bitcast(lacc.bitcast(x, "f32"), "i32") end, i),
                            { backend = backend }):totable()
      assert.are.same(i:totable(), back)
    end)

    it("reads a NaN of any bits back as a NaN, on both VMs", function()
      -- negative NaNs with payloads: LuaJIT took their doubles for tagged values (nil, and
      -- a crash of the process) until lacc read floats by their bits
      local bits = { -1, -4194303, 2147483647, -8388607, 2139095041, -1048577 }
      local i = lacc.fromtable(bits, "i32")
      local f, d = lacc.run({ lacc.map(function(x) return lacc.bitcast(x, "f32") end, i),
                              lacc.map(function(x) return lacc.cast(lacc.bitcast(x, "f32"), "f64") end, i) },
                            { backend = backend })
      local m = lacc.run(lacc.reshape({ 2, 3 }, f), { backend = backend })
      local s = lacc.run(lacc.sum(f), { backend = backend })
      local ft, dt, mt = f:totable(), d:totable(), m:totable()
      local function nan(v, what) assert(type(v) == "number" and v ~= v, what .. ": " .. type(v)) end
      for k = 1, #bits do
        nan(f:get(k), "f32 get " .. k)
        nan(d:get(k), "f64 get " .. k)
        nan(ft[k], "f32 totable " .. k)
        nan(dt[k], "f64 totable " .. k)
        nan(m:get(math.floor((k - 1) / 3) + 1, (k - 1) % 3 + 1), "rank 2 get " .. k)
        nan(mt[math.floor((k - 1) / 3) + 1][(k - 1) % 3 + 1], "rank 2 totable " .. k)
      end
      nan(s:get(), "sum")
      -- the bits themselves are kept
      assert.are.same(bits, lacc.run(lacc.map(function(x) return lacc.bitcast(x, "i32") end, f),
                                     { backend = backend }):totable())
    end)

    it("between signed and unsigned integers of one width", function()
      local a = lacc.fromtable({ -1, -128, 127, 0 }, "i8")
      assert.are.same({ 255, 128, 127, 0 }, lacc.run(lacc.map(function(x)
        return lacc.bitcast(x, "u8") end, a), { backend = backend }):totable())
      local b = lacc.fromtable({ 65535, 32768, 1 }, "u16")
      assert.are.same({ -1, -32768, 1 }, lacc.run(lacc.map(function(x)
        return lacc.bitcast(x, "i16") end, b), { backend = backend }):totable())
    end)
  end)

  describe("fma on " .. backend, function()
    it("rounds once (f64): 0.1 * 10 - 1 is 2^-54, 1e308 * 2 - 1e308 does not overflow", function()
      local a = lacc.fromtable({ 0.1, 1e308, 3, INF, 1, -0.0, 2 }, "f64")
      local b = lacc.fromtable({ 10, 2, 4, 0, 1, 1, 3 }, "f64")
      local c = lacc.fromtable({ -1, -1e308, 5, 1, NAN, -0.0, -INF }, "f64")
      local got = lacc.run(lacc.zipWith3(lacc.fma, a, b, c), { backend = backend }):totable()
      local want = { 2 ^ -54, 1e308, 17, NAN, NAN, -0.0, -INF }
      for k = 1, #want do
        assert(same(got[k], want[k]), ("fma f64 %d: %.17g, expected %.17g"):format(k, got[k], want[k]))
      end
      assert.are_not.equal(0.1 * 10 - 1, got[1])   -- two roundings give 0
    end)

    it("rounds once (f32): (1 + 2^-12)^2 - (1 + 2^-11) is 2^-24", function()
      local x = 1 + 2 ^ -12
      local a = lacc.fromtable({ x, 3e38, 1.5 }, "f32")
      local c = lacc.fromtable({ -(1 + 2 ^ -11), -H.f32(3e38), 0.25 }, "f32")
      local two = lacc.fromtable({ x, 2, 1.5 }, "f32")
      local got = lacc.run(lacc.zipWith3(function(p, q, r) return p:fma(q, r) end, a, two, c),
                           { backend = backend }):totable()
      assert.are.same({ 2 ^ -24, H.f32(3e38), 2.5 }, got)
    end)

    it("takes a plain number as the other operands' type", function()
      local a = lacc.fromtable({ 0.1 }, "f64")
      local got = lacc.run(lacc.map(function(x) return lacc.fma(x, 10, -1) end, a),
                           { backend = backend }):totable()
      assert.are.same({ 2 ^ -54 }, got)
    end)
  end)
end

describe("ipow, bitcast and fma outside a function", function()
  it("compute on plain Lua numbers", function()
    assert.are.equal(1024, lacc.ipow(2, 10))
    assert.are.equal(-27, lacc.ipow(-3, 3))
    assert.are.equal(1, lacc.ipow(7, 0))
    assert.are.equal(-1, lacc.ipow(-1, -3))
    assert.are.equal(1, lacc.ipow(-1, -2))
    assert.are.equal(0, lacc.ipow(5, -1))
    assert.are.equal(2 ^ -54, lacc.fma(0.1, 10, -1))
    assert.are.equal(17, lacc.fma(3, 4, 5))
  end)
end)
