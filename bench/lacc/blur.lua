-- 3x3 box blur of a w x w f32 image in lacc: stencil with a clamped boundary. Inputs as
-- bench/c/blur.c.
local lacc = require "lacc"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local B = require "benchlib"
local row, mode, w = R.args()

local flat = R.input(w * w, "u24", B.C1)
local xs = lacc.run(lacc.reshape({ w, w }, flat))
local function blur(x)
  return lacc.stencil(function(a, b, c, d, e, f, g, h, i)
    return (a + b + c + d + e + f + g + h + i) / 9
  end, "clamp", x)
end

R.run { bench = "blur", row = row, mode = mode,
        program = blur(xs), fn = blur, inputs = { xs },
        checksum = function(r) return R.sum64(r) end }
