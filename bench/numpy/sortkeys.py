"""Sort of n keys in NumPy: np.sort(a) (its default kind; one thread), keys of the type
TYPE (u32, f32 or i64) as bench/c/sortkeys.c builds them. A second line, NumPy_argsort:
np.argsort(a, kind="stable") (stable, as lacc.argsort; 1-based positions in the checksum).
Checks as bench/c/sortkeys.c: the output is in order and holds the input's keys.
Usage: sortkeys.py ROW N TYPE"""
import sys

import numpy as np

import common as c

row, n = c.args()
t = sys.argv[3] if len(sys.argv) > 3 else "u32"
bench = "sort_" + t


k = np.arange(1, n + 1, dtype=np.uint32)
if t == "u32":
    a = c.fmix32(k)
elif t == "f32":
    a = c.fmix32(k).view(np.int32).astype(np.float32) * np.float32(2.0 ** -31)
elif t == "i64":
    a = ((c.fmix32(k).astype(np.uint64) << np.uint64(32)) | c.fmix32(~k).astype(np.uint64)).view(np.int64)
else:
    sys.exit("sortkeys.py: unknown type " + t)
del k
pos = [(n - 1) * j // 1000 for j in range(1001)]


def sample_sum(v):
    s = 0.0
    for p in pos:
        s += float(v[p])
    return s


def bits(v):
    return v.view(np.uint64) if v.dtype.itemsize == 8 else v.view(np.uint32).astype(np.uint64)


def multiset(v):
    b = bits(v)
    return int(b.sum(dtype=np.uint64)), int((b * b).sum(dtype=np.uint64))


want = multiset(a)

ms, reps, r = c.measure(lambda: np.sort(a))
if not bool(np.all(r[:-1] <= r[1:])):
    print("NA %s %s the output is not in order" % (bench, row))
elif multiset(r) != want:
    print("NA %s %s the output does not hold the input's keys" % (bench, row))
else:
    c.result(bench, row, ms, sample_sum(r), reps)
del r

ms, reps, p = c.measure(lambda: np.argsort(a, kind="stable"))
s = a[p]
ok = bool(np.all(np.bincount(p, minlength=n) == 1)) and bool(
    np.all((s[:-1] < s[1:]) | ((s[:-1] == s[1:]) & (p[:-1] < p[1:]))))
if not ok:
    print("NA %s %s_argsort the positions are not the stable order" % (bench, row))
else:
    c.result(bench, row + "_argsort", ms, sample_sum(p + 1), reps)
