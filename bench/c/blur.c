/* 3x3 box blur of a w x w f32 image, clamped at the edges: x[i][j] = u24(k, C1) with k
 * the 1-based row-major index. The OpenMP version one writes by hand: interior rows and
 * columns without edge tests, the border with clamped indices. Output preallocated.
 * Checksum: the f64 sum of the output. */
#include "common.h"

static inline int clampi(int k, int n) { return k < 0 ? 0 : k >= n ? n - 1 : k; }

static float at(const float *x, int w, int i, int j) { return x[(long)clampi(i, w) * w + clampi(j, w)]; }

static float edge(const float *x, int w, int i, int j) {
  float s = 0;
  for (int di = -1; di <= 1; di++)
    for (int dj = -1; dj <= 1; dj++) s += at(x, w, i + di, j + dj);
  return s / 9.0f;
}

static void blur(const float *x, float *y, int w) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < w; i++) {
    if (i == 0 || i == w - 1) {
      for (int j = 0; j < w; j++) y[(long)i * w + j] = edge(x, w, i, j);
      continue;
    }
    const float *a = x + (long)(i - 1) * w, *b = x + (long)i * w, *c = x + (long)(i + 1) * w;
    y[(long)i * w] = edge(x, w, i, 0);
    for (int j = 1; j < w - 1; j++)
      y[(long)i * w + j] = (a[j - 1] + a[j] + a[j + 1] + b[j - 1] + b[j] + b[j + 1] + c[j - 1] +
                            c[j] + c[j + 1]) / 9.0f;
    y[(long)i * w + w - 1] = edge(x, w, i, w - 1);
  }
}

int main(int argc, char **argv) {
  int w = argc > 1 ? atoi(argv[1]) : 4096;
  long n = (long)w * w;
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  if (!x || !y) return 1;
#pragma omp parallel for schedule(static)
  for (long k = 0; k < n; k++) {
    x[k] = u24(k + 1, C1);
    y[k] = 0;
  }
  double ms;
  int reps;
  MEASURE(ms, reps, blur(x, y, w));
  double cs = 0;
  for (long k = 0; k < n; k++) cs += y[k];
  RESULT("blur", "C", ms, cs, reps);
  free(x);
  free(y);
  return 0;
}
