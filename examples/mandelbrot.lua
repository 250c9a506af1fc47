-- The Mandelbrot set: a generate over the pixels, a while_ loop per pixel, colours from
-- the escape count, written as mandelbrot.png (or the file named by OUT).
-- Run: make demo NAME=mandelbrot [W=width]
local lacc = require "lacc"

local w = tonumber(os.getenv("W") or "") or 600
local h = math.floor(w * 2 / 3)
local out = os.getenv("OUT") or "mandelbrot.png"
local limit = 200

local counts = lacc.generate({ h, w }, function(i, j)
  local ci = -1.2 + lacc.cast(i - 1, "f32") * (2.4 / h)
  local cr = -2.2 + lacc.cast(j - 1, "f32") * (3.6 / w)
  local zero = lacc.constant(0, "f32")
  local z = lacc.while_(function(s)
    local zr, zi, n = s:unpack()
    return lacc.land(lacc.lt(n, limit), lacc.le(zr * zr + zi * zi, 4))
  end, function(s)
    local zr, zi, n = s:unpack()
    return zr * zr - zi * zi + cr, 2 * zr * zi + ci, n + 1
  end, lacc.tuple(zero, zero, lacc.constant(0, "i32")))
  return z[3]
end)

-- inside the set black; outside a blue-to-gold ramp on the square root of the count
local image = lacc.map(function(n)
  local t = lacc.sqrt(lacc.cast(n, "f32") / limit)
  local inside = lacc.ge(n, limit)
  local function ch(a, b) return lacc.cond(inside, lacc.constant(0, "f32"), a + (b - a) * t) end
  return ch(0.05, 1.0), ch(0.1, 0.8), ch(0.4, 0.1)
end, counts)

local r = lacc.run(image)
r:write_png(out)
local inside = lacc.run(lacc.sum(lacc.map(function(n)
  return lacc.cond(lacc.ge(n, limit), lacc.constant(1, "i64"), lacc.constant(0, "i64"))
end, counts))):get()
print(("%dx%d Mandelbrot set, %d pixels inside, written to %s"):format(w, h, inside, out))
