-- Run by opencl_spec.lua in a process of its own (with LACC_CL_OWN_MATH=0 too): f32 exp
-- and log on the OpenCL device against the exact values (doubles), within 1 ulp where
-- the device runs lacc's own code (a CPU device; explain says so), within the OpenCL C
-- specification's 3 ulp where it runs the device's built-ins; the ends exactly. Prints
-- "ok own" / "ok built-ins" or what differed. LACC_MATH_BACKEND=interp or cpu: that
-- backend (scalar_math_spec.lua), which always runs lacc's own code.
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
  elseif got == INF and math.abs(ref) > 3.4028235677973366e38 then ok = true
  else ok = math.abs(got - ref) <= bound * ulp(ref) end
  if not ok and #bad < 10 then
    bad[#bad + 1] = ("%s(%.9g) = %.9g, want %.9g"):format(name, x, got, ref)
  end
end
for i, x in ipairs(xs) do
  check("exp", x, ex:get(i), math.exp(x))
  check("log", x, lg:get(i), x == 0 and -INF or math.log(x))
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
