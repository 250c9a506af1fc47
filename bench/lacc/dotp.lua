-- Dot product of n f32 in lacc: sum (zipWith (*) xs ys). See bench/c/dotp.c. The plain
-- lacc row also times the same elements as two grids of rows of 1000 (row "lacc_grid": a
-- total sum of a map of rank 2, read at its row-major index as a vector's is).
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

if row == "lacc" and n % 1000 == 0 then
  local function grid(a) return lacc.run(lacc.reshape({ n // 1000, 1000 }, a)) end
  R.run { bench = "dotp", row = "lacc_grid", mode = mode,
          program = dotp(grid(xs), grid(ys)), fn = dotp, inputs = { grid(xs), grid(ys) },
          checksum = function(r) return r:get() end }
end
