#!/bin/sh
# Run every test: the C unit tests, the cdef check, and the busted specs under Lua 5.4
# and LuaJIT. Prints "N passed, N failed" last; exits non-zero on any failure. busted's
# counts come from its TAP output (-o TAP) and its exit status, not from its terminal text.
# --ignore-lua: .busted names lua5.4 for plain busted, which would re-run a LuaJIT run there.
B=${B:-build}
# builds left at a test process's exit stop with it (tiers_spec tests the detached builder
# itself): no builder outliving its test writes into a cache the test has removed, and
# none outlives the suite
export LACC_DETACH_BUILDS="${LACC_DETACH_BUILDS:-0}"
LUA54=${LUA54:-lua5.4}
LUAJIT=${LUAJIT:-luajit}
BUSTED=${BUSTED:-/usr/bin/busted}
# Under check-asan the sanitizer runtimes are preloaded into the test processes only.
run() { if [ -n "$SAN_PRELOAD" ]; then LD_PRELOAD="$SAN_PRELOAD" "$@"; else "$@"; fi; }
passed=0
failed=0
skipped=0
t_start=$(date +%s)
elapsed() { echo "   ($(( $(date +%s) - t_start )) s since the start)"; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Whether $log's only sanitizer message is LeakSanitizer's tracer crashing (no leak, no
# AddressSanitizer or UBSan report).
lsan_tracer_only() {
  grep -q 'Tracer caught signal' "$log" && grep -q 'LeakSanitizer has encountered a fatal error' "$log" &&
    ! grep -qE 'ERROR: (LeakSanitizer: detected|AddressSanitizer)|runtime error:' "$log"
}

count_busted() {   # label, exit status: the counts of busted's TAP output in $log
  ok=$(grep -cE '^ok [0-9]+ - ' "$log")
  skip=$(grep -cE '^ok [0-9]+ - # SKIP' "$log")
  nok=$(grep -cE '^not ok [0-9]+ - ' "$log")
  plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)
  # the failures, each with busted's lines about it
  awk '/^not ok [0-9]+ - /{p=1; print; next} /^(ok|not ok) [0-9]+ /{p=0} p && /^#/{print}' "$log"
  s=$((ok - skip))
  if [ -z "$plan" ] || [ "$plan" -ne $((ok + nok)) ]; then
    grep -vE '^(ok|not ok) [0-9]+ |^#' "$log" | tail -n 20
    echo "$1: busted stopped before the end of its TAP output"
    nok=$((nok + 1))
  elif [ "$2" -ne 0 ] && [ "$nok" -eq 0 ] && lsan_tracer_only; then
    # (make check-asan) every test passed and nothing was reported, but LeakSanitizer's
    # stop-the-world tracer crashed at the process's exit, as it does at times on this
    # kind of machine in processes with many threads (the leak check did not run: said)
    echo "$1: every test passed; LeakSanitizer's tracer crashed at the exit (\"Tracer caught signal\"): no leak check for this process"
  elif [ "$2" -ne 0 ] && [ "$nok" -eq 0 ]; then
    grep -vE '^(ok|not ok) [0-9]+ |^#' "$log" | tail -n 20
    echo "$1: busted exited with status $2 without a failed test"
    nok=$((nok + 1))
  fi
  if [ "$skip" -gt 0 ]; then echo "$1: $s passed, $nok failed, $skip skipped"
  else echo "$1: $s passed, $nok failed"; fi
  passed=$((passed + s))
  skipped=$((skipped + skip))
  failed=$((failed + nok))
}

# The environment of the specs: this checkout's Lua files and build, and a kernel cache
# in the build folder unless LACC_CACHE names one.
spec_env() {
  export LUA_PATH="$PWD/lua/?.lua;$PWD/lua/?/init.lua;$PWD/spec/?.lua;;"
  export LUA_CPATH="$PWD/$B/?.so;;"
  export LACC_LIB="$PWD/$B/liblacc.so"
  export LACC_CACHE="${LACC_CACHE:-$PWD/$B/kcache}"
  # the kernel IR checked after lowering and after each pass (core/kir/verify.c)
  export LACC_VERIFY="${LACC_VERIFY:-1}"
}

# The premise of the cache specs: a kernel cache this user's lacc trusts (it turns itself
# off in a directory others may write, as a checkout made under umask 002 is). Said here,
# in one line with the fix, not as failures of specs far from the cause.
# (in a subshell: the rock's check, below, must not see this checkout's paths)
premise=$( (spec_env; run env LACC_TIER=opt "$LUA54" -e \
  'local lacc = require "lacc" lacc.run(lacc.sum(lacc.fromtable({ 1, 2 }, "f64")), { backend = "cpu" })') 2>&1)
case "$premise" in
  *"not using the kernel cache"*)
    why=$(printf '%s\n' "$premise" | sed -n 's/.*not using the kernel cache \(.*\); kernels are.*/\1/p' | head -n 1)
    echo "the kernel cache $why: lacc turns that cache off, so the specs of the cache cannot pass. Fix: chmod go-w the directory named (or set LACC_CACHE to a private one) and test again"
    echo "0 passed, 1 failed"
    exit 1 ;;
