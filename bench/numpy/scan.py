"""Inclusive prefix sum of n i32 in NumPy: np.cumsum(x, dtype=np.int32). Inputs as
bench/c/scan.c."""
import numpy as np

import common as c

row, n = c.args()
x = (np.floor(16.0 * c.frac(n, c.C1)) - 8).astype(np.int32)
ms, reps, r = c.measure(lambda: np.cumsum(x, dtype=np.int32))
c.result("scan", row, ms, float(r[n - 1]) + float(r[n // 2]), reps)
