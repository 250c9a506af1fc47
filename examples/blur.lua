-- A 3x3 box blur (lacc.stencil) applied 8 times to a generated picture (rings and a
-- checkerboard), written as blur_input.png and blur.png (or OUT's name, and OUT_input).
-- Run: make demo NAME=blur
local lacc = require "lacc"

local n = tonumber(os.getenv("W") or "") or 400
local out = os.getenv("OUT") or "blur.png"
local input_name = out:gsub("%.png$", "_input.png")

local picture = lacc.generate({ n, n }, function(i, j)
  local x, y = lacc.cast(j, "f32") / n - 0.5, lacc.cast(i, "f32") / n - 0.5
  local ring = lacc.cos(lacc.sqrt(x * x + y * y) * 60) * 0.5 + 0.5
  local check = lacc.cond(lacc.eq(lacc.imod(lacc.idiv(i, 25) + lacc.idiv(j, 25), 2), 0),
                          lacc.constant(1, "f32"), lacc.constant(0, "f32"))
  return lacc.cond(lacc.lt(x, 0), ring, check)
end)

local function blur(a)
  return lacc.stencil(function(...)
    local s = 0
    for _, v in ipairs { ... } do s = s + v end
    return s / 9
  end, "clamp", a)
end

local before = lacc.run(picture)
local after = before
for _ = 1, 8 do after = lacc.run(blur(after)) end
before:write_png(input_name)
after:write_png(out)
local mean = function(a) return lacc.run(lacc.sum(lacc.flatten(a))):get() / (n * n) end
print(("%dx%d picture blurred 8 times: mean %.4f before, %.4f after (a box blur keeps the mean up to the edges); %s, %s")
  :format(n, n, mean(before), mean(after), input_name, out))
