"""What the NumPy rows share: the repetition policy, in-process timing and the inputs'
formulas (as bench/c/common.h), and the RESULT lines bench/run.sh reads."""
import gc
import os
import sys
import time

import numpy as np

C1, C2, C3 = 0.6180339887498949, 0.7548776662466927, 0.5698402909980532


def _num(name, dflt):
    try:
        return float(os.environ.get(name, ""))
    except ValueError:
        return dflt


WARMUP = int(_num("BENCH_WARMUP", 1))
REPS = max(1, int(_num("BENCH_REPS", 7)))
BUDGET = _num("BENCH_ROW_BUDGET", 30.0)


def frac(n, c):
    d = np.arange(1, n + 1, dtype=np.float64) * c
    return d - np.floor(d)


def u24(n, c):
    return frac(n, c).astype(np.float32)


def u16(n, c):
    return (np.floor(65536.0 * frac(n, c)) / 65536.0).astype(np.float32)


def b01(n, c):
    return np.floor(2.0 * frac(n, c)).astype(np.float32)


def mandel_dx(w):
    return ((3 * 1048576) // w) / 1048576.0


def measure(body):
    """Median ms, repetitions and the last result of body()."""
    first, r = 0.0, None
    for _ in range(WARMUP):
        gc.collect()
        t0 = time.perf_counter()
        r = body()
        first = time.perf_counter() - t0
    n = REPS
    if first > 0 and first * n > BUDGET:
        n = min(REPS, max(3, int(BUDGET / first)))
    ts = []
    for _ in range(n):
        gc.collect()
        t0 = time.perf_counter()
        r = body()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    med = ts[n // 2] if n % 2 else 0.5 * (ts[n // 2 - 1] + ts[n // 2])
    return 1e3 * med, n, r


def result(bench, row, ms, checksum, reps):
    print("RESULT %s %s %.4f %.17g %d numpy%s" % (bench, row, ms, checksum, reps, np.__version__))
    sys.stdout.flush()


def args():
    return sys.argv[1], int(sys.argv[2])
