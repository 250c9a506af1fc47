"""stats_minmax (issue 44): four folds of one f32 array in NumPy (one thread, four passes):
xs.min(), xs.max(), xs.sum() and np.count_nonzero(xs > 0). Inputs as
bench/c/stats_minmax.c (an integer sum, exact in any order). Checks: the minimum is -9,
the maximum 11, the sum equals the f64 sum. Checksum: min + 2 max + 3 sum + 4 count.
Usage: stats_minmax.py ROW N"""
import numpy as np

import common as c

row, n = c.args()
xs = (np.floor(5.0 * c.frac(n, c.C2)) - 2.0).astype(np.float32)
xs[n // 3 - 1] = -9.0
xs[n - n // 5 - 1] = 11.0


def minmax():
    return xs.min(), xs.max(), xs.sum(), np.count_nonzero(xs > 0)


ms, reps, (mn, mx, s, cnt) = c.measure(minmax)
ws = xs.sum(dtype=np.float64)
if float(mn) != -9.0 or float(mx) != 11.0 or s.dtype != np.float32 or float(s) != ws:
    print("NA stats_minmax %s min %r, max %r, sum %r; want -9, 11, %r" % (row, mn, mx, s, ws))
else:
    cs = float(mn) + 2.0 * float(mx) + 3.0 * float(s) + 4.0 * int(cnt)
    c.result("stats_minmax", row, ms, cs, reps)