esac

echo "== cdef"
if sh tools/gen_cdef.sh core/include/lacc.h | diff -u lua/lacc/cdef.lua - >"$log" &&
   sh tools/gen_cdef.sh mpi/lacc_mpi.h | diff -u lua/lacc/mpi_cdef.lua - >>"$log"; then
  passed=$((passed + 1))
else
  cat "$log"; echo "lua/lacc/cdef.lua or mpi_cdef.lua is out of date: run 'make cdef'"
  failed=$((failed + 1))
fi

echo "== entries (bindings/entries.def: the plain entry points of both bindings)"
if "$LUA54" tools/gen_entries.lua c < bindings/entries.def | diff -u bindings/entries.c - >"$log" &&
   "$LUA54" tools/gen_entries.lua lua < bindings/entries.def | diff -u lua/lacc/ffi_entries.lua - >>"$log" &&
   "$LUA54" tools/gen_entries.lua c < mpi/entries.def | diff -u bindings/mpi_entries.c - >>"$log" &&
   "$LUA54" tools/gen_entries.lua lua < mpi/entries.def | diff -u lua/lacc/mpi_entries.lua - >>"$log"; then
  passed=$((passed + 1))
else
  cat "$log"; echo "a file generated from bindings/entries.def or mpi/entries.def is out of date: run 'make entries'"
  failed=$((failed + 1))
fi

echo "== layers (the core's parts call only forward: tools/layers.py)"
if python3 tools/layers.py "$B" >"$log" 2>&1; then
  passed=$((passed + 1)); tail -n 1 "$log"
else
  cat "$log"; failed=$((failed + 1))
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

# make check: the quick tier. Every spec under Lua 5.4 on interp and cpu, the cpu
# backend's kernels built by the fast tier (tcc: milliseconds a build where cc -O3 takes
# a quarter of a second), but those tagged #opt, which test the optimised build itself
# (the disk cache, tiers, -O2/-O0 choices, explain's golden texts), the type sweeps cut
# to f64 and i32 (LACC_TEST_SWEEP=check): no MPI, LuaJIT, OpenCL, lint, rock or second
# build. make test runs everything.
if [ "${LACC_CHECK:-0}" = 1 ]; then
  spec_env
  export LACC_TIER=fast LACC_TEST_OPENCL=0 LACC_TEST_SWEEP="${LACC_TEST_SWEEP:-check}"
  echo "== busted under $LUA54: interp and cpu on the fast tier (two processes), type sweeps of f64 and i32, #opt left to make test"
  b_log=$(mktemp)
  # shellcheck disable=SC2086
  { run "$LUA54" "$BUSTED" --ignore-lua -o TAP --exclude-tags=opt spec/front spec/surface spec/backends \
      >"$b_log" 2>&1; echo $? > "$b_log.rc"; } &
  b_pid=$!
  run "$LUA54" "$BUSTED" --ignore-lua -o TAP --exclude-tags=opt spec/kernels spec/ast spec/errors spec/golden \
    >"$log" 2>&1
  rc=$?
  wait $b_pid
  count_busted "$LUA54 (spec/kernels spec/ast spec/errors spec/golden)" $rc
  cp "$b_log" "$log"
  count_busted "$LUA54 (spec/front spec/surface spec/backends)" "$(cat "$b_log.rc")"
  rm -f "$b_log" "$b_log.rc"
  elapsed
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
fi

