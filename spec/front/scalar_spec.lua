-- Scalar expressions (the guide's scalar functions): every operation on every scalar type where it is
-- defined, mapped over host arrays and compared with a plain-Lua reference.
-- Integer references are exact (64-bit wrap-around arithmetic: native integers on
-- Lua 5.4, int64_t cdata on LuaJIT); f32 references round every step with H.f32.
-- No Lua 5.4-only operator syntax appears outside load() chunks (LuaJIT must parse this).
local H = require "helper"
local lacc = H.lacc
local sweep = H.sweeper(it)   -- the type sweeps run where spec/helper.lua says
local unpack = table.unpack or unpack

local JIT = type(jit) == "table"
local LUA54 = _VERSION == "Lua 5.4" and not JIT
local inf, nan = math.huge, 0 / 0
local atan2 = math.atan2 or math.atan

-- ---------------------------------------------------------------------------------
-- Z: exact 64-bit integers. Values are Lua 5.4 integers or LuaJIT int64_t cdata and
-- hold the two's-complement bit pattern (u64 values >= 2^63 are negative here).

local Z = {}
if JIT then
  local ffi = require "ffi"
  local bit = require "bit"
  local I64, U64 = ffi.typeof("int64_t"), ffi.typeof("uint64_t")
  local function u(a) return ffi.cast(U64, a) end
  local function s(a) return ffi.cast(I64, a) end
  function Z.of(n)
    if type(n) == "cdata" then return s(n) end
    assert(n == math.floor(n) and math.abs(n) <= 2 ^ 53, "Z.of: not an exact integer")
    return I64(n)
  end
  Z.MIN = ffi.cast(I64, -2 ^ 63)
  Z.MAX = Z.MIN - 1
  function Z.add(a, b) return a + b end
  function Z.sub(a, b) return a - b end
  function Z.mul(a, b) return a * b end
  function Z.neg(a) return -a end
  function Z.eq(a, b) return a == b end
  function Z.lt(a, b) return a < b end
  function Z.ult(a, b) return u(a) < u(b) end
  -- C division: truncating (callers keep b ~= 0 and b ~= -1)
  function Z.divt(a, b) return a / b end
  function Z.modt(a, b) return a % b end
  function Z.udiv(a, b) return s(u(a) / u(b)) end
  function Z.umod(a, b) return s(u(a) % u(b)) end
  function Z.band(a, b) return bit.band(a, b) end
  function Z.bor(a, b) return bit.bor(a, b) end
  function Z.bxor(a, b) return bit.bxor(a, b) end
  function Z.bnot(a) return bit.bnot(a) end
  function Z.shl(a, n) return bit.lshift(a, n) end        -- 0 <= n <= 63
  function Z.lshr(a, n) return bit.rshift(a, n) end
  function Z.ashr(a, n) return bit.arshift(a, n) end
  function Z.tof64(a) return tonumber(a) end
  function Z.utof64(a) return tonumber(u(a)) end
  function Z.fromfloat(d) return I64(d) end                -- d integral, |d| < 2^63
  function Z.small(a) return tonumber(a) end
  function Z.from_got(v)
    if type(v) == "cdata" then return s(v) end
    return I64(v)
  end
else
  Z = assert(load([[
    local Z = {}
    function Z.of(n)
      local r = math.tointeger(n)
      assert(r, "Z.of: not an exact integer")
      return r
    end
    Z.MIN, Z.MAX = math.mininteger, math.maxinteger
    function Z.add(a, b) return a + b end
    function Z.sub(a, b) return a - b end
    function Z.mul(a, b) return a * b end
    function Z.neg(a) return -a end
    function Z.eq(a, b) return a == b end
    function Z.lt(a, b) return a < b end
    Z.ult = math.ult
    function Z.divt(a, b)
      local q = a // b
      if q < 0 and q * b ~= a then q = q + 1 end
      return q
    end
    function Z.modt(a, b) return a - Z.divt(a, b) * b end
    function Z.udiv(n, d)
      if d < 0 then return math.ult(n, d) and 0 or 1 end
      local q = ((n >> 1) // d) << 1
      local r = n - q * d
      if not math.ult(r, d) then q = q + 1 end
      return q
    end
    function Z.umod(n, d) return n - Z.udiv(n, d) * d end
    function Z.band(a, b) return a & b end
    function Z.bor(a, b) return a | b end
    function Z.bxor(a, b) return a ~ b end
    function Z.bnot(a) return ~a end
    function Z.shl(a, n) return a << n end
    function Z.lshr(a, n) return a >> n end
    function Z.ashr(a, n)
      if a < 0 then return ~((~a) >> n) end
      return a >> n
    end
    function Z.tof64(a) return a + 0.0 end
    function Z.utof64(a)
      if a >= 0 then return a + 0.0 end
      return (((a >> 1) | (a & 1)) + 0.0) * 2.0
    end
    function Z.fromfloat(d) return assert(math.tointeger(d)) end
    function Z.small(a) return a end
    function Z.from_got(v) return assert(math.tointeger(v)) end
    return Z
  ]], "=Z54"))()
end
local Z0, Z1 = Z.of(0), Z.of(1)
-- floor division / modulo from the truncating ones (b ~= 0, b ~= -1)
function Z.divf(a, b)
  local q = Z.divt(a, b)
  if not Z.eq(Z.modt(a, b), Z0) and (Z.lt(a, Z0) ~= Z.lt(b, Z0)) then q = Z.sub(q, Z1) end
  return q
end
function Z.modf(a, b)
  local r = Z.modt(a, b)
  if not Z.eq(r, Z0) and (Z.lt(r, Z0) ~= Z.lt(b, Z0)) then r = Z.add(r, b) end
  return r
end

-- ---------------------------------------------------------------------------------
-- Types

local ALL = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" }
local INTS = { "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64" }
local FLOATS = { "f32", "f64" }
local NUMS = { "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" }

local INT = {}
for _, t in ipairs(INTS) do
  local bits, signed = tonumber(t:sub(2)), t:sub(1, 1) == "i"
  local info = { bits = bits, signed = signed }
  if bits == 64 then
    info.lo = signed and Z.MIN or Z0
    info.hi = signed and Z.MAX or Z.of(-1)
  else
    local m = Z.shl(Z1, bits)
    info.mask = Z.sub(m, Z1)
    info.m = m
    info.half = Z.shl(Z1, bits - 1)
    info.lo = signed and Z.neg(info.half) or Z0
    info.hi = signed and Z.sub(info.half, Z1) or info.mask
  end
  INT[t] = info
end

-- Wrap a 64-bit value to the width of t (two's complement).
local function wrap(t, z)
  local info = INT[t]
  if info.bits == 64 then return z end
  local r = Z.band(z, info.mask)
  if info.signed and not Z.lt(r, info.half) then r = Z.sub(r, info.m) end
  return r
end

local function is_float(t) return t == "f32" or t == "f64" end
local function ident(x) return x end
local function rounder(t) return t == "f32" and H.f32 or ident end

-- ---------------------------------------------------------------------------------
-- Float helpers with C semantics (signed zeros kept)

local function fix_zero(r, x)
  if r == 0 then return x * 0.0 end         -- the sign of x (x finite here)
  return r
end
local function nonfinite(x) return x ~= x or x == inf or x == -inf end
local function ffloor(x)
  if nonfinite(x) then return x end
  return fix_zero(math.floor(x) * 1.0, x)
end
local function fceil(x)
  if nonfinite(x) then return x end
  return fix_zero(math.ceil(x) * 1.0, x)
end
local function ftrunc(x)
  if nonfinite(x) then return x end
  local r = x >= 0 and math.floor(x) or math.ceil(x)
  return fix_zero(r * 1.0, x)
end
local function fround(x)   -- half away from zero
  if nonfinite(x) then return x end
  local t = ftrunc(x)
  if math.abs(x - t) >= 0.5 then t = t + (x > 0 and 1 or -1) end
  return fix_zero(t * 1.0, x)
end
local function fabs(x)
  if x ~= x then return x end
  if x < 0 or (x == 0 and 1 / x < 0) then return -x end
  return x
end
local function fsignum(x)
  if x > 0 then return 1.0 elseif x < 0 then return -1.0 end
  return x
end
-- Lua's float modulo: fmod, corrected by one divisor when the remainder and the
-- divisor differ in sign (what Lua 5.4's % gives: -1 % -1.5 == -1)
local function fmodlua(a, b, R)
  local m = math.fmod(a, b)
  if m ~= 0 and ((m < 0) ~= (b < 0)) then m = R(m + b) end
  return m
end

-- ---------------------------------------------------------------------------------
-- Conversions (the reference for casts)

local TWO53, TWO63, TWO64 = 2 ^ 53, 2 ^ 63, 2 ^ 64

local function int_to_f64(t, z)
  if t == "u64" then return Z.utof64(z) end
  return Z.tof64(z)
end

-- Single rounding to f32: keep the bits below 2^11 as a sticky bit, then round once.
local BIG53 = Z.shl(Z1, 53)
local function int_to_f32(t, z)
  local neg = INT[t].signed and Z.lt(z, Z0)
  local m = neg and Z.neg(z) or z
  local d
  if Z.ult(m, BIG53) then
    d = Z.tof64(m)
  else
    local hi = Z.lshr(m, 11)
    if not Z.eq(Z.band(m, Z.of(2047)), Z0) then hi = Z.bor(hi, Z1) end
    d = Z.tof64(hi) * 2048
  end
  d = H.f32(d)
  if neg then d = -d end
  return d
end

local function float_to_int(t, d)
  local info = INT[t]
  local v
  if info.signed then
    if d ~= d then v = Z0
    elseif d >= TWO63 then v = Z.MAX
    elseif d <= -TWO63 then v = Z.MIN
    else v = Z.fromfloat(ftrunc(d)) end
    if info.bits < 64 then
      if Z.lt(info.hi, v) then v = info.hi elseif Z.lt(v, info.lo) then v = info.lo end
    end
  else
    if d ~= d or d <= 0 then v = Z0
    elseif d >= TWO64 then v = Z.of(-1)
    else
      d = ftrunc(d)
      if d >= TWO63 then v = Z.fromfloat(d - TWO64) else v = Z.fromfloat(d) end
    end
    if info.bits < 64 and Z.ult(info.hi, v) then v = info.hi end
  end
  return v
end

-- cast(from, to, v): v in from's representation, result in to's.
local function cast_ref(from, to, v)
  if from == "bool" then
    if to == "bool" then return v end
    if INT[to] then return v and Z1 or Z0 end
    return v and 1.0 or 0.0
  end
  if INT[from] then
    if to == "bool" then return not Z.eq(v, Z0) end
    if INT[to] then return wrap(to, v) end
    if to == "f64" then return int_to_f64(from, v) end
    return int_to_f32(from, v)
  end
  -- from a float
  if to == "bool" then return v ~= 0 end
  if to == "f32" then return H.f32(v) end
  if to == "f64" then return v end
  return float_to_int(to, v)
end

-- ---------------------------------------------------------------------------------
-- Input values

H.seed(20240611)
local function zrand()
  local hi = Z.of(H.randint(0, 2 ^ 32 - 1))
  local lo = Z.of(H.randint(0, 2 ^ 32 - 1))
  return Z.add(Z.mul(hi, Z.of(2 ^ 32)), lo)
end

local F64S = { 0.0, -0.0, 1, -1, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3, -7.25, 0.1, 10, -100,
               1e300, -1e300, inf, -inf, nan, TWO53, TWO63, -TWO63, TWO64, 5e-324 }
for i = 1, #F64S do F64S[i] = F64S[i] * 1.0 end   -- floats on Lua 5.4 (keeps -0.0)
local F32S = {}
for i, x in ipairs(F64S) do F32S[i] = H.f32(x) end
F32S[#F32S + 1] = 3.4028234663852886e38
F32S[#F32S + 1] = H.f32(1e-45)
F32S[#F32S + 1] = H.f32(0.3)

local SPECIALS = {}
for _, t in ipairs(INTS) do
  local info = INT[t]
  local s = {}
  for _, n in ipairs { 0, 1, 2, 3, 7, -1, -2, -7, 100, -100 } do s[#s + 1] = wrap(t, Z.of(n)) end
  s[#s + 1] = info.lo
  s[#s + 1] = Z.add(info.lo, Z1)
  s[#s + 1] = info.hi
  s[#s + 1] = Z.sub(info.hi, Z1)
  SPECIALS[t] = s
end
SPECIALS.f32, SPECIALS.f64 = F32S, F64S
SPECIALS.bool = { false, true }

local function values(t, nrand)
  local r = {}
  for i, v in ipairs(SPECIALS[t]) do r[i] = v end
  for _ = 1, nrand or 0 do
    if INT[t] then r[#r + 1] = wrap(t, zrand())
    elseif t == "bool" then r[#r + 1] = H.rand() < 0.5
    else r[#r + 1] = rounder(t)((H.rand() - 0.5) * 2000) end
  end
  return r
end

-- All pairs of the special values, then random pairs.
local function pairs_of(t, ys_special, nrand)
  local xs, ys = {}, {}
  local sx = SPECIALS[t]
  local sy = ys_special or sx
  for _, a in ipairs(sx) do
    for _, b in ipairs(sy) do xs[#xs + 1], ys[#ys + 1] = a, b end
  end
  local rx, ry = values(t, nrand), values(t, nrand)
  for i = #sx + 1, #rx do xs[#xs + 1], ys[#ys + 1] = rx[i], ry[i] end
  return xs, ys
end

-- ---------------------------------------------------------------------------------
-- Comparing results

local function show(v)
  if type(v) == "number" then
    if v == 0 and 1 / v < 0 then return "-0.0" end
    return ("%.17g"):format(v)
  end
  return tostring(v)
end

local function fsame(got, exp, rel)
  if type(got) ~= "number" then return false end
  if exp ~= exp then return got ~= got end
  if got ~= got then return false end
  if exp == 0 and got == 0 then return (1 / exp) == (1 / got) end
  if got == exp then return true end
  if rel and not nonfinite(exp) and not nonfinite(got) then
    return math.abs(got - exp) <= rel * math.abs(exp)
  end
  return false
end

local function same(rt, got, exp, rel)
  if rt == "bool" then return got == exp end
  if INT[rt] then
    local ok, g = pcall(Z.from_got, got)
    return ok and Z.eq(g, exp)
  end
  return fsame(got, exp, rel)
end

-- Check a result array: rts lists the result type of each field (a scalar when one),
-- expect(i) gives the expected values of element i as a list, tols a tolerance per field,
-- desc(i) describes the inputs of element i for messages.
local function check_result(arr, rts, n, expect, desc, tols)
  local want_type = #rts == 1 and rts[1] or "(" .. table.concat(rts, ",") .. ")"
  assert.are.equal(want_type, arr:type())
  assert.are.equal(n, #arr)
  local bad = {}
  for i = 1, n do
    local got = arr:at_linear(i - 1)
    if #rts == 1 then got = { got } end
    local exp = expect(i)
    for k, rt in ipairs(rts) do
      if not same(rt, got[k], exp[k], tols and tols[k]) then
        bad[#bad + 1] = ("  %s [field %d]: expected %s, got %s"):format(desc(i), k,
          show(exp[k]), show(got[k]))
        if #bad >= 8 then break end
      end
    end
    if #bad >= 8 then break end
  end
  if #bad > 0 then
    assert.is_true(false, "mismatches:\n" .. table.concat(bad, "\n"))
  end
end

local function rep(x, n)
  local r = {}
  for i = 1, n do r[i] = x end
  return r
end

local function map_run(backend, f, t, xs)
  return lacc.run(lacc.map(f, lacc.fromtable(xs, t)), { backend = backend })
end
local function zip_run(backend, f, t1, xs, t2, ys)
  return lacc.run(lacc.zipWith(f, lacc.fromtable(xs, t1), lacc.fromtable(ys, t2)),
    { backend = backend })
end

-- ---------------------------------------------------------------------------------
-- Reference semantics of each operation: ref(t, a, b) in the result type's form.

local function icmp_lt(t, a, b)
  if INT[t].signed then return Z.lt(a, b) end
  return Z.ult(a, b)
end
local function lt_any(t, a, b)
  if t == "bool" then return (a and 1 or 0) < (b and 1 or 0) end
  if INT[t] then return icmp_lt(t, a, b) end
  return a < b
end
local function eq_any(t, a, b)
  if INT[t] then return Z.eq(a, b) end
  return a == b
end

local function shift_ref(t, a, n, left)
  local info = INT[t]
  local bits = info.bits
  if Z.lt(n, Z0) then
    left = not left
    n = Z.eq(n, Z.MIN) and Z.of(bits) or Z.neg(n)
  end
  local big = not Z.lt(n, Z.of(bits))
  if left then
    if big then return Z0 end
    return wrap(t, Z.shl(a, Z.small(n)))
  end
  if info.signed then
    if big then return Z.lt(a, Z0) and Z.of(-1) or Z0 end
    return Z.ashr(a, Z.small(n))
  end
  if big then return Z0 end
  return Z.lshr(a, Z.small(n))
end

local function idiv_ref(t, a, b)
  if not INT[t].signed then return Z.udiv(a, b) end
  if Z.eq(b, Z.of(-1)) then return wrap(t, Z.neg(a)) end
  return Z.divf(a, b)
end
local function imod_ref(t, a, b)
  if not INT[t].signed then return Z.umod(a, b) end
  if Z.eq(b, Z.of(-1)) then return Z0 end
  return Z.modf(a, b)
end
local function quot_ref(t, a, b)
  if not INT[t].signed then return Z.udiv(a, b) end
  if Z.eq(b, Z.of(-1)) then return wrap(t, Z.neg(a)) end
  return Z.divt(a, b)
end
local function rem_ref(t, a, b)
  if not INT[t].signed then return Z.umod(a, b) end
  if Z.eq(b, Z.of(-1)) then return Z0 end
  return Z.modt(a, b)
end

local function same_t(t) return t end
local function bool_t() return "bool" end
local function f64_if_int(t) return is_float(t) and t or "f64" end

local TF64 = 1e-15    -- f64 transcendental functions (LuaJIT's own ^ may differ by an ulp)
local TF32 = 2.5e-7   -- f32 transcendental functions against double-then-round

-- Binary operations. fn returns the operation in each of its spellings (all must agree).
local BINOPS = {
  { name = "+", types = NUMS, rt = same_t, fn = function(x, y) return x + y end,
    int = function(t, a, b) return wrap(t, Z.add(a, b)) end,
    flt = function(R, a, b) return R(a + b) end },
  { name = "-", types = NUMS, rt = same_t, fn = function(x, y) return x - y end,
    int = function(t, a, b) return wrap(t, Z.sub(a, b)) end,
    flt = function(R, a, b) return R(a - b) end },
  { name = "*", types = NUMS, rt = same_t, fn = function(x, y) return x * y end,
    int = function(t, a, b) return wrap(t, Z.mul(a, b)) end,
    flt = function(R, a, b) return R(a * b) end },
  { name = "/", types = NUMS, rt = f64_if_int, fn = function(x, y) return x / y end,
    int = function(t, a, b) return int_to_f64(t, a) / int_to_f64(t, b) end,
    flt = function(R, a, b) return R(a / b) end },
  { name = "%", types = NUMS, rt = same_t, nz = true,
    fn = function(x, y) return x % y, lacc.imod(x, y), x:imod(y) end,
    int = imod_ref, flt = function(R, a, b) return fmodlua(a, b, R) end },
  { name = "idiv", types = NUMS, rt = same_t, nz = true,
    fn = function(x, y) return lacc.idiv(x, y), x:idiv(y) end,
    int = idiv_ref, flt = function(R, a, b) return ffloor(R(a / b)) end },
  -- integer operands: pow of their f64 values, as accurate as pow on f64 (OpenCL allows
  -- pow 16 ulp: PoCL's differs from glibc's in the last bits)
  { name = "^", types = NUMS, rt = f64_if_int, tol = setmetatable({ f32 = TF32 }, { __index = function() return TF64 end }),
    fn = function(x, y) return x ^ y, lacc.pow(x, y) end,
    int = function(t, a, b) return int_to_f64(t, a) ^ int_to_f64(t, b) end,
    flt = function(R, a, b) return R(a ^ b) end },
  { name = "quot", types = INTS, rt = same_t, nz = true,
    fn = function(x, y) return lacc.quot(x, y), x:quot(y) end, int = quot_ref },
  { name = "rem", types = INTS, rt = same_t, nz = true,
    fn = function(x, y) return lacc.rem(x, y), x:rem(y) end, int = rem_ref },
  { name = "band", types = INTS, rt = same_t,
    fn = function(x, y) return lacc.band(x, y), x:band(y) end,
    int = function(t, a, b) return wrap(t, Z.band(a, b)) end },
  { name = "bor", types = INTS, rt = same_t,
    fn = function(x, y) return lacc.bor(x, y), x:bor(y) end,
    int = function(t, a, b) return wrap(t, Z.bor(a, b)) end },
  { name = "bxor", types = INTS, rt = same_t,
    fn = function(x, y) return lacc.bxor(x, y), x:bxor(y) end,
    int = function(t, a, b) return wrap(t, Z.bxor(a, b)) end },
  { name = "shl", types = INTS, rt = same_t, counts = true,
    fn = function(x, y) return lacc.shl(x, y), x:shl(y) end,
    int = function(t, a, b) return shift_ref(t, a, b, true) end },
  { name = "shr", types = INTS, rt = same_t, counts = true,
    fn = function(x, y) return lacc.shr(x, y), x:shr(y) end,
    int = function(t, a, b) return shift_ref(t, a, b, false) end },
  { name = "min", types = NUMS, rt = same_t,
    fn = function(x, y) return lacc.min(x, y), x:min(y) end,
    int = function(t, a, b) return icmp_lt(t, b, a) and b or a end,
    flt = function(_, a, b) return b < a and b or a end },
  { name = "max", types = NUMS, rt = same_t,
    fn = function(x, y) return lacc.max(x, y), x:max(y) end,
    int = function(t, a, b) return icmp_lt(t, a, b) and b or a end,
    flt = function(_, a, b) return b > a and b or a end },
  { name = "atan2", types = FLOATS, rt = same_t, tol = { f32 = TF32, f64 = TF64 },
    fn = function(x, y) return lacc.atan2(x, y) end,
    flt = function(R, a, b) return R(atan2(a, b)) end },
}

-- Comparisons on every type; function and method spellings.
local CMPS = {
  { name = "eq", fn = function(x, y) return lacc.eq(x, y), x:eq(y) end,
    ref = function(t, a, b) return eq_any(t, a, b) end },
  { name = "ne", fn = function(x, y) return lacc.ne(x, y), x:ne(y) end,
    ref = function(t, a, b) return not eq_any(t, a, b) end },
  { name = "lt", fn = function(x, y) return lacc.lt(x, y), x:lt(y) end,
    ref = function(t, a, b) return lt_any(t, a, b) end },
  { name = "le", fn = function(x, y) return lacc.le(x, y), x:le(y) end,
    ref = function(t, a, b)
      if is_float(t) then return a <= b end
      return lt_any(t, a, b) or eq_any(t, a, b)
    end },
  { name = "gt", fn = function(x, y) return lacc.gt(x, y), x:gt(y) end,
    ref = function(t, a, b) return lt_any(t, b, a) end },
  { name = "ge", fn = function(x, y) return lacc.ge(x, y), x:ge(y) end,
    ref = function(t, a, b)
      if is_float(t) then return a >= b end
      return lt_any(t, b, a) or eq_any(t, a, b)
    end },
}

-- Unary operations.
local function fl1(f) return function(R, a) return R(f(a)) end end
local UNOPS = {
  { name = "unary -", types = NUMS, fn = function(x) return -x end,
    int = function(t, a) return wrap(t, Z.neg(a)) end, flt = function(_, a) return -a end },
  { name = "bnot", types = INTS, fn = function(x) return lacc.bnot(x), x:bnot() end,
    int = function(t, a) return wrap(t, Z.bnot(a)) end },
  { name = "abs", types = NUMS, fn = function(x) return lacc.abs(x), x:abs() end,
    int = function(t, a)
      if INT[t].signed and Z.lt(a, Z0) then return wrap(t, Z.neg(a)) end
      return a
    end,
    flt = function(_, a) return fabs(a) end },
  { name = "signum", types = NUMS, fn = function(x) return lacc.signum(x) end,
    int = function(t, a)
      if Z.eq(a, Z0) then return Z0 end
      if INT[t].signed and Z.lt(a, Z0) then return Z.of(-1) end
      return Z1
    end,
    flt = function(_, a) return fsignum(a) end },
  { name = "sqrt", types = FLOATS, fn = function(x) return lacc.sqrt(x), x:sqrt() end,
    flt = fl1(math.sqrt) },
  { name = "floor", types = FLOATS, fn = function(x) return lacc.floor(x), x:floor() end,
    flt = function(_, a) return ffloor(a) end },
  { name = "ceil", types = FLOATS, fn = function(x) return lacc.ceil(x), x:ceil() end,
    flt = function(_, a) return fceil(a) end },
  { name = "round", types = FLOATS, fn = function(x) return lacc.round(x), x:round() end,
    flt = function(_, a) return fround(a) end },
  { name = "truncate", types = FLOATS, fn = function(x) return lacc.truncate(x), x:truncate() end,
    flt = function(_, a) return ftrunc(a) end },
  { name = "isnan", types = FLOATS, rt = bool_t, fn = function(x) return lacc.isnan(x), x:isnan() end,
    flt = function(_, a) return a ~= a end },
}
for _, name in ipairs { "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan" } do
  UNOPS[#UNOPS + 1] = { name = name, types = FLOATS, tol = { f32 = TF32, f64 = TF64 },
    fn = function(x) return lacc[name](x) end, flt = fl1(math[name]) }
end

local function nresults(f, t, nargs)
  -- how many spellings an op's fn returns (traced once to count)
  local n
  local arr = lacc.fromtable({ SPECIALS[t][1] }, t)
  if nargs == 1 then
    lacc.map(function(x) local r = { f(x) }; n = #r; return unpack(r) end, arr)
  else
    lacc.zipWith(function(x, y) local r = { f(x, y) }; n = #r; return unpack(r) end, arr, arr)
  end
  return n
end

local function counts_for(t)
  local bits = INT[t].bits
  local c = {}
  for _, n in ipairs { 0, 1, 2, 3, bits - 1, bits, bits + 1, 63, 64, 65, 100,
                       -1, -2, -(bits - 1), -bits, -bits - 1, -64, -65 } do
    c[#c + 1] = wrap(t, Z.of(n))
  end
  c[#c + 1] = INT[t].lo
  c[#c + 1] = INT[t].hi
  return c
end

-- ---------------------------------------------------------------------------------

for _, backend in ipairs(H.backends) do
  describe("scalar expressions on " .. backend .. ":", function()

    -- Each type's operations that take the same inputs (plain pairs, shift counts, pairs
    -- without zero divisors) run in kernels of up to 16 results: a compile per kernel,
    -- not per operation; every operation's result is still checked on its own.
    describe("binary operations", function()
      for _, t in ipairs(ALL) do
        local groups, kinds = {}, {}
        for _, op in ipairs(BINOPS) do
          for _, ot in ipairs(op.types) do
            if ot == t then
              local kind = op.counts and "counts" or (op.nz and INT[t]) and "nz" or "plain"
              if not groups[kind] then groups[kind], kinds[#kinds + 1] = {}, kind end
              table.insert(groups[kind], op)
            end
          end
        end
        for _, kind in ipairs(kinds) do
          local packs, cur, width = {}, {}, 0
          for _, op in ipairs(groups[kind]) do
            local n = nresults(op.fn, t, 2)
            if width + n > 16 then packs[#packs + 1], cur, width = cur, {}, 0 end
            cur[#cur + 1], width = { op = op, n = n }, width + n
          end
          packs[#packs + 1] = cur
          for _, pack in ipairs(packs) do
            local names, rts, tols = {}, {}, {}
            for _, e in ipairs(pack) do
              names[#names + 1] = e.op.name
              for _ = 1, e.n do
                rts[#rts + 1] = e.op.rt(t)
                tols[#rts] = e.op.tol and e.op.tol[t]
              end
            end
            sweep(t, backend, table.concat(names, " ") .. " on " .. t, function()
              local xs, ys = pairs_of(t, kind == "counts" and counts_for(t) or nil, 24)
              if kind == "nz" then     -- zero divisors have their own test
                local fx, fy = {}, {}
                for i = 1, #xs do
                  if not Z.eq(ys[i], Z0) then fx[#fx + 1], fy[#fy + 1] = xs[i], ys[i] end
                end
                xs, ys = fx, fy
              end
              local f = function(x, y)
                local r = {}
                for _, e in ipairs(pack) do
                  for _, v in ipairs { e.op.fn(x, y) } do r[#r + 1] = v end
                end
                return unpack(r)
              end
              local r = zip_run(backend, f, t, xs, t, ys)
              local R = rounder(t)
              check_result(r, rts, #xs, function(i)
                local want = {}
                for _, e in ipairs(pack) do
                  local v
                  if INT[t] then v = e.op.int(t, xs[i], ys[i]) else v = e.op.flt(R, xs[i], ys[i]) end
                  for _ = 1, e.n do want[#want + 1] = v end
                end
                return want
              end, function(i)
                local at, legend = 1, {}
                for _, e in ipairs(pack) do   -- which fields are which operation's
                  legend[#legend + 1] = ("%d-%d %s"):format(at, at + e.n - 1, e.op.name)
                  at = at + e.n
                end
                return ("%s op %s (%s; fields %s)"):format(show(xs[i]), show(ys[i]), t,
                                                         table.concat(legend, ", "))
              end, tols)
            end)
          end
        end
      end
    end)

    -- a constant count in range is written into the kernel as a plain shift (emit_c.c);
    -- the others take the general shift, as counts from arrays do
    describe("shifts by constant counts", function()
      for _, t in ipairs(INTS) do
        sweep(t, backend, "shl and shr by each constant count on " .. t, function()
          local xs = pairs_of(t, nil, 8)
          local all = counts_for(t)
          for from = 1, #all, 8 do   -- 16 results a kernel at most
            local cs = { unpack(all, from, math.min(from + 7, #all)) }
            local f = function(x)
              local r = {}
              for _, c in ipairs(cs) do
                local k = lacc.constant(c, t)
                r[#r + 1] = lacc.shl(x, k)
                r[#r + 1] = lacc.shr(x, k)
              end
              return unpack(r)
            end
            check_result(map_run(backend, f, t, xs), rep(t, 2 * #cs), #xs, function(i)
              local e = {}
              for _, c in ipairs(cs) do
                e[#e + 1] = shift_ref(t, xs[i], c, true)
                e[#e + 1] = shift_ref(t, xs[i], c, false)
              end
              return e
            end, function(i) return show(xs[i]) .. " (" .. t .. ")" end)
          end
        end)
      end
    end)

    describe("comparisons", function()
      for _, t in ipairs(ALL) do
        sweep(t, backend, "eq ne lt le gt ge (functions and methods) on " .. t, function()
          local xs, ys = pairs_of(t, nil, t == "bool" and 0 or 16)
          local f = function(x, y)
            local r = {}
            for _, c in ipairs(CMPS) do
              local a, b = c.fn(x, y)
              r[#r + 1] = a
              r[#r + 1] = b
            end
            return unpack(r)
          end
          local r = zip_run(backend, f, t, xs, t, ys)
          check_result(r, rep("bool", 2 * #CMPS), #xs, function(i)
            local e = {}
            for _, c in ipairs(CMPS) do
              local v = c.ref(t, xs[i], ys[i])
              e[#e + 1] = v
              e[#e + 1] = v
            end
            return e
          end, function(i)
            return ("cmp(%s, %s) on %s, fields eq eq' ne ne' lt lt' le le' gt gt' ge ge'"):format(
              show(xs[i]), show(ys[i]), t)
          end)
        end)
      end

      it("== and < on expressions are errors that name lacc.eq / lacc.lt", function()
        local a = lacc.fromtable({ 1, 2 }, "i32")
        local ok, err = pcall(lacc.zipWith, function(x, y) return x == y end, a, a)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("lacc.eq", 1, true))
        ok, err = pcall(lacc.zipWith, function(x, y) return x < y end, a, a)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("lacc.lt", 1, true))
        ok, err = pcall(lacc.zipWith, function(x, y) return x <= y end, a, a)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("lacc.le", 1, true))
      end)
    end)

    describe("logic on bool", function()
      it("land lor lnot (functions and methods), and bool cond", function()
        local xs, ys = pairs_of("bool")
        local r = zip_run(backend, function(x, y)
          return lacc.land(x, y), x:land(y), lacc.lor(x, y), x:lor(y), lacc.lnot(x), x:lnot(),
            lacc.cond(x, y, lacc.lnot(y)), lacc.land(x, lacc.constant(true)),
            lacc.lor(lacc.constant(false), y)
        end, "bool", xs, "bool", ys)
        check_result(r, rep("bool", 9), #xs, function(i)
          local a, b = xs[i], ys[i]
          local c
          if a then c = b else c = not b end
          return { a and b, a and b, a or b, a or b, not a, not a, c, a, b }
        end, function(i) return ("logic(%s, %s)"):format(tostring(xs[i]), tostring(ys[i])) end)
      end)
    end)

    describe("unary operations", function()
      -- the operations on one type in one run (H.batch): a program to compile a type
      local per_type = {}
      for _, op in ipairs(UNOPS) do
        for _, t in ipairs(op.types) do
          per_type[t] = per_type[t] or H.batch(function(list) return lacc.run(list, { backend = backend }) end)
          local xs = values(t, 24)
          local k = per_type[t]:add(lacc.map(op.fn, lacc.fromtable(xs, t)))
          sweep(t, backend, op.name .. " on " .. t, function()
            local n = nresults(op.fn, t, 1)
            local rt = op.rt and op.rt(t) or t
            local r = per_type[t]:get(k)
            local R = rounder(t)
            local tol = op.tol and op.tol[t]
            check_result(r, rep(rt, n), #xs, function(i)
              local e
              if INT[t] then e = op.int(t, xs[i]) else e = op.flt(R, xs[i]) end
              return rep(e, n)
            end, function(i) return ("%s(%s) (%s)"):format(op.name, show(xs[i]), t) end,
            rep(tol, n))
          end)
        end
      end
    end)

    describe("cond", function()
      for _, t in ipairs(ALL) do
        sweep(t, backend, "selects per element on " .. t, function()
          local xs, ys = pairs_of(t, nil, 8)
          local cs = {}
          for i = 1, #xs do cs[i] = (i % 3) ~= 0 end
          local r = lacc.run(lacc.zipWith3(function(c, x, y)
            return lacc.cond(c, x, y), lacc.cond(lacc.lnot(c), x, y)
          end, lacc.fromtable(cs, "bool"), lacc.fromtable(xs, t), lacc.fromtable(ys, t)),
            { backend = backend })
          check_result(r, { t, t }, #xs, function(i)
            local a, b = xs[i], ys[i]
            if cs[i] then return { a, b } end
            return { b, a }
          end, function(i) return ("cond(%s, %s, %s)"):format(tostring(cs[i]), show(xs[i]),
            show(ys[i])) end)
        end)
      end

      it("refuses a Lua boolean condition (a comparison Lua made first) and takes a constant", function()
        local ok, err = pcall(lacc.cond, true, 1, 2)
        assert.is_false(ok)
        assert.truthy(err:find("cond: got the Lua boolean true", 1, true), err)
        ok, err = pcall(map_run, backend, function(x) return lacc.cond(x == 0.5, x * 2, x + 1) end,
                        "i32", { 1, 5 })
        assert.is_false(ok)
        assert.truthy(err:find("lacc.eq", 1, true), err)
        local r = map_run(backend, function(x) return lacc.cond(lacc.constant(false), x * 2, x + 1) end,
          "i32", { 1, 5 })
        local xs = { 1, 5 }
        check_result(r, { "i32" }, 2, function(i) return { Z.add(Z.of(xs[i]), Z1) } end,
          function(i) return "cond(false) " .. i end)
      end)
    end)

    describe("casts", function()
      local CAST_INPUTS = {}
      for _, t in ipairs(ALL) do
        local v = values(t, 6)
        if t == "f64" or t == "f32" then
          for _, d in ipairs { 0.999, -0.999, 127.9, 128, -128.5, -129, 255.5, 256, -1e-3,
                               32767.5, 32768, -32769, 65535.9, 65536, 2 ^ 31 - 0.5, 2 ^ 31,
                               -2 ^ 31 - 1, 2 ^ 32, 2 ^ 32 - 1, 2 ^ 53 + 2, 2 ^ 63 - 1024,
                               -2 ^ 63 - 4096, 2 ^ 64 - 4096, 1.8e19, -TWO64, 3.4e38 } do
            v[#v + 1] = rounder(t)(d * 1.0)
          end
        elseif INT[t] then
          -- values whose conversion to f32 / f64 rounds (double rounding would differ)
          local one = Z1
          local extra = {
            Z.add(Z.shl(one, 53), one),
            Z.add(Z.shl(one, 24), one),
            Z.add(Z.add(Z.shl(one, 60), Z.shl(one, 36)), one),
            Z.neg(Z.add(Z.add(Z.shl(one, 60), Z.shl(one, 36)), one)),
            Z.add(Z.add(Z.shl(one, 63), Z.shl(one, 39)), one),
            Z.add(Z.add(Z.shl(one, 63), Z.shl(one, 10)), one),
            Z.add(Z.shl(one, 62), Z.shl(one, 9)),
            Z.of(16777217), Z.of(-16777217), Z.of(33554435), Z.of(2147483647),
          }
          for _, z in ipairs(extra) do v[#v + 1] = wrap(t, z) end
        end
        CAST_INPUTS[t] = v
      end

      for _, from in ipairs(ALL) do
        -- the casts from one type in one run (H.batch): one program to compile, not 11
        local casts = H.batch(function(list) return lacc.run(list, { backend = backend }) end)
        for _, to in ipairs(ALL) do
          local k = casts:add(lacc.map(function(x)
            return lacc.cast(x, to), x:cast(to)
          end, lacc.fromtable(CAST_INPUTS[from], from)))
          sweep(from, backend, from .. " -> " .. to .. " (lacc.cast and x:cast)", function()
            local xs = CAST_INPUTS[from]
            local r = casts:get(k)
            check_result(r, { to, to }, #xs, function(i)
              local e = cast_ref(from, to, xs[i])
              return { e, e }
            end, function(i) return ("cast(%s: %s, %s)"):format(show(xs[i]), from, to) end)
          end)
        end
      end

      it("of a Lua number gives a constant of the type", function()
        local r = map_run(backend, function(x) return x + lacc.cast(300, "u8"), lacc.cast(lacc.constant(-1.5, "f64"), "i16") end,
          "u8", { 1, 2 })
        check_result(r, { "u8", "i16" }, 2, function(i)
          return { wrap("u8", Z.add(Z.of(i), Z.of(300))), Z.of(-1) }
        end, function(i) return "constant cast " .. i end)
      end)

      it("to a non-scalar type is an error", function()
        local ok, err = pcall(lacc.map, function(x) return x:cast("(i32,i32)") end,
          lacc.fromtable({ 1 }, "i32"))
        assert.is_false(ok)
        assert.truthy(tostring(err):find("cast", 1, true))
      end)
    end)

    describe("weak constants", function()
      for _, t in ipairs(INTS) do
        sweep(t, backend, "keep the integer type " .. t .. " and wrap", function()
          local xs = values(t, 8)
          local c = function(n) return wrap(t, Z.of(n)) end
          local r = map_run(backend, function(x)
            return x * 2, 3 - x, x + 1, x % 5, lacc.max(x, 0), lacc.cond(lacc.lt(x, 0), 0, x),
              x - 300, lacc.idiv(x, 3), lacc.shl(1, lacc.band(x, 7))
          end, t, xs)
          check_result(r, rep(t, 9), #xs, function(i)
            local a = xs[i]
            local m = icmp_lt(t, a, Z0) and Z0 or a
            return { wrap(t, Z.mul(a, c(2))), wrap(t, Z.sub(c(3), a)), wrap(t, Z.add(a, Z1)),
                     imod_ref(t, a, c(5)), icmp_lt(t, a, Z0) and Z0 or a, m,
                     wrap(t, Z.sub(a, c(300))), idiv_ref(t, a, c(3)),
                     shift_ref(t, Z1, Z.band(a, Z.of(7)), true) }
          end, function(i) return ("consts(%s) on %s"):format(show(xs[i]), t) end)
        end)

        sweep(t, backend, "/ and ^ on " .. t .. " give f64", function()
          local xs = values(t, 8)
          local r = map_run(backend, function(x) return x / 2, x ^ 2, 1 / x end, t, xs)
          check_result(r, { "f64", "f64", "f64" }, #xs, function(i)
            local a = int_to_f64(t, xs[i])
            local two = int_to_f64(t, wrap(t, Z.of(2)))
            return { a / two, a ^ 2, 1 / a }
          end, function(i) return ("x/2, x^2, 1/x at %s on %s"):format(show(xs[i]), t) end,
          { nil, TF64, nil })
        end)

        sweep(t, backend, "a fractional number with " .. t .. " is an error", function()
          local arr = lacc.fromtable({ 1, 2 }, t)
          local ok, err = pcall(lacc.map, function(x) return x + 0.5 end, arr)
          assert.is_false(ok)
          assert.truthy(tostring(err):find("0.5", 1, true))
          assert.truthy(tostring(err):find(t, 1, true))
          ok = pcall(lacc.map, function(x) return 2.25 * x end, arr)
          assert.is_false(ok)
          -- lacc keeps working
          local r = map_run(backend, function(x) return x + 1 end, t, { Z.of(4) })
          check_result(r, { t }, 1, function() return { Z.of(5) } end, function() return "x+1" end)
        end)
      end

      for _, t in ipairs(FLOATS) do
        sweep(t, backend, "keep the float type " .. t, function()
          local xs = values(t, 8)
          local R = rounder(t)
          local r = map_run(backend, function(x)
            return x * 2, x + 0.5, 1 / x, x - 0.1, lacc.max(x, 0), 2 ^ x, x % 0.75
          end, t, xs)
          check_result(r, rep(t, 7), #xs, function(i)
            local a = xs[i]
            return { R(a * 2), R(a + 0.5), R(1 / a), R(a - R(0.1)), (0 > a) and 0.0 or a,
                     R(2 ^ a), fmodlua(a, 0.75, R) }
          end, function(i) return ("consts(%s) on %s"):format(show(xs[i]), t) end,
          { nil, nil, nil, nil, nil, t == "f32" and TF32 or TF64, nil })
        end)
      end

      it("operands of two types are an error", function()
        local ok, err = pcall(lacc.zipWith, function(x, y) return x + y end,
          lacc.fromtable({ 1 }, "i32"), lacc.fromtable({ 1 }, "f32"))
        assert.is_false(ok)
        assert.truthy(tostring(err):find("i32", 1, true) and tostring(err):find("f32", 1, true))
        ok = pcall(lacc.zipWith, function(x, y) return lacc.band(x, y) end,
          lacc.fromtable({ 1 }, "u8"), lacc.fromtable({ 1 }, "i8"))
        assert.is_false(ok)
      end)

      it("plain Lua values outside expressions stay plain", function()
        assert.are.equal(2, lacc.min(2, 3))
        assert.are.equal(3, lacc.max(2, 3))
        assert.are.equal(3, lacc.sqrt(9))
        assert.is_true(lacc.lt(1, 2))
        assert.is_false(lacc.eq(1, 2))
        assert.is_true(lacc.isnan(nan))
      end)
    end)

    describe("operations outside their types", function()
      local function refuses(t, f, frag)
        local ok, err = pcall(lacc.zipWith, f, lacc.fromtable({ SPECIALS[t][1] }, t),
          lacc.fromtable({ SPECIALS[t][1] }, t))
        assert.is_false(ok, "expected an error for " .. t)
        if frag then
          assert.truthy(tostring(err):find(frag, 1, true), tostring(err))
        end
      end
      it("arithmetic on bool", function()
        refuses("bool", function(x, y) return x + y end, "number type")
        refuses("bool", function(x, y) return lacc.min(x, y) end, "number type")
        refuses("bool", function(x) return -x end, "number type")
        refuses("bool", function(x) return lacc.abs(x) end, "number type")
      end)
      it("bit operations, quot and rem on floats", function()
        for _, t in ipairs(FLOATS) do
          for _, f in ipairs { lacc.band, lacc.bor, lacc.bxor, lacc.shl, lacc.shr, lacc.quot, lacc.rem } do
            refuses(t, function(x, y) return f(x, y) end, "integer type")
          end
          refuses(t, function(x) return lacc.bnot(x) end, "integer type")
        end
      end)
      it("float functions on integers and bool", function()
        for _, t in ipairs { "i32", "u64", "bool" } do
          for _, name in ipairs { "sqrt", "exp", "log", "sin", "floor", "round", "truncate", "isnan" } do
            refuses(t, function(x) return lacc[name](x) end, "f32 or f64")
          end
          refuses(t, function(x, y) return lacc.atan2(x, y) end, "f32 or f64")
        end
      end)
      it("logic on non-bool", function()
        for _, t in ipairs { "i32", "f64" } do
          refuses(t, function(x, y) return lacc.land(x, y) end, "bool")
          refuses(t, function(x, y) return lacc.lor(x, y) end, "bool")
          refuses(t, function(x) return lacc.lnot(x) end, "bool")
        end
        refuses("i32", function(x, y) return lacc.cond(x, x, y) end, "bool")
      end)
    end)

    describe("integer division by zero", function()
      local DIVS = {
        { "idiv", function(x, y) return lacc.idiv(x, y) end },
        { "imod (%)", function(x, y) return x % y end },
        { "quot", function(x, y) return lacc.quot(x, y) end },
        { "rem", function(x, y) return lacc.rem(x, y) end },
      }
      for _, t in ipairs(INTS) do
        sweep(t, backend, "is a Lua error for idiv % quot rem on " .. t .. ", and lacc keeps working", function()
          for _, d in ipairs(DIVS) do
            local xs = { Z.of(7), INT[t].hi, INT[t].lo, Z.of(3) }
            local ys = { Z.of(2), Z1, Z0, Z.of(3) }
            local ok, err = pcall(zip_run, backend, d[2], t, xs, t, ys)
            assert.is_false(ok, d[1] .. " on " .. t .. " did not fail")
            assert.truthy(tostring(err):find("division by zero", 1, true),
              d[1] .. ": " .. tostring(err))
            -- the same program without the zero runs
            ys[3] = Z.of(5)
            local r = zip_run(backend, d[2], t, xs, t, ys)
            local ref = ({ idiv = idiv_ref, ["imod (%)"] = imod_ref, quot = quot_ref, rem = rem_ref })[d[1]]
            check_result(r, { t }, 4, function(i) return { ref(t, xs[i], ys[i]) } end,
              function(i) return ("%s(%s, %s) after an error"):format(d[1], show(xs[i]), show(ys[i])) end)
          end
        end)
        sweep(t, backend, "/ on " .. t .. " by zero gives f64 infinities, no error", function()
          local xs = { Z.of(1), wrap(t, Z.of(-1)), Z0, INT[t].hi }
          local r = zip_run(backend, function(x, y) return x / y end, t, xs, t, rep(Z0, 4))
          check_result(r, { "f64" }, 4, function(i) return { int_to_f64(t, xs[i]) / 0.0 } end,
            function(i) return ("%s / 0"):format(show(xs[i])) end)
        end)
      end
      it("a zero divisor in a constant is reported when run", function()
        local p = lacc.map(function(x) return lacc.idiv(x, 0) end, lacc.fromtable({ 1 }, "i32"))
        local ok, err = pcall(lacc.run, p, { backend = backend })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("division by zero", 1, true))
        local r = map_run(backend, function(x) return lacc.idiv(x, 2) end, "i32", { Z.of(-7) })
        check_result(r, { "i32" }, 1, function() return { Z.divf(Z.of(-7), Z.of(2)) } end,
          function() return "-7 idiv 2" end)
      end)
    end)

    describe("tuples", function()
      it("a lambda returning several values gives a tuple array", function()
        local xs = values("i32", 6)
        local r = map_run(backend, function(x) return x + 1, x:cast("f64") * 0.5, lacc.gt(x, 0) end,
          "i32", xs)
        check_result(r, { "i32", "f64", "bool" }, #xs, function(i)
          local a = xs[i]
          return { wrap("i32", Z.add(a, Z1)), Z.tof64(a) * 0.5, Z.lt(Z0, a) }
        end, function(i) return "tuple out " .. show(xs[i]) end)
      end)

      it("p[1], p[2] and p:unpack() read tuple elements; lacc.tuple builds one", function()
        local xs, ys = values("i16", 6), values("f32", 6)
        local n = math.min(#xs, #ys)
        local ps = {}
        for i = 1, n do ps[i] = { xs[i], ys[i] } end
        local r = map_run(backend, function(p)
          local a, b = p:unpack()
          return lacc.tuple(b, p[1] * 2, lacc.tuple(a, p[2]:isnan()))
        end, "(i16,f32)", ps)
        assert.are.equal("(f32,i16,(i16,bool))", r:type())
        assert.are.equal(n, #r)
        for i = 1, n do
          local got = r:at_linear(i - 1)
          assert.is_true(same("f32", got[1], ys[i]), "field 1 at " .. i)
          assert.is_true(same("i16", got[2], wrap("i16", Z.mul(xs[i], Z.of(2)))), "field 2 at " .. i)
          assert.is_true(same("i16", got[3][1], xs[i]), "field 3.1 at " .. i)
          assert.are.equal(ys[i] ~= ys[i], got[3][2], "field 3.2 at " .. i)
        end
      end)

      it("zip gives tuples of every scalar type", function()
        local arrays, vals = {}, {}
        for k, t in ipairs(ALL) do
          vals[k] = values(t, 2)
        end
        local n = 2
        for k, t in ipairs(ALL) do
          local v = {}
          for i = 1, n do v[i] = vals[k][#vals[k] - i + 1] end
          vals[k] = v
          arrays[k] = lacc.fromtable(v, t)
        end
        local z = lacc.zip(unpack(arrays))
        local r = lacc.run(lacc.map(function(p)
          local r = { p:unpack() }
          local out = {}
          for k = #r, 1, -1 do out[#out + 1] = r[k] end
          return unpack(out)
        end, z), { backend = backend })
        local rts = {}
        for k = #ALL, 1, -1 do rts[#rts + 1] = ALL[k] end
        check_result(r, rts, n, function(i)
          local e = {}
          for k = #ALL, 1, -1 do e[#e + 1] = vals[k][i] end
          return e
        end, function(i) return "zip row " .. i end)
      end)

      it("unpack of a scalar is the scalar; a missing field is an error", function()
        local r = map_run(backend, function(x) return (x:unpack()) + 1 end, "u8", { Z.of(255) })
        check_result(r, { "u8" }, 1, function() return { wrap("u8", Z.add(Z.of(255), Z1)) } end, function() return "u8 255+1" end)
        local ok, err = pcall(lacc.map, function(p) return p[3] end,
          lacc.fromtable({ { 1, 2 } }, "(i32,i32)"))
        assert.is_false(ok)
        assert.truthy(tostring(err):find("3", 1, true))
        assert.are.equal("(i32,f32)", lacc.tuple("i32", "f32"))
      end)
    end)

    describe("iterate", function()
      it("iterate(n, f, x) with per-element counts wraps like the reference", function()
        local xs, ns = {}, {}
        for i = 1, 40 do
          xs[i] = wrap("i32", zrand())
          ns[i] = Z.of(H.randint(-3, 40))
        end
        local r = zip_run(backend, function(x, n)
          return lacc.iterate(n, function(v) return v * 3 + 1 end, x)
        end, "i32", xs, "i32", ns)
        check_result(r, { "i32" }, #xs, function(i)
          local v = xs[i]
          for _ = 1, Z.small(ns[i]) do v = wrap("i32", Z.add(Z.mul(v, Z.of(3)), Z1)) end
          return { v }
        end, function(i) return ("iterate(%s, 3v+1, %s)"):format(show(ns[i]), show(xs[i])) end)
      end)

      it("iterate on f32 rounds each step", function()
        local xs = values("f32", 8)
        local r = map_run(backend, function(x)
          return lacc.iterate(7, function(v) return v * 0.5 + 1 end, x)
        end, "f32", xs)
        check_result(r, { "f32" }, #xs, function(i)
          local v = xs[i]
          for _ = 1, 7 do v = H.f32(H.f32(v * 0.5) + 1) end
          return { v }
        end, function(i) return "iterate f32 " .. show(xs[i]) end)
      end)

      it("iterate with a tuple state (Fibonacci in u64, wrapping)", function()
        local ns = { 0, 1, 2, 10, 50, 93, 94, 100, 150 }
        local zs = {}
        for i, n in ipairs(ns) do zs[i] = Z.of(n) end
        local r = map_run(backend, function(n)
          local a, b = lacc.iterate(n:cast("i64"), function(p)
            local x, y = p:unpack()
            return y, x + y
          end, lacc.tuple(lacc.constant(0, "u64"), lacc.constant(1, "u64"))):unpack()
          return a, b
        end, "u32", zs)
        check_result(r, { "u64", "u64" }, #ns, function(i)
          local a, b = Z0, Z1
          for _ = 1, ns[i] do a, b = b, Z.add(a, b) end
          return { a, b }
        end, function(i) return "fib " .. ns[i] end)
      end)
    end)

    describe("while_", function()
      it("Collatz step counts with a tuple state", function()
        local xs = {}
        for i = 1, 30 do xs[i] = Z.of(i) end
        xs[#xs + 1] = Z.of(27)
        xs[#xs + 1] = Z.of(97)
        xs[#xs + 1] = Z.of(871)
        local r = map_run(backend, function(x)
          return lacc.while_(function(p) return p[1]:ne(1) end, function(p)
            local n, k = p:unpack()
            return lacc.cond(lacc.eq(n % 2, 0), lacc.idiv(n, 2), 3 * n + 1), k + 1
          end, lacc.tuple(x, lacc.constant(0, "i32")))
        end, "i64", xs)
        check_result(r, { "i64", "i32" }, #xs, function(i)
          local n, k = Z.small(xs[i]), 0
          while n ~= 1 do
            if n % 2 == 0 then n = n / 2 else n = 3 * n + 1 end
            k = k + 1
          end
          return { Z.of(n), Z.of(k) }
        end, function(i) return "collatz " .. show(xs[i]) end)
      end)

      it("gcd on u32 with rem", function()
        local xs, ys = {}, {}
        for i = 1, 40 do
          xs[i] = wrap("u32", zrand())
          ys[i] = wrap("u32", zrand())
        end
        xs[41], ys[41] = Z.of(0), Z.of(12)
        xs[42], ys[42] = Z.of(12), Z.of(0)
        xs[43], ys[43] = Z.of(462), Z.of(1071)
        local r = zip_run(backend, function(a, b)
          local g = lacc.while_(function(p) return lacc.ne(p[2], 0) end, function(p)
            return p[2], lacc.rem(p[1], p[2])
          end, lacc.tuple(a, b))
          return g[1]
        end, "u32", xs, "u32", ys)
        check_result(r, { "u32" }, #xs, function(i)
          local a, b = xs[i], ys[i]
          while not Z.eq(b, Z0) do a, b = b, Z.umod(a, b) end
          return { a }
        end, function(i) return ("gcd(%s, %s)"):format(show(xs[i]), show(ys[i])) end)
      end)

      it("on f64 with a condition false at the start", function()
        local xs = { 0.5, 1, 1.5, 1000, 1e300, -3, nan, 0.0 }
        local r = map_run(backend, function(x)
          return lacc.while_(function(v) return v:gt(1) end, function(v) return v / 2 end, x)
        end, "f64", xs)
        check_result(r, { "f64" }, #xs, function(i)
          local v = xs[i]
          while v > 1 do v = v / 2 end
          return { v }
        end, function(i) return "halve " .. show(xs[i]) end)
      end)
    end)

    if LUA54 then
      describe("Lua 5.4 operators", function()
        local ops = assert(load([[
          return function(x, y) return x // y, x % y, x & y, x | y, x ~ y, x << y, x >> y, ~x end
        ]], "=ops54"))()
        for _, t in ipairs(INTS) do
          -- every type on every backend: LuaJIT, which runs some of the sweeps, has no test of these
          it("// % & | ~ << >> and unary ~ on " .. t, function()
            local xs, ys = pairs_of(t, counts_for(t), 8)
            local fx, fy = {}, {}
            for i = 1, #xs do
              if not Z.eq(ys[i], Z0) then fx[#fx + 1], fy[#fy + 1] = xs[i], ys[i] end
            end
            xs, ys = fx, fy
            local r = zip_run(backend, ops, t, xs, t, ys)
            check_result(r, rep(t, 8), #xs, function(i)
              local a, b = xs[i], ys[i]
              return { idiv_ref(t, a, b), imod_ref(t, a, b), wrap(t, Z.band(a, b)),
                       wrap(t, Z.bor(a, b)), wrap(t, Z.bxor(a, b)), shift_ref(t, a, b, true),
                       shift_ref(t, a, b, false), wrap(t, Z.bnot(a)) }
            end, function(i) return ("ops54(%s, %s) on %s"):format(show(xs[i]), show(ys[i]), t) end)
          end)
        end
        it("// on floats is floor division", function()
          for _, t in ipairs(FLOATS) do
            local xs, ys = pairs_of(t, nil, 4)
            local f = assert(load("return function(x, y) return x // y end"))()
            local r = zip_run(backend, f, t, xs, t, ys)
            local R = rounder(t)
            check_result(r, { t }, #xs, function(i) return { ffloor(R(xs[i] / ys[i])) } end,
              function(i) return ("%s // %s on %s"):format(show(xs[i]), show(ys[i]), t) end)
          end
        end)
      end)
    end
  end)
end
