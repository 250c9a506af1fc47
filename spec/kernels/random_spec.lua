-- lacc.random: Philox4x32-10 against Random123's published known-answer vectors and a
-- plain-Lua Philox (16-bit limbs, so exact on both VMs); uniform, integers and normal
-- element by element against that reference (the uniform and integer bits exactly, the
-- normals within 1e-12 of Box-Muller with math.log/cos/sin); the same numbers on every
-- backend and with LACC_THREADS=1, 2 and 7; a chi-square and a Kolmogorov-Smirnov check
-- on a million draws with a fixed seed.
local H = require "helper"
local lacc = H.lacc
local P = require "lacc.random"

local bxor
if type(jit) == "table" then
  local bit = require "bit"
  bxor = function(a, b) return bit.bxor(a, b) % 4294967296 end
else
  bxor = load("return function(a, b) return (math.tointeger(a) ~ math.tointeger(b)) + 0.0 end")()
end
local TWO32 = 4294967296

local function mulhilo(a, b)
  local bl, bh = b % 65536, math.floor(b / 65536)
  local ah = a * bh
  local h0, h1 = ah % 65536, math.floor(ah / 65536)
  local s = h0 * 65536 + a * bl
  return h1 + math.floor(s / TWO32), s % TWO32
end

-- The reference generator: four words of the counter c under the key k.
local function philox_ref(c, k)
  local c0, c1, c2, c3 = c[1], c[2], c[3], c[4]
  local k0, k1 = k[1], k[2]
  for round = 1, 10 do
    if round > 1 then
      k0, k1 = (k0 + 0x9E3779B9) % TWO32, (k1 + 0xBB67AE85) % TWO32
    end
    local hi0, lo0 = mulhilo(0xD2511F53, c0)
    local hi1, lo1 = mulhilo(0xCD9E8D57, c2)
    c0, c1, c2, c3 = bxor(bxor(hi1, c1), k0), lo1, bxor(bxor(hi0, c3), k1), lo0
  end
  return { c0, c1, c2, c3 }
end

local function num(x) return tonumber(x) end

