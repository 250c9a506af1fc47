/* The grad group's logistic regression (issue 47), its gradient by hand: X is 1M x 64
 * f32, w 64 f32, y in {0, 1}; the mean log-loss's gradient with respect to w is
 * X^T (sigma(z) - y) / n with z = X w, written as the loss's own terms (s = (1 - 2y) z,
 * d softplus(s) / ds = sigma(s)) so that it is the derivative of what bench/lacc/gradients.lua
 * computes. One pass over X: each thread's rows give z and add their share of X^T g into
 * a private 64-vector, summed at the end (OpenMP). Inputs: bench/lacc/gradients.lua's
 * formulas, element k (1-based, row-major) of X is 2 frac(k C1) - 1, of w (2 frac(k C2) - 1)
 * / 10, y_i = frac(i C3) > 1/2. */
#include "common.h"
#include <omp.h>

enum { M = 64 };

static void gradient(const float *X, const float *w, const float *y, long n, float *g) {
  for (int j = 0; j < M; j++) g[j] = 0;
#pragma omp parallel
  {
    float part[M] = { 0 };
#pragma omp for schedule(static)
    for (long i = 0; i < n; i++) {
      const float *row = X + i * M;
      float z = 0;
      for (int j = 0; j < M; j++) z += row[j] * w[j];
      float sign = 1 - 2 * y[i];
      float s = sign * z;
      float ds = 1 / (1 + expf(-s));           /* d softplus(s) / ds */
      float dz = sign * ds / (float)n;
      for (int j = 0; j < M; j++) part[j] += dz * row[j];
    }
#pragma omp critical
    for (int j = 0; j < M; j++) g[j] += part[j];
  }
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000L;
  float *X = malloc((size_t)n * M * sizeof *X), *y = malloc((size_t)n * sizeof *y);
  float w[M], g[M];
  if (!X || !y) return 1;
#pragma omp parallel for schedule(static)
  for (long k = 0; k < n * M; k++) X[k] = (float)(2 * frac_k(k + 1, C1) - 1);
  for (int j = 0; j < M; j++) w[j] = (float)((2 * frac_k(j + 1, C2) - 1) * 0.1);
  for (long i = 0; i < n; i++) y[i] = frac_k(i + 1, C3) > 0.5 ? 1.0f : 0.0f;
  double ms;
  int reps;
  MEASURE(ms, reps, gradient(X, w, y, n, g));
  double sum = 0;
  for (int j = 0; j < M; j++) sum += g[j];
  RESULT("grad_logreg", "C", ms, sum, reps);
  free(X);
  free(y);
  return 0;
}
