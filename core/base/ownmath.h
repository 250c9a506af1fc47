/* ownmath.h: lacc's own f32 exp and log, as straight-line code a C compiler vectorises
 * (libm's expf and logf are calls that keep a loop scalar).
 *
 * Owns: the one source of these functions for every backend: the interpreter compiles it
 * (prim.c), and the C and OpenCL C preludes of kernels (emit_c.c) hold it as text
 * (the Makefile makes build/gen/ownmath.inc of this file), so that interp, cpu and
 * OpenCL CPU devices give the same bits. Cephes' polynomials; checked over every f32
 * input by make check-clmath: within 0.99 ulp (exp) and 0.83 ulp (log) of the exact
 * value, with subnormal results and arguments, infinities and NaN as C99 Annex F says.
 * Built without floating-point contraction (an fma would change the bits).
 * Must not: use anything but bit casts (OpenCL C's as_float and as_int, else memcpy from
 * string.h, which the includer includes), INFINITY and NAN, which both dialects have.
 */
#ifndef LACC_OWNMATH_H
#define LACC_OWNMATH_H

#ifdef __OPENCL_VERSION__
#define lacc_as_float as_float
#define lacc_as_int as_int
#else
static inline float lacc_as_float(int i) {
  float f;
  memcpy(&f, &i, 4);
  return f;
}
static inline int lacc_as_int(float f) {
  int i;
  memcpy(&i, &f, 4);
  return i;
}
#endif

static inline float lacc_expf(float x) {
  float c = x != x ? 0.0f : x;
  c = c < -104.0f ? -104.0f : c;
  c = c > 89.0f ? 89.0f : c;
  float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  /* 2^n in two factors: each a normal float for n down to -150 (subnormal results are
   * rounded once, by the last product) */
  int k = (int)n, h = k >> 1;
  float e = p * lacc_as_float((h + 127) << 23) * lacc_as_float((k - h + 127) << 23);
  return x != x ? x : e;
}

static inline float lacc_logf(float x) {
  /* every choice between two computed values: a C compiler that keeps floating-point
   * exceptions (gcc's default) vectorises no branch whose arm computes */
  int sub = x < 1.17549435e-38f;
  float scaled = x * 16777216.0f;
  int b = lacc_as_int(sub ? scaled : x);
  int e = ((b >> 23) & 0xff) - 126 - (sub ? 24 : 0);
  float m = lacc_as_float((b & 0x007fffff) | 0x3f000000);
  int lo = m < 0.707106781186547524f;
  float twice = m + m - 1.0f, once = m - 1.0f;
  e = lo ? e - 1 : e;
  m = lo ? twice : once;
  float z = m * m, y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  float f = (float)e;
  y = y * z * m + f * -2.12194440e-4f - 0.5f * z;
  float r = m + y + f * 0.693359375f;
  r = x == 0.0f ? -INFINITY : r;
  r = x < 0.0f ? NAN : r;
  r = x == INFINITY ? x : r;
  return x != x ? x : r;
}

#endif
