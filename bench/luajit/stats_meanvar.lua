-- stats_meanvar (issue 44): sum(m) and sum(m^2) of m = x * 0.5 + 1 as one plain LuaJIT loop
-- over an FFI float array (one thread; the sums are Lua numbers, f64, exact here). Inputs
-- as bench/c/stats_meanvar.c. Checks: both sums equal those of a second, separate loop.
-- Checksum: sum(m) + 2 sum(m^2). Usage: luajit stats_meanvar.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local x = ffi.new("float[?]", n)
for i = 0, n - 1 do x[i] = 2 * math.floor(3 * B.frac(i + 1, B.C1)) - 4 end

local function meanvar()
  local s1, s2 = 0, 0
  for i = 0, n - 1 do
    local m = x[i] * 0.5 + 1
    s1, s2 = s1 + m, s2 + m * m
  end
  return { s1, s2 }
end

local ms, reps, r = B.measure(meanvar)
local w1, w2 = 0, 0
for i = 0, n - 1 do w1 = w1 + (x[i] * 0.5 + 1) end
for i = 0, n - 1 do w2 = w2 + (x[i] * 0.5 + 1) ^ 2 end
if r[1] ~= w1 or r[2] ~= w2 then
  return B.na("stats_meanvar", row, ("sums %.17g and %.17g, not %.17g and %.17g"):format(r[1], r[2], w1, w2))
end
B.result("stats_meanvar", row, ms, r[1] + 2 * r[2], reps, jit.version:gsub(" ", ""))
