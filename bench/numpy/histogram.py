"""Histogram of n values into 1024 bins in NumPy: np.bincount. Inputs as
bench/c/histogram.c."""
import numpy as np

import common as c

row, n = c.args()
x = np.floor(1024.0 * c.frac(n, c.C1)).astype(np.int32)
ms, reps, r = c.measure(lambda: np.bincount(x, minlength=1024))
c.result("histogram", row, ms, float(np.dot(np.arange(1024, dtype=np.float64), r)), reps)
