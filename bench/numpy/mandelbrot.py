"""Mandelbrot in NumPy (f32) with masks: each step updates only the points still inside
the escape radius (the active set is compressed as points escape). Grid and loop as
bench/c/mandelbrot.c."""
import numpy as np

import common as c

row, w = c.args()
f = np.float32
dx = f(c.mandel_dx(w))
cr1 = f(-2.0) + np.arange(w, dtype=np.float32) * dx
ci1 = f(-1.5) + np.arange(w, dtype=np.float32) * dx
CR = np.tile(cr1, w)          # pixel (i, j) at i * w + j
CI = np.repeat(ci1, w)


def mandel():
    counts = np.full(w * w, 255, dtype=np.int32)
    idx = np.arange(w * w)
    cr, ci = CR, CI
    zr = np.zeros(w * w, dtype=np.float32)
    zi = np.zeros(w * w, dtype=np.float32)
    for n in range(255):
        zr2, zi2 = zr * zr, zi * zi
        alive = zr2 + zi2 <= f(4)
        if not alive.all():
            counts[idx[~alive]] = n
            idx, cr, ci = idx[alive], cr[alive], ci[alive]
            zr, zi, zr2, zi2 = zr[alive], zi[alive], zr2[alive], zi2[alive]
            if idx.size == 0:
                break
        zi = f(2) * zr * zi + ci
        zr = zr2 - zi2 + cr
    return counts.reshape(w, w)


ms, reps, out = c.measure(mandel)
c.result("mandelbrot", row, ms, float(np.sum(out, dtype=np.float64)), reps)
