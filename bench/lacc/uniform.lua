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

-- Philox4x32-10 in plain Lua (Lua 5.4 or LuaJIT): the 32 x 32-bit products in exact
-- halves, xor from LuaJIT's bit library or Lua 5.4's operator.
local okb, bit = pcall(require, "bit")
local bxor = okb and function(a, b, c) return bit.bxor(a, b, c) % 4294967296 end
  or load("return function(a, b, c) return a ~ b ~ c end")()
local floor, two32 = math.floor, 4294967296
local function mulhilo(m, x)
  local ph, pl = floor(m / 65536) * x, (m % 65536) * x
  local r = (ph % 65536) * 65536 + pl
  return floor(ph / 65536) + floor(r / two32), r % two32
end
local function philox(k0, k1, c0, c1, c2, c3)
  for round = 1, 10 do
    if round > 1 then k0, k1 = (k0 + 0x9E3779B9) % two32, (k1 + 0xBB67AE85) % two32 end
    local hi0, lo0 = mulhilo(0xD2511F53, c0)
    local hi1, lo1 = mulhilo(0xCD9E8D57, c2)
    c0, c1, c2, c3 = bxor(hi1, c1, k0), lo1, bxor(hi0, c3, k1), lo0
  end
  return c0, c1, c2, c3
end
local kat = { philox(0, 0, 0, 0, 0, 0) }
if kat[1] ~= 0x6627e8d5 or kat[2] ~= 0xe169c58d or kat[3] ~= 0xbc57ac4c or kat[4] ~= 0x9b00dbd8 then
  return B.na("random", row, "the check's own Philox misses the known answer")
end
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
