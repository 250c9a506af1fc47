-- saxpy as a plain LuaJIT loop over FFI float arrays into a preallocated output (one
-- thread). Inputs as bench/c/saxpy.c. Usage: luajit saxpy.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local x, y, z = ffi.new("float[?]", n), ffi.new("float[?]", n), ffi.new("float[?]", n)
for i = 0, n - 1 do
  x[i] = B.u16(i + 1, B.C1)
  y[i] = B.u24(i + 1, B.C2)
end

local a = 2.5
local function saxpy()
  for i = 0, n - 1 do z[i] = a * x[i] + y[i] end
end

local ms, reps = B.measure(saxpy)
local s = 0
for i = 0, n - 1 do s = s + z[i] end
B.result("saxpy", row, ms, s, reps, jit.version:gsub(" ", ""))
