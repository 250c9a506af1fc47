/* The nearest hit of a ray among n spheres, planes and triangles ("Variant Types in Data-Parallel Array Languages" §4.3), by
 * hand: struct-of-arrays, one loop per primitive kind, each an OpenMP loop keeping the
 * nearest (distance, index). The scene is examples/nearest.lua's (the same generator in
 * the same arithmetic; grouped by kind here, as the Lua rows' sorted scenes are); argv:
 * n. The checksum is the distance; the arithmetic is f32, in the order of the Lua
 * function. */
#include "common.h"

#define EPS 1e-4f

typedef struct { float t; long i; } best;

static best nearer(best a, best b) {
  return (b.t < a.t || (b.t == a.t && b.i < a.i)) ? b : a;
}

static float hit(float t) { return t > EPS ? t : INFINITY; }

typedef struct {
  long n;
  float *f[9];      /* fields, struct-of-arrays */
  long *pos;        /* 1-based index in the scene */
} kind;

static const float O[3] = { 0, 0, 0 };
static const float D[3] = { 0.1f, 0.05f, 0.99373034f };

static float sphere(const kind *k, long j) {
  float px = O[0] - k->f[0][j], py = O[1] - k->f[1][j], pz = O[2] - k->f[2][j], r = k->f[3][j];
  float b = px * D[0] + py * D[1] + pz * D[2];
  float disc = b * b - ((px * px + py * py + pz * pz) - r * r);
  float s = sqrtf(disc > 0 ? disc : 0);
  float near = -b - s;
  float t = near > EPS ? near : -b + s;
  return disc < 0 ? INFINITY : hit(t);
}

static float plane(const kind *k, long j) {
  float nx = k->f[0][j], ny = k->f[1][j], nz = k->f[2][j], off = k->f[3][j];
  float den = nx * D[0] + ny * D[1] + nz * D[2];
  float t = (off - (nx * O[0] + ny * O[1] + nz * O[2])) / den;
  return fabsf(den) < 1e-6f ? INFINITY : hit(t);
}

static float triangle(const kind *k, long j) {
  float ax = k->f[0][j], ay = k->f[1][j], az = k->f[2][j];
  float e1x = k->f[3][j] - ax, e1y = k->f[4][j] - ay, e1z = k->f[5][j] - az;
  float e2x = k->f[6][j] - ax, e2y = k->f[7][j] - ay, e2z = k->f[8][j] - az;
  float px = D[1] * e2z - D[2] * e2y, py = D[2] * e2x - D[0] * e2z, pz = D[0] * e2y - D[1] * e2x;
  float det = e1x * px + e1y * py + e1z * pz;
  float inv = 1 / det;
  float sx = O[0] - ax, sy = O[1] - ay, sz = O[2] - az;
  float u = (sx * px + sy * py + sz * pz) * inv;
  float qx = sy * e1z - sz * e1y, qy = sz * e1x - sx * e1z, qz = sx * e1y - sy * e1x;
  float v = (D[0] * qx + D[1] * qy + D[2] * qz) * inv;
  float t = (e2x * qx + e2y * qy + e2z * qz) * inv;
  int miss = (fabsf(det) < 1e-7f || u < 0 || u > 1) || (v < 0 || u + v > 1);
  return miss ? INFINITY : hit(t);
}

static best scan_kind(const kind *k, float (*f)(const kind *, long), best acc) {
#pragma omp parallel
  {
    best mine = { INFINITY, 0x7fffffffffffffffL };
#pragma omp for schedule(static) nowait
    for (long j = 0; j < k->n; j++) {
      best c = { f(k, j), k->pos[j] };
      mine = nearer(mine, c);
    }
#pragma omp critical
    acc = nearer(acc, mine);
  }
  return acc;
}

static best nearest(const kind *ks) {
  best acc = { INFINITY, 0x7fffffffffffffffL };
  acc = scan_kind(&ks[0], sphere, acc);
  acc = scan_kind(&ks[1], plane, acc);
  return scan_kind(&ks[2], triangle, acc);
}

/* Park-Miller, exact in doubles (as in the Lua scene). */
static double seed = 12345;
static double rnd(void) {
  seed = fmod(seed * 16807.0, 2147483647.0);
  return seed / 2147483647.0;
}
static double r(double lo, double hi) { return lo + (hi - lo) * rnd(); }

static void push(kind *k, long i, int nf, const double *v) {
  for (int f = 0; f < nf; f++) k->f[f][k->n] = (float)v[f];
  k->pos[k->n++] = i;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 300000L;
  kind ks[3];
  for (int c = 0; c < 3; c++) {
    ks[c].n = 0;
    ks[c].pos = malloc((size_t)n * sizeof(long) + 8);
    for (int f = 0; f < 9; f++) ks[c].f[f] = malloc((size_t)n * sizeof(float) + 8);
    if (!ks[c].pos || !ks[c].f[8]) return 1;
  }
  for (long i = 1; i <= n; i++) {
    int k = (int)floor(rnd() * 3);
    double v[9];
    if (k == 0) {
      v[0] = r(-50, 50); v[1] = r(-50, 50); v[2] = r(20, 120); v[3] = r(0.2, 2);
      push(&ks[0], i, 4, v);
    } else if (k == 1) {
      double nx = r(-1, 1), ny = r(-1, 1), nz = r(-1, 1);
      double len = sqrt(nx * nx + ny * ny + nz * nz) + 1e-9;
      v[0] = nx / len; v[1] = ny / len; v[2] = nz / len; v[3] = r(150, 400);
      push(&ks[1], i, 4, v);
    } else {
      double ax = r(-50, 50), ay = r(-50, 50), az = r(20, 120);
      v[0] = ax; v[1] = ay; v[2] = az;
      v[3] = ax + r(-3, 3); v[4] = ay + r(-3, 3); v[5] = az + r(-3, 3);
      v[6] = ax + r(-3, 3); v[7] = ay + r(-3, 3); v[8] = az + r(-3, 3);
      push(&ks[2], i, 9, v);
    }
  }
  best b = { INFINITY, 0 };
  volatile float sink;
  double ms;
  int reps;
  MEASURE(ms, reps, b = nearest(ks); sink = b.t);
  char name[64];
  snprintf(name, sizeof name, "nearest_%ld", n);
  RESULT(name, "C", ms, (double)b.t, reps);
  fprintf(stderr, "nearest: primitive %ld at %.4f\n", b.i, (double)b.t);
  (void)sink;
  return 0;
}
