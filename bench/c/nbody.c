/* One step of examples/nbody.lua for n bodies, f64: the all-pairs accelerations (body i
 * pulled by every body j, softening 0.01, each mass 1/n), then a semi-implicit Euler step
 * (dt 0.01). With k 1-based: x = frac(k C1), y = frac(k C2), vx = (frac(k C3) - 0.5) / 4,
 * vy = (0.5 - frac(k C1)) / 4. Outputs preallocated. Checksum: the f64 sum of the new
 * vx^2 + vy^2 (the sum of the velocities themselves hardly depends on the accelerations:
 * they cancel in pairs). Two rows:
 *   C            : the O(n^2) double loop, OpenMP over i (the j loop's sums in order)
 *   C vectorised : the same with `omp simd reduction` on the j loop (per-lane sums) */
#include "common.h"

#define DT 0.01
#define SOFT 0.01

static void step(const double *x, const double *y, const double *vx, const double *vy,
                 double *ox, double *oy, double *ovx, double *ovy, int n) {
  const double mass = 1.0 / n;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    double ax = 0, ay = 0;
    for (int j = 0; j < n; j++) {
      double dx = x[j] - x[i], dy = y[j] - y[i];
      double d2 = dx * dx + dy * dy + SOFT * SOFT;
      double inv = mass / (d2 * sqrt(d2));
      ax += dx * inv;
      ay += dy * inv;
    }
    double nvx = vx[i] + ax * DT, nvy = vy[i] + ay * DT;
    ox[i] = x[i] + nvx * DT;
    oy[i] = y[i] + nvy * DT;
    ovx[i] = nvx;
    ovy[i] = nvy;
  }
}

static void step_simd(const double *x, const double *y, const double *vx, const double *vy,
                      double *ox, double *oy, double *ovx, double *ovy, int n) {
  const double mass = 1.0 / n;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    double ax = 0, ay = 0, xi = x[i], yi = y[i];
#pragma omp simd reduction(+ : ax, ay)
    for (int j = 0; j < n; j++) {
      double dx = x[j] - xi, dy = y[j] - yi;
      double d2 = dx * dx + dy * dy + SOFT * SOFT;
      double inv = mass / (d2 * sqrt(d2));
      ax += dx * inv;
      ay += dy * inv;
    }
    double nvx = vx[i] + ax * DT, nvy = vy[i] + ay * DT;
    ox[i] = x[i] + nvx * DT;
    oy[i] = y[i] + nvy * DT;
    ovx[i] = nvx;
    ovy[i] = nvy;
  }
}

static double energy2(const double *vx, const double *vy, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += vx[i] * vx[i] + vy[i] * vy[i];
  return s;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  double *m = malloc((size_t)n * 8 * sizeof *m);
  if (!m) return 1;
  double *x = m, *y = m + n, *vx = m + 2L * n, *vy = m + 3L * n;
  double *ox = m + 4L * n, *oy = m + 5L * n, *ovx = m + 6L * n, *ovy = m + 7L * n;
  for (int k = 0; k < n; k++) {
    x[k] = frac_k(k + 1, C1);
    y[k] = frac_k(k + 1, C2);
    vx[k] = (frac_k(k + 1, C3) - 0.5) / 4;
    vy[k] = (0.5 - frac_k(k + 1, C1)) / 4;
    ox[k] = oy[k] = ovx[k] = ovy[k] = 0;
  }
  double ms;
  int reps;
  MEASURE(ms, reps, step(x, y, vx, vy, ox, oy, ovx, ovy, n));
  RESULT("nbody", "C", ms, energy2(ovx, ovy, n), reps);
  MEASURE(ms, reps, step_simd(x, y, vx, vy, ox, oy, ovx, ovy, n));
  RESULT("nbody", "C_vectorised", ms, energy2(ovx, ovy, n), reps);
  free(m);
  return 0;
}
