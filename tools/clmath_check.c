/* lacc's own math (core/base/ownmath.h: the OpenCL prelude's LACC_OWN_MATH code, which
 * CPU devices run, and the interpreter's and the cpu backend's). f32 exp, log, log2, log10,
 * log1p, expm1, sinh, cosh, tanh, sin, cos, tan and atan over every f32 input against libm in
 * double; f32 atan2 and pow, and the f64 exp, log, log2, log10, log1p, expm1, sinh, cosh,
 * tanh, atan, atan2 and pow over samples (random bit patterns, which reach every binade,
 * uniform draws over each function's interesting range and near zero, and a list of edges:
 * zeros, infinities, NaN, the overflow and underflow thresholds, the ends of the
 * reductions' intervals) against libm in double (f32) and long double (f64). Prints the
 * largest error of each in ulp of the exact value and fails past 1 ulp or on a wrong end
 * value (NaN, infinities, zeros and their signs). tools/clmath_check.sh extracts the
 * functions from the OpenCL source lacc emits into clmath_fns.h and builds this with
 * contraction off, as OpenCL C is built; the inputs are split among threads (OpenMP). An
 * argument names the functions to check (default all), e.g. "exp log" (the f32 ones) or
 * "exp64 pow64"; CLMATH_SAMPLES sets the samples a sampled function gets (30 million). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clmath_fns.h"

/* got's distance from the exact ref in units of the last place of ref's binade (the
 * smallest subnormal at least); infinite where an end value is wrong */
static double ulps(float got, double ref) {
  if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
  if (isinf(ref)) return got == (float)ref ? 0 : INFINITY;
  if (isinf(got)) return fabs(ref) > 0x1.fffffe8p127 ? 0 : INFINITY;   /* rounds to inf */
  /* signbit's nonzero values differ between float and double: compared as truth values */
  if (ref == 0) return got == 0 && (signbit(got) != 0) == (signbit(ref) != 0) ? 0 : INFINITY;
  int e;
  frexp(fabs(ref), &e);
  double ulp = ldexp(1.0, e - 1 - 23);
  if (ulp < 0x1p-149) ulp = 0x1p-149;
  return fabs((double)got - ref) / ulp;
}

typedef struct {
  const char *name;
  float (*own)(float);
  double (*ref)(double);
} fn;

static const fn fns[] = {
  { "exp", lacc_expf, exp },       { "log", lacc_logf, log },       { "log2", lacc_log2f, log2 },
  { "log10", lacc_log10f, log10 }, { "log1p", lacc_log1pf, log1p }, { "expm1", lacc_expm1f, expm1 },
  { "sinh", lacc_sinhf, sinh },    { "cosh", lacc_coshf, cosh },    { "tanh", lacc_tanhf, tanh },
  { "sin", lacc_sinf, sin },       { "cos", lacc_cosf, cos },       { "tan", lacc_tanf, tan },
  { "atan", lacc_atanf, atan },    { "exp2", lacc_exp2f, exp2 },
};
enum { NFNS = sizeof fns / sizeof fns[0] };

static int check(const fn *f) {
  double worst = 0;
  uint32_t at = 0;
#pragma omp parallel
  {
    double w = 0;
    uint32_t a = 0;
#pragma omp for schedule(static)
    for (int64_t u = 0; u <= (int64_t)0xffffffffu; u++) {
      uint32_t b = (uint32_t)u;
      float x;
      memcpy(&x, &b, 4);
      double err = ulps(f->own(x), f->ref((double)x));
      if (err > w || (err != err)) w = err, a = b;
    }
#pragma omp critical
    if (w > worst || (w == worst && a < at)) worst = w, at = a;
  }
  float x;
  memcpy(&x, &at, 4);
  printf("%s: at most %.3f ulp (at %a)\n", f->name, worst, x);
  fflush(stdout);
  return !(worst <= 1.0);
}

/* ---- sampled functions */

