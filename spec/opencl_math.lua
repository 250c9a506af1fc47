-- Run by opencl_spec.lua in a process of its own (with LACC_CL_OWN_MATH=0 too): f32 exp,
-- log, log2, log10, log1p, expm1, sinh, cosh, tanh, sin, cos and tan on the OpenCL device
-- against the exact values (doubles: Lua's, and series where those would cancel), within
-- 1 ulp where the device runs lacc's own code (a CPU device; explain says so; the ten
-- after log only with f64 on the device), within the OpenCL C specification's bounds (5
-- ulp) where it runs the device's built-ins; the ends exactly. Prints "ok own" / "ok
-- built-ins" or what differed. LACC_MATH_BACKEND=interp or cpu: that backend
-- (scalar_math_spec.lua), which always runs lacc's own code.
local lacc = require "lacc"
local H = require "helper"
local cl = { backend = os.getenv("LACC_MATH_BACKEND") or "opencl" }
local INF, NAN = math.huge, 0 / 0

local f32_of_bits, bits_of
if type(jit) == "table" then
  local ffi = require "ffi"
  local u = ffi.new("union { float f; uint32_t b; }")
  function f32_of_bits(b)   -- LuaJIT takes some NaNs for tagged values: one NaN for all
    if b % 0x80000000 > 0x7f800000 then return 0 / 0 end
    u.b = b
    return tonumber(u.f)
  end
  function bits_of(x) u.f = x; return tonumber(u.b) end
else
  function f32_of_bits(b) return (string.unpack("<f", string.pack("<I4", b))) end
  function bits_of(x) return (string.unpack("<I4", string.pack("<f", x))) end
end

