/* Histogram of n values into 1024 bins: x[k] = floor(1024 frac(k C1)) (k 1-based). The
 * OpenMP version one writes by hand: a private histogram per thread, merged at the end.
 * Checksum: sum over bins of bin * count. */
#include "common.h"
#include <omp.h>

#define BINS 1024

static void histogram(const int *x, long n, int *h) {
  memset(h, 0, BINS * sizeof *h);
#pragma omp parallel
  {
    int mine[BINS] = { 0 };
#pragma omp for schedule(static) nowait
    for (long i = 0; i < n; i++) mine[x[i]]++;
#pragma omp critical
    for (int b = 0; b < BINS; b++) h[b] += mine[b];
  }
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  int *x = malloc((size_t)n * sizeof *x), h[BINS];
  if (!x) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) x[i] = (int)floor(1024.0 * frac_k(i + 1, C1));
  double ms;
  int reps;
  MEASURE(ms, reps, histogram(x, n, h));
  double cs = 0;
  for (int b = 0; b < BINS; b++) cs += (double)b * h[b];
  RESULT("histogram", "C", ms, cs, reps);
  free(x);
  return 0;
}
