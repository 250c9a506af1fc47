-- Inclusive prefix sum as a plain LuaJIT loop over FFI int32 arrays (one thread).
-- Inputs as bench/c/scan.c. Usage: luajit scan.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local x, y = ffi.new("int32_t[?]", n), ffi.new("int32_t[?]", n)
for i = 0, n - 1 do x[i] = math.floor(16 * B.frac(i + 1, B.C1)) - 8 end

local function scan()
  local s = 0
  for i = 0, n - 1 do
    s = s + x[i]
    y[i] = s
  end
  return y
end

local ms, reps = B.measure(scan)
B.result("scan", row, ms, y[n - 1] + y[math.floor(n / 2)], reps, jit.version:gsub(" ", ""))
