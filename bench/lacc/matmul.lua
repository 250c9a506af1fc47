-- Matrix product of two n x n matrices in lacc, f32 (f64 with TYPE f64: matmul_f64).
-- Inputs as bench/c/matmul.c. The row picks the formulation:
--   lacc and its modes: Accelerate's, fold (+) 0 (zipWith (*) (replicate (All, n, All) a)
--                       (replicate (n, All, All) (transpose b)))
--   lacc_generate     : fold (+) 0 (generate (n, n, n) (\i j k -> a[i, k] * b[k, j]))
--   lacc_matmul       : lacc.matmul(a, b)
--   lacc_contract     : lacc.matmul(a, b) under lacc.config{contract = true} (a * b + c
--                       may be one fused multiply-add)
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n, t = R.args()
if row == "lacc_contract" then lacc.config { contract = true } end
t = t or "f32"
local bench = t == "f32" and "matmul" or "matmul_" .. t

-- Without fusion the replicated inputs and their products are n^3-element arrays.
local bytes = n ^ 3 * (t == "f64" and 8 or 4)
if mode == "fusion_off" and bytes > 2 ^ 29 then
  return B.na(bench, row, ("fusion off materialises the n^3 products (%.1f GiB)"):format(bytes / 2 ^ 30))
end

local a = lacc.run(lacc.generate({ n, n }, function(i, k)
  return lacc.cast(lacc.imod(7 * i + 3 * k, 11) - 4, t) / 4
end))
local b = lacc.run(lacc.generate({ n, n }, function(k, j)
  return lacc.cast(lacc.imod(5 * k + 2 * j, 13) - 5, t) / 4
end))
local function add(x, y) return x + y end
local function mul(x, y) return x * y end

local formulations = {
  lacc = function(x, y)
    return lacc.fold(add, 0, lacc.zipWith(mul, lacc.replicate({ lacc.all, n, lacc.all }, x),
      lacc.replicate({ n, lacc.all, lacc.all }, lacc.transpose(y))))
  end,
  lacc_generate = function(x, y)
    return lacc.fold(add, 0, lacc.generate({ n, n, n }, function(i, j, k)
      return x:at(i, k) * y:at(k, j)
    end))
  end,
  lacc_matmul = function(x, y) return lacc.matmul(x, y) end,
  lacc_contract = function(x, y) return lacc.matmul(x, y) end,
}
local matmul = formulations[row] or formulations.lacc

R.run { bench = bench, row = row, mode = mode,
        program = matmul(a, b), fn = matmul, inputs = { a, b },
        checksum = function(r) return R.sum64(r) end }
