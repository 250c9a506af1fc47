/* stats_minmax (issue 44): four folds of one f32 array in one pass: the minimum, the
 * maximum, the sum and the count of positive elements, one OpenMP loop with four
 * reductions (`omp parallel for simd reduction(min : ...) reduction(max : ...)
 * reduction(+ : ...)`). Inputs: xs_k = floor(5 frac(k C2)) - 2 (k 1-based, an integer in
 * -2 .. 2), but -9 at k = floor(n / 3) and 11 at k = n - floor(n / 5): the sum is an
 * integer that f32 adds exactly in any order. Checks (a row that fails prints NA): the
 * minimum is -9, the maximum 11, the sum and count equal a plain loop's (f64, long).
 * Checksum: min + 2 max + 3 sum + 4 count (weights 1 to 4, so that exchanged results
 * show). */
#include "common.h"

typedef struct { float mn, mx, sum; int count; } stats;

static void minmax(const float *x, long n, stats *out) {
  float mn = INFINITY, mx = -INFINITY, s = 0.0f;
  int count = 0;
#pragma omp parallel for simd schedule(static) reduction(min : mn) reduction(max : mx) reduction(+ : s, count)
  for (long i = 0; i < n; i++) {
    float v = x[i];
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
    s += v;
    count += v > 0.0f;
  }
  out->mn = mn, out->mx = mx, out->sum = s, out->count = count;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  long ka = n / 3, kb = n - n / 5;
  float *x = malloc((size_t)n * sizeof *x);
  if (!x) return 1;
#pragma omp parallel for schedule(static)
  for (long k = 1; k <= n; k++)
    x[k - 1] = k == ka ? -9.0f : k == kb ? 11.0f : (float)(floor(5.0 * frac_k(k, C2)) - 2.0);
  double ws = 0;
  long wc = 0;
  for (long i = 0; i < n; i++) {
    ws += (double)x[i];
    wc += x[i] > 0.0f;
  }
  stats r = { 0, 0, 0, 0 };
  double ms;
  int reps;
  MEASURE(ms, reps, minmax(x, n, &r));
  if (r.mn == -9.0f && r.mx == 11.0f && (double)r.sum == ws && (long)r.count == wc)
    RESULT("stats_minmax", "C", ms, (double)r.mn + 2.0 * r.mx + 3.0 * r.sum + 4.0 * r.count, reps);
  else
    printf("NA stats_minmax C min %g, max %g, sum %.9g, count %d; want -9, 11, %.17g, %ld\n", r.mn, r.mx,
           r.sum, r.count, ws, wc), fflush(stdout);
  free(x);
  return 0;
}
