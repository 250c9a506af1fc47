-- Dot product of n f32 in lacc: sum (zipWith (*) xs ys). See bench/c/dotp.c.
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local xs = R.input(n, "b01", B.C1)
local ys = R.input(n, "b01", B.C2)
local function dotp(x, y)
  return lacc.sum(lacc.zipWith(function(a, b) return a * b end, x, y))
end

R.run { bench = "dotp", row = row, mode = mode,
        program = dotp(xs, ys), fn = dotp, inputs = { xs, ys },
        checksum = function(r) return r:get() end }
