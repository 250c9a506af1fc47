-- One step of examples/nbody.lua for n bodies as a plain LuaJIT double loop over FFI
-- double arrays (one thread). Inputs and checksum as bench/c/nbody.c.
-- Usage: luajit nbody.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])
local dt, soft, mass = 0.01, 0.01, 1 / n
local sqrt = math.sqrt

local function arr() return ffi.new("double[?]", n) end
local x, y, vx, vy = arr(), arr(), arr(), arr()
local ox, oy, ovx, ovy = arr(), arr(), arr(), arr()
for k = 0, n - 1 do
  x[k], y[k] = B.frac(k + 1, B.C1), B.frac(k + 1, B.C2)
  vx[k], vy[k] = (B.frac(k + 1, B.C3) - 0.5) / 4, (0.5 - B.frac(k + 1, B.C1)) / 4
end

local function step()
  for i = 0, n - 1 do
    local xi, yi, ax, ay = x[i], y[i], 0, 0
    for j = 0, n - 1 do
      local dx, dy = x[j] - xi, y[j] - yi
      local d2 = dx * dx + dy * dy + soft * soft
      local inv = mass / (d2 * sqrt(d2))
      ax, ay = ax + dx * inv, ay + dy * inv
    end
    local nvx, nvy = vx[i] + ax * dt, vy[i] + ay * dt
    ox[i], oy[i], ovx[i], ovy[i] = xi + nvx * dt, yi + nvy * dt, nvx, nvy
  end
  return ovx
end

local ms, reps = B.measure(step)
local cs = 0
for i = 0, n - 1 do cs = cs + ovx[i] * ovx[i] + ovy[i] * ovy[i] end
B.result("nbody", row, ms, cs, reps, jit.version:gsub(" ", ""))
