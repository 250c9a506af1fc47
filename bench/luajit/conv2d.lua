-- 5x5 convolution (the binomial blur) as a plain LuaJIT loop over FFI float arrays (one
-- thread), clamped at the edges. Inputs as bench/c/conv2d.c. Usage: luajit conv2d.lua ROW W
local ffi = require "ffi"
local B = require "benchlib"
local row, w = arg[1], tonumber(arg[2])
local n = w * w

local x, y = ffi.new("float[?]", n), ffi.new("float[?]", n)
for k = 0, n - 1 do x[k] = B.u16(k + 1, B.C1) end
local b = { 1, 4, 6, 4, 1 }

local function clamp(k) return k < 0 and 0 or (k >= w and w - 1 or k) end
local function conv2d()
  for i = 0, w - 1 do
    for j = 0, w - 1 do
      local s = 0
      for di = -2, 2 do
        local r, bi = clamp(i + di) * w, b[di + 3]
        for dj = -2, 2 do s = s + bi * b[dj + 3] * x[r + clamp(j + dj)] end
      end
      y[i * w + j] = s / 256
    end
  end
  return y
end

local ms, reps = B.measure(conv2d)
local cs = 0
for k = 0, n - 1 do cs = cs + y[k] end
B.result("conv2d", row, ms, cs, reps, jit.version:gsub(" ", ""))
