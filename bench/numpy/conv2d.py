"""5x5 convolution (the binomial blur), clamped at the edges, in NumPy: the weighted sum
of 25 shifted views of the edge-padded image. Inputs as bench/c/conv2d.c."""
import numpy as np

import common as c

row, w = c.args()
x = c.u16(w * w, c.C1).reshape(w, w)
b = (1, 4, 6, 4, 1)


def conv2d():
    p = np.pad(x, 2, mode="edge")
    s = np.zeros((w, w), dtype=np.float32)
    for di in range(5):
        for dj in range(5):
            s += np.float32(b[di] * b[dj]) * p[di:di + w, dj:dj + w]
    return s / np.float32(256)


ms, reps, r = c.measure(conv2d)
c.result("conv2d", row, ms, float(r.sum(dtype=np.float64)), reps)
