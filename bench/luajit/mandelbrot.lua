-- Mandelbrot as a plain LuaJIT loop (one thread; f64 arithmetic, as Lua numbers are, so a
-- few pixels near the boundary may count differently from the f32 rows). Grid and loop
-- as bench/c/mandelbrot.c. Usage: luajit mandelbrot.lua ROW W
local ffi = require "ffi"
local B = require "benchlib"
local row, w = arg[1], tonumber(arg[2])

local out = ffi.new("int32_t[?]", w * w)
local dx = B.mandel_dx(w)
-- The pixel coordinates rounded to f32 as in the other rows.
local cs = ffi.new("float[?]", w)
for j = 0, w - 1 do cs[j] = -2.0 + j * dx end
local ds = ffi.new("float[?]", w)
for i = 0, w - 1 do ds[i] = -1.5 + i * dx end

local function mandel()
  for i = 0, w - 1 do
    local ci = ds[i]
    for j = 0, w - 1 do
      local cr = cs[j]
      local zr, zi, n = 0, 0, 0
      while true do
        local zr2, zi2 = zr * zr, zi * zi
        if not (n < 255 and zr2 + zi2 <= 4) then break end
        zi = 2 * zr * zi + ci
        zr = zr2 - zi2 + cr
        n = n + 1
      end
      out[i * w + j] = n
    end
  end
end

local ms, reps = B.measure(mandel)
local s = 0
for k = 0, w * w - 1 do s = s + out[k] end
B.result("mandelbrot", row, ms, s, reps, jit.version:gsub(" ", ""))
