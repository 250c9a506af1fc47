-- A histogram: permute (+) of ones into zeroed bins, each value sent to its bin; then the
-- bins printed as a bar chart. Run: make demo NAME=histogram [N=values]
local lacc = require "lacc"

local n = tonumber(os.getenv("N") or "") or 1000000
local bins = 20
-- a sum of three uniform values (a bell-shaped distribution), from a hash of the index
local values = lacc.generate({ n }, function(i)
  local function u(mul, add)
    local h = lacc.band(lacc.shr(i * mul + add, 7), 0xffffff)
    return lacc.cast(h, "f64") / 0x1000000
  end
  return (u(2654435761, 17) + u(2246822519, 9973) + u(3266489917, 40503)) / 3
end)
local hist = lacc.permute(function(new, old) return new + old end,
  lacc.fill({ bins }, lacc.constant(0, "i64")),
  function(i) return lacc.cast(lacc.floor(values[i] * bins), "i64") + 1 end,
  lacc.map(function() return lacc.constant(1, "i64") end, values))
local counts = lacc.run(hist):totable()
local total, most = 0, 0
for _, c in ipairs(counts) do
  c = tonumber(c)
  total, most = total + c, math.max(most, c)
end
for b, c in ipairs(counts) do
  local bar = ("#"):rep(math.floor(50 * tonumber(c) / most + 0.5))
  print(("%4.2f-%4.2f %8d %s"):format((b - 1) / bins, b / bins, tonumber(c), bar))
end
print(("%d values in %d bins (%d counted)"):format(n, bins, total))
