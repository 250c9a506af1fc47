-- N-body: all-pairs gravitational accelerations (a generate over every pair of bodies,
-- folded along the inner dimension), then a semi-implicit Euler step, repeated with
-- lacc.compile: the program is built once, each step only runs it. Run: make demo NAME=nbody [N=bodies] [STEPS=steps]
local lacc = require "lacc"

local n = tonumber(os.getenv("N") or "") or 1000
local steps = tonumber(os.getenv("STEPS") or "") or 10
local dt, soft = 0.01, 0.01

-- bodies on a ring, moving around it; state: (x, y, vx, vy) and masses
local state = lacc.run(lacc.generate({ n }, function(i)
  local a = lacc.cast(i, "f64") * (2 * math.pi / n)
  return lacc.cos(a), lacc.sin(a), -lacc.sin(a) * 0.3, lacc.cos(a) * 0.3
end))
local mass = 1 / n

local step = lacc.compile(function(s)
  local m = lacc.size(s)
  -- every pair (i, j): the pull of body j on body i, then summed along j (a fold of the
  -- inner dimension: one sum per body)
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
end)

local function energy(s)
  local t = s:totable()
  local e = 0
  for i = 1, n do e = e + 0.5 * mass * (t[i][3] ^ 2 + t[i][4] ^ 2) end
  return e
end
local e0 = energy(state)
for _ = 1, steps do state = step(state) end
local b = state:get(1)
print(("%d bodies, %d steps: body 1 at (%.4f, %.4f); kinetic energy %.6f -> %.6f"):format(
  n, steps, b[1], b[2], e0, energy(state)))
