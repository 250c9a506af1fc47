#!/bin/sh
# Run every test: the C unit tests, the cdef check, and the busted specs under Lua 5.4
# and LuaJIT. Prints "N passed, N failed" last; exits non-zero on any failure.
B=${B:-build}
LUA54=${LUA54:-lua5.4}
LUAJIT=${LUAJIT:-luajit}
BUSTED=${BUSTED:-/usr/bin/busted}
# Under check-asan the sanitizer runtimes are preloaded into the test processes only.
run() { if [ -n "$SAN_PRELOAD" ]; then LD_PRELOAD="$SAN_PRELOAD" "$@"; else "$@"; fi; }
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count_busted() {   # parse "N successes / N failures / N errors / N pending"
  line=$(grep -E '[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors? / [0-9]+ pending' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "$1: no summary from busted"
    failed=$((failed + 1))
    return
  fi
  s=$(echo "$line" | sed -E 's/^([0-9]+) success.*/\1/')
  f=$(echo "$line" | sed -E 's/.* ([0-9]+) failures?.*/\1/')
  e=$(echo "$line" | sed -E 's/.* ([0-9]+) errors?.*/\1/')
  echo "$1: $s passed, $((f + e)) failed"
  passed=$((passed + s))
  failed=$((failed + f + e))
}

echo "== cdef"
if sh tools/gen_cdef.sh core/include/lacc.h | diff -u lua/lacc/cdef.lua - >"$log"; then
  passed=$((passed + 1))
else
  cat "$log"; echo "lua/lacc/cdef.lua is out of date: run 'make cdef'"
  failed=$((failed + 1))
fi

echo "== core (C unit tests)"
run "$B/test_core" >"$log" 2>&1
cat "$log"
line=$(grep -E '^core: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
if [ -n "$line" ]; then
  passed=$((passed + $(echo "$line" | sed -E 's/core: ([0-9]+) passed.*/\1/')))
  failed=$((failed + $(echo "$line" | sed -E 's/.* ([0-9]+) failed/\1/')))
else
  echo "core: crashed"; failed=$((failed + 1))
fi

export LUA_PATH="$PWD/lua/?.lua;$PWD/lua/?/init.lua;$PWD/spec/?.lua;;"
export LUA_CPATH="$PWD/$B/?.so;;"
export LACC_LIB="$PWD/$B/liblacc.so"
export LACC_CACHE="${LACC_CACHE:-$PWD/$B/kcache}"
# OpenCL programs build slowly on PoCL (about 0.2 s each, most of the suite's cold time),
# so the first VM runs the OpenCL specs in a second process beside the others, and with
# -cl-opt-disable (faster builds; the benchmarks build optimised). The second VM finds
# every program in the caches and runs all backends in one process.
export LACC_CL_OPTIONS="${LACC_CL_OPTIONS--cl-opt-disable}"
have_cl=0
if [ "${LACC_TEST_OPENCL:-1}" != 0 ] &&
   run "$LUA54" -e 'os.exit(#require("lacc").devices() > 0 and 0 or 1)' >/dev/null 2>&1; then
  have_cl=1
fi
busted_run() {   # vm, label, env...
  vm=$1 label=$2
  shift 2
  run env "$@" "$vm" "$BUSTED" -o utfTerminal spec >"$log" 2>&1
  rc=$?
  grep -v '^[●◼✱]*$' "$log" | tail -n 60
  count_busted "$label"
  if [ $rc -ne 0 ] && ! grep -qE '[0-9]+ success' "$log"; then failed=$((failed + 1)); fi
}
cl_log=$(mktemp)
trap 'rm -f "$log" "$cl_log"' EXIT
for vm in "$LUA54" "$LUAJIT"; do
  if [ "$vm" = "$LUA54" ] && [ $have_cl = 1 ]; then
    echo "== busted under $vm: interp and cpu, and (in parallel) opencl"
    run env LACC_TEST_BACKENDS=opencl "$vm" "$BUSTED" -o utfTerminal --filter=opencl spec \
      >"$cl_log" 2>&1 &
    cl_pid=$!
    busted_run "$vm" "$vm (interp, cpu)" LACC_TEST_BACKENDS=interp,cpu
    wait $cl_pid
    cl_rc=$?
    cp "$cl_log" "$log"
    grep -v '^[●◼✱]*$' "$log" | tail -n 60
    count_busted "$vm (opencl)"
    if [ $cl_rc -ne 0 ] && ! grep -qE '[0-9]+ success' "$log"; then failed=$((failed + 1)); fi
  else
    echo "== busted under $vm"
    busted_run "$vm" "$vm" LACC_TEST_OPENCL=$have_cl
  fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
