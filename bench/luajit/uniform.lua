-- random: n uniform f32 in [0, 1) as a plain LuaJIT loop (one thread): Philox4x32-10 by
-- hand, lacc's numbers bit for bit (element p is word p mod 4 of the block at counter
-- (p / 4, 0, 0, 0) under the key (42, 0), as (word >> 8) * 2^-24; bench/c/uniform.c), the
-- 32 x 32-bit products split into exact f64 halves, into an FFI float array reused by every
-- run. Checked first against Random123's known answer; then as bench/c/uniform.c.
-- Usage: luajit uniform.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local floor = math.floor
local two32 = 4294967296
local philox = B.philox
local bad = B.philox_unchecked()
if bad then return B.na("random", row, bad) end

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
