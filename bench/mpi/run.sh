#!/bin/sh
# make bench-mpi: the MPI path against the cpu backend (bench/mpi/scaling.lua), one
# thread per process (LACC_THREADS=1): the cpu backend alone, then mpirun with 1 and 2
# ranks, sizes growing with the ranks (weak scaling). Prints a table of medians and the
# ratios: MPI with 1 rank over the cpu backend (the path's overhead; the target is under
# 1.10), and 2 ranks over 1 (1.00 is perfect weak scaling; this machine has 2 cores).
# cg: ten conjugate-gradient turns in one awhile (examples/mpi_cg.lua's iteration).
B=${B:-build}
LUA54=${LUA54:-lua5.4}
export LUA_PATH="$PWD/lua/?.lua;$PWD/lua/?/init.lua;$PWD/bench/?.lua;$PWD/spec/?.lua;;"
export LUA_CPATH="$PWD/$B/?.so;$PWD/$B/bench/?.so;;"
export LACC_LIB="$PWD/$B/liblacc.so" LACC_THREADS=1 LACC_TIER=opt
unset LACC_CL_OPTIONS
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { mpirun --allow-run-as-root --oversubscribe -n "$1" "$LUA54" bench/mpi/scaling.lua; }
"$LUA54" bench/mpi/scaling.lua cpu > "$out/cpu" || exit 1
run 1 > "$out/1" || exit 1
run 2 > "$out/2" || exit 1
echo "lacc.mpi (bench/mpi): medians of ${BENCH_REPS:-5} runs in ms, one thread per process, BENCH_SCALE=${BENCH_SCALE:-1}"
printf '%-10s %10s %10s %10s %12s %12s\n' program cpu "1 rank" "2 ranks" "1 rank/cpu" "2/1 ranks"
for p in dot blur histogram cg; do
  c=$(awk -v p=$p '$1 == p {print $2}' "$out/cpu")
  m1=$(awk -v p=$p '$1 == p {print $2}' "$out/1")
  m2=$(awk -v p=$p '$1 == p {print $2}' "$out/2")
  awk -v p=$p -v c="$c" -v a="$m1" -v b="$m2" 'BEGIN { printf "%-10s %10.2f %10.2f %10.2f %12.2f %12.2f\n", p, c, a, b, a / c, b / a }'
done
