/* 5x5 convolution of a w x w f32 image, clamped at the edges: the binomial blur, weights
 * (1 4 6 4 1) x (1 4 6 4 1) / 256. x[i][j] = u16(k, C1) with k the 1-based row-major
 * index (16 bits, so every weighted sum is exact in f32, in any order). The OpenMP
 * version one writes by hand: interior rows and columns without edge tests (the 5x5 loop
 * unrolled by the compiler), the border with clamped indices. Output preallocated.
 * Checksum: the f64 sum of the output. */
#include "common.h"

static const float W[5][5] = {
  { 1, 4, 6, 4, 1 }, { 4, 16, 24, 16, 4 }, { 6, 24, 36, 24, 6 }, { 4, 16, 24, 16, 4 },
  { 1, 4, 6, 4, 1 },
};

static inline int clampi(int k, int n) { return k < 0 ? 0 : k >= n ? n - 1 : k; }

static float edge(const float *x, int w, int i, int j) {
  float s = 0;
  for (int di = 0; di < 5; di++)
    for (int dj = 0; dj < 5; dj++)
      s += W[di][dj] * x[(long)clampi(i + di - 2, w) * w + clampi(j + dj - 2, w)];
  return s / 256.0f;
}

static void conv2d(const float *x, float *y, int w) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < w; i++) {
    float *yi = y + (long)i * w;
    if (i < 2 || i >= w - 2) {
      for (int j = 0; j < w; j++) yi[j] = edge(x, w, i, j);
      continue;
    }
    const float *r = x + (long)(i - 2) * w;
    for (int j = 0; j < 2 && j < w; j++) yi[j] = edge(x, w, i, j);
    for (int j = 2; j < w - 2; j++) {
      float s = 0;
      for (int di = 0; di < 5; di++)
        for (int dj = 0; dj < 5; dj++) s += W[di][dj] * r[(long)di * w + j + dj - 2];
      yi[j] = s / 256.0f;
    }
    for (int j = w - 2 > 2 ? w - 2 : 2; j < w; j++) yi[j] = edge(x, w, i, j);
  }
}

int main(int argc, char **argv) {
  int w = argc > 1 ? atoi(argv[1]) : 4096;
  long n = (long)w * w;
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  if (!x || !y) return 1;
#pragma omp parallel for schedule(static)
  for (long k = 0; k < n; k++) {
    x[k] = u16(k + 1, C1);
    y[k] = 0;
  }
  double ms;
  int reps;
  MEASURE(ms, reps, conv2d(x, y, w));
  double cs = 0;
  for (long k = 0; k < n; k++) cs += y[k];
  RESULT("conv2d", "C", ms, cs, reps);
  free(x);
  free(y);
  return 0;
}
