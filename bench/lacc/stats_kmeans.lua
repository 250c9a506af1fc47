-- stats_kmeans (issue 44): one k-means step on n 2-D points (f32 arrays xs, ys) and 16
-- centres, in lacc as a user writes it: the assignment, a zipWith over the points that
-- reads the centres from a 16 x 2 host array (cs:at(c, 1), cs:at(c, 2)) and keeps the
-- nearest (squared distances, the first centre winning a tie: a Lua loop over the 16
-- centres, unrolled as lacc traces it), then per centre the sums of x and of y and the
-- count, each a histogram-style permute with (+) onto 16 zeros, indexed by the assignment:
--   local nearest = lacc.zipWith(function(x, y) ... return best end, xs, ys)   -- i32, 1..16
--   local at = function(i) return nearest[i] end
--   lacc.permute(add, zeros_f32, at, xs), lacc.permute(add, zeros_f32, at, ys),
--   lacc.permute(add, zeros_i32, at, ones)
-- three results of one lacc.run (the assignment, read three times, is computed once into
-- an array); the compiled row: the same function of xs, ys and cs. Inputs as
-- bench/c/stats_kmeans.c: x_k = floor(64 frac(k C1)) / 4, y_k = floor(64 frac(k C2)) / 4
-- (multiples of 1/4 in [0, 16)), centre c = 4a + b + 1 (a, b in 0 .. 3) at (4b + 2.125,
-- 4a + 1.875): every squared distance is exact in f32, no point is as near two centres,
-- and every per-centre sum is exact in any order. Made once (untimed) by lacc.generate.
-- Checks (a failed check prints n/a): the counts add up to n, and all 48 results equal a
-- plain Lua loop over every point that finds its centre from its cell (the centres lie on
-- a grid: per axis, the nearest of the four). Checksum: the sum over centres c of
-- c (sum x + 2 sum y + 3 count).
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()
local K = 16
if mode == "sharing_off" then
  -- without sharing recovery the running minimum of the search is inlined wherever it is
  -- used, twice a centre: about 2^16 copies of the first distances (at 10 centres 15 MB of
  -- C, generated in seconds; at 16 the row ran past 120 s)
  return B.na("stats_kmeans", row, "sharing off inlines the nearest-centre search's running " ..
    "minimum twice a centre: a kernel that doubles with each of the 16 centres")
end

local function coord(c)
  return lacc.run(lacc.generate({ n }, function(k)
    return lacc.cast(lacc.floor(64 * R.frac(k, c)) / 4, "f32")
  end))
end
local xs, ys = coord(B.C1), coord(B.C2)
local ct = {}
for c = 1, K do ct[c] = { 4 * ((c - 1) % 4) + 2.125, 4 * math.floor((c - 1) / 4) + 1.875 } end
local cs = lacc.fromtable(ct, "f32")

local function add(a, b) return a + b end
local function kmeans_step(px, py, centres)
  local nearest = lacc.zipWith(function(x, y)
    local best, bd = lacc.constant(1, "i32"), nil
    for c = 1, K do
      local dx, dy = x - centres:at(c, 1), y - centres:at(c, 2)
      local d = dx * dx + dy * dy
      if c == 1 then
        bd = d
      else
        local closer = lacc.lt(d, bd)
        best, bd = lacc.cond(closer, c, best), lacc.cond(closer, d, bd)
      end
    end
    return best
  end, px, py)
  local function at(i) return nearest[i] end
  local zeros = lacc.fill({ K }, lacc.constant(0, "f32"))
  local ones = lacc.map(function() return lacc.constant(1, "i32") end, px)
  return { lacc.permute(add, zeros, at, px), lacc.permute(add, zeros, at, py),
           lacc.permute(add, lacc.fill({ K }, lacc.constant(0, "i32")), at, ones) }
end

-- The plain Lua loop: each point's centre from its cell.
local wx, wy, wc = {}, {}, {}
for c = 1, K do wx[c], wy[c], wc[c] = 0, 0, 0 end
for k = 1, n do
  local x, y = math.floor(64 * B.frac(k, B.C1)) / 4, math.floor(64 * B.frac(k, B.C2)) / 4
  local bx = math.min(math.max(math.floor((x - 0.125) / 4), 0), 3)
  local by = math.min(math.max(math.floor((y + 0.125) / 4), 0), 3)
  local c = 4 * by + bx + 1
  wx[c], wy[c], wc[c] = wx[c] + x, wy[c] + y, wc[c] + 1
end
local function checked(sx, sy, cnt)
  local total, cs_ = 0, 0
  for c = 1, K do
    local gx, gy, gc = sx:get(c), sy:get(c), cnt:get(c)
    total = total + gc
    if gx ~= wx[c] or gy ~= wy[c] or gc ~= wc[c] then
      error(("centre %d: sums %.17g, %.17g and count %d, not %.17g, %.17g and %d"):format(c, gx, gy, gc,
        wx[c], wy[c], wc[c]))
    end
    cs_ = cs_ + c * (gx + 2 * gy + 3 * gc)
  end
  if total ~= n then error(("the counts add up to %d, not %d"):format(total, n)) end
  return cs_
end

R.run { bench = "stats_kmeans", row = row, mode = mode, multi = true,
        program = kmeans_step(xs, ys, cs), fn = kmeans_step, inputs = { xs, ys, cs }, checksum = checked }