echo "== lint (make lint: luacheck and cppcheck)"
if make -s --no-print-directory lint; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

echo "== rock (luarocks make into a temporary tree)"
if LUA54="$LUA54" LUAJIT="$LUAJIT" sh tools/rockcheck.sh; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

spec_env
# The cpu specs run on the fast tier (tcc compiles the same generated C as cc, in
# milliseconds); those tagged #opt, which test the optimised build itself and include
# spec/kernels/opt_pass_spec.lua (every combinator family's optimised kernels against the
# interpreter), run after them on the optimised tier (under Lua 5.4; both VMs with
# LACC_TEST_SWEEP=full). LACC_TEST_TIER=opt (make test-full)
# runs every spec on the optimised tier, in one pass. The OpenCL processes keep opt.
export LACC_TIER="${LACC_TIER:-opt}"
test_tier="${LACC_TEST_TIER:-fast}"
if [ "$test_tier" = opt ]; then split_tags=; else split_tags=--exclude-tags=opt; fi
elapsed
echo "== embedding (examples/c): the C API, and Lua states in threads"
for cmd in "$B/examples/saxpy cpu" "$B/examples/saxpy interp" "$B/examples/threads 8 cpu" \
           "$B/examples/threads 4 interp"; do
  if run $cmd; then passed=$((passed + 1)); else echo "failed: $cmd"; failed=$((failed + 1)); fi
done

