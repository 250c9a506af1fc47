/* stats_softmax (issue 44): a softmax over the rows of an n x n f32 matrix (row-major), as
 * a careful C programmer writes it: OpenMP over rows; per row a pass for the maximum (`omp
 * simd reduction(max : ...)`), a pass computing e = expf(x - max) into the output row
 * while summing it (`omp simd reduction(+ : ...)`), and a pass dividing the row by the sum
 * (the row, 16 KB at n = 4096, stays in cache between the passes). Output into a
 * preallocated array. Inputs: x[i][j] = ((i j + 3 i) mod 13 - 6) / 4 + 16 (i mod 7) (i, j
 * 1-based: rows up to 99.5, where expf(x) alone overflows). Checks (a row that fails
 * prints NA): every row sums to 1 within 1e-3 (f64), and 5 elements of each of 9 rows are
 * within 1e-4 (relative) of the softmax computed in double. Checksum: the f64 sum of the
 * outputs weighted by their column j (1-based). The exps are glibc's expf: other rows
 * agree to about 1e-7. */
#include "common.h"

static void softmax(const float *a, float *out, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) {
    const float *r = a + i * n;
    float *o = out + i * n;
    float m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (long j = 0; j < n; j++) m = r[j] > m ? r[j] : m;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (long j = 0; j < n; j++) {
      float e = expf(r[j] - m);
      o[j] = e;
      s += e;
    }
#pragma omp simd
    for (long j = 0; j < n; j++) o[j] /= s;
  }
}

static double x_at(long i, long j) {
  return (double)((i * j + 3 * i) % 13 - 6) / 4.0 + 16.0 * (double)(i % 7);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 4096L;
  float *a = malloc((size_t)n * (size_t)n * sizeof *a), *out = malloc((size_t)n * (size_t)n * sizeof *out);
  if (!a || !out) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 1; i <= n; i++)
    for (long j = 1; j <= n; j++) {
      a[(i - 1) * n + (j - 1)] = (float)x_at(i, j);
      out[(i - 1) * n + (j - 1)] = 0.0f;
    }
  double ms;
  int reps;
  MEASURE(ms, reps, softmax(a, out, n));
  double cs = 0;
  for (long i = 0; i < n; i++) {
    double t = 0;
    for (long j = 0; j < n; j++) {
      t += (double)out[i * n + j];
      cs += (double)out[i * n + j] * (double)(j + 1);
    }
    if (fabs(t - 1.0) > 1e-3) {
      printf("NA stats_softmax C row %ld sums to %.9g, not 1\n", i + 1, t), fflush(stdout);
      return 0;
    }
  }
  for (int q = 0; q <= 8; q++) {
    long i = (n - 1) * q / 8 + 1;
    double mx = -INFINITY, s = 0;
    for (long j = 1; j <= n; j++) mx = fmax(mx, x_at(i, j));
    for (long j = 1; j <= n; j++) s += exp(x_at(i, j) - mx);
    for (int t = 0; t <= 4; t++) {
      long j = (n - 1) * t / 4 + 1;
      double want = exp(x_at(i, j) - mx) / s, got = out[(i - 1) * n + (j - 1)];
      if (fabs(got - want) > 1e-4 * want) {
        printf("NA stats_softmax C element (%ld, %ld) is %.9g, not %.9g\n", i, j, got, want), fflush(stdout);
        return 0;
      }
    }
  }
  RESULT("stats_softmax", "C", ms, cs, reps);
  free(a);
  free(out);
  return 0;
}
