"""colsum: the column sums of an n x n f32 matrix in NumPy: a.sum(axis=0) (one thread); a
second line, NumPy_rows: the row sums a.sum(axis=1). Inputs as bench/c/colsum.c (exact
sums in any order). Checks: every sum equals the f64 sums of the matrix (np.add.reduce in
f64). Checksum: the f64 sum of the sums. Usage: colsum.py ROW N"""
import numpy as np

import common as c

row, n = c.args()
i = np.arange(1, n + 1, dtype=np.int64)[:, None]
j = np.arange(1, n + 1, dtype=np.int64)[None, :]
a = (((i * j + 3 * i) % 13 - 6) / 4.0).astype(np.float32)
for rid, axis in ((row, 0), (row + "_rows", 1)):
    ms, reps, r = c.measure(lambda: a.sum(axis=axis))
    want = a.sum(axis=axis, dtype=np.float64)
    if r.dtype != np.float32 or not np.array_equal(r.astype(np.float64), want):
        print("NA colsum %s a sum differs from the f64 sums" % rid)
    else:
        c.result("colsum", rid, ms, float(r.sum(dtype=np.float64)), reps)
