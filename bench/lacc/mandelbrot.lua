-- Mandelbrot in lacc: generate over a w x w grid, a while_ loop per pixel on the state
-- (zr, zi, n), giving an i32 count. See bench/c/mandelbrot.c for the grid and the loop.
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, w = R.args()

local dx = B.mandel_dx(w)

local function mandelbrot()
  return lacc.generate({ w, w }, function(i, j)
    local ci = -1.5 + lacc.cast(i - 1, "f32") * dx
    local cr = -2.0 + lacc.cast(j - 1, "f32") * dx
    local zero = lacc.constant(0, "f32")
    local z = lacc.while_(
      function(st)
        local zr, zi, n = st:unpack()
        return lacc.land(lacc.lt(n, 255), lacc.le(zr * zr + zi * zi, 4))
      end,
      function(st)
        local zr, zi, n = st:unpack()
        local zr2, zi2 = zr * zr, zi * zi
        return zr2 - zi2 + cr, 2 * zr * zi + ci, n + 1
      end,
      lacc.tuple(zero, zero, lacc.constant(0, "i32")))
    return z[3]
  end)
end

R.run { bench = "mandelbrot", row = row, mode = mode,
        program = mandelbrot(), fn = mandelbrot, inputs = {},
        checksum = function(r) return R.sum64(r) end }