-- Random123's kat_vectors for philox4x32_10: counter, key, answer.
local KAT = {
  { { 0, 0, 0, 0 }, { 0, 0 }, { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
  { { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff }, { 0xffffffff, 0xffffffff },
    { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
  { { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 }, { 0xa4093822, 0x299f31d0 },
    { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
}

describe("the plain-Lua reference Philox", function()
  it("gives Random123's known answers", function()
    for _, v in ipairs(KAT) do assert.are.same(v[3], philox_ref(v[1], v[2])) end
  end)
end)

-- The words of the reference for seed s (below 2^53) and block b.
local function key(s) return { s % TWO32, math.floor(s / TWO32) % TWO32 } end
local function words(s, b, extra) return philox_ref({ b % TWO32, math.floor(b / TWO32), extra or 0, 0 }, key(s)) end

-- uniform's element p (0-based) of a draw of type t in [0, 1)
local function uniform_ref(s, p, t)
  if t == "f32" then
    local w = words(s, math.floor(p / 4))[p % 4 + 1]
    return math.floor(w / 256) * 2 ^ -24
  end
  local w = words(s, math.floor(p / 2))
  local a, b = w[2 * (p % 2) + 1], w[2 * (p % 2) + 2]
  return (math.floor(a / 32) * 67108864 + math.floor(b / 64)) * 2 ^ -53
end

local function normal_ref(s, p, t)
  local u1, u2
  if t == "f32" then
    local w = words(s, math.floor(p / 4))
    local j = math.floor(p / 2) % 2
    u1 = math.floor(w[2 * j + 1] / 256) * 2 ^ -24 + 2 ^ -24
    u2 = math.floor(w[2 * j + 2] / 256) * 2 ^ -24
  else
    local w = words(s, math.floor(p / 2))
    u1 = (math.floor(w[1] / 32) * 67108864 + math.floor(w[2] / 64)) * 2 ^ -53 + 2 ^ -53
    u2 = (math.floor(w[3] / 32) * 67108864 + math.floor(w[4] / 64)) * 2 ^ -53
  end
  local r = math.sqrt(-2 * math.log(u1))
  return p % 2 == 0 and r * math.cos(2 * math.pi * u2) or r * math.sin(2 * math.pi * u2)
end

-- integers' element p: lo + x mod m for the first word x below the largest multiple of m
-- (ranges up to 2^32)
local function integer_ref(s, p, lo, hi)
  local m = hi - lo + 1
  local limit = TWO32 - TWO32 % m
  local attempt = 0
  while true do
    local x = words(s, math.floor(p / 4), attempt)[p % 4 + 1]
    if x < limit then return lo + x % m end
    attempt = attempt + 1
  end
end

for _, b in ipairs(H.backends) do
  local run = function(p) return lacc.run(p, { backend = b }) end

  it("Philox4x32-10 gives Random123's known answers inside a kernel on " .. b, function()
    local c = function(v) return lacc.constant(v, "u32") end
    for _, v in ipairs(KAT) do
      local r = run(lacc.generate({ 1 }, function()
        return P.philox(c(v[2][1]), c(v[2][2]), c(v[1][1]), c(v[1][2]), c(v[1][3]), c(v[1][4]))
      end))
      assert.are.same(v[3], { num(r[1][1]), num(r[1][2]), num(r[1][3]), num(r[1][4]) })
    end
    -- random.at: the counter's low and high words, then 0, 0
    local r = run(lacc.generate({ 3 }, function(i) return lacc.random.at(77, i * 1000003 + 4294967290) end))
    for i = 1, 3 do
      local ctr = i * 1000003 + 4294967290
      local want = philox_ref({ ctr % TWO32, math.floor(ctr / TWO32), 0, 0 }, { 77, 0 })
      assert.are.same(want, { num(r[i][1]), num(r[i][2]), num(r[i][3]), num(r[i][4]) })
    end
  end)

  it("uniform gives the reference's numbers, in [lo, hi), for any shape on " .. b, function()
    for _, case in ipairs { { { 13 }, 5, "f32" }, { { 3, 5 }, 2 ^ 40 + 3, "f64" }, { { 2, 0, 3 }, 1, "f32" },
                            { {}, 9, "f64" }, { { 2, 3, 2 }, 0, "f64" } } do
      local shape, seed, t = case[1], case[2], case[3]
      local a = run(lacc.random.uniform(shape, seed, t))
      assert.are.equal(t, a:type())
      local n = 1
      for _, e in ipairs(shape) do n = n * e end
      assert.are.equal(n, a:size())
      for p = 0, n - 1 do
        local want = uniform_ref(seed, p, t)
        assert.are.equal(want, num(a:at_linear(p)), ("%s seed %s element %d"):format(t, seed, p))
      end
    end
    -- scaled: lo + (hi - lo) u, never hi
    local a = run(lacc.random.uniform({ 40 }, 3, "f32", -2, 6))
    for p = 0, 39 do
      local x = num(a[p + 1])
      assert.is_true(x >= -2 and x < 6, tostring(x))
      assert.is_true(math.abs(x - (-2 + 8 * uniform_ref(3, p, "f32"))) < 1e-6)
    end
  end)

  it("integers are unbiased draws from lo to hi, the reference's, on " .. b, function()
    for _, case in ipairs { { 1, 6 }, { -5, 5 }, { 0, 0 }, { 0, 2147483646 }, { -3, 1000000006 } } do
      local a = run(lacc.random.integers({ 37 }, 12, case[1], case[2]))
      assert.are.equal("i64", a:type())
      for p = 0, 36 do
        assert.are.equal(integer_ref(12, p, case[1], case[2]), num(a[p + 1]))
      end
    end
    local a = run(lacc.random.integers({ 5, 3 }, 4, 10, 12, "u8"))
    assert.are.equal("u8", a:type())
    for p = 0, 14 do assert.are.equal(integer_ref(4, p, 10, 12), num(a:at_linear(p))) end
    -- ranges beyond 2^32 take 64 bits: within the bounds, and not all alike
    local w = run(lacc.random.integers({ 64 }, 8, -2 ^ 40, 2 ^ 40))
    local seen = {}
    for i = 1, 64 do
      local x = num(w[i])
      assert.is_true(x >= -2 ^ 40 and x <= 2 ^ 40)
      seen[x] = true
    end
    local distinct = 0
    for _ in pairs(seen) do distinct = distinct + 1 end
    assert.is_true(distinct > 60)
  end)

  it("takes seeds and counters past 2^53 (LuaJIT: int64_t and uint64_t cdata) on " .. b, function()
    -- hi 2^32 + lo: a Lua 5.4 integer (wrapping past 2^63 as the u64 bits), on LuaJIT a cdata
    local function big(hi, lo, ctype)
      if type(jit) == "table" then return require("ffi").new(ctype, hi) * 4294967296 + lo end
      return hi * 4294967296 + lo
    end
    for _, ctype in ipairs { "int64_t", "uint64_t" } do
      local seed = big(0xfedcba98, 0x76543210, ctype)
      local a = run(lacc.random.uniform({ 9 }, seed, "f64"))
      for p = 0, 8 do
        local w = philox_ref({ math.floor(p / 2), 0, 0, 0 }, { 0x76543210, 0xfedcba98 })
        local want = (math.floor(w[2 * (p % 2) + 1] / 32) * 67108864 + math.floor(w[2 * (p % 2) + 2] / 64)) * 2 ^ -53
        assert.are.equal(want, num(a[p + 1]), ("%s seed, element %d"):format(ctype, p))
      end
      local r = run(lacc.generate({ 1 }, function() return lacc.random.at(seed, big(0x9abcdef0, 0x12345678, ctype)) end))
      assert.are.same(philox_ref({ 0x12345678, 0x9abcdef0, 0, 0 }, { 0x76543210, 0xfedcba98 }),
                      { num(r[1][1]), num(r[1][2]), num(r[1][3]), num(r[1][4]) })
      -- 64-bit bounds: the whole i64 range but one at each end
      local lo, hi = big(0x80000000, 1, "int64_t"), big(0x7fffffff, 0xffffffff, "int64_t")
      local x = run(lacc.random.integers({ 16 }, seed, lo, hi))
      local seen = {}
      for i = 1, 16 do seen[tostring(x[i])] = true end
      local distinct = 0
      for _ in pairs(seen) do distinct = distinct + 1 end
      assert.are.equal(16, distinct)
    end
  end)

  it("normal gives Box-Muller of the reference's uniforms on " .. b, function()
    for _, t in ipairs { "f32", "f64" } do
      local a = run(lacc.random.normal({ 41 }, 2024, t))
      for p = 0, 40 do
        local want, got = normal_ref(2024, p, t), num(a[p + 1])
        local tol = t == "f32" and 2e-6 * math.max(1, math.abs(want)) or 1e-12 * math.max(1, math.abs(want))
        assert.is_true(math.abs(got - want) <= tol, ("%s element %d: %.17g, want %.17g"):format(t, p, got, want))
      end
    end
    local a = run(lacc.random.normal({ 9 }, 1, "f64", 10, 0.5))
    for p = 0, 8 do assert.is_true(math.abs(num(a[p + 1]) - (10 + 0.5 * normal_ref(1, p, "f64"))) < 1e-12) end
  end)
end

describe("lacc.random", function()
  local function checksum(a)
    local s = 0
    for i = 1, #a do s = (s * 31 + num(a[i]) * 1e6) % 1e15 end
    return s
  end

  it("gives the same bits on every backend", function()
    local progs = { lacc.random.uniform({ 1001 }, 99, "f32"), lacc.random.normal({ 1001 }, 99, "f64"),
                    lacc.random.integers({ 1001 }, 99, -7, 7) }
    for _, p in ipairs(progs) do
      local ref = lacc.run(p, { backend = "interp" })
      for _, b in ipairs(H.backends) do
        local r = lacc.run(p, { backend = b })
        for i = 1, #ref do assert.are.equal(num(ref[i]), num(r[i])) end
      end
    end
  end)

  it("gives the same bits with LACC_THREADS=1, 2 and 7", function()
    local src = [[local lacc = require "lacc"
      local a = lacc.run(lacc.random.normal({300001}, 5, "f32"), {backend = "cpu"})
      local s = 0
      for i = 1, #a do s = (s * 31 + tonumber(a[i]) * 1e6) % 1e15 end
      io.write(string.format("%.17g", s))]]
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(src)
    f:close()
    local here = checksum(lacc.run(lacc.random.normal({ 300001 }, 5, "f32"), { backend = "cpu" }))
    for _, n in ipairs { 1, 2, 7 } do
      local out = H.vm_sh(("LACC_THREADS=%d %s %s"):format(n, H.vm, path))
      assert.are.equal(("%.17g"):format(here), out, "LACC_THREADS=" .. n)
    end
    os.remove(path)
  end)

  it("passes a chi-square test (uniform) and a Kolmogorov-Smirnov test (normal) on 1M draws", function()
    local n = 1000000
    local u = lacc.run(lacc.random.uniform({ n }, 31337, "f64"), { backend = "cpu" })
    local bins = {}
    for k = 1, 100 do bins[k] = 0 end
    for i = 1, n do
      local k = math.floor(num(u[i]) * 100) + 1
      bins[k] = bins[k] + 1
    end
    local chi = 0
    for k = 1, 100 do chi = chi + (bins[k] - n / 100) ^ 2 / (n / 100) end
    assert.is_true(chi < 148.2, "chi-square " .. chi)   -- 99 degrees of freedom, p = 0.001
    local z = lacc.run(lacc.random.normal({ n }, 31337, "f64"), { backend = "cpu" })
    local v = {}
    for i = 1, n do v[i] = num(z[i]) end
    table.sort(v)
    -- the normal CDF through erfc (Numerical Recipes' erfcc, error below 1.2e-7)
    local function cdf(x)
      local y = math.abs(x) / math.sqrt(2)
      local t = 1 / (1 + 0.5 * y)
      local e = t * math.exp(-y * y - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
        t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 +
        t * 0.17087277)))))))))
      return x >= 0 and 1 - e / 2 or e / 2
    end
    local d = 0
    for i = 1, n do
      local c = cdf(v[i])
      d = math.max(d, math.abs(c - (i - 1) / n), math.abs(i / n - c))
    end
    assert.is_true(d * math.sqrt(n) < 1.95, "KS statistic " .. d * math.sqrt(n))   -- p = 0.001
  end)
end)
