"""stats_softmax (issue 44): a softmax over the rows of an n x n f32 matrix in NumPy (one
thread): m = a.max(axis=1, keepdims=True), e = np.exp(a - m), e / e.sum(axis=1,
keepdims=True) (f32 throughout). Inputs as bench/c/stats_softmax.c. Checks: every row
sums to 1 within 1e-3, and 5 elements of each of 9 rows are within 1e-4 (relative) of the
softmax in f64. Checksum: the f64 sum of the outputs weighted by their column j (1-based).
Usage: stats_softmax.py ROW N"""
import numpy as np

import common as c

row, n = c.args()
i = np.arange(1, n + 1, dtype=np.int64)[:, None]
j = np.arange(1, n + 1, dtype=np.int64)[None, :]
a = (((i * j + 3 * i) % 13 - 6) / 4.0 + 16.0 * (i % 7)).astype(np.float32)


def softmax():
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


ms, reps, r = c.measure(softmax)
a64 = a.astype(np.float64)
e64 = np.exp(a64 - a64.max(axis=1, keepdims=True))
want = e64 / e64.sum(axis=1, keepdims=True)
rows = [(n - 1) * q // 8 for q in range(9)]
cols = [(n - 1) * t // 4 for t in range(5)]
sub_got, sub_want = r[np.ix_(rows, cols)].astype(np.float64), want[np.ix_(rows, cols)]
if r.dtype != np.float32 or np.abs(r.sum(axis=1, dtype=np.float64) - 1.0).max() > 1e-3:
    print("NA stats_softmax %s a row does not sum to 1" % row)
elif (np.abs(sub_got - sub_want) > 1e-4 * sub_want).any():
    print("NA stats_softmax %s an element differs from the f64 softmax" % row)
else:
    c.result("stats_softmax", row, ms, float((r.astype(np.float64) * j).sum()), reps)
