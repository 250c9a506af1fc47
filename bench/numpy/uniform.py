"""random: n uniform f32 in [0, 1) in NumPy: np.random.Generator(np.random.Philox(42))
.random(n, dtype=np.float32), a new array each run from one generator made untimed (so each
run draws the next n numbers: NumPy seeds Philox through a SeedSequence, so these are not
lacc's numbers; the checksum, their mean, agrees to about 1e-4). Checks as
bench/c/uniform.c: every value in [0, 1), the mean within 6 standard errors of 1/2.
Usage: uniform.py ROW N"""
import numpy as np

import common as c

row, n = c.args()
g = np.random.Generator(np.random.Philox(42))
ms, reps, r = c.measure(lambda: g.random(n, dtype=np.float32))
mean = float(np.sum(r, dtype=np.float64)) / n
if r.dtype != np.float32 or not (float(r.min()) >= 0.0 and float(r.max()) < 1.0):
    print("NA random %s a value outside [0, 1)" % row)
elif abs(mean - 0.5) > 6 * 0.28867513459481287 / np.sqrt(n):
    print("NA random %s the mean is not near 1/2" % row)
else:
    c.result("random", row, ms, mean, reps)
