-- saxpy: y = a * x + y over n floats, materialised; then the same as a function compiled
-- once (lacc.compile) and called in a loop, as a program that updates its state would.
-- Run: make demo NAME=saxpy [N=elements]
local lacc = require "lacc"

local n = tonumber(os.getenv("N") or "") or 1000000
local a = 2.5
local x = lacc.run(lacc.generate({ n }, function(i) return lacc.cast(i, "f32") / n end))
local y = lacc.run(lacc.fill({ n }, lacc.constant(1, "f32")))

local saxpy = lacc.compile(function(xs, ys)
  return lacc.zipWith(function(u, v) return a * u + v end, xs, ys)
end)
for _ = 1, 4 do y = saxpy(x, y) end   -- y = 1 + 4 a x
print(("saxpy on %d floats, 4 times: y[1] = %.6f, y[%d] = %.6f (expected %.6f and %.6f)")
  :format(n, y:get(1), n, y:get(n), 1 + 4 * a / n, 1 + 4 * a))
