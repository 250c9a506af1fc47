"""3x3 box blur of a w x w f32 image, clamped at the edges, in NumPy: the sum of nine
shifted views of the edge-padded image. Inputs as bench/c/blur.c."""
import numpy as np

import common as c

row, w = c.args()
x = c.u24(w * w, c.C1).reshape(w, w)


def blur():
    p = np.pad(x, 1, mode="edge")
    s = p[0:w, 0:w] + p[0:w, 1:w + 1]
    for di, dj in ((0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)):
        s = s + p[di:di + w, dj:dj + w]
    return s / np.float32(9)


ms, reps, r = c.measure(blur)
c.result("blur", row, ms, float(r.sum(dtype=np.float64)), reps)
