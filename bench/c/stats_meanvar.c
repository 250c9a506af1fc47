/* stats_meanvar (issue 44): a mean and a variance as two sums of one computed array,
 * m = x * 0.5 + 1 over n f32 xs: sum(m) and sum(m^2), in one pass: one OpenMP loop with
 * two reductions (`omp parallel for simd reduction(+ : s1, s2)`, per-lane partial sums),
 * m never stored. Inputs: xs_k = 2 floor(3 frac(k C1)) - 4 (k 1-based), so m is -1, 0 or 1
 * and both sums are integers that f32 adds exactly in any order (while they stay below
 * 2^24: n up to about 25M). Checks (a row that fails prints NA): both sums equal f64 sums
 * of a plain loop. Checksum: sum(m) + 2 sum(m^2) (weights 1 and 2, so that exchanged
 * results show). */
#include "common.h"

static void meanvar(const float *x, long n, float *s1_out, float *s2_out) {
  float s1 = 0.0f, s2 = 0.0f;
#pragma omp parallel for simd schedule(static) reduction(+ : s1, s2)
  for (long i = 0; i < n; i++) {
    float m = x[i] * 0.5f + 1.0f;
    s1 += m;
    s2 += m * m;
  }
  *s1_out = s1;
  *s2_out = s2;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  float *x = malloc((size_t)n * sizeof *x);
  if (!x) return 1;
#pragma omp parallel for schedule(static)
  for (long k = 1; k <= n; k++) x[k - 1] = (float)(2.0 * floor(3.0 * frac_k(k, C1)) - 4.0);
  double w1 = 0, w2 = 0;
  for (long i = 0; i < n; i++) {
    double m = (double)x[i] * 0.5 + 1.0;
    w1 += m;
    w2 += m * m;
  }
  float s1 = 0, s2 = 0;
  double ms;
  int reps;
  MEASURE(ms, reps, meanvar(x, n, &s1, &s2));
  if ((double)s1 == w1 && (double)s2 == w2)
    RESULT("stats_meanvar", "C", ms, (double)s1 + 2.0 * (double)s2, reps);
  else printf("NA stats_meanvar C sums %.9g and %.9g, not %.17g and %.17g\n", s1, s2, w1, w2), fflush(stdout);
  free(x);
  return 0;
}
