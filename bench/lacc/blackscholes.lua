-- Black-Scholes in lacc (CUDA SDK formula, polynomial CND, as Accelerate's example):
-- zipWith3 over price, strike, years giving an array of (call, put). See
-- bench/c/blackscholes.c for the inputs.
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local price = R.input(n, "u24", B.C1, 32, 5)
local strike = R.input(n, "u24", B.C2, 128, 1)
local years = R.input(n, "u24", B.C3, 8, 0.25)

local riskfree, volatility = 0.02, 0.30
local A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
local RSQRT2PI = 0.39894228040143267794

local function cnd(d)
  local k = 1 / (1 + 0.2316419 * lacc.abs(d))
  local c = RSQRT2PI * lacc.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
  return lacc.cond(lacc.gt(d, 0), 1 - c, c)
end

local function blackscholes(ps, xs, ts)
  return lacc.zipWith3(function(s, x, t)
    local v = lacc.constant(volatility, "f32")
    local r = lacc.constant(riskfree, "f32")
    local sqrtT = lacc.sqrt(t)
    local d1 = (lacc.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrtT)
    local d2 = d1 - v * sqrtT
    local cndd1, cndd2 = cnd(d1), cnd(d2)
    local expRT = lacc.exp(-r * t)
    return s * cndd1 - x * expRT * cndd2, x * expRT * (1 - cndd2) - s * (1 - cndd1)
  end, ps, xs, ts)
end

R.run { bench = "blackscholes", row = row, mode = mode,
        program = blackscholes(price, strike, years), fn = blackscholes,
        inputs = { price, strike, years },
        checksum = function(r)
          return R.sum64(r, function(p)
            local c, q = p:unpack()
            return c:cast("f64") + q:cast("f64")
          end)
        end }
