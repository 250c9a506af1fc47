-- stats_meanvar (issue 44, horizontal fusion): a mean and a variance as two sibling sums
-- of one computed array, in lacc:
--   m = lacc.map(function(x) return x * 0.5 + 1 end, xs)
--   lacc.run({lacc.sum(m), lacc.sum(lacc.map(function(x) return x * x end, m))})
-- (the compiled row: the same two programs returned by the function lacc.compile takes).
-- With horizontal fusion both sums are one loop over xs, m pulled element by element and
-- never materialised; the lacc_hfuse_off row runs them with {hfuse = false}. Inputs as
-- bench/c/stats_meanvar.c, xs_k = 2 floor(3 frac(k C1)) - 4 (so m is -1, 0 or 1 and both
-- sums are integers that f32 adds exactly in any order), made once (untimed) by
-- lacc.generate. Checks (a failed check prints n/a): the two sums equal f64 sums of m and
-- of m^2 (R.sum64: one fold each, in f64, on their own). Checksum: sum(m) + 2 sum(m^2)
-- (weights 1 and 2, so that exchanged results show).
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local xs = lacc.run(lacc.generate({ n }, function(k)
  return lacc.cast(2 * lacc.floor(3 * R.frac(k, B.C1)) - 4, "f32")
end))

local function half_plus_one(x) return x * 0.5 + 1 end
local function sq(x) return x * x end
local function meanvar(x)
  local m = lacc.map(half_plus_one, x)
  return { lacc.sum(m), lacc.sum(lacc.map(sq, m)) }
end

local want1 = R.sum64(xs, function(x) return half_plus_one(x:cast("f64")) end)
local want2 = R.sum64(xs, function(x) return sq(half_plus_one(x:cast("f64"))) end)
local function checked(s1, s2)
  if s1:get() ~= want1 then error(("sum(m) is %.17g, not %.17g"):format(s1:get(), want1)) end
  if s2:get() ~= want2 then error(("sum(m^2) is %.17g, not %.17g"):format(s2:get(), want2)) end
  return s1:get() + 2 * s2:get()
end

R.run { bench = "stats_meanvar", row = row, mode = mode, multi = true,
        program = meanvar(xs), fn = meanvar, inputs = { xs }, checksum = checked }
