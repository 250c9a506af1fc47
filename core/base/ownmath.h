/* ownmath.h: lacc's own f32 exp, log, log2, log10, log1p, expm1, sinh, cosh, tanh, sin, cos
 * and tan, as straight-line code a C compiler vectorises (libm's are calls that keep a loop
 * scalar).
 *
 * Owns: the one source of these functions for every backend: the interpreter compiles it
 * (prim.c), and the C and OpenCL C preludes of kernels (emit_c.c) hold it as text
 * (the Makefile makes build/gen/ownmath.inc of this file), so that interp, cpu and
 * OpenCL CPU devices give the same bits. Cephes' polynomials; checked over every f32
 * input by make check-clmath: within 0.99 ulp (exp) and 0.83 ulp (log) of the exact
 * value, with subnormal results and arguments, infinities and NaN as C99 Annex F says.
 * Built without floating-point contraction (an fma would change the bits).
 * Must not: use anything but bit casts (OpenCL C's as_float, as_int, as_double and as_long,
 * else memcpy from string.h, which the includer includes), int64_t (stdint.h there, the
 * OpenCL prelude's typedef), INFINITY and NAN, which both dialects have.
 */
#ifndef LACC_OWNMATH_H
#define LACC_OWNMATH_H

#ifdef __OPENCL_VERSION__
#define lacc_as_float as_float
#define lacc_as_int as_int
#ifdef LACC_FP64
#define lacc_as_double as_double
#define lacc_as_long as_long
#endif
#else
static inline double lacc_as_double(int64_t i) {
  double d;
  memcpy(&d, &i, 8);
  return d;
}
static inline int64_t lacc_as_long(double d) {
  int64_t i;
  memcpy(&i, &d, 8);
  return i;
}
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

/* ---- f32 functions computed in f64: log2, log10, log1p, expm1, sinh, cosh, tanh
 *
 * The 53 bits of f64 against the result's 24: each is within 1 ulp of the exact value once
 * rounded to f32 (0.5 ulp and the f64 steps' few units of 2^-53), by series that converge
 * on reduced arguments (Taylor's for e^t, |t| <= ln2 / 2, to t^11; 2 atanh(s) for log m, m
 * in [sqrt(1/2), sqrt(2)), |s| <= 0.172, to s^19), straight-line code a C compiler
 * vectorises. Checked over every f32 input by make check-clmath. OpenCL C devices without
 * f64 keep their built-ins. */
#if !defined(__OPENCL_VERSION__) || defined(LACC_FP64)

/* e^t - 1 for |t| <= 0.35 (relative error below 1e-14) */
static inline double lacc_expm1_small(double t) {
  double p = 1.0 / 39916800.0;
  p = p * t + 1.0 / 3628800.0;
  p = p * t + 1.0 / 362880.0;
  p = p * t + 1.0 / 40320.0;
  p = p * t + 1.0 / 5040.0;
  p = p * t + 1.0 / 720.0;
  p = p * t + 1.0 / 120.0;
  p = p * t + 1.0 / 24.0;
  p = p * t + 1.0 / 6.0;
  p = p * t + 0.5;
  return t + t * (t * p);
}

/* 2^n for a whole n in [-1022, 1023], from n + 1023 in the low bits of a sum's significand
 * (no conversion to an integer: with one, where a clamp bounds n, gcc kept the loop scalar) */
static inline double lacc_pow2_d(double n) {
  uint64_t b = (uint64_t)lacc_as_long(n + 6755399441056767.0);   /* 1.5 * 2^52 + 1023 */
  return lacc_as_double((int64_t)(b << 52));
}

/* e^x for |x| <= 110: x = n ln2 + t (ln2 in two parts: n ln2's high part exact), e^t * 2^n */
static inline double lacc_exp_d(double x) {
  double n = (x * 1.4426950408889634 + 6755399441055744.0) - 6755399441055744.0;
  double t = (x - n * 0.693147180369123816490) - n * 1.90821492927058770002e-10;
  return (1.0 + lacc_expm1_small(t)) * lacc_pow2_d(n);
}

/* e^x - 1 for |x| <= 110 (the test on |x|: gcc vectorised no loop of a clamped x tested on
 * both sides) */
static inline double lacc_expm1_d(double x) {
  double small = lacc_expm1_small(x), large = lacc_exp_d(x) - 1.0;
  double a = x < 0.0 ? -x : x;
  return a < 0.35 ? small : large;
}

