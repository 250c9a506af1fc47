"""stats_meanvar (issue 44): a mean and a variance as two sums of one computed array in
NumPy (one thread): m = xs * 0.5 + 1, then m.sum() and (m * m).sum() (f32, NumPy's
pairwise sums; m and m * m are temporaries). Inputs as bench/c/stats_meanvar.c (integer
sums, exact in any order). Checks: both sums equal the f64 sums. Checksum: sum(m) +
2 sum(m^2). Usage: stats_meanvar.py ROW N"""
import numpy as np

import common as c

row, n = c.args()
xs = (2.0 * np.floor(3.0 * c.frac(n, c.C1)) - 4.0).astype(np.float32)


def meanvar():
    m = xs * np.float32(0.5) + np.float32(1)
    return m.sum(), (m * m).sum()


ms, reps, (s1, s2) = c.measure(meanvar)
m64 = xs.astype(np.float64) * 0.5 + 1.0
w1, w2 = m64.sum(), (m64 * m64).sum()
if s1.dtype != np.float32 or float(s1) != w1 or float(s2) != w2:
    print("NA stats_meanvar %s sums %r and %r, not %r and %r" % (row, s1, s2, w1, w2))
else:
    c.result("stats_meanvar", row, ms, float(s1) + 2.0 * float(s2), reps)
