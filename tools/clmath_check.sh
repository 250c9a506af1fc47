#!/bin/sh
# make check-clmath: lacc's own f32 exp and log (core/base/ownmath.h: the interpreter's,
# the cpu backend's and a CPU device's), as the OpenCL C text lacc emits for a CPU
# device, checked over all 2^32 f32 inputs (tools/clmath_check.c; about 5 minutes on one
# core). Needs only a C compiler and Lua 5.4 with lacc built (no OpenCL device).
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
$CC -O2 -ffp-contract=off -fno-builtin -I"$dir" -o "$dir/check" tools/clmath_check.c -lm
"$dir/check"
echo "check-clmath: clean"
