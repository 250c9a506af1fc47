/* Inclusive prefix sum of n i32: x[k] = floor(16 frac(k C1)) - 8 (k 1-based), so every
 * prefix fits in i32 for n up to ~250M. The two-pass OpenMP scan one writes by hand: each
 * thread sums its static block, the block sums are scanned in order, then each thread
 * scans its block from its offset. The output array is allocated once, outside the timing. */
#include "common.h"
#include <omp.h>

static void scan(const int *x, int *y, long n) {
  int nt = omp_get_max_threads();
  long *off = calloc((size_t)nt + 1, sizeof *off);
  if (off == NULL) abort();
#pragma omp parallel num_threads(nt)
  {
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    long lo = n * t / T, hi = n * (t + 1) / T;
    long s = 0;
    for (long i = lo; i < hi; i++) s += x[i];
    off[t + 1] = s;
#pragma omp barrier
#pragma omp single
    for (int k = 1; k <= T; k++) off[k] += off[k - 1];
    int acc = (int)off[t];
    for (long i = lo; i < hi; i++) {
      acc += x[i];
      y[i] = acc;
    }
  }
  free(off);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 50000000L;
  int *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  if (!x || !y) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) {
    x[i] = (int)floor(16.0 * frac_k(i + 1, C1)) - 8;
    y[i] = 0;
  }
  double ms;
  int reps;
  MEASURE(ms, reps, scan(x, y, n));
  RESULT("scan", "C", ms, (double)y[n - 1] + (double)y[n / 2], reps);
  free(x);
  free(y);
  return 0;
}