/* log u for a positive normal u: u = m 2^e, m in [sqrt(1/2), sqrt(2)) */
static inline double lacc_log_d(double u) {
  int64_t b = lacc_as_long(u);
  double e = (double)((b >> 52) - 1023);
  double m = lacc_as_double((b & 0x000fffffffffffffL) | 0x3ff0000000000000L);
  int hi = m > 1.4142135623730951;
  m = hi ? m * 0.5 : m;
  e = hi ? e + 1.0 : e;
  double s = (m - 1.0) / (m + 1.0), z = s * s;
  double p = 1.0 / 19.0;
  p = p * z + 1.0 / 17.0;
  p = p * z + 1.0 / 15.0;
  p = p * z + 1.0 / 13.0;
  p = p * z + 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z + 1.0 / 7.0;
  p = p * z + 1.0 / 5.0;
  p = p * z + 1.0 / 3.0;
  return e * 0.6931471805599453 + (2.0 * s + 2.0 * s * (z * p));
}

/* log x / log b, scale = 1 / log b: the ends of a logarithm of f32 x per C99 Annex F */
static inline float lacc_logb_f(float x, double scale) {
  double d = (double)x;
  float r = (float)(lacc_log_d(d > 0.0 ? d : 1.0) * scale);
  r = x == 0.0f ? -INFINITY : r;
  r = x < 0.0f ? NAN : r;
  r = x == INFINITY ? x : r;
  return x != x ? x : r;
}

static inline float lacc_log2f(float x) { return lacc_logb_f(x, 1.4426950408889634); }
static inline float lacc_log10f(float x) { return lacc_logb_f(x, 0.43429448190325182); }

static inline float lacc_log1pf(float x) {
  double d = (double)x, u = 1.0 + d;
  /* 1 + x is exact in f64 for |x| >= 2^-29; below, log1p x = x - x^2 / 2 to 2^-58 */
  float tiny = (float)(d - 0.5 * d * d);
  float r = (float)lacc_log_d(u > 0.0 ? u : 1.0);
  r = d < 1.862645149230957e-09 && d > -1.862645149230957e-09 ? tiny : r;
  r = x == -1.0f ? -INFINITY : r;
  r = x < -1.0f ? NAN : r;
  r = x == INFINITY ? x : r;
  return x != x ? x : r;
}

static inline float lacc_expm1f(float x) {
  double d = (double)x;
  d = d > 100.0 ? 100.0 : d < -100.0 ? -100.0 : d;
  float r = (float)lacc_expm1_d(d);
  r = x == 0.0f ? x : r;
  return x != x ? x : r;
}

static inline float lacc_sinhf(float x) {
  double a = (double)x;
  a = a < 0.0 ? -a : a;
  a = a > 100.0 ? 100.0 : a;
  double e = lacc_expm1_d(a), v = 0.5 * (e + e / (e + 1.0));
  float r = (float)(x < 0.0f ? -v : v);
  r = x == 0.0f ? x : r;
  return x != x ? x : r;
}

static inline float lacc_coshf(float x) {
  double a = (double)x;
  a = a < 0.0 ? -a : a;
  a = a > 100.0 ? 100.0 : a;
  double e = lacc_exp_d(a);
  float r = (float)(0.5 * (e + 1.0 / e));
  return x != x ? x : r;
}

static inline float lacc_tanhf(float x) {
  double a = (double)x;
  a = a < 0.0 ? -a : a;
  a = a > 50.0 ? 50.0 : a;
  double e = lacc_expm1_d(2.0 * a), v = e / (e + 2.0);
  float r = (float)(x < 0.0f ? -v : v);
  r = x == 0.0f ? x : r;
  return x != x ? x : r;
}

/* ---- f32 sin, cos and tan, in f64 too */

/* the bits of 2 / pi after the binary point, behind a word of zeros (reduce_f's windows
 * start up to 25 bits before the point) */
