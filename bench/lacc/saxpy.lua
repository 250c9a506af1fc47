-- saxpy in lacc: zipWith (\x y -> a * x + y) xs ys, materialised. See bench/c/saxpy.c.
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local a = 2.5
local xs = R.input(n, "u16", B.C1)
local ys = R.input(n, "u24", B.C2)
local function saxpy(x, y)
  return lacc.zipWith(function(xi, yi) return a * xi + yi end, x, y)
end

R.run { bench = "saxpy", row = row, mode = mode,
        program = saxpy(xs, ys), fn = saxpy, inputs = { xs, ys },
        checksum = function(r) return R.sum64(r) end }
