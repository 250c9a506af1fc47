/* Dot product of n f32: xs = b01(k, C1), ys = b01(k, C2) (0 or 1, so every summation
 * order gives the same, exact result). Two rows:
 *   C            : an OpenMP reduction over a scalar float sum (what one writes first;
 *                  without -ffast-math the compiler keeps one sequential sum per thread)
 *   C vectorised : `omp parallel for simd reduction`, so each thread keeps per-lane
 *                  partial sums in vector registers (the stretch target). */
#include "common.h"

static float dot_scalar(const float *x, const float *y, long n) {
  float s = 0.0f;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (long i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

static float dot_simd(const float *x, const float *y, long n) {
  float s = 0.0f;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
  for (long i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  if (!x || !y) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) {
    x[i] = b01(i + 1, C1);
    y[i] = b01(i + 1, C2);
  }
  volatile float sink;
  double ms;
  int reps;
  float r = 0;
  MEASURE(ms, reps, r = dot_scalar(x, y, n); sink = r);
  RESULT("dotp", "C", ms, (double)r, reps);
  MEASURE(ms, reps, r = dot_simd(x, y, n); sink = r);
  RESULT("dotp", "C_vectorised", ms, (double)r, reps);
  (void)sink;
  free(x);
  free(y);
  return 0;
}
