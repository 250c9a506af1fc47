/* The grad group's diffusion loss (issue 47), its gradient by hand: 10 explicit steps of
 * the heat equation on a W x W f32 grid (u' = c + alpha (n + s + w + e - 4 c), neighbours
 * past an edge clamped to it), then L = sum (u_10 - target)^2; the gradient with respect
 * to u_0. The steps are linear, so the pullback needs only u_10: g = 2 (u_10 - target),
 * then 10 times the transposed step, written as a gather (each cell adds the cotangents of
 * the cells that read it: its neighbours, and itself where a clamped read fell on it), so
 * that it runs in parallel rows without atomics (OpenMP). Inputs: bench/lacc/gradients.lua's
 * formulas, element k (1-based, row-major) of u_0 is 2 frac(k C1) - 1, of target
 * 2 frac(k C2) - 1. */
#include "common.h"
#include <omp.h>

enum { STEPS = 10 };
static const float ALPHA = 0.2f;

/* one row of a step: the first and last cells clamp, the others vectorise */
static void step_row(const float *up, const float *row, const float *dn, float *out, long w) {
  for (long j = 0; j < w; j++) {
    if (j == 1 && w > 2) {
      for (; j < w - 1; j++)
        out[j] = row[j] + ALPHA * (up[j] + dn[j] + row[j - 1] + row[j + 1] - 4 * row[j]);
      if (j >= w) break;
    }
    float c = row[j], l = row[j > 0 ? j - 1 : 0], r = row[j < w - 1 ? j + 1 : j];
    out[j] = c + ALPHA * (up[j] + dn[j] + l + r - 4 * c);
  }
}

static void step(const float *u, float *v, long w) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < w; i++)
    step_row(u + (i > 0 ? i - 1 : 0) * w, u + i * w, u + (i < w - 1 ? i + 1 : i) * w, v + i * w, w);
}

/* the transposed step: cell (i, j) is the north neighbour of (i + 1, j), and of (0, j)
 * itself when i = 0 (a clamped read); likewise south, west and east. A row's vertical
 * reads: the rows below and above (a missing one counts the row itself, clamped). */
static void step_back_row(const float *above, const float *row, const float *below, float *out,
                          long w) {
  for (long j = 0; j < w; j++) {
    if (j == 1 && w > 2) {
      for (; j < w - 1; j++)
        out[j] = row[j] - 4 * ALPHA * row[j] + ALPHA * (below[j] + above[j] + row[j + 1] + row[j - 1]);
      if (j >= w) break;
    }
    float c = row[j];
    float side = (j < w - 1 ? row[j + 1] : 0) + (j == 0 ? c : 0) + (j > 0 ? row[j - 1] : 0) +
                 (j == w - 1 ? c : 0);
    out[j] = c - 4 * ALPHA * c + ALPHA * (below[j] + above[j] + side);
  }
}

static void step_back(const float *g, float *h, long w) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < w; i++) {
    /* at an edge the row itself stands for the missing neighbour row */
    const float *row = g + i * w;
    const float *below = i < w - 1 ? row + w : row, *above = i > 0 ? row - w : row;
    step_back_row(above, row, below, h + i * w, w);
  }
}

static void gradient(const float *u0, const float *target, float *a, float *b, long w) {
  const float *u = u0;
  for (int s = 0; s < STEPS; s++) {
    float *v = s % 2 == 0 ? a : b;
    step(u, v, w);
    u = v;
  }
  float *g = u == a ? b : a;
#pragma omp parallel for schedule(static)
  for (long k = 0; k < w * w; k++) g[k] = 2 * (u[k] - target[k]);
  float *h = g == a ? b : a;
  for (int s = 0; s < STEPS; s++) {
    step_back(g, h, w);
    float *t = g;
    g = h;
    h = t;
  }
  if (g != a) memcpy(a, g, (size_t)(w * w) * sizeof *a);   /* the gradient in a */
}

int main(int argc, char **argv) {
  long w = argc > 1 ? atol(argv[1]) : 1024;
  size_t n = (size_t)(w * w);
  float *u0 = malloc(n * sizeof *u0), *target = malloc(n * sizeof *target);
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  if (!u0 || !target || !a || !b) return 1;
  for (long k = 0; k < w * w; k++) {
    u0[k] = (float)(2 * frac_k(k + 1, C1) - 1);
    target[k] = (float)(2 * frac_k(k + 1, C2) - 1);
  }
  double ms;
  int reps;
  MEASURE(ms, reps, gradient(u0, target, a, b, w));
  double sum = 0;
  for (long k = 0; k < w * w; k++) sum += a[k];
  RESULT("grad_diffusion", "C", ms, sum, reps);
  free(u0);
  free(target);
  free(a);
  free(b);
  return 0;
}
