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
K = 16
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
bx = np.clip(np.floor((x.astype(np.float64) - 0.125) / 4.0), 0, 3).astype(np.int64)
by = np.clip(np.floor((y.astype(np.float64) + 0.125) / 4.0), 0, 3).astype(np.int64)
cell = 4 * by + bx
wx = np.bincount(cell, weights=x, minlength=K)
wy = np.bincount(cell, weights=y, minlength=K)
wc = np.bincount(cell, minlength=K)
if int(cnt.sum()) != n:
    print("NA stats_kmeans %s the counts add up to %d, not %d" % (row, int(cnt.sum()), n))
elif not (np.array_equal(sx.astype(np.float64), wx) and np.array_equal(sy.astype(np.float64), wy)
          and np.array_equal(cnt, wc)):
    print("NA stats_kmeans %s a sum or count differs from the cells'" % row)
else:
    w = np.arange(1, K + 1, dtype=np.float64)
    per = sx.astype(np.float64) + 2.0 * sy.astype(np.float64) + 3.0 * cnt
    c.result("stats_kmeans", row, ms, float((w * per).sum()), reps)