/* got's distance from the exact ref in ulp of a double */
static double ulps64(double got, long double ref) {
  if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
  if (isinf(ref)) return got == (double)ref ? 0 : INFINITY;
  if (isinf(got)) return fabsl(ref) > 0x1.fffffffffffff8p1023L ? 0 : INFINITY;
  if (ref == 0) return got == 0 && (signbit(got) != 0) == (signbit(ref) != 0) ? 0 : INFINITY;
  int e;
  frexpl(fabsl(ref), &e);
  long double ulp = ldexpl(1.0L, e - 1 - 52);
  if (ulp < 0x1p-1074L) ulp = 0x1p-1074L;
  return (double)(fabsl((long double)got - ref) / ulp);
}

/* xorshift64*, one stream a sample index (the same samples however many threads run) */
static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* sample i of a function over [lo, hi]: a third random bits, a third uniform in [lo, hi], a
 * third uniform in +-2^-k for k up to 63 */
static double sample(uint64_t i, int salt, double lo, double hi) {
  uint64_t r = mix(i * 4 + (uint64_t)salt), u = mix(r);
  double unit = (double)(u >> 11) * 0x1p-53;
  switch (i % 3) {
  case 0: return lacc_as_double((int64_t)r);
  case 1: return lo + (hi - lo) * unit;
  default: return (unit * 2 - 1) * ldexp(1.0, -(int)(r % 64));
  }
}

static const double edges[] = {
  0.0, -0.0, INFINITY, -INFINITY, NAN, 1, -1, 2, -2, 0.5, -0.5, 3, -3, 0.4375, 0.6875, 1.1875,
  2.4375, 0.35, 22, -22, 40, -40, 88.72283935546875, -103.97, 709.782712893384,
  709.7827128933841, -745.1332191019411, -745.1332191019412, -708.3964185322641,
  710.4758600739439, -710.4758600739439, 710.475860073944, 0x1p-1074, -0x1p-1074, 0x1p-1022,
  2.2250738585072009e-308, 1e308, -1e308, 0x1.fffffffffffffp1023, 0x1p-54, 0x1p-29, 0x1p-28,
  0x1p53, 0x1p-149, 0x1p24, 1.4142135623730951, 0.7071067811865476, 0.99999999999999989,
  1.0000000000000002, 1e-300, 1e300, 3.4028234663852886e38, 1.1754943508222875e-38,
};
enum { NEDGES = sizeof edges / sizeof edges[0] };

/* a sampled function: f64 unary, f64 binary or f32 binary (the others null) */
typedef struct {
  const char *name;
  double (*own64)(double);
  long double (*ref64)(long double);
  double (*own64_2)(double, double);
  long double (*ref64_2)(long double, long double);
  float (*own32_2)(float, float);
  double (*ref32_2)(double, double);
  double lo, hi;   /* the uniform draws' range (binary: y's) */
} sfn;

static const sfn sfns[] = {
  { "atan2", 0, 0, 0, 0, lacc_atan2f, atan2, -3, 3 },
  { "pow", 0, 0, 0, 0, lacc_powf, pow, -40, 40 },
  { "exp64", lacc_exp, expl, 0, 0, 0, 0, -746, 710 },
  { "exp2_64", lacc_exp2, exp2l, 0, 0, 0, 0, -1080, 1025 },
  { "log64", lacc_log, logl, 0, 0, 0, 0, 0, 4 },
  { "log2_64", lacc_log2, log2l, 0, 0, 0, 0, 0, 4 },
  { "log10_64", lacc_log10, log10l, 0, 0, 0, 0, 0, 4 },
  { "log1p64", lacc_log1p, log1pl, 0, 0, 0, 0, -1, 3 },
  { "expm1_64", lacc_expm1, expm1l, 0, 0, 0, 0, -40, 710 },
  { "sinh64", lacc_sinh, sinhl, 0, 0, 0, 0, -711, 711 },
  { "cosh64", lacc_cosh, coshl, 0, 0, 0, 0, -711, 711 },
  { "tanh64", lacc_tanh, tanhl, 0, 0, 0, 0, -20, 20 },
  { "atan64", lacc_atan, atanl, 0, 0, 0, 0, -4, 4 },
  { "sin64", lacc_sin, sinl, 0, 0, 0, 0, -100, 100 },
  { "cos64", lacc_cos, cosl, 0, 0, 0, 0, -100, 100 },
  { "tan64", lacc_tan, tanl, 0, 0, 0, 0, -100, 100 },
  { "atan2_64", 0, 0, lacc_atan2, atan2l, 0, 0, -3, 3 },
  { "pow64", 0, 0, lacc_pow, powl, 0, 0, -60, 60 },
};
enum { NSFNS = sizeof sfns / sizeof sfns[0] };

