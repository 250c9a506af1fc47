-- An independent model of lacc's integer semantics for the specs: exact 64-bit values
-- (Lua 5.4 integers, LuaJIT int64_t/uint64_t cdata), wrapped to each width. Written
-- from the rules in docs/guide.md, not from the core's code.
local R = {}
local JIT = type(jit) == "table"
local ffi = JIT and require "ffi" or nil
-- Lua 5.4's integer floor division, hidden from LuaJIT's parser
local fdiv = not JIT and load("return function(a, b) return a // b end")() or nil

R.bits = { i8 = 8, i16 = 16, i32 = 32, i64 = 64, u8 = 8, u16 = 16, u32 = 32, u64 = 64 }
R.signed = { i8 = true, i16 = true, i32 = true, i64 = true }
R.types = { "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64" }

-- exact value of a Lua integer-valued number (or cdata) in the working representation
function R.I(v)
  if JIT then
    if type(v) == "cdata" then return ffi.cast("int64_t", v) end
    return ffi.new("int64_t", v)
  end
  return math.tointeger(v)
end

local function pow2(n)   -- 2^n exactly, n < 63
  local r = R.I(1)
  for _ = 1, n do r = r + r end
  return r
end

-- Reduce an exact value modulo 2^bits into t's range (u64 as its bit pattern on 5.4,
-- as uint64_t on LuaJIT).
function R.wrap(t, v)
  local b = R.bits[t]
  if JIT then v = ffi.cast("int64_t", v) end
  if b < 64 then
    local m = pow2(b)
    local r = v % m
    if r < 0 then r = r + m end   -- LuaJIT's int64 % takes the dividend's sign
    if R.signed[t] and r >= pow2(b - 1) then r = r - m end
    v = r
  end
  if JIT and t == "u64" then return ffi.cast("uint64_t", v) end
  return v
end

-- The numeric value of an element as a Lua float (for comparisons with floats).
function R.tofloat(t, v)
  if JIT then return tonumber(v) end
  if t == "u64" and v < 0 then
    local hi = R.udiv(v, 4294967296)
    return hi * 4294967296.0 + (v - hi * 4294967296)
  end
  return v + 0.0
end

-- Unsigned 64-bit division on Lua 5.4 (the manual's algorithm, in arithmetic).
function R.udiv(n, d)
  if d < 0 then return math.ult(n, d) and 0 or 1 end
  local half = fdiv(n, 2)
  if n < 0 then half = fdiv(n - math.mininteger, 2) + (fdiv(math.maxinteger, 2) + 1) end
  local q = fdiv(half, d) * 2
  local r = n - q * d
  if not math.ult(r, d) then q = q + 1 end
  return q
end

function R.lt(t, a, b)
  if t == "u64" and not JIT then return math.ult(a, b) end
  return a < b
end

function R.eq(a, b)
  if JIT then return ffi.cast("int64_t", a) == ffi.cast("int64_t", b) end
  return a == b
end

-- truncating division and remainder
function R.tdiv(t, a, b)
  if t == "u64" then
    if JIT then return ffi.cast("uint64_t", a) / ffi.cast("uint64_t", b) end
    return R.udiv(a, b)
  end
  if R.eq(b, -1) then return R.wrap(t, 0 - a) end
  if JIT then return R.wrap(t, a / b) end
  local q = fdiv(a, b)
  if q < 0 and q * b ~= a then q = q + 1 end
  return R.wrap(t, q)
end

function R.trem(t, a, b) return R.wrap(t, a - R.tdiv(t, a, b) * b) end

-- floor division and modulo (Lua's // and %)
function R.idiv(t, a, b)
  local q = R.tdiv(t, a, b)
  local r = R.trem(t, a, b)
  if R.signed[t] and not R.eq(r, 0) and ((r < 0) ~= (b < 0)) then q = R.wrap(t, q - 1) end
  return q
end

function R.mod(t, a, b)
  local r = R.trem(t, a, b)
  if R.signed[t] and not R.eq(r, 0) and ((r < 0) ~= (b < 0)) then r = R.wrap(t, r + b) end
  return r
end

function R.shl(t, a, n)
  n = tonumber(n)
  if n < 0 then return R.shr(t, a, -n) end
  if n >= R.bits[t] then return R.wrap(t, 0) end
  for _ = 1, n do a = R.wrap(t, a + a) end
  return a
end

function R.shr(t, a, n)
  n = tonumber(n)
  if n < 0 then return R.shl(t, a, -n) end
  if n >= R.bits[t] then
    if R.signed[t] and a < 0 then return R.wrap(t, -1) end
    return R.wrap(t, 0)
  end
  for _ = 1, n do
    if R.signed[t] then a = R.idiv(t, a, R.I(2)) else a = R.tdiv(t, a, R.wrap(t, 2)) end
  end
  return a
end

-- bitwise operations on bit patterns: digit by digit in base 2, low to high
local function bitwise(t, a, b, f)
  local r, p = R.wrap(t, 0), R.wrap(t, 1)
  for _ = 1, R.bits[t] do
    local x = R.eq(R.trem("u64", R.wrap("u64", a), R.wrap("u64", 2)), 1) and 1 or 0
    local y = R.eq(R.trem("u64", R.wrap("u64", b), R.wrap("u64", 2)), 1) and 1 or 0
    if f(x, y) == 1 then r = R.wrap(t, r + p) end
    p = R.wrap(t, p + p)
    a = R.tdiv("u64", R.wrap("u64", a), R.wrap("u64", 2))
    b = R.tdiv("u64", R.wrap("u64", b), R.wrap("u64", 2))
  end
  return r
end
function R.band(t, a, b) return bitwise(t, a, b, function(x, y) return x * y end) end
function R.bor(t, a, b) return bitwise(t, a, b, function(x, y) return math.max(x, y) end) end
function R.bxor(t, a, b) return bitwise(t, a, b, function(x, y) return (x + y) % 2 end) end
function R.bnot(t, a) return R.wrap(t, R.I(-1) - a) end

-- limits of each type as exact values
function R.min(t)
  if not R.signed[t] then return R.wrap(t, 0) end
  return R.wrap(t, 0 - pow2(R.bits[t] - 1 > 62 and 62 or R.bits[t] - 1) *
    (R.bits[t] == 64 and 2 or 1))
end
function R.max(t) return R.wrap(t, R.min(t) - 1) end

-- float -> integer: truncate, saturate, NaN -> 0
function R.from_float(t, x)
  if x ~= x then return R.wrap(t, 0) end
  local tr = x >= 0 and math.floor(x) or math.ceil(x)
  local lo, hi = R.tofloat(t, R.min(t)), R.tofloat(t, R.max(t))
  if tr <= lo then return R.min(t) end
  if tr >= hi then return R.max(t) end
  if JIT then
    return R.wrap(t, t == "u64" and ffi.new("uint64_t", tr) or ffi.new("int64_t", tr))
  end
  if tr >= 2 ^ 63 then return R.wrap(t, math.tointeger(tr - 2 ^ 64)) end   -- u64 bit pattern
  return R.wrap(t, math.tointeger(tr))
end

return R
