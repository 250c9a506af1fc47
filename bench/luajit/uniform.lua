-- random: n uniform f32 in [0, 1) as a plain LuaJIT loop (one thread): Philox4x32-10 by
-- hand, lacc's numbers bit for bit (element p is word p mod 4 of the block at counter
-- (p / 4, 0, 0, 0) under the key (42, 0), as (word >> 8) * 2^-24; bench/c/uniform.c), the
-- 32 x 32-bit products split into exact f64 halves, into an FFI float array reused by every
-- run. Checked first against Random123's known answer; then as bench/c/uniform.c.
-- Usage: luajit uniform.lua ROW N
local ffi = require "ffi"
local bit = require "bit"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local bxor, floor = bit.bxor, math.floor
local two32 = 4294967296
local M0, M1 = 0xD2511F53, 0xCD9E8D57
local M0h, M0l, M1h, M1l = floor(M0 / 65536), M0 % 65536, floor(M1 / 65536), M1 % 65536

-- (hi, lo) of m * x, m = mh * 2^16 + ml, x in [0, 2^32): every partial product below 2^49.
local function mulhilo(mh, ml, x)
  local ph, pl = mh * x, ml * x               -- m * x = ph * 2^16 + pl
  local r = (ph % 65536) * 65536 + pl
  return floor(ph / 65536) + floor(r / two32), r % two32
end

local function philox(k0, k1, c0, c1, c2, c3)
  for round = 1, 10 do
    if round > 1 then k0, k1 = (k0 + 0x9E3779B9) % two32, (k1 + 0xBB67AE85) % two32 end
    local hi0, lo0 = mulhilo(M0h, M0l, c0)
    local hi1, lo1 = mulhilo(M1h, M1l, c2)
    c0, c1, c2, c3 = bxor(hi1, c1, k0) % two32, lo1, bxor(hi0, c3, k1) % two32, lo0
  end
  return c0, c1, c2, c3
end

local a, b, c, d = philox(0, 0, 0, 0, 0, 0)
if a ~= 0x6627e8d5 or b ~= 0xe169c58d or c ~= 0xbc57ac4c or d ~= 0x9b00dbd8 then
  return B.na("random", row, ("Philox4x32-10 misses the known answer: %08x %08x %08x %08x"):format(a, b, c, d))
end

local out = ffi.new("float[?]", n)
local scale = 2 ^ -24
local function unit(w) return floor(w / 256) * scale end
local function uniform()
  for blk = 0, floor((n + 3) / 4) - 1 do
    local w0, w1, w2, w3 = philox(42, 0, blk % two32, floor(blk / two32), 0, 0)
    local p = 4 * blk
    out[p] = unit(w0)
    if p + 1 < n then out[p + 1] = unit(w1) end
    if p + 2 < n then out[p + 2] = unit(w2) end
    if p + 3 < n then out[p + 3] = unit(w3) end
  end
  return out
end

local ms, reps = B.measure(uniform)
local s = 0
for i = 0, n - 1 do
  local v = out[i]
  if not (v >= 0 and v < 1) then return B.na("random", row, "a value outside [0, 1)") end
  s = s + v
end
local mean = s / n
if math.abs(mean - 0.5) > 6 * 0.28867513459481287 / math.sqrt(n) then
  return B.na("random", row, "the mean is not near 1/2")
end
B.result("random", row, ms, mean, reps, jit.version:gsub(" ", ""))
