-- stats_minmax (issue 44): the minimum, maximum, sum and count of positives of an FFI float
-- array as one plain LuaJIT loop (one thread; the sum a Lua number, f64, exact here).
-- Inputs as bench/c/stats_minmax.c. Checks: the minimum is -9, the maximum 11, and the sum
-- and count equal those of a second, separate loop. Checksum: min + 2 max + 3 sum +
-- 4 count. Usage: luajit stats_minmax.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local ka, kb = math.floor(n / 3), n - math.floor(n / 5)
local x = ffi.new("float[?]", n)
for i = 0, n - 1 do x[i] = math.floor(5 * B.frac(i + 1, B.C2)) - 2 end
x[ka - 1], x[kb - 1] = -9, 11

local function minmax()
  local mn, mx, s, c = math.huge, -math.huge, 0, 0
  for i = 0, n - 1 do
    local v = x[i]
    if v < mn then mn = v end
    if v > mx then mx = v end
    s = s + v
    if v > 0 then c = c + 1 end
  end
  return { mn, mx, s, c }
end

local ms, reps, r = B.measure(minmax)
local ws, wc = 0, 0
for i = 0, n - 1 do
  ws = ws + x[i]
  wc = wc + (x[i] > 0 and 1 or 0)
end
if r[1] ~= -9 or r[2] ~= 11 or r[3] ~= ws or r[4] ~= wc then
  return B.na("stats_minmax", row, ("min %g, max %g, sum %.17g, count %d; want -9, 11, %.17g, %d"):format(
    r[1], r[2], r[3], r[4], ws, wc))
end
B.result("stats_minmax", row, ms, r[1] + 2 * r[2] + 3 * r[3] + 4 * r[4], reps, jit.version:gsub(" ", ""))
