-- random: n uniform f32 in [0, 1) in lacc: lacc.random.uniform({n}, 42, "f32") (Philox4x32-10),
-- a new array each run. (This file is not bench/lacc/random.lua: with bench/ first on
-- LUA_PATH, require "lacc.random" would find that.)
-- Checks (each row; a failed check prints n/a): every value in [0, 1) (lacc.minimum and
-- lacc.maximum), the mean within 6 standard errors of 1/2, and 72 elements (the first 8, 63
-- spread over the array, the last) bit for bit against Philox4x32-10 computed here in plain
-- Lua (checked first against Random123's known answer). Checksum: the mean, as
-- bench/c/uniform.c (equal to C_philox's).
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()
local seed = 42
if mode == "sharing_off" then
  -- without sharing recovery the ten rounds' values are inlined wherever they are used: a
  -- kernel of 1.1 MB of C that the C compiler takes minutes over (the row would time out)
  return B.na("random", row, "sharing off inlines Philox's rounds: a 1.1 MB kernel the C compiler takes minutes over")
end

local floor, two32, philox = math.floor, 4294967296, B.philox
local bad = B.philox_unchecked()
if bad then return B.na("random", row, "the check's own " .. bad) end
-- element p (0-based) of uniform({n}, seed, "f32")
local function expected(p)
  local b = floor(p / 4)
  local w = { philox(seed % two32, floor(seed / two32), b % two32, floor(b / two32), 0, 0) }
  return floor(w[p % 4 + 1] / 256) * 2 ^ -24
end

local function check(r)
  local lo, hi = lacc.run({ lacc.minimum(r), lacc.maximum(r) })
  if not (lo:get() >= 0 and hi:get() < 1) then error("a value outside [0, 1)") end
  local mean = R.sum64(r) / n
  if math.abs(mean - 0.5) > 6 * 0.28867513459481287 / math.sqrt(n) then
    error(("the mean %.6f is not near 1/2"):format(mean))
  end
  local ps = { n - 1 }
  for p = 0, math.min(n, 8) - 1 do ps[#ps + 1] = p end
  for j = 1, 63 do ps[#ps + 1] = floor((n - 1) * j / 64) end
  for _, p in ipairs(ps) do
    if r:get(p + 1) ~= expected(p) then
      error(("element %d is %.9g, Philox4x32-10 gives %.9g"):format(p + 1, r:get(p + 1), expected(p)))
    end
  end
  return mean
end

local function uniform() return lacc.random.uniform({ n }, seed, "f32") end
R.run { bench = "random", row = row, mode = mode,
        program = uniform(), fn = uniform, inputs = {},
        checksum = check }
