"""The PyTorch peer rows (issue 45): each `make bench` workload as a torch user spells it
on the CPU (torch.set_num_threads to the C rows' thread count), on the same inputs as the
NumPy rows (bench/numpy/common.py's formulas, handed to torch by torch.from_numpy, untimed),
timed and checked as they are, a new result tensor each run. Usage:
torch_rows.py BENCH ROW N, BENCH one of ROWS below (matmul_f64 and sort_* name their type)."""
import numpy as np
import torch
import torch.nn.functional as F

import peercommon as c

torch.set_num_threads(c.THREADS)
VERSION = "torch" + torch.__version__.split("+")[0]
T = torch.from_numpy


def dotp(n):
    x, y = T(c.b01(n, c.C1)), T(c.b01(n, c.C2))
    ms, reps, r = c.measure(lambda: torch.dot(x, y))
    return ms, reps, float(r), "torch.dot"


def saxpy(n):
    x, y = T(c.u16(n, c.C1)), T(c.u24(n, c.C2))
    # torch.add's alpha: one pass, no temporary for a * x (2.5 x is exact: the same z)
    ms, reps, z = c.measure(lambda: torch.add(y, x, alpha=2.5))
    return ms, reps, float(z.numpy().sum(dtype=np.float64)), "torch.add(y,x,alpha=a)"


def blackscholes(n):
    S = 5 + 32 * T(c.u24(n, c.C1))
    X = 1 + 128 * T(c.u24(n, c.C2))
    Y = 0.25 + 8 * T(c.u24(n, c.C3))
    R, V = 0.02, 0.30
    # the drift term in f32, as the C and NumPy rows compute it (a Python float would be f64)
    RV = float(np.float32(R) + np.float32(0.5) * np.float32(V) * np.float32(V))
    A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429

    def cnd(d):
        k = 1 / (1 + 0.2316419 * d.abs())
        cc = 0.39894228040143267794 * torch.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
        return torch.where(d > 0, 1 - cc, cc)

    def bs():
        sqrtT = Y.sqrt()
        d1 = (torch.log(S / X) + RV * Y) / (V * sqrtT)
        d2 = d1 - V * sqrtT
        cndd1, cndd2 = cnd(d1), cnd(d2)
        expRT = torch.exp(-R * Y)
        return S * cndd1 - X * expRT * cndd2, X * expRT * (1 - cndd2) - S * (1 - cndd1)

    ms, reps, (call, put) = c.measure(bs)
    assert call.dtype == torch.float32
    s = float(np.sum(call.numpy().astype(np.float64) + put.numpy().astype(np.float64)))
    return ms, reps, s, "elementwise ops, f32"


def scan(n):
    x = T(c.scan_input(n))
    ms, reps, r = c.measure(lambda: torch.cumsum(x, 0, dtype=torch.int32))
    return ms, reps, float(r[n - 1]) + float(r[n // 2]), "torch.cumsum"


def histogram(n):
    x = T(c.hist_input(n))
    ms, reps, r = c.measure(lambda: torch.bincount(x, minlength=1024))
    return ms, reps, float(np.dot(np.arange(1024, dtype=np.float64), r.numpy())), "torch.bincount"


def blur(w):
    x = T(c.u24(w * w, c.C1).reshape(1, 1, w, w))
    # clamped edges: a replicate pad; avg_pool2d divides the window's sum by 9, as C does
    ms, reps, r = c.measure(lambda: F.avg_pool2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), 3, stride=1))
    return ms, reps, float(r.numpy().sum(dtype=np.float64)), "pad(replicate)+avg_pool2d"


def conv2d(w):
    x = T(c.u16(w * w, c.C1).reshape(1, 1, w, w))
    b = np.array([1, 4, 6, 4, 1], dtype=np.float64)
    # the weights over 256 are powers of two apart from 3: every product and sum stays exact
    k = T((np.outer(b, b) / 256.0).astype(np.float32).reshape(1, 1, 5, 5))
    ms, reps, r = c.measure(lambda: F.conv2d(F.pad(x, (2, 2, 2, 2), mode="replicate"), k))
    return ms, reps, float(r.numpy().sum(dtype=np.float64)), "pad(replicate)+conv2d"


def matmul(n, dt=np.float32):
    a, b = (T(m) for m in c.matmul_inputs(n, dt))
    ms, reps, r = c.measure(lambda: torch.mm(a, b))
    return ms, reps, float(r.numpy().sum(dtype=np.float64)), "torch.mm"


def nbody(n):
    dt, soft, mass = 0.01, 0.01, 1.0 / n
    x, y, vx, vy = (T(v) for v in c.nbody_inputs(n))

    def step():
        dx = x[None, :] - x[:, None]
        dy = y[None, :] - y[:, None]
        d2 = dx * dx + dy * dy + soft * soft
        inv = mass / (d2 * d2.sqrt())
        nvx = vx + (dx * inv).sum(1) * dt
        nvy = vy + (dy * inv).sum(1) * dt
        return x + nvx * dt, y + nvy * dt, nvx, nvy

    ms, reps, r = c.measure(step)
    return ms, reps, float((r[2] * r[2] + r[3] * r[3]).sum()), "n x n tensors, f64"


