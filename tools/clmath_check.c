/* lacc's own f32 math (core/base/ownmath.h: the OpenCL prelude's LACC_OWN_MATH code, which
 * CPU devices run, and the interpreter's and the cpu backend's): exp, log, log2, log10,
 * log1p, expm1, sinh, cosh, tanh, sin, cos and tan over every f32 input against libm in double: prints
 * the largest error of each in ulp of the exact value and fails past 1 ulp or on a wrong
 * end value (NaN, infinities, zeros and their signs). tools/clmath_check.sh extracts the
 * functions from the OpenCL source lacc emits into clmath_fns.h and builds this with
 * contraction off, as OpenCL C is built; the inputs are split among threads (OpenMP). An
 * argument names the functions to check (default all), e.g. "exp log". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
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

int main(int argc, char **argv) {
  int bad = 0;
  for (int i = 0; i < NFNS; i++) {
    int wanted = argc < 2;
    for (int k = 1; k < argc; k++) wanted |= strcmp(argv[k], fns[i].name) == 0;
    if (wanted) bad |= check(&fns[i]);
  }
  return bad;
}
