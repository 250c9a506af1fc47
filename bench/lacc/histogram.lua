-- Histogram of n values into 1024 bins in lacc: permute (+) into zeros, the map of ones
-- fused into the scatter. Inputs as bench/c/histogram.c.
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local xs = lacc.run(lacc.generate({ n }, function(k)
  local d = lacc.cast(k, "f64") * B.C1
  return lacc.cast(lacc.floor(1024 * (d - lacc.floor(d))), "i32")
end))
local function histogram(x)
  local ones = lacc.map(function() return lacc.constant(1, "i32") end, x)
  return lacc.permute(function(a, b) return a + b end, lacc.fill({ 1024 }, lacc.constant(0, "i32")),
    function(i) return x[i] + 1 end, ones)
end

R.run { bench = "histogram", row = row, mode = mode,
        program = histogram(xs), fn = histogram, inputs = { xs },
        checksum = function(r)
          local t, cs = r:totable(), 0
          for b = 1, 1024 do cs = cs + (b - 1) * t[b] end
          return cs
        end }