-- the distance between the f32 values around ref (ref's binade, 2^-149 at least)
local function ulp(ref)
  local a = math.abs(ref)
  if a >= 3.4028234663852886e38 then return 2 ^ 104 end
  local r = H.f32(a)
  local b = bits_of(r)
  if r > a and b % 0x800000 == 0 and b > 0 then return r - f32_of_bits(b - 1) end
  return f32_of_bits(b + 1) - r
end

local xs = { 0, -0.0, 1, -1, 2 ^ -149, -(2 ^ -149), 2 ^ -126, 1.1754942106924411e-38,
             3.4028234663852886e38, -3.4028234663852886e38, INF, -INF, NAN, 0.5, 2,
             88.72283172607422, 88.72284698486328, 89, 100, -87.33654022216797,
             -103.27892303466797, -103.97, -104, -150, 1e-30, -1e-30 }
for i = 0, 4000 do xs[#xs + 1] = H.f32(-105 + 195 * i / 4000) end
for k = -149, 127 do
  for j = 0, 63, 7 do xs[#xs + 1] = H.f32(2 ^ k * (1 + j / 64)) end
end
H.seed(2611)
for _ = 1, 65536 do xs[#xs + 1] = f32_of_bits(math.floor(H.rand() * 2 ^ 32)) end

local arr = lacc.fromtable(xs, "f32")
local ex, lg = lacc.run({ lacc.map(lacc.exp, arr), lacc.map(lacc.log, arr) }, cl)
local own = cl.backend ~= "opencl" or lacc.explain(lacc.map(lacc.exp, arr), cl):find("lacc's own", 1, true) ~= nil
local bound = own and 1 or 3

local bad = {}
local function check(name, x, got, ref)
  local ok
  if ref ~= ref then ok = got ~= got
  elseif ref == INF or ref == -INF or ref == 0 then ok = got == ref
  elseif (got == INF or got == -INF) and math.abs(ref) > 3.4028235677973366e38 then ok = (got > 0) == (ref > 0)
  else ok = math.abs(got - ref) <= bound * ulp(ref) end
  if not ok and #bad < 10 then
    bad[#bad + 1] = ("%s(%.9g) = %.9g, want %.9g"):format(name, x, got, ref)
  end
end
for i, x in ipairs(xs) do
  check("exp", x, ex:get(i), math.exp(x))
  check("log", x, lg:get(i), x == 0 and -INF or math.log(x))
end

-- the seven computed in f64: references in doubles, by series near 0 where exp and log
-- would cancel (each within 1e-11 of the exact value, relative)
local exp, log = math.exp, math.log
local function log1p_ref(x)
  if math.abs(x) < 1e-4 then return x - x * x / 2 + x * x * x / 3 - x * x * x * x / 4 end
  return log(1 + x)
end
local function expm1_ref(x)
  if math.abs(x) < 1e-5 then return x + x * x / 2 + x * x * x / 6 end
  return exp(x) - 1
end
local function sinh_ref(x)
  if math.abs(x) < 1e-3 then return x + x * x * x / 6 + x ^ 5 / 120 end
  return (exp(x) - exp(-x)) / 2
end
local function tanh_ref(x)
  if math.abs(x) < 1e-3 then return x - x * x * x / 3 + 2 * x ^ 5 / 15 end
  if math.abs(x) > 20 then return x > 0 and 1 or -1 end
  local e = exp(2 * x)
  return (e - 1) / (e + 1)
end
local more = {
  { "log2", lacc.log2, function(x) return x == 0 and -INF or log(x, 2) end },
  { "log10", lacc.log10, function(x) return x == 0 and -INF or log(x, 10) end },
  { "log1p", lacc.log1p, function(x) return x == -1 and -INF or log1p_ref(x) end },
  { "expm1", lacc.expm1, expm1_ref },
  { "sinh", lacc.sinh, sinh_ref },
  { "cosh", lacc.cosh, function(x) return (exp(x) + exp(-x)) / 2 end },
  { "tanh", lacc.tanh, tanh_ref },
  { "sin", lacc.sin, math.sin },
  { "cos", lacc.cos, math.cos },
  { "tan", lacc.tan, math.tan },
}
local ps = {}
for k, m in ipairs(more) do ps[k] = lacc.map(m[2], arr) end
local ys = { lacc.run(ps, cl) }
local own_more = cl.backend ~= "opencl" or lacc.explain(ps[1], cl):find("log2, log10", 1, true) ~= nil
bound = own_more and 1 or 5
for k, m in ipairs(more) do
  for i, x in ipairs(xs) do
    x = H.f32(x)   -- the element the array holds
    local ref = m[3](x)
    if x == INF or x == -INF then ref = m[3](x > 0 and 1e300 or -1e300) end
    if (x == INF or x == -INF) and (m[1] == "sin" or m[1] == "cos" or m[1] == "tan") then ref = NAN end
    if m[1] == "log1p" and x == INF then ref = INF end
    if (m[1] == "log2" or m[1] == "log10") and x == INF then ref = INF end
    check(m[1], x, ys[k]:get(i), ref)
  end
end
-- their ends, bit for bit: f(x) for x in 0, -0, inf, -inf, NaN, and log1p at -1 and -2
local function same_value(a, b) return a == b and 1 / a == 1 / b or (a ~= a and b ~= b) end
local function at_of(x)
  for i = 1, 13 do if same_value(xs[i], x) then return i end end
end
local more_ends = {
  log2 = { 0, -INF, -0.0, -INF, INF, INF, -INF, NAN, NAN, NAN, 1, 0, -1, NAN },
  log10 = { 0, -INF, -0.0, -INF, INF, INF, -INF, NAN, NAN, NAN, 1, 0, -1, NAN },
  log1p = { 0, 0, -0.0, -0.0, INF, INF, -INF, NAN, NAN, NAN, -1, -INF },
  expm1 = { 0, 0, -0.0, -0.0, INF, INF, -INF, -1, NAN, NAN },
  sinh = { 0, 0, -0.0, -0.0, INF, INF, -INF, -INF, NAN, NAN },
  cosh = { 0, 1, -0.0, 1, INF, INF, -INF, INF, NAN, NAN },
  tanh = { 0, 0, -0.0, -0.0, INF, 1, -INF, -1, NAN, NAN },
  sin = { 0, 0, -0.0, -0.0, INF, NAN, -INF, NAN, NAN, NAN },
  cos = { 0, 1, -0.0, 1, INF, NAN, -INF, NAN, NAN, NAN },
  tan = { 0, 0, -0.0, -0.0, INF, NAN, -INF, NAN, NAN, NAN },
}
for k, m in ipairs(more) do
  local e = more_ends[m[1]]
  for j = 1, #e, 2 do
    local i = at_of(e[j])
    if own_more and not same_value(ys[k]:get(i), e[j + 1]) then
      bad[#bad + 1] = ("%s(%s) = %s, want %s"):format(m[1], e[j], ys[k]:get(i), e[j + 1])
    end
  end
end

-- the ends, bit for bit (C99 Annex F): { x, exp(x), log(x) } (nil: checked above)
local function same(a, b) return a == b and 1 / a == 1 / b or (a ~= a and b ~= b) end
local ends = { { 0, 1, -INF }, { -0.0, 1, -INF }, { 1, nil, 0 }, { -1, nil, NAN }, { INF, INF, INF },
               { -INF, 0, NAN }, { NAN, NAN, NAN }, { 89, INF, nil }, { -104, 0, nil },
               { -(2 ^ -149), nil, NAN } }
local at = {}
for i = 13, 1, -1 do at[xs[i] ~= xs[i] and "nan" or xs[i]] = i end
at[89], at[-104], at[-0.0] = 18, 23, 2
for _, e in ipairs(ends) do
  local i = e[1] ~= e[1] and at.nan or at[e[1]]
  if e[1] == 0 and 1 / e[1] < 0 then i = 2 end
  if e[2] ~= nil and not same(ex:get(i), e[2]) then bad[#bad + 1] = ("exp(%s) = %s"):format(e[1], ex:get(i)) end
  if e[3] ~= nil and not same(lg:get(i), e[3]) then bad[#bad + 1] = ("log(%s) = %s"):format(e[1], lg:get(i)) end
end
io.write(#bad == 0 and (own and "ok own" or "ok built-ins") or table.concat(bad, "\n"))
