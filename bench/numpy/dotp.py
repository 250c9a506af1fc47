"""Dot product in NumPy without np.dot: np.sum(x * y) (f32). Inputs as bench/c/dotp.c."""
import numpy as np

import common as c

row, n = c.args()
x, y = c.b01(n, c.C1), c.b01(n, c.C2)
ms, reps, r = c.measure(lambda: np.sum(x * y))
c.result("dotp", row, ms, float(r), reps)
