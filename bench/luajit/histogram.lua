-- Histogram of n values into 1024 bins as a plain LuaJIT loop (one thread). Inputs as
-- bench/c/histogram.c. Usage: luajit histogram.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local x, h = ffi.new("int32_t[?]", n), ffi.new("int32_t[1024]")
for i = 0, n - 1 do x[i] = math.floor(1024 * B.frac(i + 1, B.C1)) end

local function histogram()
  ffi.fill(h, 1024 * 4)
  for i = 0, n - 1 do
    local b = x[i]
    h[b] = h[b] + 1
  end
  return h
end

local ms, reps = B.measure(histogram)
local cs = 0
for b = 0, 1023 do cs = cs + b * h[b] end
B.result("histogram", row, ms, cs, reps, jit.version:gsub(" ", ""))
