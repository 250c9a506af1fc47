-- Run by opencl_spec.lua in a process of its own (with LACC_CL_OWN_MATH=0 too): f32 exp,
-- log, log2, log10, log1p, expm1, sinh, cosh, tanh, sin, cos, tan, atan, atan2, pow and exp2 on
-- the OpenCL device against the exact values (doubles: Lua's, and series where those would
-- cancel), and f64 exp, exp2, log, log2, log10, log1p, expm1, sinh, cosh, tanh, sin, cos,
-- tan, atan, atan2 and pow against correctly rounded values (spec/f64_math_refs.lua, from mpmath), within 1 ulp
-- where the device runs lacc's own code (a CPU device; explain says so; all but f32 exp and
-- log only with f64 on the device), within the OpenCL C specification's bounds where it
-- runs the device's built-ins; the ends exactly. Prints "ok own" / "ok built-ins" or what
-- differed. LACC_MATH_BACKEND=interp or cpu: that backend (scalar_math_spec.lua), which
-- always runs lacc's own code.
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
-- random bit patterns (make check-clmath checks every f32 input of the same code)
for _ = 1, 16384 do xs[#xs + 1] = f32_of_bits(math.floor(H.rand() * 2 ^ 32)) end

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
    bad[#bad + 1] = ("%s(%s) = %.9g, want %.9g"):format(name, type(x) == "number" and ("%.9g"):format(x) or x, got, ref)
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
  { "atan", lacc.atan, math.atan },
  { "exp2", lacc.exp2, function(x) return 2 ^ x end },
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
  atan = { 0, 0, -0.0, -0.0, INF, H.f32(math.pi / 2), -INF, -H.f32(math.pi / 2), NAN, NAN },
  exp2 = { 0, 1, -0.0, 1, INF, INF, -INF, 0, NAN, NAN, 1, 2, -1, 0.5 },
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

-- f32 atan2 and pow: pairs of the values above (every 97th against every 89th, and the ends
-- against each other), against Lua's doubles, within the same bound
local ybs, xs2 = {}, {}
for i = 1, #xs, 97 do
  for j = 5, #xs, 89 do ybs[#ybs + 1], xs2[#xs2 + 1] = H.f32(xs[i]), H.f32(xs[j]) end
end
for i = 1, 13 do
  for j = 1, 13 do ybs[#ybs + 1], xs2[#xs2 + 1] = xs[i], xs[j] end
end
for _, p in ipairs({ { 2, 10 }, { -2, 3 }, { -2, 0.5 }, { -8, 1 / 3 }, { 10, -3 }, { 0.5, 149 },
                     { 2, 128 }, { 2, -150 }, { -1, INF }, { 1, NAN }, { NAN, 0 }, { -0.0, -3 },
                     { -0.0, 3 }, { -INF, 3 }, { -INF, -2 }, { 1.0000001, 2 ^ 30 } }) do
  ybs[#ybs + 1], xs2[#xs2 + 1] = H.f32(p[1]), H.f32(p[2])
end
local atan2 = math.atan2 or math.atan   -- LuaJIT's math.atan takes one argument
local ya, xa = lacc.fromtable(ybs, "f32"), lacc.fromtable(xs2, "f32")
local at2, pw = lacc.run({ lacc.zipWith(lacc.atan2, ya, xa), lacc.zipWith(lacc.pow, ya, xa) }, cl)
local pow_bound, atan2_bound = own_more and 1 or 16, own_more and 1 or 6
for i = 1, #ybs do
  local y, x = ybs[i], xs2[i]
  bound = atan2_bound
  check("atan2", y .. ", " .. x, at2:get(i), atan2(y, x))
  local ref = y ^ x
  if y == 1 or x == 0 then ref = 1 end   -- C99 Annex F (Lua's ^ is C's pow)
  bound = pow_bound
  check("pow", y .. ", " .. x, pw:get(i), ref)
end

-- f64: against the correctly rounded values of spec/f64_math_refs.lua, where the device has
-- f64 (always elsewhere), and the ends exactly
local has_f64 = cl.backend ~= "opencl"
if not has_f64 then
  for _, d in ipairs(lacc.devices()) do has_f64 = has_f64 or d.fp64 end
end
local function ulp64(ref)
  local a = math.abs(ref)
  if a < 2 ^ -1022 then return 2 ^ -1074 end
  local e = math.floor(math.log(a, 2))
  if 2 ^ e > a then e = e - 1 elseif 2 ^ (e + 1) <= a then e = e + 1 end
  return 2 ^ (e - 52)
end
-- the OpenCL C specification's bounds for the device's built-ins (ulp)
local cl_bound = { exp = 3, log = 3, log2 = 3, log10 = 3, log1p = 2, expm1 = 3, sinh = 4, cosh = 4,
                   tanh = 5, sin = 4, cos = 4, tan = 5, atan = 5, atan2 = 6, exp2 = 3 }
local refs = dofile("spec/f64_math_refs.lua")
local own64 = cl.backend ~= "opencl" or own_more
local ends64 = {   -- { x, f(x) } for x in 0, -0, inf, -inf, NaN, and the overflow edges
  exp = { 0, 1, -0.0, 1, INF, INF, -INF, 0, NAN, NAN, 709.7827128933841, INF, -745.1332191019412, 0,
          -745.1332191019411, 2 ^ -1074 },
  log = { 0, -INF, -0.0, -INF, INF, INF, -INF, NAN, NAN, NAN, 1, 0, -1, NAN, 2 ^ -1074, -744.44007192138122 },
  log2 = { 0, -INF, -0.0, -INF, INF, INF, -INF, NAN, NAN, NAN, 1, 0, -1, NAN, 2 ^ -1074, -1074 },
  log10 = { 0, -INF, -0.0, -INF, INF, INF, -INF, NAN, NAN, NAN, 1, 0, -1, NAN, 1e22, 22 },
  log1p = { 0, 0, -0.0, -0.0, INF, INF, -INF, NAN, NAN, NAN, -1, -INF, -2, NAN },
  expm1 = { 0, 0, -0.0, -0.0, INF, INF, -INF, -1, NAN, NAN, 709.7827128933841, INF, -40, -1 },
  sinh = { 0, 0, -0.0, -0.0, INF, INF, -INF, -INF, NAN, NAN, 710.4758600739439, 1.7976931348621744e308,
           -710.4758600739439, -1.7976931348621744e308, 710.475860073944, INF },
  cosh = { 0, 1, -0.0, 1, INF, INF, -INF, INF, NAN, NAN, 710.4758600739439, 1.7976931348621744e308,
           -710.475860073944, INF },
  tanh = { 0, 0, -0.0, -0.0, INF, 1, -INF, -1, NAN, NAN, 22, 1, -1e-300, -1e-300 },
  atan = { 0, 0, -0.0, -0.0, INF, math.pi / 2, -INF, -math.pi / 2, NAN, NAN, 1e300, math.pi / 2 },
  sin = { 0, 0, -0.0, -0.0, INF, NAN, -INF, NAN, NAN, NAN },
  cos = { 0, 1, -0.0, 1, INF, NAN, -INF, NAN, NAN, NAN },
  tan = { 0, 0, -0.0, -0.0, INF, NAN, -INF, NAN, NAN, NAN },
  exp2 = { 0, 1, -0.0, 1, INF, INF, -INF, 0, NAN, NAN, 1024, INF, -1074, 2 ^ -1074, -1075, 0, 1023, 2 ^ 1023 },
}
local names64 = { "exp", "log", "log2", "log10", "log1p", "expm1", "sinh", "cosh", "tanh", "sin", "cos", "tan",
                  "atan", "exp2" }
local function check64(name, x, got, ref, b)
  local ok
  if ref ~= ref then ok = got ~= got
  elseif ref == INF or ref == -INF then ok = got == ref
  else ok = math.abs(got - ref) <= b * ulp64(ref) and (ref ~= 0 or 1 / got == 1 / ref) end
  if not ok and #bad < 20 then
    bad[#bad + 1] = ("f64 %s(%s) = %.17g, want %.17g"):format(name, x, got, ref)
  end
end
if has_f64 then
  for _, name in ipairs(names64) do
    local rows, args = refs[name], {}
    for i, r in ipairs(rows) do args[i] = r[1] end
    local e = ends64[name]
    for j = 1, #e, 2 do args[#args + 1] = e[j] end
    local got = lacc.run(lacc.map(lacc[name], lacc.fromtable(args, "f64")), cl)
    for i, r in ipairs(rows) do
      -- a device's built-ins within a few ulp of the largest double are its own business
      -- (PoCL's f64 exp gives inf there, its sinh and cosh NaN); lacc's code is checked there
      if own64 or math.abs(r[2]) < 2 ^ 1023 then
        check64(name, r[1], got:get(i), r[2], own64 and 1 or cl_bound[name])
      end
    end
    for j = 1, #e, 2 do
      local g = got:get(#rows + (j + 1) / 2)
      if own64 and not same_value(g, e[j + 1]) then
        bad[#bad + 1] = ("f64 %s(%.17g) = %.17g, want %.17g"):format(name, e[j], g, e[j + 1])
      end
    end
  end
  local rows, yv, xv = refs.atan2, {}, {}
  for i, r in ipairs(rows) do yv[i], xv[i] = r[1], r[2] end
  local special = { 0, -0.0, INF, -INF, NAN, 1, -1 }
  for _, a in ipairs(special) do
    for _, b in ipairs(special) do yv[#yv + 1], xv[#xv + 1] = a, b end
  end
  local got = lacc.run(lacc.zipWith(lacc.atan2, lacc.fromtable(yv, "f64"), lacc.fromtable(xv, "f64")), cl)
  for i, r in ipairs(rows) do check64("atan2", r[1] .. ", " .. r[2], got:get(i), r[3], own64 and 1 or cl_bound.atan2) end
  for i = #rows + 1, #yv do   -- C's atan2, which C99 Annex F pins at these
    local want = atan2(yv[i], xv[i])
    if own64 and not same_value(got:get(i), want) then
      bad[#bad + 1] = ("f64 atan2(%s, %s) = %.17g, want %.17g"):format(yv[i], xv[i], got:get(i), want)
    end
  end
end
if has_f64 then   -- f64 pow, its ends against C's pow (Lua's ^), which C99 Annex F pins there
  local rows, xv, yv = refs.pow, {}, {}
  for i, r in ipairs(rows) do xv[i], yv[i] = r[1], r[2] end
  local special = { 0, -0.0, INF, -INF, NAN, 1, -1, 2, -2, 0.5, -0.5, 3, -3 }
  for _, a in ipairs(special) do
    for _, b in ipairs(special) do xv[#xv + 1], yv[#yv + 1] = a, b end
  end
  local got = lacc.run(lacc.zipWith(lacc.pow, lacc.fromtable(xv, "f64"), lacc.fromtable(yv, "f64")), cl)
  for i, r in ipairs(rows) do check64("pow", r[1] .. ", " .. r[2], got:get(i), r[3], own64 and 1 or 16) end
  for i = #rows + 1, #xv do
    local want = (xv[i] == 1 or yv[i] == 0) and 1 or xv[i] ^ yv[i]
    if own64 and not same_value(got:get(i), want) then
      bad[#bad + 1] = ("f64 pow(%s, %s) = %.17g, want %.17g"):format(xv[i], yv[i], got:get(i), want)
    end
  end
end
io.write(#bad == 0 and (own and "ok own" or "ok built-ins") or table.concat(bad, "\n"))
