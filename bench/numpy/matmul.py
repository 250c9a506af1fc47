"""Matrix product of two n x n matrices in NumPy: a @ b, f32 (f64 with TYPE f64:
matmul_f64; NumPy's BLAS, with its own threads). Inputs as bench/c/matmul.c.
Usage: matmul.py ROW N [TYPE]"""
import sys

import numpy as np

import common as c

row, n = c.args()
t = sys.argv[3] if len(sys.argv) > 3 else "f32"
bench = "matmul" if t == "f32" else "matmul_" + t
dt = np.float64 if t == "f64" else np.float32
i = np.arange(1, n + 1, dtype=np.int64)[:, None]
j = np.arange(1, n + 1, dtype=np.int64)[None, :]
a = (((7 * i + 3 * j) % 11 - 4) / 4.0).astype(dt)
b = (((5 * i + 2 * j) % 13 - 5) / 4.0).astype(dt)
ms, reps, r = c.measure(lambda: a @ b)
c.result(bench, row, ms, float(r.sum(dtype=np.float64)), reps)
