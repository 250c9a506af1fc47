#!/bin/sh
# make check-clmath: lacc's own f32 exp, log, log2, log10, log1p, expm1, sinh, cosh, tanh,
# sin, cos and tan (core/base/ownmath.h: the interpreter's, the cpu backend's and a CPU device's), as
# the OpenCL C text lacc emits for a CPU device, checked over all 2^32 f32 inputs each
# (tools/clmath_check.c, on every core; CLMATH="exp log" checks those alone). Needs only a
# C compiler with OpenMP and Lua 5.4 with lacc built (no OpenCL device).
set -e
B=${B:-build}
LUA54=${LUA54:-lua5.4}
CC=${CC:-cc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH="$B/?.so;;" "$LUA54" -e '
  local lacc = require "lacc"
  io.write((lacc.explain(lacc.map(lacc.exp, lacc.fromtable({ 1 }, "f32")), { source = "opencl" })))' \
  | awk '/^#ifdef LACC_OWN_MATH/ { on = 1; next } /^#undef expf/ { on = 0 } on' > "$dir/clmath_fns.h"
grep -q lacc_logf "$dir/clmath_fns.h" || { echo "check-clmath: no LACC_OWN_MATH code in the OpenCL source"; exit 1; }
$CC -O2 -fopenmp -ffp-contract=off -fno-builtin -I"$dir" -o "$dir/check" tools/clmath_check.c -lm
# shellcheck disable=SC2086
"$dir/check" ${CLMATH:-}
echo "check-clmath: clean"