def sort(n, t):
    keys = c.sort_keys(n, t)
    if t == "u32":
        # torch has no uint32: the keys' bits as int32 with the sign bit flipped sort in
        # the unsigned order (the flips, in and out, are timed)
        a = T(keys.view(np.int32))
        flip = torch.tensor(-2 ** 31, dtype=torch.int32)

        def run():
            return torch.sort(a ^ flip).values ^ flip

        ms, reps, r = c.measure(run)
        return ms, reps, r.numpy().view(np.uint32), keys, "torch.sort, u32 as int32 ^ 2^31"
    a = T(keys)
    ms, reps, r = c.measure(lambda: torch.sort(a).values)
    return ms, reps, r.numpy(), keys, "torch.sort"


def random(n):
    g = torch.Generator().manual_seed(42)
    ms, reps, r = c.measure(lambda: torch.rand(n, generator=g, dtype=torch.float32))
    mean, bad = c.check_uniform(r.numpy())
    return ms, reps, mean, bad, "torch.rand: another generator (mt19937), mean within ~1e-4"


def colsum(n):
    a = c.colsum_input(n)
    ta = T(a)
    ms, reps, r = c.measure(lambda: ta.sum(0))
    cs, bad = c.check_colsum(a, r.numpy())
    return ms, reps, cs, bad, "x.sum(0)"


def stats_meanvar(n):
    xs = c.meanvar_input(n)
    tx = T(xs)

    def mv():
        m = tx * 0.5 + 1
        return m.sum(), (m * m).sum()

    ms, reps, (s1, s2) = c.measure(mv)
    cs, bad = c.check_meanvar(xs, s1, s2)
    return ms, reps, cs, bad, "m.sum(), (m*m).sum()"


def stats_minmax(n):
    xs = c.minmax_input(n)
    tx = T(xs)

    def mm():
        mn, mx = torch.aminmax(tx)
        return mn, mx, tx.sum(), torch.count_nonzero(tx > 0)

    ms, reps, r = c.measure(mm)
    cs, bad = c.check_minmax(xs, *r)
    return ms, reps, cs, bad, "aminmax, sum, count_nonzero"


def stats_softmax(n):
    a = c.softmax_input(n)
    ta = T(a)
    ms, reps, r = c.measure(lambda: torch.softmax(ta, dim=1))
    cs, bad = c.check_softmax(a, r.numpy())
    return ms, reps, cs, bad, "torch.softmax(x, 1)"


def stats_kmeans(n):
    x, y, cx, cy = c.kmeans_inputs(n)
    tx, ty, tcx, tcy = T(x), T(y), T(cx), T(cy)

    def step():
        d = (tx[:, None] - tcx[None, :]) ** 2 + (ty[:, None] - tcy[None, :]) ** 2
        a = d.argmin(1)
        return (torch.zeros(c.K).index_add_(0, a, tx), torch.zeros(c.K).index_add_(0, a, ty),
                torch.bincount(a, minlength=c.K))

    ms, reps, (sx, sy, cnt) = c.measure(step)
    cs, bad = c.check_kmeans(x, y, sx.numpy(), sy.numpy(), cnt.numpy())
    return ms, reps, cs, bad, "n x 16 distances, argmin, index_add_, bincount"


PLAIN = {"dotp": dotp, "saxpy": saxpy, "blackscholes": blackscholes, "scan": scan, "histogram": histogram,
         "blur": blur, "conv2d": conv2d, "matmul": matmul, "nbody": nbody,
         "matmul_f64": lambda n: matmul(n, np.float64)}
CHECKED = {"random": random, "colsum": colsum, "stats_meanvar": stats_meanvar, "stats_minmax": stats_minmax,
           "stats_softmax": stats_softmax, "stats_kmeans": stats_kmeans}
ROWS = sorted(list(PLAIN) + list(CHECKED) + ["sort_u32", "sort_f32", "sort_i64"])


def main():
    bench, row, n = c.args()
    if bench in PLAIN:
        ms, reps, cs, how = PLAIN[bench](n)
        bad = None
    elif bench in CHECKED:
        ms, reps, cs, bad, how = CHECKED[bench](n)
    elif bench.startswith("sort_"):
        ms, reps, r, keys, how = sort(n, bench[5:])
        cs, bad = c.check_sort(keys, r)
    else:
        c.na(bench, row, "no PyTorch row (torch_rows.py has %s)" % " ".join(ROWS))
        return
    if bad:
        c.na(bench, row, bad)
    else:
        c.result(bench, row, ms, cs, reps, "%s %s %dT" % (VERSION, how, c.THREADS))


main()