#ifdef __OPENCL_VERSION__
__constant uint32_t lacc_two_over_pi[11] = {
#else
static const uint32_t lacc_two_over_pi[11] = {
#endif
  0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
  0xdebbc561u, 0xb7246e3au, 0x424dd2e0u,
};

/* Word j of the 128 bits of 2 / pi from bit `base` of the table (bit 0: word 0's top bit). */
static inline uint64_t lacc_two_over_pi_word(int base, int j) {
  int k = (base >> 5) + j;
  uint64_t pair = ((uint64_t)lacc_two_over_pi[k] << 32) | lacc_two_over_pi[k + 1];
  return (pair >> (32 - (base & 31))) & 0xffffffffu;
}

/* x mod pi/2 for a finite f32 x >= pi/4 (Payne and Hanek's reduction): x (2 / pi) = m 2^E
 * (2 / pi), m the 24-bit significand, is summed from the bits of 2 / pi that give its
 * value mod 4 (those before bit E - 1 give multiples of 4) in 128-bit fixed point: two
 * bits of quadrant, 64 of fraction; the fraction rounded to the nearest quadrant, times
 * pi/2 in f64 (r within 2^-60 of the exact value; the nearest an f32 comes to a multiple
 * of pi/2 is about 2^-30 of it); the quadrant in *q. */
static inline double lacc_reduce_f(float x, int *q) {
  int b = lacc_as_int(x);
  /* m 2^E, E = exponent - 150: from bit E - 1 of 2 / pi, table bit E + 30 (word 0 is
   * zeros); below pi/4 (every lane computes this; the caller takes x itself there) from
   * bit 0, so that no read is outside the table */
  int base = ((b >> 23) & 0xff) - 120;
  base = base < 0 ? 0 : base;
  uint64_t m = (uint64_t)((b & 0x7fffff) | 0x800000);
  uint64_t p0 = m * lacc_two_over_pi_word(base, 0), p1 = m * lacc_two_over_pi_word(base, 1);
  uint64_t p2 = m * lacc_two_over_pi_word(base, 2), p3 = m * lacc_two_over_pi_word(base, 3);
  uint64_t lo = p3 + (p2 << 32);
  uint64_t hi = (p2 >> 32) + p1 + (p0 << 32) + (lo < p3 ? 1u : 0u);
  uint64_t f = (hi << 2) | (lo >> 62);
  *q = (int)(((hi >> 62) + (f >> 63)) & 3u);
  return (double)(int64_t)f * 5.4210108624275222e-20 * 1.5707963267948966;
}

/* sin r and cos r for |r| <= pi/4: Taylor to r^15 and r^16 (within 5e-17) */
static inline double lacc_sin_d(double r) {
  double z = r * r, p = -1.0 / 1307674368000.0;
  p = p * z + 1.0 / 6227020800.0;
  p = p * z - 1.0 / 39916800.0;
  p = p * z + 1.0 / 362880.0;
  p = p * z - 1.0 / 5040.0;
  p = p * z + 1.0 / 120.0;
  p = p * z - 1.0 / 6.0;
  return r + r * (z * p);
}
static inline double lacc_cos_d(double r) {
  double z = r * r, p = 1.0 / 20922789888000.0;
  p = p * z - 1.0 / 87178291200.0;
  p = p * z + 1.0 / 479001600.0;
  p = p * z - 1.0 / 3628800.0;
  p = p * z + 1.0 / 40320.0;
  p = p * z - 1.0 / 720.0;
  p = p * z + 1.0 / 24.0;
  p = p * z - 0.5;
  return 1.0 + z * p;
}

/* |x| reduced: r in [-pi/4, pi/4] and the quadrant q, x = r + q pi/2 (mod 2 pi) */
static inline double lacc_trig_arg(float x, int *q) {
  float a = lacc_as_float(lacc_as_int(x) & 0x7fffffff);
  int k;
  double r = lacc_reduce_f(a, &k);
  int small = (double)a < 0.78539816339744831;
  *q = small ? 0 : k;
  return small ? (double)a : r;
}

static inline float lacc_sinf(float x) {
  int q;
  double r = lacc_trig_arg(x, &q), s = lacc_sin_d(r), c = lacc_cos_d(r);
  double v = (q & 1) ? c : s;
  v = (q & 2) ? -v : v;
  float y = (float)(x < 0.0f ? -v : v);
  y = x == 0.0f ? x : y;
  return x - x != 0.0f ? NAN : y;   /* infinities and NaN */
}

static inline float lacc_cosf(float x) {
  int q;
  double r = lacc_trig_arg(x, &q), s = lacc_sin_d(r), c = lacc_cos_d(r);
  double v = (q & 1) ? s : c;
  float y = (float)(((q + 1) & 2) ? -v : v);
  return x - x != 0.0f ? NAN : y;
}

static inline float lacc_tanf(float x) {
  int q;
  double r = lacc_trig_arg(x, &q), s = lacc_sin_d(r), c = lacc_cos_d(r);
  double v = (q & 1) ? -c / s : s / c;
  float y = (float)(x < 0.0f ? -v : v);
  y = x == 0.0f ? x : y;
  return x - x != 0.0f ? NAN : y;
}

#endif

#endif
