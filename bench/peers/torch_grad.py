"""The PyTorch rows of the grad group (issue 47): each program's gradient by autograd
(forward and backward, timed together), on the CPU at the C rows' thread count, on the
inputs bench/lacc/gradients.lua builds (element k, 1-based and row-major, of each input is
(2 frac(k c) - 1) times a scale, in f64, then cast). Usage: torch_grad.py PROGRAM ROW."""
import math
import sys

import numpy as np
import torch
import torch.nn.functional as F

import peercommon as c

torch.set_num_threads(c.THREADS)
VERSION = "torch" + torch.__version__.split("+")[0]


def inp(shape, dtype, const, scale=1.0):
    n = int(np.prod(shape))
    v = (2.0 * c.frac(n, const) - 1.0) * scale
    return torch.from_numpy(v.reshape(shape).astype(dtype))


def logreg():
    n, m = 1000000, 64
    X, w = inp((n, m), np.float32, c.C1), inp((m,), np.float32, c.C2, 0.1)
    y = torch.from_numpy((c.frac(n, c.C3) > 0.5).astype(np.float32))

    def grad():
        w_ = w.clone().requires_grad_()
        s = (1 - 2 * y) * (X @ w_)
        loss = (torch.clamp(s, min=0) + torch.log1p(torch.exp(-s.abs()))).mean()
        return torch.autograd.grad(loss, [w_])
    return grad, "X @ w, log1p(exp(-|s|)), autograd"


def mlp():
    n, i_, h, o = 1024, 784, 256, 10
    X = inp((n, i_), np.float32, c.C1)
    labels = torch.from_numpy(np.floor(c.frac(n, c.C2) * o).astype(np.int64))
    params = [inp((i_, h), np.float32, c.C2, 0.05), inp((h,), np.float32, c.C3, 0.1),
              inp((h, o), np.float32, c.C3, 0.1), inp((o,), np.float32, c.C1, 0.1)]

    def grad():
        p = [t.clone().requires_grad_() for t in params]
        logits = torch.relu(X @ p[0] + p[1]) @ p[2] + p[3]
        loss = F.cross_entropy(logits, labels)
        return torch.autograd.grad(loss, p)
    return grad, "relu(X W1 + b1) W2 + b2, F.cross_entropy, autograd"


def nbody():
    n = 4096
    pos, vel = inp((n, 3), np.float64, c.C1, 10.0), inp((n, 3), np.float64, c.C2)
    mass = inp((n,), np.float64, c.C3) * 0.5 + 1
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)

    def grad():
        p, v = pos.clone().requires_grad_(), vel.clone().requires_grad_()
        kinetic = 0.5 * (mass * (v * v).sum(1)).sum()
        diff = p[:, None, :] - p[None, :, :]
        r = torch.sqrt((diff * diff).sum(2) + 0.01)
        potential = torch.where(upper, mass[:, None] * mass[None, :] / r, torch.zeros((), dtype=torch.float64)).sum()
        return torch.autograd.grad(kinetic - potential, [p, v])
    return grad, "all pairs as n x n tensors, autograd"


def diffusion():
    w, steps, alpha = 1024, 10, 0.2
    u0, target = inp((w, w), np.float32, c.C1), inp((w, w), np.float32, c.C2)

    def grad():
        u = u0.clone().requires_grad_()
        x = u
        for _ in range(steps):
            p = F.pad(x[None, None], (1, 1, 1, 1), mode="replicate")[0, 0]
            x = x + alpha * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * x)
        d = x - target
        return torch.autograd.grad((d * d).sum(), [u])
    return grad, "replicate padding and shifted slices, autograd"


def gmm():
    n, d, k = 10000, 64, 50
    x = inp((n, d), np.float64, c.C1)
    alphas, means = inp((k,), np.float64, c.C2), inp((k, d), np.float64, c.C3)
    icf = inp((k, d + d * (d - 1) // 2), np.float64, c.C1, 0.1)
    rows, cols = [], []
    for col in range(d):
        for row in range(col + 1, d):
            rows.append(row)
            cols.append(col)
    rows, cols = torch.tensor(rows), torch.tensor(cols)
    const = -n * d * 0.5 * math.log(2 * math.pi)

    def grad():
        a, mu, q = alphas.clone().requires_grad_(), means.clone().requires_grad_(), icf.clone().requires_grad_()
        qd = q[:, :d]
        L = torch.zeros(k, d, d, dtype=torch.float64)
        L = L.index_put((torch.arange(k)[:, None], rows[None, :], cols[None, :]), q[:, d:])
        Q = torch.diag_embed(torch.exp(qd)) + L
        xc = x[:, None, :] - mu[None, :, :]
        qx = torch.einsum("kij,nkj->nki", Q, xc)
        main = a + qd.sum(1) - 0.5 * (qx * qx).sum(2)
        prior = 0.5 * ((torch.exp(qd) ** 2).sum() + (q[:, d:] ** 2).sum())
        obj = const + torch.logsumexp(main, 1).sum() - n * torch.logsumexp(a, 0) + prior
        return torch.autograd.grad(obj, [a, mu, q])
    return grad, "ADBench's GMM in batched tensors (einsum), autograd"


PROGRAMS = {"logreg": logreg, "mlp": mlp, "nbody": nbody, "diffusion": diffusion, "gmm": gmm}


def main():
    program, row = sys.argv[1], sys.argv[2]
    bench = "grad_" + program
    if program not in PROGRAMS:
        c.na(bench, row, "unknown program " + program)
        return
    grad, how = PROGRAMS[program]()
    ms, reps, r = c.measure(grad)
    checksum = float(sum(t.double().sum() for t in r))
    c.result(bench, row, ms, checksum, reps, "%s %s" % (VERSION, how))


main()
