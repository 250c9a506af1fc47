#!/bin/sh
# make check-valgrind: memcheck (errors and definite/indirect leaks) over the C unit tests,
# the embedding examples and every busted spec under Lua 5.4 on the interp and cpu
# backends, one valgrind process per spec file. Not part of make test: it takes about an
# hour on two cores. OpenCL is left out (PoCL's LLVM under valgrind takes hours and its
# own allocations are not ours); check-asan's LeakSanitizer covers it.
# Prints "N passed, N failed" last; exits non-zero on any failure.
B=${B:-build}
LUA54=${LUA54:-lua5.4}
BUSTED=${BUSTED:-/usr/bin/busted}
# every spec, in its folder by part of the pipeline (spec/front, spec/kernels, ...)
only=${VALGRIND_SPECS:-$(find spec -name '*_spec.lua' | sort)}
passed=0
failed=0
out=${VALGRIND_LOGS:-$B/valgrind}
rm -rf "$out"
mkdir -p "$out" || exit 1

export LUA_PATH="$PWD/lua/?.lua;$PWD/lua/?/init.lua;$PWD/spec/?.lua;;"
export LUA_CPATH="$PWD/$B/?.so;;"
export LACC_LIB="$PWD/$B/liblacc.so"
# valgrind 3.19 decodes no AVX-512, which -march=native may emit: kernels built without it,
# in a cache of their own
export LACC_CFLAGS=-O2
export LACC_CACHE="$PWD/$B/kcache-valgrind"
export LACC_TEST_OPENCL=0 LACC_TEST_BACKENDS=interp,cpu
VG="valgrind -q --keep-debuginfo=yes --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --suppressions=$PWD/tools/valgrind.supp"

# name, command...: passes when valgrind reports no error and no leak (exit 99 says it
# did). A spec whose assertions fail under valgrind but not natively is listed apart:
# valgrind rounds a 64-bit integer to f32 conversion twice (through f64), so the exact
# cast checks of scalar_spec fail under it; make test judges the assertions.
asserts=""
check() {
  name=$1
  shift
  $VG "$@" >"$out/$name.log" 2>&1
  rc=$?
  if [ $rc -eq 99 ] || grep -qE '^==[0-9]+== .*(Invalid|uninitialised|definitely lost|indirectly lost|Mismatched)' "$out/$name.log"; then
    failed=$((failed + 1))
    echo "FAILED: $name ($out/$name.log):"
    grep -E '^==[0-9]+== ' "$out/$name.log" | head -n 40
  elif [ $rc -ne 0 ] && ! grep -qE '^not ok' "$out/$name.log"; then
    failed=$((failed + 1))
    echo "FAILED: $name exited $rc ($out/$name.log)"
    tail -n 20 "$out/$name.log"
  else
    passed=$((passed + 1))
    [ $rc -ne 0 ] && asserts="$asserts $name"
    echo "ok: $name"
  fi
}

check core "$B/test_core"
check saxpy_cpu "$B/examples/saxpy" cpu
check threads_cpu "$B/examples/threads" 4 cpu
for s in $only; do
  check "$(basename "$s" .lua)" "$LUA54" "$BUSTED" --ignore-lua -o TAP "$s"
done
[ -n "$asserts" ] && echo "assertions failed under valgrind (not memory errors; see above):$asserts"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
