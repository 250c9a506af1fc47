-- Sort of n keys as LuaJIT's table.sort on a plain Lua table of numbers (one thread), keys
-- of the type TYPE as bench/c/sortkeys.c builds them (u32 and f32 keys are exact as Lua
-- numbers). i64 keys are n/a: a Lua number (f64) cannot hold them, and table.sort over
-- boxed int64_t cdata calls a metamethod per comparison. The table is refilled from the
-- unsorted keys between runs, untimed. Checks as bench/c/sortkeys.c.
-- Usage: luajit sortkeys.lua ROW N TYPE
local ffi = require "ffi"
local bit = require "bit"
local B = require "benchlib"
local row, n, t = arg[1], tonumber(arg[2]), arg[3] or "u32"
local bench = "sort_" .. t
if t == "i64" then
  return B.na(bench, row, "Lua numbers are f64: a Lua table cannot hold i64 keys exactly")
end

local bxor, rshift, floor = bit.bxor, bit.rshift, math.floor
local two32 = 4294967296
-- a * b mod 2^32 for a, b in [0, 2^32), exactly in f64 (16-bit halves of b).
local function mul32(a, b)
  local bh, bl = floor(b / 65536), b % 65536
  return ((a * bh) % 65536 * 65536 + a * bl) % two32
end
local function fmix32(h)
  h = bxor(h, rshift(h, 16)) % two32
  h = mul32(h, 0x85ebca6b)
  h = bxor(h, rshift(h, 13)) % two32
  h = mul32(h, 0xc2b2ae35)
  return bxor(h, rshift(h, 16)) % two32
end

local f = ffi.new("float[1]")
local keys = {}
for k = 1, n do
  local h = fmix32(k)
  if t == "f32" then
    f[0] = h >= 2147483648 and h - two32 or h   -- (int32_t)h, rounded to f32 once
    keys[k] = f[0] * 2 ^ -31
  else
    keys[k] = h
  end
end

local a = {}
local function refill() for i = 1, n do a[i] = keys[i] end end
refill()
local ms, reps = B.measure(function() table.sort(a); return a end, refill)

local s1, s2, o1, o2 = 0, 0, 0, 0
for i = 1, n do
  s1, s2, o1, o2 = s1 + keys[i], s2 + keys[i] ^ 2, o1 + a[i], o2 + a[i] ^ 2
  if i > 1 and a[i - 1] > a[i] then return B.na(bench, row, "the output is not in order") end
end
-- the multiset, as f64 sums (to rounding: a missing or extra key changes them far more)
if math.abs(s1 - o1) > 1e-8 * (math.abs(s1) + s2 ^ 0.5) or math.abs(s2 - o2) > 1e-8 * s2 then
  return B.na(bench, row, "the output does not hold the input's keys")
end
local cs = 0
for j = 0, 1000 do cs = cs + a[floor((n - 1) * j / 1000) + 1] end
B.result(bench, row, ms, cs, reps, jit.version:gsub(" ", ""))
