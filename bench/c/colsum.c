/* colsum: the column sums of an n x n f32 matrix (row-major), a[i][j] = ((i j + 3 i) mod 13
 * - 6) / 4 (i, j 1-based): multiples of 1/4 whose sums stay far below 2^24 / 4, so every
 * summation order gives the same, exact sums (and the column sums differ from column to
 * column, the row sums from row to row). Two rows, each into a preallocated output:
 *   C      : column sums: OpenMP over blocks of up to 512 columns (a multiple of the
 *            thread count of blocks, of about equal widths); each thread keeps a block's
 *            sums in L1 and adds the matrix's rows into them, reading each row's segment
 *            contiguously (the inner loop vectorised)
 *   C_rows : row sums: OpenMP over rows, each row summed with `omp simd reduction` (lanes
 *            of partial sums)
 * Checks (a row that fails prints NA): every sum equals the f64 sums of a plain loop.
 * Checksum: the f64 sum of the sums (the same total for both). */
#include "common.h"

#define JB 512
#include <omp.h>

static void colsum(const float *a, float *s, long n) {
  /* blocks of at most JB columns, a multiple of the thread count of them, of about equal
   * widths (multiples of 16 columns) */
  long T = omp_get_max_threads(), nb = (n + JB - 1) / JB;
  nb = (nb + T - 1) / T * T;
  long bw = ((n + nb - 1) / nb + 15) / 16 * 16;
  nb = (n + bw - 1) / bw;
#pragma omp parallel for schedule(static)
  for (long b = 0; b < nb; b++) {
    long j0 = b * bw, w = n - j0 < bw ? n - j0 : bw;
    float acc[JB] __attribute__((aligned(64)));
    for (long j = 0; j < w; j++) acc[j] = 0.0f;
    for (long i = 0; i < n; i++) {
      const float *r = a + i * n + j0;
#pragma omp simd
      for (long j = 0; j < w; j++) acc[j] += r[j];
    }
    memcpy(s + j0, acc, (size_t)w * sizeof *acc);
  }
}

static void rowsum(const float *a, float *s, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) {
    const float *r = a + i * n;
    float t = 0.0f;
#pragma omp simd reduction(+ : t)
    for (long j = 0; j < n; j++) t += r[j];
    s[i] = t;
  }
}

static int same(const float *s, const double *want, long n, double *total) {
  *total = 0;
  for (long k = 0; k < n; k++) {
    if ((double)s[k] != want[k]) return 0;
    *total += (double)s[k];
  }
  return 1;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 4096L;
  float *a = malloc((size_t)n * (size_t)n * sizeof *a), *s = malloc((size_t)n * sizeof *s);
  double *cw = calloc((size_t)n, sizeof *cw), *rw = calloc((size_t)n, sizeof *rw);
  if (!a || !s || !cw || !rw) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 1; i <= n; i++)
    for (long j = 1; j <= n; j++) a[(i - 1) * n + (j - 1)] = (float)((i * j + 3 * i) % 13 - 6) / 4.0f;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      cw[j] += (double)a[i * n + j];
      rw[i] += (double)a[i * n + j];
    }
  for (long k = 0; k < n; k++) s[k] = 0.0f;
  double ms, total;
  int reps;
  MEASURE(ms, reps, colsum(a, s, n));
  if (same(s, cw, n, &total)) RESULT("colsum", "C", ms, total, reps);
  else printf("NA colsum C a column sum differs from the plain loop's\n"), fflush(stdout);
  MEASURE(ms, reps, rowsum(a, s, n));
  if (same(s, rw, n, &total)) RESULT("colsum", "C_rows", ms, total, reps);
  else printf("NA colsum C_rows a row sum differs from the plain loop's\n"), fflush(stdout);
  free(a);
  free(s);
  free(cw);
  free(rw);
  return 0;
}
