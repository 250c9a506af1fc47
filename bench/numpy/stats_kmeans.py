"""stats_kmeans (issue 44): one k-means step on n 2-D points and 16 centres in NumPy (one
thread): the n x 16 squared distances (f32), argmin along the centres (the first wins a
tie), then np.bincount of the assignment weighted by x and by y (f64 sums, exact here,
stored as f32) and unweighted (the counts). Inputs as bench/c/stats_kmeans.c. Checks: the
counts add up to n, and all 48 results equal sums over each point's cell (per axis, the
nearest of the four centres). Checksum: the sum over centres c (1-based) of c (sum x +
2 sum y + 3 count). Usage: stats_kmeans.py ROW N"""
import numpy as np

import common as c

row, n = c.args()
K = c.K
x = (np.floor(64.0 * c.frac(n, c.C1)) / 4.0).astype(np.float32)
y = (np.floor(64.0 * c.frac(n, c.C2)) / 4.0).astype(np.float32)
cx = (4.0 * (np.arange(K) % 4) + 2.125).astype(np.float32)
cy = (4.0 * (np.arange(K) // 4) + 1.875).astype(np.float32)


def kmeans_step():
    d = (x[:, None] - cx[None, :]) ** 2 + (y[:, None] - cy[None, :]) ** 2
    a = d.argmin(axis=1)
    return (np.bincount(a, weights=x, minlength=K).astype(np.float32),
            np.bincount(a, weights=y, minlength=K).astype(np.float32),
            np.bincount(a, minlength=K))


ms, reps, (sx, sy, cnt) = c.measure(kmeans_step)
cs, bad = c.check_kmeans(x, y, sx, sy, cnt)
if bad is not None:
    print("NA stats_kmeans %s %s" % (row, bad))
else:
    c.result("stats_kmeans", row, ms, cs, reps)
