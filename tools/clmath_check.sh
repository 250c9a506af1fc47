#!/bin/sh
# make check-clmath: lacc's own math (core/base/ownmath.h: the interpreter's, the cpu
# backend's and a CPU device's), as the OpenCL C text lacc emits for a CPU device: f32 exp,
# log, log2, log10, log1p, expm1, sinh, cosh, tanh, sin, cos, tan and atan over all 2^32 f32
# inputs each, f32 atan2 and pow and the f64 set (exp64 ... pow64) over 30 million samples
# each (tools/clmath_check.c, on every core; CLMATH="exp log pow64" checks those alone,
# CLMATH_SAMPLES sets the samples). Needs only a C compiler with OpenMP and Lua 5.4 with lacc
# built (no OpenCL device).
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
