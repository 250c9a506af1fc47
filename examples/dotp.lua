-- Dot product: zipWith then fold, traced once and run on lacc's default backend.
local lacc = require "lacc"

local n = 1000
local xs, ys = {}, {}
for i = 1, n do xs[i], ys[i] = i, 1 / i end
local x = lacc.fromtable(xs, "f64")
local y = lacc.fromtable(ys, "f64")

local dotp = lacc.sum(lacc.zipWith(function(a, b) return a * b end, x, y))
local result = lacc.run(dotp)
print(("dot product of %d elements: %s (expected %d)"):format(n, result:get(), n))
local text = lacc.explain(dotp)   -- also returns {kernels, intermediates, lets}
print(text)
