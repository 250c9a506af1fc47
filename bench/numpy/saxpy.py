"""saxpy in NumPy: a * x + y (f32, a new output array each run). Inputs as
bench/c/saxpy.c."""
import numpy as np

import common as c

row, n = c.args()
a = np.float32(2.5)
x, y = c.u16(n, c.C1), c.u24(n, c.C2)
ms, reps, z = c.measure(lambda: a * x + y)
c.result("saxpy", row, ms, float(np.sum(z, dtype=np.float64)), reps)
