-- Black-Scholes option pricing: call and put for each option, a tuple per element.
-- Run: make demo NAME=blackscholes [N=options]
local lacc = require "lacc"

local n = tonumber(os.getenv("N") or "") or 1000000
local r, v = 0.02, 0.30

local function cnd(d)   -- the cumulative normal distribution, polynomial approximation
  local k = 1 / (1 + 0.2316419 * lacc.abs(d))
  local w = 0.31938153 * k - 0.356563782 * k ^ 2 + 1.781477937 * k ^ 3 - 1.821255978 * k ^ 4
            + 1.330274429 * k ^ 5
  local p = 1 - 0.39894228040143267 * lacc.exp(-0.5 * d * d) * w
  return lacc.cond(lacc.lt(d, 0), 1 - p, p)
end

local options = lacc.generate({ n }, function(i)
  local t = lacc.cast(i, "f32") / n
  return 5 + 30 * t, 1 + 100 * (1 - t), 0.25 + 8 * t   -- price, strike, years
end)
local prices = lacc.map(function(o)
  local s, x, t = o:unpack()
  local sq = lacc.sqrt(t)
  local d1 = (lacc.log(s / x) + (r + 0.5 * v * v) * t) / (v * sq)
  local d2 = d1 - v * sq
  local e = lacc.exp(-r * t)
  return s * cnd(d1) - x * e * cnd(d2), x * e * cnd(-d2) - s * cnd(-d1)
end, options)
local res = lacc.run(prices)
local sums = lacc.run(lacc.sum(lacc.map(function(p) return lacc.cast(p[1] - p[2], "f64") end, prices))):get()
local first, last = res:get(1), res:get(n)
print(("%d options: call %.4f put %.4f for the first, call %.4f put %.4f for the last"):format(
  n, first[1], first[2], last[1], last[2]))
print(("put-call parity, summed over all options: sum(call - put) = %.2f"):format(sums))
