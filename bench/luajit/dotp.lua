-- Dot product as a plain LuaJIT loop over FFI float arrays (one thread; the sum is a Lua
-- number, i.e. f64). Inputs as bench/c/dotp.c. Usage: luajit dotp.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local x, y = ffi.new("float[?]", n), ffi.new("float[?]", n)
for i = 0, n - 1 do
  x[i] = B.b01(i + 1, B.C1)
  y[i] = B.b01(i + 1, B.C2)
end

local function dotp()
  local s = 0
  for i = 0, n - 1 do s = s + x[i] * y[i] end
  return s
end

local ms, reps, r = B.measure(dotp)
B.result("dotp", row, ms, r, reps, jit.version:gsub(" ", ""))
