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


def fmix32(h):
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


# k-means' centres (stats_kmeans): the 16 of a 4 x 4 grid
K = 16


def check_kmeans(x, y, sx, sy, cnt):
    n = x.size
    bx = np.clip(np.floor((x.astype(np.float64) - 0.125) / 4.0), 0, 3).astype(np.int64)
    by = np.clip(np.floor((y.astype(np.float64) + 0.125) / 4.0), 0, 3).astype(np.int64)
    cell = 4 * by + bx
    wx = np.bincount(cell, weights=x, minlength=K)
    wy = np.bincount(cell, weights=y, minlength=K)
    wc = np.bincount(cell, minlength=K)
    cnt = np.asarray(cnt).astype(np.int64)
    if int(cnt.sum()) != n:
        return None, "the counts add up to %d, not %d" % (int(cnt.sum()), n)
    if not (np.array_equal(np.asarray(sx, dtype=np.float64), wx) and np.array_equal(np.asarray(sy, dtype=np.float64), wy)
            and np.array_equal(cnt, wc)):
        return None, "a sum or count differs from the cells'"
    w = np.arange(1, K + 1, dtype=np.float64)
    per = np.asarray(sx, dtype=np.float64) + 2.0 * np.asarray(sy, dtype=np.float64) + 3.0 * cnt
    return float((w * per).sum()), None
