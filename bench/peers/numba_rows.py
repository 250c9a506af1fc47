"""The Numba peer rows (issue 45): the `make bench` workloads whose natural spelling is a
loop, as a Numba user writes them: @njit(parallel=True) with prange (NUMBA_NUM_THREADS, set
here to the C rows' thread count unless given), fastmath off, Numba's other defaults; f32
workloads kept in f32 (constants np.float32, so nothing is promoted to f64). Each function
is compiled by a first, untimed call before the warm-up; then timed as the NumPy rows are
(bench/numpy/common.py), a new output array each run. Inputs and checks as the NumPy rows'.
Usage: numba_rows.py BENCH ROW N"""
import math
import os

import numpy as np

import peercommon as c

os.environ.setdefault("NUMBA_NUM_THREADS", str(c.THREADS))
import numba  # noqa: E402  (NUMBA_NUM_THREADS is read at import)
from numba import njit, prange  # noqa: E402

F = np.float32
F0, F1, F2, F4, HALF = F(0), F(1), F(2), F(4), F(0.5)


def jit(fn):
    return njit(parallel=True, fastmath=False)(fn)


@jit
def dotp_k(x, y):
    s = F0
    for i in prange(x.size):
        s += x[i] * y[i]
    return s


@jit
def saxpy_k(a, x, y):
    z = np.empty_like(x)
    for i in prange(x.size):
        z[i] = a * x[i] + y[i]
    return z


RISKFREE, VOLATILITY = F(0.02), F(0.30)
RV = RISKFREE + HALF * VOLATILITY * VOLATILITY
A1, A2, A3, A4, A5 = F(0.31938153), F(-0.356563782), F(1.781477937), F(-1.821255978), F(1.330274429)
RSQRT2PI, K1, MHALF = F(0.39894228040143267794), F(0.2316419), F(-0.5)


