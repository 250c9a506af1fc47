-- Logistic regression by gradient descent: two clouds of points made here (separable
-- classes), the mean log-loss and its gradient by lacc.value_and_grad, compiled once and
-- run every step; writes the loss curve (OUT_loss.png) and the decision boundary with the
-- points (OUT_boundary.png).
-- Run: make demo NAME=logreg [N=points] [STEPS=steps] [OUT=prefix]
local lacc = require "lacc"

local n = tonumber(os.getenv("N") or "") or 4000
local steps = tonumber(os.getenv("STEPS") or "") or 200
local out = os.getenv("OUT") or "logreg"
local rate = 0.5

-- Point i is of class 1 (odd i) around (1.5, 1.2) or of class 0 around (-1.5, -1.2),
-- spread 0.6.
-- Features: x, y and 1 (the bias).
local noise = lacc.random.normal({ n, 2 }, 7, "f64", 0, 0.6)
local function f64(v) return lacc.constant(v, "f64") end
local X = lacc.run(lacc.generate({ n, 3 }, function(i, j)
  local one = lacc.eq(lacc.imod(i, 2), 1)
  local centre = lacc.cond(lacc.eq(j, 1), lacc.cond(one, f64(1.5), f64(-1.5)), lacc.cond(one, f64(1.2), f64(-1.2)))
  return lacc.cond(lacc.eq(j, 3), f64(1), centre + noise:at(i, lacc.min(j, 2)))
end))
local y = lacc.run(lacc.generate({ n }, function(i) return lacc.cast(lacc.imod(i, 2), "f64") end))

-- The mean log-loss of weights w: softplus(-z) for class 1, softplus(z) for class 0, with
-- softplus(s) = max(s, 0) + log1p(exp(-|s|)) (no overflow for large |s|).
local function loss(w, xs, labels)
  local z = lacc.sum(xs * w, 2)
  local s = (1 - 2 * labels) * z
  return (lacc.max(s, 0) + lacc.log1p(lacc.exp(-lacc.abs(s)))):mean()
end

local value_and_grad = lacc.compile(lacc.value_and_grad(loss))
local step = lacc.compile(function(w, g) return w - rate * g end)

local w = lacc.fromtable({ 0, 0, 0 }, "f64")
local curve = {}
for k = 1, steps do
  local l, g = value_and_grad(w, X, y)
  curve[k] = l:get()
  w = step(w, g)
end

-- accuracy: the sign of z against the class
local right = lacc.run(lacc.sum(lacc.map(function(r) return lacc.cast(r, "i64") end,
  lacc.zipWith(function(z, c) return lacc.eq(lacc.gt(z, 0), lacc.gt(c, 0.5)) end, lacc.sum(X * w, 2), y)))):get()
print(("%d points, %d steps: loss %.4f -> %.4f, weights (%.3f, %.3f, %.3f), %d of %d right")
  :format(n, steps, curve[1], curve[steps], w:get(1), w:get(2), w:get(3), right, n))

-- The loss curve: one column per step, the curve in white on grey.
local L = lacc.fromtable(curve, "f64")
local h = 160
lacc.write_png(out .. "_loss.png", lacc.generate({ h, steps }, function(i, j)
  local row = h - lacc.cast(L[j] / curve[1] * (h - 1), "i64")
  return lacc.cond(lacc.eq(i, row), f64(1), f64(0.15))
end))

-- The decision boundary: each pixel of [-3, 3] x [-3, 3] coloured by the model's
-- probability of class 1 (blue to orange), then every point drawn over it (class 1
-- white, class 0 black).
local size = 240
local function pixel(v) return lacc.cast((v + 3) / 6 * (size - 1), "i64") + 1 end
local background = lacc.generate({ size, size }, function(i, j)
  local px = lacc.cast(j - 1, "f64") / (size - 1) * 6 - 3
  local py = 3 - lacc.cast(i - 1, "f64") / (size - 1) * 6
  local z = w:get(1) * px + w:get(2) * py + w:get(3)
  local p = 1 / (1 + lacc.exp(-z))
  return lacc.tuple(0.2 + 0.7 * p, f64(0.4), 0.9 - 0.7 * p)
end)
local dots = lacc.map(function(c) return lacc.tuple(c, c, c) end, y)
local image = lacc.permute(function(new, _) return new end, background, function(i)
  local px, py = X:at(i, 1), X:at(i, 2)
  local inside = lacc.land(lacc.land(lacc.ge(px, -3), lacc.le(px, 3)), lacc.land(lacc.ge(py, -3), lacc.le(py, 3)))
  return lacc.cond(inside, pixel(-py), 0), lacc.cond(inside, pixel(px), 0)
end, dots)
lacc.write_png(out .. "_boundary.png", image)
print(("written: %s_loss.png (%dx%d), %s_boundary.png (%dx%d)"):format(out, steps, h, out, size, size))
