"""Black-Scholes, vectorised NumPy in f32 (CUDA SDK formula, polynomial CND). Inputs and
formula as bench/c/blackscholes.c."""
import numpy as np

import common as c

row, n = c.args()
f = np.float32
S = f(5) + f(32) * c.u24(n, c.C1)
X = f(1) + f(128) * c.u24(n, c.C2)
T = f(0.25) + f(8) * c.u24(n, c.C3)
R, V = f(0.02), f(0.30)
A1, A2, A3, A4, A5 = f(0.31938153), f(-0.356563782), f(1.781477937), f(-1.821255978), f(1.330274429)
RSQRT2PI = f(0.39894228040143267794)


def cnd(d):
    k = f(1) / (f(1) + f(0.2316419) * np.abs(d))
    cc = RSQRT2PI * np.exp(f(-0.5) * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    return np.where(d > 0, f(1) - cc, cc)


def blackscholes():
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + f(0.5) * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1, cndd2 = cnd(d1), cnd(d2)
    expRT = np.exp(-R * T)
    call = S * cndd1 - X * expRT * cndd2
    put = X * expRT * (f(1) - cndd2) - S * (f(1) - cndd1)
    return call, put


ms, reps, (call, put) = c.measure(blackscholes)
assert call.dtype == np.float32 and put.dtype == np.float32
s = float(np.sum(call.astype(np.float64) + put.astype(np.float64)))
c.result("blackscholes", row, ms, s, reps)
