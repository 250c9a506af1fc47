-- One step of examples/nbody.lua for n bodies in lacc, f64: the example's step function
-- as it is (a generate over every pair of bodies, folded along j, then a zipWith for the
-- Euler step) on a state of (x, y, vx, vy) tuples. Inputs and checksum as bench/c/nbody.c.
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local dt, soft, mass = 0.01, 0.01, 1 / n
local function frac(k, c)
  local d = lacc.cast(k, "f64") * c
  return d - lacc.floor(d)
end
local state = lacc.run(lacc.generate({ n }, function(k)
  return frac(k, B.C1), frac(k, B.C2), (frac(k, B.C3) - 0.5) / 4, (0.5 - frac(k, B.C1)) / 4
end))

local function step(s)
  local m = lacc.size(s)
  local pulls = lacc.generate({ m, m }, function(i, j)
    local b, o = s[i], s[j]
    local dx, dy = o[1] - b[1], o[2] - b[2]
    local d2 = dx * dx + dy * dy + soft * soft
    local inv = mass / (d2 * lacc.sqrt(d2))
    return dx * inv, dy * inv
  end)
  local acc = lacc.fold(function(p, q) return p[1] + q[1], p[2] + q[2] end,
                        lacc.tuple(lacc.constant(0, "f64"), lacc.constant(0, "f64")), pulls)
  return lacc.zipWith(function(b, a)
    local vx, vy = b[3] + a[1] * dt, b[4] + a[2] * dt
    return b[1] + vx * dt, b[2] + vy * dt, vx, vy
  end, s, acc)
end

R.run { bench = "nbody", row = row, mode = mode,
        program = step(state), fn = step, inputs = { state },
        checksum = function(r)
          return R.sum64(r, function(b) return b[3] * b[3] + b[4] * b[4] end)
        end }