/* x's error in *w if worse (NaN errors are worst) */
static void worse(double e, double *w, double *at, double x, double *at2, double y) {
  if (!(e <= *w)) *w = e, *at = x, *at2 = y;
}

static float f32_of(double d, uint64_t i) {
  /* a random f32 bit pattern where the double sample was one, else the double rounded */
  return i % 3 == 0 ? lacc_as_float((int)(uint32_t)mix(i * 7 + 5)) : (float)d;
}

/* f's error at (x, y) in ulp (y unused for a unary f; f32 arguments rounded) */
static double error_at(const sfn *f, double *x, double *y) {
  if (f->own64 != NULL) return ulps64(f->own64(*x), f->ref64(*x));
  if (f->own64_2 != NULL) return ulps64(f->own64_2(*x, *y), f->ref64_2(*x, *y));
  float fx = (float)*x, fy = (float)*y;
  *x = fx, *y = fy;
  return ulps(f->own32_2(fx, fy), f->ref32_2(fx, fy));
}

/* sample i: x alone for a unary f; for a binary one independent samples (y's range [lo, hi]),
 * a fifth with y a whole number or x near y; pow's with x near 1 or |y| large too (y log x
 * large), f32 ones random f32 bit patterns a third of the time */
static void sample_at(const sfn *f, int64_t i, double *x, double *y) {
  if (f->own64 != NULL) {
    *x = sample((uint64_t)i, 1, f->lo, f->hi);
    *y = 0;
    return;
  }
  *x = sample((uint64_t)i, 2, -3, 3);
  *y = sample((uint64_t)i, 3, f->lo, f->hi);
  if (i % 5 == 4) *y = i % 2 ? floor(*y) : *x * (0.5 + (double)(mix((uint64_t)i) % 1000) / 666.0);
  if (f->own64_2 == lacc_pow && i % 7 == 3) *x = fabs(*x) * 0.25 + 0.875;
  if (f->own64_2 == lacc_pow && i % 7 == 5) *y = sample((uint64_t)i, 4, -2000, 2000);
  if (f->own32_2 != NULL) *x = f32_of(*x, (uint64_t)i), *y = f32_of(*y, (uint64_t)i + 1);
}

static int check_sampled(const sfn *f, int64_t n) {
  int binary = f->own64 == NULL;
  double worst = 0, at = 0, at2 = 0;
  for (int j = 0; j < NEDGES; j++)
    for (int k = 0; k < (binary ? NEDGES : 1); k++) {
      double x = edges[j], y = edges[k];
      double e = error_at(f, &x, &y);
      worse(e, &worst, &at, x, &at2, y);
    }
#pragma omp parallel
  {
    double w = 0, a = 0, a2 = 0;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; i++) {
      double x, y;
      sample_at(f, i, &x, &y);
      double e = error_at(f, &x, &y);
      worse(e, &w, &a, x, &a2, y);
    }
#pragma omp critical
    if (!(w <= worst)) worst = w, at = a, at2 = a2;
  }
  if (binary) printf("%s: at most %.3f ulp (at %a, %a)\n", f->name, worst, at, at2);
  else printf("%s: at most %.3f ulp (at %a)\n", f->name, worst, at);
  fflush(stdout);
  return !(worst <= 1.0);
}

static int wanted(int argc, char **argv, const char *name) {
  int yes = argc < 2;
  for (int k = 1; k < argc; k++) yes |= strcmp(argv[k], name) == 0;
  return yes;
}

int main(int argc, char **argv) {
  const char *env = getenv("CLMATH_SAMPLES");
  int64_t n = env != NULL ? atoll(env) : 30000000;
  int bad = 0;
  for (int i = 0; i < NFNS; i++)
    if (wanted(argc, argv, fns[i].name)) bad |= check(&fns[i]);
  for (int i = 0; i < NSFNS; i++)
    if (wanted(argc, argv, sfns[i].name)) bad |= check_sampled(&sfns[i], n);
  return bad;
}
