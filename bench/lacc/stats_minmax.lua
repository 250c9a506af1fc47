-- stats_minmax (issue 44, horizontal fusion): four sibling folds of one array in one
-- lacc.run: the minimum, the maximum, the sum and the count of positive elements,
--   lacc.run({lacc.minimum(xs), lacc.maximum(xs), lacc.sum(xs),
--             lacc.sum(lacc.map(function(x) return lacc.cond(lacc.gt(x, 0), one, zero) end, xs))})
-- the count an i32 sum (one and zero: lacc.constant(1, "i32") and (0, "i32")); the
-- compiled row: the same four programs returned by the function lacc.compile takes. The
-- lacc_hfuse_off row runs them with {hfuse = false}. Inputs as bench/c/stats_minmax.c:
-- xs_k = floor(5 frac(k C2)) - 2 (an integer in -2 .. 2), but -9 at k = floor(n / 3) and
-- 11 at k = n - floor(n / 5): the sum is an integer that f32 adds exactly in any order.
-- Made once (untimed) by lacc.generate.
-- Checks (a failed check prints n/a): the minimum is -9, the maximum 11, the sum equals
-- the f64 sum of xs and the count the i64 count of positives (R.sum64 and a fold of its
-- own, each alone). Checksum: min + 2 max + 3 sum + 4 count (weights 1 to 4, so that
-- exchanged results show).
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local ka, kb = math.floor(n / 3), n - math.floor(n / 5)
local xs = lacc.run(lacc.generate({ n }, function(k)
  local v = lacc.cast(lacc.floor(5 * R.frac(k, B.C2)) - 2, "f32")
  return lacc.cond(lacc.eq(k, ka), -9, lacc.cond(lacc.eq(k, kb), 11, v))
end))

local one, zero = lacc.constant(1, "i32"), lacc.constant(0, "i32")
local function minmax(x)
  return { lacc.minimum(x), lacc.maximum(x), lacc.sum(x),
           lacc.sum(lacc.map(function(v) return lacc.cond(lacc.gt(v, 0), one, zero) end, x)) }
end

local want_sum = R.sum64(xs)
local want_count = lacc.run(lacc.sum(lacc.map(function(v)
  return lacc.cond(lacc.gt(v, 0), lacc.constant(1, "i64"), lacc.constant(0, "i64"))
end, xs))):get()
local function checked(mn, mx, s, c)
  mn, mx, s, c = mn:get(), mx:get(), s:get(), c:get()
  if mn ~= -9 or mx ~= 11 then error(("minimum %g and maximum %g, not -9 and 11"):format(mn, mx)) end
  if s ~= want_sum then error(("sum %.17g, not %.17g"):format(s, want_sum)) end
  if c ~= want_count then error(("%d positive elements counted, not %d"):format(c, want_count)) end
  return mn + 2 * mx + 3 * s + 4 * c
end

R.run { bench = "stats_minmax", row = row, mode = mode, multi = true,
        program = minmax(xs), fn = minmax, inputs = { xs }, checksum = checked }
