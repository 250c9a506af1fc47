#!/usr/bin/env python3
"""layers.py BUILD: checks that the core's parts call only forward (docs/architecture.md).

Reads the symbols each object file of BUILD/obj defines and uses (nm) and fails when a
part calls into a later one: base < front < ast < kir < {cpu, opencl} < the driver
(run.c); the two backends never call each other. Calls within a part are free. A
backend is reached from outside its folder only through its table (cpu_backend,
opencl_backend: kir/backend.h), never by another of its symbols. Also fails when a file
of core/ includes a header of opencl/.
"""
import glob, os, re, subprocess, sys

RANK = {"base": 0, "front": 1, "ast": 2, "kir": 3, "cpu": 4, "opencl": 4, "driver": 5}
BACKENDS = {"cpu", "opencl"}
TABLES = {"cpu_backend", "opencl_backend"}

def part(obj):
    if os.path.basename(obj).startswith("cl_"):
        return "opencl"
    d = os.path.basename(os.path.dirname(obj))
    return d if d in RANK else "driver"

def source(obj, build):
    """The source an object file was built from (core/X.c, opencl/X.c for cl_X.o)."""
    rel = os.path.relpath(obj, os.path.join(build, "obj"))
    name = os.path.basename(rel)
    if name.startswith("cl_"):
        return os.path.join("opencl", name[3:-2] + ".c")
    return os.path.join("core", rel[:-2] + ".c")

def symbols(obj):
    out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRV":
            defined.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            used.add(f[1])
    return defined, used

def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    # an object whose source is gone (a file moved or deleted) is not linked any more
    objs = sorted(o for o in glob.glob(os.path.join(build, "obj", "**", "*.o"), recursive=True)
                  if os.path.exists(source(o, build)))
    if not objs:
        print("layers: no object files under %s/obj" % build)
        return 1
    info = {o: symbols(o) for o in objs}
    owner = {s: o for o, (d, _) in info.items() for s in d}
    bad = []
    for o, (_, used) in info.items():
        for s in sorted(used):
            t = owner.get(s)
            if t is None or t == o:
                continue
            a, b = part(o), part(t)
            if RANK[b] > RANK[a] or (a != b and RANK[a] == RANK[b]):
                bad.append("%s (%s) calls %s in %s (%s)" % (o, a, s, t, b))
            elif a != b and b in BACKENDS and s not in TABLES:
                bad.append("%s (%s) uses %s of the %s backend, not through its table"
                           % (o, a, s, b))
    for src in glob.glob("core/**/*.[ch]", recursive=True):
        for n, line in enumerate(open(src, encoding="utf-8"), 1):
            if re.match(r'\s*#\s*include\s+"[^"]*opencl/', line):
                bad.append("%s:%d includes a header of opencl/" % (src, n))
    for b in bad:
        print("layers: " + b)
    print("layers: %d object files, %s" % (len(objs), "forward only" if not bad else
                                            "%d calls or includes against the layers" % len(bad)))
    return 1 if bad else 0

sys.exit(main())
