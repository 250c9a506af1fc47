-- stats_kmeans (issue 44): one k-means step on n 2-D points (FFI float arrays) and 16
-- centres as one plain LuaJIT loop (one thread): each point's nearest centre (squared
-- distances in f64, exact here; the first centre wins a tie), its x and y added into that
-- centre's sums (f64, exact here) and its count. Inputs as bench/c/stats_kmeans.c.
-- Checks: the counts add up to n, and all 48 results equal a second loop that finds each
-- point's centre from its cell (per axis, the nearest of the four). Checksum: the sum over
-- centres c of c (sum x + 2 sum y + 3 count). Usage: luajit stats_kmeans.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])
local K = 16

local x, y = ffi.new("float[?]", n), ffi.new("float[?]", n)
for i = 0, n - 1 do
  x[i] = math.floor(64 * B.frac(i + 1, B.C1)) / 4
  y[i] = math.floor(64 * B.frac(i + 1, B.C2)) / 4
end
local cx, cy = ffi.new("float[?]", K), ffi.new("float[?]", K)
for c = 0, K - 1 do cx[c], cy[c] = 4 * (c % 4) + 2.125, 4 * math.floor(c / 4) + 1.875 end
local sx, sy, cnt = ffi.new("double[?]", K), ffi.new("double[?]", K), ffi.new("double[?]", K)

local function kmeans_step()
  for c = 0, K - 1 do sx[c], sy[c], cnt[c] = 0, 0, 0 end
  for i = 0, n - 1 do
    local xi, yi = x[i], y[i]
    local best, bd = 0, (xi - cx[0]) ^ 2 + (yi - cy[0]) ^ 2
    for c = 1, K - 1 do
      local dx, dy = xi - cx[c], yi - cy[c]
      local d = dx * dx + dy * dy
      if d < bd then best, bd = c, d end
    end
    sx[best], sy[best], cnt[best] = sx[best] + xi, sy[best] + yi, cnt[best] + 1
  end
end

local ms, reps = B.measure(kmeans_step)
local wx, wy, wc = {}, {}, {}
for c = 0, K - 1 do wx[c], wy[c], wc[c] = 0, 0, 0 end
for i = 0, n - 1 do
  local bx = math.min(math.max(math.floor((x[i] - 0.125) / 4), 0), 3)
  local by = math.min(math.max(math.floor((y[i] + 0.125) / 4), 0), 3)
  local c = 4 * by + bx
  wx[c], wy[c], wc[c] = wx[c] + x[i], wy[c] + y[i], wc[c] + 1
end
local cs, total = 0, 0
for c = 0, K - 1 do
  if sx[c] ~= wx[c] or sy[c] ~= wy[c] or cnt[c] ~= wc[c] then
    return B.na("stats_kmeans", row, ("centre %d: sums %.17g, %.17g and count %d, not %.17g, %.17g and %d")
      :format(c + 1, sx[c], sy[c], cnt[c], wx[c], wy[c], wc[c]))
  end
  total = total + cnt[c]
  cs = cs + (c + 1) * (sx[c] + 2 * sy[c] + 3 * cnt[c])
end
if total ~= n then return B.na("stats_kmeans", row, ("the counts add up to %d, not %d"):format(total, n)) end
B.result("stats_kmeans", row, ms, cs, reps, jit.version:gsub(" ", ""))