elapsed
echo "== a build without the optional parts (-DLACC_NO_OPENCL -DLACC_NO_PNG, as where their headers are missing; no MPI)"
nocl="$B-nocl"
if make -s -j2 B="$nocl" CFLAGS="-DLACC_NO_OPENCL -DLACC_NO_PNG" "$nocl/liblacc.so" "$nocl/lacc/core.so" >"$log" 2>&1; then
  check='local lacc = require "lacc"
    assert(#lacc.devices() == 0, "devices")
    local ok, err = pcall(lacc.run, lacc.map(function(v) return v + 1 end, lacc.fromtable({1, 2}, "i32")), {backend = "opencl"})
    assert(not ok and tostring(err):find("built without OpenCL", 1, true), tostring(err))
    ok, err = pcall(lacc.write_png, os.tmpname(), lacc.fromtable({{1, 2}, {3, 4}}, "u8"))
    assert(not ok and tostring(err):find("write_png: this lacc was built without PNG support", 1, true), tostring(err))
    ok, err = pcall(lacc.read_png, "examples/dotp.lua")
    assert(not ok and tostring(err):find("read_png: this lacc was built without PNG support", 1, true), tostring(err))
    assert(lacc.run(lacc.sum(lacc.fromtable({1, 2}, "i32"))):get() == 3, "cpu")
    ok, err = pcall(lacc.mpi.init)
    assert(not ok and tostring(err):find("mpi.init: this lacc was built without MPI", 1, true), tostring(err))
    assert(lacc.mpi.available() == false, "mpi")
    print("ok")'
  for vm in "$LUA54" "$LUAJIT"; do
    if [ "$(env LUA_CPATH="$PWD/$nocl/?.so;;" LACC_LIB="$PWD/$nocl/liblacc.so" "$vm" -e "$check" 2>&1)" = ok ]; then
      echo "$vm: the cpu backend works, opencl, PNG and MPI say they were left out"; passed=$((passed + 1))
    else
      echo "$vm: the build without OpenCL and PNG misbehaves"; failed=$((failed + 1))
    fi
  done
  if ldd "$nocl/liblacc.so" | grep -q png; then echo "the build without PNG links libpng"; failed=$((failed + 1)); fi
else
  cat "$log"; echo "the build without OpenCL and PNG failed"; failed=$((failed + 1))
fi

# OpenCL programs build slowly on PoCL (about 0.2-0.4 s each, where cc takes 0.06 s), so
# the OpenCL specs run in a process of their own beside the others, built with
# -cl-opt-disable (the benchmarks build optimised). Each OpenCL test runs once: the type
# sweeps for each type under one VM or the other (LACC_TEST_SWEEP=sample: spec/helper.lua
# says which), every other test under Lua 5.4 (the suite's time is the cores' work:
# running them under both VMs took minutes). LACC_TEST_SWEEP=full runs every test under
# both (make test-opencl, make test-full); LACC_TEST_OPENCL=0 none.
export LACC_CL_OPTIONS="${LACC_CL_OPTIONS--cl-opt-disable}"
have_cl=0
if [ "${LACC_TEST_OPENCL:-1}" != 0 ] &&
   run "$LUA54" -e 'os.exit(#require("lacc").devices() > 0 and 0 or 1)' >/dev/null 2>&1; then
  have_cl=1
fi
if [ $have_cl = 1 ]; then
  echo "== embedding on OpenCL"
  if run "$B/examples/threads" 4 opencl; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
fi
busted_cl() {   # vm, log, folders: the OpenCL tests (the type sweeps split between the VMs: spec/helper.lua)
  dirs=${3:-spec}
  # LuaJIT's share under LACC_TEST_SWEEP=sample is its part of the sweeps; every other
  # OpenCL test runs under Lua 5.4 (make test-opencl runs all under both)
  if [ "$1" = "$LUA54" ] || [ "$LACC_TEST_SWEEP" = full ]; then only=; else only=--tags=sweep; fi
  # shellcheck disable=SC2086
  run env LACC_TEST_BACKENDS=opencl "$1" "$BUSTED" --ignore-lua -o TAP --filter=opencl $only $dirs >"$2" 2>&1
}
cl_log54=$(mktemp)
cl_log542=$(mktemp)
cl_logjit=$(mktemp)
cl_logjit2=$(mktemp)
# a background process's end, in seconds since the start (printed with its counts)
ended() { echo $(( $(date +%s) - t_start )) > "$1.end"; }
summarise() {   # label, log, exit status
  [ "$2" = "$log" ] || cp "$2" "$log"
  count_busted "$1" "$3"
  if [ -f "$2.end" ]; then echo "   (it ended $(cat "$2.end") s since the start)"; rm -f "$2.end"; fi
}
# The interp and cpu tests run as two processes of about equal length, so that both
# cores work through the C compiles. Each VM's OpenCL process starts with that VM's
# interp and cpu processes and is waited for at the end: LuaJIT's starts while Lua 5.4's
# may still run, so that no core waits for the other's last process (LuaJIT's interp and
# cpu tests start after Lua 5.4's, whose kernels they then find in the disk cache).
PART_A="spec/kernels spec/ast spec/errors spec/golden"
PART_B="spec/front spec/surface spec/backends spec/mpi"
# The OpenCL processes' own halves, of about equal length (each program's OpenCL build on
# PoCL, 0.2-0.6 s, is most of their time; spec/kernels alone is more than half of it):
# PART_A without spec/kernels/grad_spec.lua, and PART_B with it
CL_GRAD=spec/kernels/grad_spec.lua
CL_A="$(ls spec/kernels/*_spec.lua | grep -v "^$CL_GRAD\$" | tr '\n' ' ')spec/ast spec/errors spec/golden"
CL_B="$PART_B $CL_GRAD"
b_log=$(mktemp)
trap 'rm -f "$log" "$cl_log54" "$cl_logjit" "$cl_logjit2" "$cl_log542" "$b_log" "$log.end" "$b_log.end" "$cl_log54.end" "$cl_log542.end" "$cl_logjit.end" "$cl_logjit2.end"' EXIT
for d in spec/*/; do   # a folder of specs in neither part would never run
  case " $PART_A $PART_B " in
    *" ${d%/} "*) ;;
    *) echo "$d is in neither PART_A nor PART_B of tools/runtests.sh"; failed=$((failed + 1)) ;;
  esac
done
cl_pid54= cl_pid542= cl_pidjit= cl_pidjit2=
for vm in "$LUA54" "$LUAJIT"; do
  if [ $have_cl = 1 ]; then
    echo "== busted under $vm: interp and cpu (two processes), and (in parallel) opencl"
    # each VM's OpenCL tests in two processes, one a part: as one, Lua 5.4's ran on for
    # minutes after everything else, alone on a core
    if [ "$vm" = "$LUA54" ]; then
      { busted_cl "$vm" "$cl_log54" "$CL_A"; rc=$?; ended "$cl_log54"; exit $rc; } & cl_pid54=$!
      { busted_cl "$vm" "$cl_log542" "$CL_B"; rc=$?; ended "$cl_log542"; exit $rc; } & cl_pid542=$!
    else
      { busted_cl "$vm" "$cl_logjit" "$PART_A"; rc=$?; ended "$cl_logjit"; exit $rc; } & cl_pidjit=$!
      { busted_cl "$vm" "$cl_logjit2" "$PART_B"; rc=$?; ended "$cl_logjit2"; exit $rc; } & cl_pidjit2=$!
    fi
    envs="LACC_TEST_BACKENDS=interp,cpu" what="interp, cpu"
  else
    echo "== busted under $vm (two processes)"
    envs="LACC_TEST_OPENCL=0" what="interp, cpu"
  fi
  # shellcheck disable=SC2086
  { run env $envs LACC_TIER="$test_tier" "$vm" "$BUSTED" --ignore-lua -o TAP $split_tags $PART_B >"$b_log" 2>&1
    b_rc=$?; ended "$b_log"; exit $b_rc; } &
  b_pid=$!
  # shellcheck disable=SC2086
  run env $envs LACC_TIER="$test_tier" "$vm" "$BUSTED" --ignore-lua -o TAP $split_tags $PART_A >"$log" 2>&1
  rc=$?
  ended "$log"
  summarise "$vm ($what, $test_tier tier: $PART_A)" "$log" $rc
  # the #opt specs test the optimised kernels, which are the same C under either VM:
  # under Lua 5.4 only, but for LACC_TEST_SWEEP=full (make test-opencl, make test-full)
  if [ -n "$split_tags" ] && { [ "$vm" = "$LUA54" ] || [ "$LACC_TEST_SWEEP" = full ]; }; then
    # shellcheck disable=SC2086
    run env $envs LACC_TIER=opt "$vm" "$BUSTED" --ignore-lua -o TAP --tags=opt $PART_A $PART_B >"$log" 2>&1
    rc=$?
    ended "$log"
    summarise "$vm ($what, the #opt specs on the optimised tier)" "$log" $rc
  fi
  wait $b_pid
  b_rc=$?
  summarise "$vm ($what, $test_tier tier: $PART_B)" "$b_log" $b_rc
  elapsed
done
if [ $have_cl = 1 ]; then
  wait $cl_pid54
  summarise "$LUA54 (opencl: $PART_A but $CL_GRAD)" "$cl_log54" $?
  wait $cl_pid542
  summarise "$LUA54 (opencl: $PART_B $CL_GRAD)" "$cl_log542" $?
  wait $cl_pidjit
  summarise "$LUAJIT (opencl: $PART_A)" "$cl_logjit" $?
  wait $cl_pidjit2
  summarise "$LUAJIT (opencl: $PART_B)" "$cl_logjit2" $?
  elapsed
fi

if [ "$skipped" -gt 0 ]; then echo "$passed passed, $failed failed, $skipped skipped"
else echo "$passed passed, $failed failed"; fi
[ "$failed" -eq 0 ]
