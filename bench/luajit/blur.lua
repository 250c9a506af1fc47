-- 3x3 box blur as a plain LuaJIT loop over FFI float arrays (one thread), clamped at the
-- edges. Inputs as bench/c/blur.c. Usage: luajit blur.lua ROW W
local ffi = require "ffi"
local B = require "benchlib"
local row, w = arg[1], tonumber(arg[2])
local n = w * w

local x, y = ffi.new("float[?]", n), ffi.new("float[?]", n)
for k = 0, n - 1 do x[k] = B.u24(k + 1, B.C1) end

local function clamp(k) return k < 0 and 0 or (k >= w and w - 1 or k) end
local function blur()
  for i = 0, w - 1 do
    for j = 0, w - 1 do
      local s = 0
      for di = -1, 1 do
        local r = clamp(i + di) * w
        for dj = -1, 1 do s = s + x[r + clamp(j + dj)] end
      end
      y[i * w + j] = s / 9
    end
  end
  return y
end

local ms, reps = B.measure(blur)
local cs = 0
for k = 0, n - 1 do cs = cs + y[k] end
B.result("blur", row, ms, cs, reps, jit.version:gsub(" ", ""))
