"""One step of examples/nbody.lua for n bodies in NumPy, f64: the n x n arrays of the
pairs' differences, the pulls summed along j, then the Euler step. Inputs and checksum
as bench/c/nbody.c."""
import numpy as np

import common as c

row, n = c.args()
dt, soft, mass = 0.01, 0.01, 1.0 / n
x, y = c.frac(n, c.C1), c.frac(n, c.C2)
vx, vy = (c.frac(n, c.C3) - 0.5) / 4, (0.5 - c.frac(n, c.C1)) / 4


def step():
    dx = x[None, :] - x[:, None]
    dy = y[None, :] - y[:, None]
    d2 = dx * dx + dy * dy + soft * soft
    inv = mass / (d2 * np.sqrt(d2))
    nvx = vx + (dx * inv).sum(axis=1) * dt
    nvy = vy + (dy * inv).sum(axis=1) * dt
    return x + nvx * dt, y + nvy * dt, nvx, nvy


ms, reps, r = c.measure(step)
c.result("nbody", row, ms, float(np.sum(r[2] * r[2] + r[3] * r[3])), reps)