@njit(fastmath=False)
def cnd(d):
    k = F1 / (F1 + K1 * abs(d))
    cc = RSQRT2PI * math.exp(MHALF * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    return F1 - cc if d > F0 else cc


@jit
def blackscholes_k(S, X, T):
    n = S.size
    call, put = np.empty_like(S), np.empty_like(S)
    for i in prange(n):
        s, x, t = S[i], X[i], T[i]
        sqrtT = math.sqrt(t)
        d1 = (math.log(s / x) + RV * t) / (VOLATILITY * sqrtT)
        d2 = d1 - VOLATILITY * sqrtT
        cndd1, cndd2 = cnd(d1), cnd(d2)
        expRT = math.exp(-RISKFREE * t)
        call[i] = s * cndd1 - x * expRT * cndd2
        put[i] = x * expRT * (F1 - cndd2) - s * (F1 - cndd1)
    return call, put


@jit
def mandelbrot_k(w, dx):
    out = np.empty((w, w), dtype=np.int32)
    for i in prange(w):
        ci = F(-1.5) + F(i) * dx
        for j in range(w):
            cr = F(-2.0) + F(j) * dx
            zr, zi = F0, F0
            n = 0
            while True:
                zr2, zi2 = zr * zr, zi * zi
                if not (n < 255 and zr2 + zi2 <= F4):
                    break
                zi = F2 * zr * zi + ci
                zr = zr2 - zi2 + cr
                n += 1
            out[i, j] = n
    return out


@jit
def histogram_k(x):
    # one private histogram per thread, merged after: Numba has no array reductions in
    # prange that would do it for us
    nt = numba.get_num_threads()
    n = x.size
    part = np.zeros((nt, 1024), dtype=np.int32)
    for t in prange(nt):
        for i in range(n * t // nt, n * (t + 1) // nt):
            part[t, x[i]] += 1
    return part.sum(axis=0)


@njit(fastmath=False)
def clampi(k, n):
    return 0 if k < 0 else n - 1 if k >= n else k


@njit(fastmath=False)
def blur_edge(x, i, j):
    w = x.shape[0]
    s = F0
    for di in range(-1, 2):
        for dj in range(-1, 2):
            s += x[clampi(i + di, w), clampi(j + dj, w)]
    return s / F(9)


@jit
def blur_k(x):
    # the interior without clamps, the border with them (as the C row)
    w = x.shape[0]
    y = np.empty_like(x)
    for i in prange(w):
        if i == 0 or i == w - 1:
            for j in range(w):
                y[i, j] = blur_edge(x, i, j)
            continue
        y[i, 0] = blur_edge(x, i, 0)
        for j in range(1, w - 1):
            y[i, j] = (x[i - 1, j - 1] + x[i - 1, j] + x[i - 1, j + 1] + x[i, j - 1] + x[i, j] + x[i, j + 1]
                       + x[i + 1, j - 1] + x[i + 1, j] + x[i + 1, j + 1]) / F(9)
        y[i, w - 1] = blur_edge(x, i, w - 1)
    return y


B5 = np.array([1, 4, 6, 4, 1], dtype=np.float32)
W5 = np.outer(B5, B5).astype(np.float32)


@njit(fastmath=False)
def conv_edge(x, i, j):
    w = x.shape[0]
    s = F0
    for di in range(5):
        for dj in range(5):
            s += W5[di, dj] * x[clampi(i + di - 2, w), clampi(j + dj - 2, w)]
    return s / F(256)


@jit
def conv2d_k(x):
    w = x.shape[0]
    y = np.empty_like(x)
    for i in prange(w):
        if i < 2 or i >= w - 2:
            for j in range(w):
                y[i, j] = conv_edge(x, i, j)
            continue
        for j in range(min(2, w)):
            y[i, j] = conv_edge(x, i, j)
        for j in range(2, w - 2):
            s = F0
            for di in range(5):
                for dj in range(5):
                    s += W5[di, dj] * x[i + di - 2, j + dj - 2]
            y[i, j] = s / F(256)
        for j in range(max(w - 2, 2), w):
            y[i, j] = conv_edge(x, i, j)
    return y


@jit
def nbody_k(x, y, vx, vy):
    n = x.size
    dt, soft, mass = 0.01, 0.01, 1.0 / n
    ox, oy, ovx, ovy = np.empty_like(x), np.empty_like(x), np.empty_like(x), np.empty_like(x)
    for i in prange(n):
        ax, ay = 0.0, 0.0
        for j in range(n):
            dx, dy = x[j] - x[i], y[j] - y[i]
            d2 = dx * dx + dy * dy + soft * soft
            inv = mass / (d2 * math.sqrt(d2))
            ax += dx * inv
            ay += dy * inv
        nvx, nvy = vx[i] + ax * dt, vy[i] + ay * dt
        ox[i], oy[i], ovx[i], ovy[i] = x[i] + nvx * dt, y[i] + nvy * dt, nvx, nvy
    return ox, oy, ovx, ovy


@jit
def meanvar_k(x):
    s1, s2 = F0, F0
    for i in prange(x.size):
        m = x[i] * HALF + F1
        s1 += m
        s2 += m * m
    return s1, s2


@jit
def minmax_k(x):
    mn, mx, s = F(np.inf), F(-np.inf), F0
    cnt = 0
    for i in prange(x.size):
        v = x[i]
        mn = min(mn, v)
        mx = max(mx, v)
        s += v
        cnt += 1 if v > F0 else 0
    return mn, mx, s, cnt


@jit
def softmax_k(a):
    n, m = a.shape
    out = np.empty_like(a)
    for i in prange(n):
        mx = F(-np.inf)
        for j in range(m):
            mx = max(mx, a[i, j])
        s = F0
        for j in range(m):
            e = math.exp(a[i, j] - mx)
            out[i, j] = e
            s += e
        for j in range(m):
            out[i, j] /= s
    return out


@jit
def kmeans_k(x, y, cx, cy):
    # per-thread partial sums and counts, merged after (as the C row)
    nt = numba.get_num_threads()
    n, k = x.size, cx.size
    px, py = np.zeros((nt, k), dtype=np.float32), np.zeros((nt, k), dtype=np.float32)
    pc = np.zeros((nt, k), dtype=np.int64)
    for t in prange(nt):
        for i in range(n * t // nt, n * (t + 1) // nt):
            xi, yi = x[i], y[i]
            dx, dy = xi - cx[0], yi - cy[0]
            bd, best = dx * dx + dy * dy, 0
            for cc in range(1, k):
                dx, dy = xi - cx[cc], yi - cy[cc]
                d = dx * dx + dy * dy
                if d < bd:
                    bd, best = d, cc
            px[t, best] += xi
            py[t, best] += yi
            pc[t, best] += 1
    return px.sum(axis=0), py.sum(axis=0), pc.sum(axis=0)


def timed(fn, *a):
    fn(*a)  # compiles, untimed
    return c.measure(lambda: fn(*a))


def run(bench, n):
    """(ms, reps, checksum or None, NA reason or None)"""
    if bench == "dotp":
        ms, reps, r = timed(dotp_k, c.b01(n, c.C1), c.b01(n, c.C2))
        return ms, reps, float(r), None
    if bench == "saxpy":
        ms, reps, z = timed(saxpy_k, F(2.5), c.u16(n, c.C1), c.u24(n, c.C2))
        return ms, reps, float(z.sum(dtype=np.float64)), None
    if bench == "blackscholes":
        S = F(5) + F(32) * c.u24(n, c.C1)
        X = F(1) + F(128) * c.u24(n, c.C2)
        T = F(0.25) + F(8) * c.u24(n, c.C3)
        ms, reps, (call, put) = timed(blackscholes_k, S, X, T)
        if call.dtype != np.float32:
            return ms, reps, None, "the outputs are not f32"
        return ms, reps, float(np.sum(call.astype(np.float64) + put.astype(np.float64))), None
    if bench == "mandelbrot":
        ms, reps, r = timed(mandelbrot_k, n, F(c.mandel_dx(n)))
        return ms, reps, float(r.sum(dtype=np.float64)), None
    if bench == "histogram":
        ms, reps, r = timed(histogram_k, c.hist_input(n))
        return ms, reps, float(np.dot(np.arange(1024, dtype=np.float64), r)), None
    if bench == "blur":
        ms, reps, r = timed(blur_k, c.u24(n * n, c.C1).reshape(n, n))
        return ms, reps, float(r.sum(dtype=np.float64)), None
    if bench == "conv2d":
        ms, reps, r = timed(conv2d_k, c.u16(n * n, c.C1).reshape(n, n))
        return ms, reps, float(r.sum(dtype=np.float64)), None
    if bench == "nbody":
        ms, reps, r = timed(nbody_k, *c.nbody_inputs(n))
        return ms, reps, float(np.sum(r[2] * r[2] + r[3] * r[3])), None
    if bench == "stats_meanvar":
        xs = c.meanvar_input(n)
        ms, reps, (s1, s2) = timed(meanvar_k, xs)
        return (ms, reps) + c.check_meanvar(xs, s1, s2)
    if bench == "stats_minmax":
        xs = c.minmax_input(n)
        ms, reps, r = timed(minmax_k, xs)
        return (ms, reps) + c.check_minmax(xs, *r)
    if bench == "stats_softmax":
        a = c.softmax_input(n)
        ms, reps, r = timed(softmax_k, a)
        return (ms, reps) + c.check_softmax(a, r)
    if bench == "stats_kmeans":
        x, y, cx, cy = c.kmeans_inputs(n)
        ms, reps, (sx, sy, cnt) = timed(kmeans_k, x, y, cx, cy)
        return (ms, reps) + c.check_kmeans(x, y, sx, sy, cnt)
    return None, None, None, "no Numba row (numba_rows.py has dotp saxpy blackscholes mandelbrot " \
        "histogram blur conv2d nbody stats_*)"


def main():
    bench, row, n = c.args()
    ms, reps, cs, bad = run(bench, n)
    if bad:
        c.na(bench, row, bad)
    else:
        c.result(bench, row, ms, cs, reps, "numba%s prange %dT %s" % (
            numba.__version__, numba.get_num_threads(), numba.threading_layer()))


main()
