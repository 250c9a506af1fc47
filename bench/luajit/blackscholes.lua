-- Black-Scholes as a plain LuaJIT loop over FFI float arrays (one thread; the arithmetic
-- is f64, as Lua numbers are, stored as f32). Inputs and formula as
-- bench/c/blackscholes.c. Usage: luajit blackscholes.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local S, X, T = ffi.new("float[?]", n), ffi.new("float[?]", n), ffi.new("float[?]", n)
local call, put = ffi.new("float[?]", n), ffi.new("float[?]", n)
local f32 = ffi.new("float[1]")
local function tof32(v) f32[0] = v; return f32[0] end
for i = 0, n - 1 do
  S[i] = 5 + 32 * tof32(B.u24(i + 1, B.C1))
  X[i] = 1 + 128 * tof32(B.u24(i + 1, B.C2))
  T[i] = 0.25 + 8 * tof32(B.u24(i + 1, B.C3))
end

local R, V = 0.02, 0.30
local A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
local RSQRT2PI = 0.39894228040143267794
local abs, exp, log, sqrt = math.abs, math.exp, math.log, math.sqrt

local function cnd(d)
  local k = 1 / (1 + 0.2316419 * abs(d))
  local c = RSQRT2PI * exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
  if d > 0 then return 1 - c end
  return c
end

local function blackscholes()
  for i = 0, n - 1 do
    local s, x, t = S[i], X[i], T[i]
    local sqrtT = sqrt(t)
    local d1 = (log(s / x) + (R + 0.5 * V * V) * t) / (V * sqrtT)
    local d2 = d1 - V * sqrtT
    local cndd1, cndd2 = cnd(d1), cnd(d2)
    local expRT = exp(-R * t)
    call[i] = s * cndd1 - x * expRT * cndd2
    put[i] = x * expRT * (1 - cndd2) - s * (1 - cndd1)
  end
end

local ms, reps = B.measure(blackscholes)
local sum = 0
for i = 0, n - 1 do sum = sum + call[i] + put[i] end
B.result("blackscholes", row, ms, sum, reps, jit.version:gsub(" ", ""))
