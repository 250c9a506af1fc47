-- Inclusive prefix sum of n i32 in lacc: scanl1 (+). Inputs as bench/c/scan.c.
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local xs = lacc.run(lacc.generate({ n }, function(k)
  local d = lacc.cast(k, "f64") * B.C1
  return lacc.cast(lacc.floor(16 * (d - lacc.floor(d))), "i32") - 8
end))
local function prefix(x)
  return lacc.scanl1(function(a, b) return a + b end, x)
end

R.run { bench = "scan", row = row, mode = mode,
        program = prefix(xs), fn = prefix, inputs = { xs },
        checksum = function(r) return r:get(n) + r:get(math.floor(n / 2) + 1) end }
