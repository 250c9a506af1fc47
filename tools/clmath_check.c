/* lacc's own f32 exp and log (core/base/ownmath.h: the OpenCL prelude's LACC_OWN_MATH
 * code, which CPU devices run, and the interpreter's and the cpu backend's) over every f32
 * input against libm in double: prints the largest error of each in ulp of the exact
 * value and fails past 1 ulp or on a wrong end value (NaN, infinities, zeros).
 * tools/clmath_check.sh extracts the functions from the OpenCL source lacc emits into
 * clmath_fns.h and builds this with contraction off, as OpenCL C is built. */
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
  if (ref == 0) return got == 0 && signbit(got) == signbit(ref) ? 0 : INFINITY;
  int e;
  frexp(fabs(ref), &e);
  double ulp = ldexp(1.0, e - 1 - 23);
  if (ulp < 0x1p-149) ulp = 0x1p-149;
  return fabs((double)got - ref) / ulp;
}

int main(void) {
  double worst[2] = { 0, 0 };
  uint32_t at[2] = { 0, 0 };
  for (uint64_t u = 0; u <= 0xffffffffu; u++) {
    uint32_t b = (uint32_t)u;
    float x;
    memcpy(&x, &b, 4);
    double err[2] = { ulps(lacc_expf(x), exp((double)x)), ulps(lacc_logf(x), log((double)x)) };
    for (int f = 0; f < 2; f++)
      if (err[f] > worst[f]) worst[f] = err[f], at[f] = b;
  }
  const char *name[2] = { "exp", "log" };
  int bad = 0;
  for (int f = 0; f < 2; f++) {
    float x;
    memcpy(&x, &at[f], 4);
    printf("%s: at most %.3f ulp (at %a)\n", name[f], worst[f], x);
    bad |= !(worst[f] <= 1.0);
  }
  return bad;
}
