-- 5x5 convolution of a w x w f32 image in lacc, the binomial blur: stencil with a 5x5
-- window and a clamped boundary, the 25 neighbours weighted in row-major order. Inputs as
-- bench/c/conv2d.c. Row lacc_separable: the same filter as two 1-D stencils, (1 4 6 4 1)
-- along the rows (window {1, 5}), then along the columns (window {5, 1}) over 256 (every
-- sum exact in f32 either way, so the checksum is the direct form's).
local lacc = require "lacc"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local B = require "benchlib"
local row, mode, w = R.args()

local flat = R.input(w * w, "u16", B.C1)
local xs = lacc.run(lacc.reshape({ w, w }, flat))
local b = { 1, 4, 6, 4, 1 }
local W = {}
for r = 1, 5 do
  for c = 1, 5 do W[#W + 1] = b[r] * b[c] end
end
local function conv2d(x)
  return lacc.stencil(function(...)
    local v = { ... }
    local s = W[1] * v[1]
    for t = 2, 25 do s = s + W[t] * v[t] end
    return s / 256
  end, "clamp", x, 5)
end

local function separable(x)
  local rows = lacc.stencil(function(a, c, d, e, f) return a + 4 * c + 6 * d + 4 * e + f end, "clamp", x, { 1, 5 })
  return lacc.stencil(function(a, c, d, e, f) return (a + 4 * c + 6 * d + 4 * e + f) / 256 end, "clamp", rows, { 5, 1 })
end
if row == "lacc_separable" then conv2d = separable end

R.run { bench = "conv2d", row = row, mode = mode,
        program = conv2d(xs), fn = conv2d, inputs = { xs },
        checksum = function(r) return R.sum64(r) end }
