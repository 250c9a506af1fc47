"""What the Python peer rows (PyTorch, Numba; issue 45) share: the inputs' formulas, the
repetition policy and the timing of bench/numpy/common.py (loaded from there, so every
Python row builds the very same inputs and times them the same way), the thread count,
RESULT lines whose note names the peer, and the result checks of the NumPy rows of
sort_*, random, colsum and stats_* (numpy arrays in, a checksum or the reason for NA out)."""
import importlib.util
import os
import sys

import numpy as np

# bench/numpy/common.py under another name: its folder's scripts import it as `common`,
# and a module of that name here would be a second, diverging copy
_spec = importlib.util.spec_from_file_location(
    "bench_numpy_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "numpy", "common.py"))
_np_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_np_common)

C1, C2, C3 = _np_common.C1, _np_common.C2, _np_common.C3
frac, u24, u16, b01 = _np_common.frac, _np_common.u24, _np_common.u16, _np_common.b01
mandel_dx, measure = _np_common.mandel_dx, _np_common.measure
fmix32, check_kmeans = _np_common.fmix32, _np_common.check_kmeans

# the C rows' OMP_NUM_THREADS (bench/run.sh sets it to LACC_THREADS)
THREADS = int(os.environ.get("OMP_NUM_THREADS") or 2)


def result(bench, row, ms, checksum, reps, note):
    print("RESULT %s %s %.4f %.17g %d %s" % (bench, row, ms, checksum, reps, note))
    sys.stdout.flush()


def na(bench, row, why):
    print("NA %s %s %s" % (bench, row, why))
    sys.stdout.flush()


def args():
    """BENCH ROW N"""
    return sys.argv[1], sys.argv[2], int(sys.argv[3])


# ---- inputs the NumPy scripts build inline (the same expressions)

def ij(n):
    return np.arange(1, n + 1, dtype=np.int64)[:, None], np.arange(1, n + 1, dtype=np.int64)[None, :]


def matmul_inputs(n, dt):
    i, j = ij(n)
    return (((7 * i + 3 * j) % 11 - 4) / 4.0).astype(dt), (((5 * i + 2 * j) % 13 - 5) / 4.0).astype(dt)


def colsum_input(n):
    i, j = ij(n)
    return (((i * j + 3 * i) % 13 - 6) / 4.0).astype(np.float32)


def softmax_input(n):
    i, j = ij(n)
    return (((i * j + 3 * i) % 13 - 6) / 4.0 + 16.0 * (i % 7)).astype(np.float32)


def hist_input(n):
    return np.floor(1024.0 * frac(n, C1)).astype(np.int32)


def scan_input(n):
    return (np.floor(16.0 * frac(n, C1)) - 8).astype(np.int32)


def meanvar_input(n):
    return (2.0 * np.floor(3.0 * frac(n, C1)) - 4.0).astype(np.float32)


def minmax_input(n):
    xs = (np.floor(5.0 * frac(n, C2)) - 2.0).astype(np.float32)
    xs[n // 3 - 1] = -9.0
    xs[n - n // 5 - 1] = 11.0
    return xs


K = _np_common.K


def kmeans_inputs(n):
    x = (np.floor(64.0 * frac(n, C1)) / 4.0).astype(np.float32)
    y = (np.floor(64.0 * frac(n, C2)) / 4.0).astype(np.float32)
    cx = (4.0 * (np.arange(K) % 4) + 2.125).astype(np.float32)
    cy = (4.0 * (np.arange(K) // 4) + 1.875).astype(np.float32)
    return x, y, cx, cy


def nbody_inputs(n):
    return frac(n, C1), frac(n, C2), (frac(n, C3) - 0.5) / 4, (0.5 - frac(n, C1)) / 4


def sort_keys(n, t):
    k = np.arange(1, n + 1, dtype=np.uint32)
    if t == "u32":
        return fmix32(k)
    if t == "f32":
        return fmix32(k).view(np.int32).astype(np.float32) * np.float32(2.0 ** -31)
    return ((fmix32(k).astype(np.uint64) << np.uint64(32)) | fmix32(~k).astype(np.uint64)).view(np.int64)


# ---- checks and checksums, as the NumPy rows'; each returns (checksum, None) or (None, why)

def _bits(v):
    return v.view(np.uint64) if v.dtype.itemsize == 8 else v.view(np.uint32).astype(np.uint64)


def _multiset(v):
    b = _bits(v)
    return int(b.sum(dtype=np.uint64)), int((b * b).sum(dtype=np.uint64))


def check_sort(keys, r):
    n = keys.size
    if r.dtype != keys.dtype or not bool(np.all(r[:-1] <= r[1:])):
        return None, "the output is not in order"
    if _multiset(r) != _multiset(keys):
        return None, "the output does not hold the input's keys"
    return sum(float(r[(n - 1) * j // 1000]) for j in range(1001)), None


def check_uniform(r):
    n = r.size
    mean = float(np.sum(r, dtype=np.float64)) / n
    if r.dtype != np.float32 or not (float(r.min()) >= 0.0 and float(r.max()) < 1.0):
        return None, "a value outside [0, 1)"
    if abs(mean - 0.5) > 6 * 0.28867513459481287 / np.sqrt(n):
        return None, "the mean is not near 1/2"
    return mean, None


def check_colsum(a, r):
    if r.dtype != np.float32 or not np.array_equal(r.astype(np.float64), a.sum(axis=0, dtype=np.float64)):
        return None, "a sum differs from the f64 sums"
    return float(r.sum(dtype=np.float64)), None


def check_meanvar(xs, s1, s2):
    m64 = xs.astype(np.float64) * 0.5 + 1.0
    w1, w2 = m64.sum(), (m64 * m64).sum()
    if float(s1) != w1 or float(s2) != w2:
        return None, "sums %r and %r, not %r and %r" % (float(s1), float(s2), w1, w2)
    return float(s1) + 2.0 * float(s2), None


def check_minmax(xs, mn, mx, s, cnt):
    ws = xs.sum(dtype=np.float64)
    wc = int(np.count_nonzero(xs > 0))
    if float(mn) != -9.0 or float(mx) != 11.0 or float(s) != ws or int(cnt) != wc:
        return None, "min %r, max %r, sum %r, count %r; want -9, 11, %r, %r" % (
            float(mn), float(mx), float(s), int(cnt), ws, wc)
    return float(mn) + 2.0 * float(mx) + 3.0 * float(s) + 4.0 * int(cnt), None


def check_softmax(a, r):
    n = a.shape[0]
    a64 = a.astype(np.float64)
    rows = [(n - 1) * q // 8 for q in range(9)]
    cols = [(n - 1) * t // 4 for t in range(5)]
    sub = a64[rows]
    e64 = np.exp(sub - sub.max(axis=1, keepdims=True))
    want = (e64 / e64.sum(axis=1, keepdims=True))[:, cols]
    got = r[np.ix_(rows, cols)].astype(np.float64)
    if r.dtype != np.float32 or np.abs(r.sum(axis=1, dtype=np.float64) - 1.0).max() > 1e-3:
        return None, "a row does not sum to 1"
    if (np.abs(got - want) > 1e-4 * want).any():
        return None, "an element differs from the f64 softmax"
    j = np.arange(1, n + 1, dtype=np.float64)[None, :]
    return float((r.astype(np.float64) * j).sum()), None
