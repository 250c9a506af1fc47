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
# Each way makes BENCH_WARM (10) runs of each program before the BENCH_REPS (11) it times
# (the first runs over tens of MB measure the shared cache taking the input in).
# The four ways run in rounds (BENCH_ROUNDS, 3): cpu, the pair, 1 rank, 2 ranks, then
# again, so that each ratio is taken within one round, seconds apart, and a busy spell of
# the machine falls on both its sides; the table gives each time's median over the
# rounds and each ratio's median over the rounds (a ratio of two medians taken half a
# minute apart, as before, measured the machine's drift as much as lacc).
B=${B:-build}
LUA54=${LUA54:-lua5.4}
export LUA_PATH="$PWD/lua/?.lua;$PWD/lua/?/init.lua;$PWD/bench/?.lua;$PWD/spec/?.lua;;"
export LUA_CPATH="$PWD/$B/?.so;$PWD/$B/bench/?.so;;"
export LACC_LIB="$PWD/$B/liblacc.so" LACC_THREADS=1 LACC_TIER=opt
unset LACC_CL_OPTIONS
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { mpirun --allow-run-as-root --oversubscribe -n "$1" "$LUA54" bench/mpi/scaling.lua; }
ROUNDS=${BENCH_ROUNDS:-3}
mkfifo "$out/to_a" "$out/to_b" || exit 1
k=1
while [ "$k" -le "$ROUNDS" ]; do
  "$LUA54" bench/mpi/scaling.lua cpu > "$out/cpu.$k" || exit 1
  # two at once, in step: a barrier of two FIFOs around each run, as the ranks' barriers
  # are, so that each run takes the slower one's time as a run of two ranks does (the
  # slower one's median counts)
  "$LUA54" bench/mpi/scaling.lua pair A "$out" > "$out/twoa.$k" & pa=$!
  "$LUA54" bench/mpi/scaling.lua pair B "$out" > "$out/twob.$k" || exit 1
  wait $pa || exit 1
  run 1 > "$out/1.$k" || exit 1
  run 2 > "$out/2.$k" || exit 1
  k=$((k + 1))
done
echo "lacc.mpi (bench/mpi): medians of ${BENCH_REPS:-11} runs (after ${BENCH_WARM:-10} others) in ms, one thread per process, BENCH_SCALE=${BENCH_SCALE:-1}; $ROUNDS rounds (times and ratios: medians over the rounds)"
printf '%-10s %9s %9s %9s %9s %11s %10s %10s %12s\n' program cpu "2 alone" "1 rank" "2 ranks" \
  "1 rank/cpu" "2/1 ranks" "alone 2/1" "2 ranks/alone"
for p in dot blur histogram cg; do
  # one line a round: cpu, the pair's slower, 1 rank, 2 ranks
  k=1
  while [ "$k" -le "$ROUNDS" ]; do
    for f in cpu twoa twob 1 2; do awk -v p=$p '$1 == p {printf "%s ", $2}' "$out/$f.$k"; done
    echo
    k=$((k + 1))
  done | awk -v p=$p '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { n++; c[n] = $1; t[n] = $2 > $3 ? $2 : $3; a[n] = $4; b[n] = $5
      r1[n] = $4 / $1; r2[n] = $5 / $4; r3[n] = t[n] / $1; r4[n] = $5 / t[n] }
    END { printf "%-10s %9.2f %9.2f %9.2f %9.2f %11.2f %10.2f %10.2f %12.2f\n", p, median(c, n), median(t, n),
            median(a, n), median(b, n), median(r1, n), median(r2, n), median(r3, n), median(r4, n) }'
done
