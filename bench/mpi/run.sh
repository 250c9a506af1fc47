#!/bin/sh
# make bench-mpi: the MPI path against the cpu backend (bench/mpi/scaling.lua), one
# thread per process (LACC_THREADS=1): the cpu backend alone, two cpu-backend processes
# at once, in step (no MPI: what this machine gives two processes that share nothing but
# its memory and caches, each run waiting for the slower one as ranks do), then mpirun with 1 and 2 ranks, sizes growing with the ranks (weak
# scaling). Prints a table of medians and the ratios: MPI with 1 rank over the cpu
# backend (the path's overhead; the target is under 1.10), 2 ranks over 1 (1.00 is
# perfect weak scaling; this machine has 2 cores), the two lone processes over one (the
# machine's own bound on that ratio) and 2 ranks over the two lone processes (what the
# exchanges add to it). cg: ten conjugate-gradient turns in one awhile
# (examples/mpi_cg.lua's iteration).
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
# two at once, in step: a barrier of two FIFOs around each run, as the ranks' barriers
# are, so that each run takes the slower one's time as a run of two ranks does (the
# slower one's median counts)
mkfifo "$out/to_a" "$out/to_b" || exit 1
"$LUA54" bench/mpi/scaling.lua pair A "$out" > "$out/twoa" & pa=$!
"$LUA54" bench/mpi/scaling.lua pair B "$out" > "$out/twob" || exit 1
wait $pa || exit 1
run 1 > "$out/1" || exit 1
run 2 > "$out/2" || exit 1
echo "lacc.mpi (bench/mpi): medians of ${BENCH_REPS:-11} runs in ms, one thread per process, BENCH_SCALE=${BENCH_SCALE:-1}"
printf '%-10s %9s %9s %9s %9s %11s %10s %10s %12s\n' program cpu "2 alone" "1 rank" "2 ranks" \
  "1 rank/cpu" "2/1 ranks" "alone 2/1" "2 ranks/alone"
for p in dot blur histogram cg; do
  c=$(awk -v p=$p '$1 == p {print $2}' "$out/cpu")
  ta=$(awk -v p=$p '$1 == p {print $2}' "$out/twoa")
  tb=$(awk -v p=$p '$1 == p {print $2}' "$out/twob")
  m1=$(awk -v p=$p '$1 == p {print $2}' "$out/1")
  m2=$(awk -v p=$p '$1 == p {print $2}' "$out/2")
  awk -v p=$p -v c="$c" -v ta="$ta" -v tb="$tb" -v a="$m1" -v b="$m2" 'BEGIN {
    t = ta > tb ? ta : tb
    printf "%-10s %9.2f %9.2f %9.2f %9.2f %11.2f %10.2f %10.2f %12.2f\n", p, c, t, a, b, a / c, b / a, t / c, b / t }'
done
