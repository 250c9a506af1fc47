/* saxpy: z = a * x + y over n f32; a = 2.5, xs = u16(k, C1), ys = u24(k, C2). The
 * checksum is the f64 sum of z. Two rows:
 *   C              : into a preallocated output reused by every run (the usual C)
 *   C_fresh_output : into a newly malloc'd output each run (freed untimed), as lacc.run
 *                    must return a new array: shows what first-touch page faults of fresh
 *                    memory cost on this machine. */
#include "common.h"

static void saxpy(float a, const float *x, const float *y, float *z, long n) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; i++) z[i] = a * x[i] + y[i];
}

static double sum64(const float *z, long n) {
  double s = 0;
  for (long i = 0; i < n; i++) s += (double)z[i];
  return s;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  size_t bytes = (size_t)n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
  if (!x || !y || !z) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) {
    x[i] = u16(i + 1, C1);
    y[i] = u24(i + 1, C2);
    z[i] = 0.0f;
  }
  double ms, s = 0;
  int reps;
  MEASURE(ms, reps, saxpy(2.5f, x, y, z, n));
  RESULT("saxpy", "C", ms, sum64(z, n), reps);
  float *zf = NULL;
  MEASURE_AFTER(ms, reps, (zf = malloc(bytes), saxpy(2.5f, x, y, zf, n)),
                (s = sum64(zf, n), free(zf)));
  RESULT("saxpy", "C_fresh_output", ms, s, reps);
  free(x);
  free(y);
  free(z);
  return 0;
}
