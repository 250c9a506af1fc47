/* Matrix product c = a * b of two n x n matrices, f32 (f64 when built with -DMATMUL_F64:
 * the matmul_f64 benchmark). With i, j, k 1-based: a[i][k] = ((7i + 3k) mod 11 - 4) / 4,
 * b[k][j] = ((5k + 2j) mod 13 - 5) / 4, so every product is a multiple of 1/16 and every
 * partial sum is exact: all summation orders give the same c. Output preallocated.
 * Checksum: the f64 sum of c. Two rows:
 *   C         : i-k-j loops, OpenMP over i, the j loop vectorised (what one writes first)
 *   C_blocked : the same loops in tiles of KB x JB of b (OpenMP over blocks of IB rows of
 *               a), so a tile of b stays in cache while IB rows use it. */
#include "common.h"

#ifdef MATMUL_F64
typedef double real;
#define BENCH "matmul_f64"
#else
typedef float real;
#define BENCH "matmul"
#endif

#define IB 64
#define KB 64
#define JB 256

static void matmul(const real *restrict a, const real *restrict b, real *restrict c, int n) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    real *ci = c + (long)i * n;
    for (int j = 0; j < n; j++) ci[j] = 0;
    for (int k = 0; k < n; k++) {
      real aik = a[(long)i * n + k];
      const real *bk = b + (long)k * n;
#pragma omp simd
      for (int j = 0; j < n; j++) ci[j] += aik * bk[j];
    }
  }
}

static void matmul_blocked(const real *restrict a, const real *restrict b, real *restrict c,
                           int n) {
#pragma omp parallel for schedule(static)
  for (int ii = 0; ii < n; ii += IB) {
    int ie = ii + IB < n ? ii + IB : n;
    for (int i = ii; i < ie; i++)
      for (int j = 0; j < n; j++) c[(long)i * n + j] = 0;
    for (int kk = 0; kk < n; kk += KB) {
      int ke = kk + KB < n ? kk + KB : n;
      for (int jj = 0; jj < n; jj += JB) {
        int je = jj + JB < n ? jj + JB : n;
        for (int i = ii; i < ie; i++) {
          real *ci = c + (long)i * n;
          for (int k = kk; k < ke; k++) {
            real aik = a[(long)i * n + k];
            const real *bk = b + (long)k * n;
#pragma omp simd
            for (int j = jj; j < je; j++) ci[j] += aik * bk[j];
          }
        }
      }
    }
  }
}

static double sum64(const real *c, long n) {
  double s = 0;
  for (long i = 0; i < n; i++) s += (double)c[i];
  return s;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024;
  size_t bytes = (size_t)n * n * sizeof(real);
  real *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  if (!a || !b || !c) return 1;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      a[(long)i * n + j] = (real)((7 * (i + 1) + 3 * (j + 1)) % 11 - 4) / 4;
      b[(long)i * n + j] = (real)((5 * (i + 1) + 2 * (j + 1)) % 13 - 5) / 4;
      c[(long)i * n + j] = 0;
    }
  double ms;
  int reps;
  MEASURE(ms, reps, matmul(a, b, c, n));
  RESULT(BENCH, "C", ms, sum64(c, (long)n * n), reps);
  MEASURE(ms, reps, matmul_blocked(a, b, c, n));
  RESULT(BENCH, "C_blocked", ms, sum64(c, (long)n * n), reps);
  free(a);
  free(b);
  free(c);
  return 0;
}
