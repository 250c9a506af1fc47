/* ownmath.h: lacc's own exp, exp2, log, log2, log10, log1p, expm1, sinh, cosh, tanh, sin,
 * cos, tan, atan, atan2 and pow, f32 and f64, as straight-line code a C compiler vectorises
 * (libm's are calls that keep a loop scalar).
 *
 * Owns: the one source of these functions for every backend: the interpreter compiles it
 * (prim.c), and the C and OpenCL C preludes of kernels (emit_c.c) hold it as text
 * (the Makefile makes build/gen/ownmath.inc of this file), so that interp, cpu and
 * OpenCL CPU devices give the same bits. Checked by make check-clmath (every f32 input of the
 * unary f32 functions, large samples of the rest): each within 1 ulp of the exact value,
 * with subnormal results and arguments, infinities and NaN as C99 Annex F says.
 * Built without floating-point contraction (an fma would change the bits); where a
 * function wants a product's exact error it calls fma itself.
 * Must not: use anything but bit casts (OpenCL C's as_float, as_int, as_double and as_long,
 * else memcpy from string.h, which the includer includes), int64_t (stdint.h there, the
 * OpenCL prelude's typedef), INFINITY, NAN, fma and floor, which both dialects have; a
 * branch or a choice nested among more than two computed values (gcc then vectorises no
 * loop that calls the function); identifiers OpenCL C reserves (half, ...).
 */
#ifndef LACC_OWNMATH_H
#define LACC_OWNMATH_H

/* inlined whatever the size: gcc's limits left sin's reduction a call, and the loop scalar */
#if defined(__GNUC__) || defined(__clang__)
#define LACC_MATH static inline __attribute__((always_inline))
#else
#define LACC_MATH static inline
#endif

#ifdef __OPENCL_VERSION__
#define lacc_as_float as_float
#define lacc_as_int as_int
#ifdef LACC_FP64
#define lacc_as_double as_double
#define lacc_as_long as_long
#endif
#else
LACC_MATH double lacc_as_double(int64_t i) {
  double d;
  memcpy(&d, &i, 8);
  return d;
}
LACC_MATH int64_t lacc_as_long(double d) {
  int64_t i;
  memcpy(&i, &d, 8);
  return i;
}
LACC_MATH float lacc_as_float(int i) {
  float f;
  memcpy(&f, &i, 4);
  return f;
}
LACC_MATH int lacc_as_int(float f) {
  int i;
  memcpy(&i, &f, 4);
  return i;
}
#endif

LACC_MATH float lacc_expf(float x) {
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

LACC_MATH float lacc_logf(float x) {
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
LACC_MATH double lacc_expm1_small(double t) {
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
LACC_MATH double lacc_pow2_d(double n) {
  uint64_t b = (uint64_t)lacc_as_long(n + 6755399441056767.0);   /* 1.5 * 2^52 + 1023 */
  return lacc_as_double((int64_t)(b << 52));
}

/* x rounded to a whole number, ties to even, for |x| < 2^51 */
LACC_MATH double lacc_round_d(double x) { return (x + 6755399441055744.0) - 6755399441055744.0; }

/* |x| by its bits (no libm call where the includer builds without builtins) */
LACC_MATH double lacc_abs_d(double x) { return lacc_as_double(lacc_as_long(x) & 0x7fffffffffffffffL); }

/* y 2^n for a whole n in [-1076, 1024]: two factors, each a normal double, so that a
 * subnormal result is rounded once (by the second product) */
LACC_MATH double lacc_scale_2n(double y, double n) {
  double h = lacc_round_d(n * 0.5);
  return y * lacc_pow2_d(h) * lacc_pow2_d(n - h);
}

/* e^x for |x| <= 110: x = n ln2 + t (ln2 in two parts: n ln2's high part exact), e^t * 2^n */
LACC_MATH double lacc_exp_d(double x) {
  double n = lacc_round_d(x * 1.4426950408889634);
  double t = (x - n * 0.693147180369123816490) - n * 1.90821492927058770002e-10;
  return (1.0 + lacc_expm1_small(t)) * lacc_pow2_d(n);
}

/* e^x - 1 for |x| <= 110 (the test on |x|: gcc vectorised no loop of a clamped x tested on
 * both sides) */
LACC_MATH double lacc_expm1_d(double x) {
  double small = lacc_expm1_small(x), large = lacc_exp_d(x) - 1.0;
  double a = x < 0.0 ? -x : x;
  return a < 0.35 ? small : large;
}

/* (atanh s - s - s^3 / 3) / s^5 to s^19, z = s^2 */
LACC_MATH double lacc_atanh_tail(double z) {
  double p = 1.0 / 19.0;
  p = p * z + 1.0 / 17.0;
  p = p * z + 1.0 / 15.0;
  p = p * z + 1.0 / 13.0;
  p = p * z + 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z + 1.0 / 7.0;
  return p * z + 1.0 / 5.0;
}

/* log u for a positive normal u: u = m 2^e, m in [sqrt(1/2), sqrt(2)) */
LACC_MATH double lacc_log_d(double u) {
  int64_t b = lacc_as_long(u);
  double e = (double)((b >> 52) - 1023);
  double m = lacc_as_double((b & 0x000fffffffffffffL) | 0x3ff0000000000000L);
  int hi = m > 1.4142135623730951;
  m = hi ? m * 0.5 : m;
  e = hi ? e + 1.0 : e;
  double s = (m - 1.0) / (m + 1.0), z = s * s;
  double p = lacc_atanh_tail(z) * z + 1.0 / 3.0;
  return e * 0.6931471805599453 + (2.0 * s + 2.0 * s * (z * p));
}

/* log x / log b, scale = 1 / log b: the ends of a logarithm of f32 x per C99 Annex F */
LACC_MATH float lacc_logb_f(float x, double scale) {
  double d = (double)x;
  float r = (float)(lacc_log_d(d > 0.0 ? d : 1.0) * scale);
  r = x == 0.0f ? -INFINITY : r;
  r = x < 0.0f ? NAN : r;
  r = x == INFINITY ? x : r;
  return x != x ? x : r;
}

LACC_MATH float lacc_log2f(float x) { return lacc_logb_f(x, 1.4426950408889634); }
LACC_MATH float lacc_log10f(float x) { return lacc_logb_f(x, 0.43429448190325182); }

LACC_MATH float lacc_log1pf(float x) {
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

LACC_MATH float lacc_expm1f(float x) {
  double d = (double)x;
  d = d > 100.0 ? 100.0 : d < -100.0 ? -100.0 : d;
  float r = (float)lacc_expm1_d(d);
  r = x == 0.0f ? x : r;
  return x != x ? x : r;
}

LACC_MATH float lacc_sinhf(float x) {
  double a = (double)x;
  a = a < 0.0 ? -a : a;
  a = a > 100.0 ? 100.0 : a;
  double e = lacc_expm1_d(a), v = 0.5 * (e + e / (e + 1.0));
  float r = (float)(x < 0.0f ? -v : v);
  r = x == 0.0f ? x : r;
  return x != x ? x : r;
}

LACC_MATH float lacc_coshf(float x) {
  double a = (double)x;
  a = a < 0.0 ? -a : a;
  a = a > 100.0 ? 100.0 : a;
  double e = lacc_exp_d(a);
  float r = (float)(0.5 * (e + 1.0 / e));
  return x != x ? x : r;
}

LACC_MATH float lacc_tanhf(float x) {
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
 * start up to 25 bits before the point), as far as f64's largest arguments need (1,250 bits) */
#ifdef __OPENCL_VERSION__
__constant uint32_t lacc_two_over_pi[41] = {
#else
static const uint32_t lacc_two_over_pi[41] = {
#endif
  0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
  0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu,
  0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu,
  0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u,
  0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u,
  0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du,
};

/* Word j of the 128 bits of 2 / pi from bit `base` of the table (bit 0: word 0's top bit). */
LACC_MATH uint64_t lacc_two_over_pi_word(int base, int j) {
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
LACC_MATH double lacc_reduce_f(float x, int *q) {
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

/* Taylor's series of sin and cos from r^13 and r^14 down (Horner in z = r^2, p the higher
 * terms so far): (sin r - r) / r^3 and (cos r - 1 + r^2 / 2) / r^4 */
LACC_MATH double lacc_sin_tail(double z, double p) {
  p = p * z + 1.0 / 6227020800.0;
  p = p * z - 1.0 / 39916800.0;
  p = p * z + 1.0 / 362880.0;
  p = p * z - 1.0 / 5040.0;
  p = p * z + 1.0 / 120.0;
  return p * z - 1.0 / 6.0;
}
LACC_MATH double lacc_cos_tail(double z, double p) {
  p = p * z - 1.0 / 87178291200.0;
  p = p * z + 1.0 / 479001600.0;
  p = p * z - 1.0 / 3628800.0;
  p = p * z + 1.0 / 40320.0;
  p = p * z - 1.0 / 720.0;
  return p * z + 1.0 / 24.0;
}

/* sin r and cos r for |r| <= pi/4: Taylor to r^15 and r^16 (within 5e-17) */
LACC_MATH double lacc_sin_d(double r) {
  double z = r * r, p = lacc_sin_tail(z, -1.0 / 1307674368000.0);
  return r + r * (z * p);
}
LACC_MATH double lacc_cos_d(double r) {
  double z = r * r, p = lacc_cos_tail(z, 1.0 / 20922789888000.0) * z - 0.5;
  return 1.0 + z * p;
}

/* |x| reduced: r in [-pi/4, pi/4] and the quadrant q, x = r + q pi/2 (mod 2 pi) */
LACC_MATH double lacc_trig_arg(float x, int *q) {
  float a = lacc_as_float(lacc_as_int(x) & 0x7fffffff);
  int k;
  double r = lacc_reduce_f(a, &k);
  int small = (double)a < 0.78539816339744831;
  *q = small ? 0 : k;
  return small ? (double)a : r;
}

LACC_MATH float lacc_sinf(float x) {
  int q;
  double r = lacc_trig_arg(x, &q), s = lacc_sin_d(r), c = lacc_cos_d(r);
  double v = (q & 1) ? c : s;
  v = (q & 2) ? -v : v;
  float y = (float)(x < 0.0f ? -v : v);
  y = x == 0.0f ? x : y;
  return x - x != 0.0f ? NAN : y;   /* infinities and NaN */
}

LACC_MATH float lacc_cosf(float x) {
  int q;
  double r = lacc_trig_arg(x, &q), s = lacc_sin_d(r), c = lacc_cos_d(r);
  double v = (q & 1) ? s : c;
  float y = (float)(((q + 1) & 2) ? -v : v);
  return x - x != 0.0f ? NAN : y;
}

LACC_MATH float lacc_tanf(float x) {
  int q;
  double r = lacc_trig_arg(x, &q), s = lacc_sin_d(r), c = lacc_cos_d(r);
  double v = (q & 1) ? -c / s : s / c;
  float y = (float)(x < 0.0f ? -v : v);
  y = x == 0.0f ? x : y;
  return x - x != 0.0f ? NAN : y;
}

/* ---- f64 exp, log, log2, log10, log1p, expm1, sinh, cosh, tanh, atan, atan2 and pow, and
 * the f32 atan, atan2 and pow computed with them
 *
 * Each within 1 ulp of the exact value (make check-clmath: large samples of every binade and
 * the edges, against long double): the classic reductions (x = n ln2 + r with ln2 in two
 * parts, x = 2^k (1 + f), atan's five intervals), Remez polynomials of the published fdlibm
 * fits, and where a last rounding would leave more than 1 ulp the value carried as a sum of
 * two doubles (fma gives a product's exact error: one instruction where the CPU has it, and
 * libm's or the device's correctly rounded fma elsewhere, so the bits are the same). */

/* r = x - n ln2 (n whole, |r| <= ln2 / 2 or a little more) as r + *c (ln2 in two parts: n
 * times the high one, which has 32 zero bits, exact), for |x| <= 746 */
LACC_MATH double lacc_exp_reduce(double x, double *n, double *c) {
  double k = lacc_round_d(x * 1.4426950408889634);
  double hi = x - k * 6.93147180369123816490e-01, lo = k * 1.90821492927058770002e-10;
  double r = hi - lo;
  *n = k;
  *c = (hi - r) - lo;
  return r;
}

/* e^x for every x: 2^n e^r, e^r by fdlibm's rational form (below 1 ulp), 2^n in two factors
 * so that a subnormal result is rounded once */
LACC_MATH double lacc_exp(double x) {
  double cx = x != x ? 0.0 : x;
  cx = cx < -746.0 ? -746.0 : cx;
  cx = cx > 710.0 ? 710.0 : cx;
  double n = lacc_round_d(cx * 1.4426950408889634);
  double hi = cx - n * 6.93147180369123816490e-01, lo = n * 1.90821492927058770002e-10;
  double r = hi - lo;
  double z = r * r;
  double p = 4.13813679705723846039e-08;
  p = p * z - 1.65339022054652515390e-06;
  p = p * z + 6.61375632143793436117e-05;
  p = p * z - 2.77777777770155933842e-03;
  p = p * z + 1.66666666666666019037e-01;
  double t = r - z * p;
  double y = 1.0 - ((lo - (r * t) / (2.0 - t)) - hi);
  return x != x ? x : lacc_scale_2n(y, n);
}

/* sc e^(r + c) - m as hi + *lo (|*lo| at most half of hi's last place), for |r| <= 0.35, c a
 * few units of r's last place, sc a power of 2: sc (1 + r + r^2 q(r)) + sc c (1 + r), the
 * first sum and the renormalisation exact (Knuth's two-sum) */
LACC_MATH double lacc_exp_core(double r, double c, double sc, double m, double *lo) {
  double q = 1.0 / 87178291200.0;   /* (e^r - 1 - r) / r^2 to r^14 */
  q = q * r + 1.0 / 6227020800.0;
  q = q * r + 1.0 / 479001600.0;
  q = q * r + 1.0 / 39916800.0;
  q = q * r + 1.0 / 3628800.0;
  q = q * r + 1.0 / 362880.0;
  q = q * r + 1.0 / 40320.0;
  q = q * r + 1.0 / 5040.0;
  q = q * r + 1.0 / 720.0;
  q = q * r + 1.0 / 120.0;
  q = q * r + 1.0 / 24.0;
  q = q * r + 1.0 / 6.0;
  q = q * r + 0.5;
  double a = sc - m, ab = a - sc;   /* 2^53 - 1/2 is not a double: its error kept */
  double ea = (sc - (a - ab)) + (-m - ab);
  double b = sc * r, s = a + b, bb = s - a;
  double l = ((a - (s - bb)) + (b - bb)) + (ea + sc * (r * r * q + c * (1.0 + r)));
  double h = s + l, hb = h - s;
  *lo = (s - (h - hb)) + (l - hb);
  return h;
}

/* e^x 2^-j - m as hi + *lo, for x in [-40, 711] and 2^(n - j) a normal double */
LACC_MATH double lacc_exp_hilo(double x, double j, double m, double *lo) {
  double n, c;
  double r = lacc_exp_reduce(x, &n, &c);
  return lacc_exp_core(r, c, lacc_pow2_d(n - j), m, lo);
}

/* 2^x: 2^n 2^f, n = round(x), |f| <= 1/2, 2^f = e^(f ln2) with f ln2 a sum of two doubles
 * (fma), the result rounded once and scaled as exp's (whole x exact) */
LACC_MATH double lacc_exp2(double x) {
  double cx = x != x ? 0.0 : x;
  cx = cx < -1080.0 ? -1080.0 : cx;
  cx = cx > 1025.0 ? 1025.0 : cx;
  double n = lacc_round_d(cx);
  double f = cx - n;   /* exact */
  double th = f * 0.6931471805599453;
  double tl = fma(f, 0.6931471805599453, -th) + f * 2.3190468138462996e-17;
  double lo, hi = lacc_exp_core(th, tl, 1.0, 0.0, &lo);
  return x != x ? x : lacc_scale_2n(hi + lo, n);
}

LACC_MATH double lacc_expm1(double x) {
  double cx = x != x ? 0.0 : x;
  cx = cx < -40.0 ? -40.0 : cx;
  cx = cx > 710.0 ? 710.0 : cx;
  double lo, hi = lacc_exp_hilo(cx, 1.0, 0.5, &lo);
  double e = 2.0 * (hi + lo);
  e = (x < 0x1p-54) & (x > -0x1p-54) ? x : e;   /* x + x^2/2 rounds to x (and keeps -0) */
  return x != x ? x : e;
}

/* log x = k ln2 + log(1 + f) for a positive x, 1 + f in [sqrt(1/2), sqrt(2)); log(1 + f) =
 * f - f^2 / 2 + *s2, from fdlibm's series in s = f / (2 + f); *k and *f given back */
/* x = m 2^*k, m in [sqrt(1/2), sqrt(2)), for a positive finite x (subnormals too) */
LACC_MATH double lacc_log_reduce(double x, double *k) {
  int sub = x < 2.2250738585072014e-308;
  int64_t b = lacc_as_long(sub ? x * 18014398509481984.0 : x);   /* 2^54 */
  /* the exponent through a double's bits: an integer conversion kept gcc's AVX2 loops scalar */
  double e = lacc_as_double((int64_t)(((uint64_t)b >> 52) | 0x4330000000000000UL))
             - 4503599627371519.0 - (sub ? 54.0 : 0.0);   /* 2^52 + 1023 */
  double m = lacc_as_double((b & 0x000fffffffffffffL) | 0x3ff0000000000000L);
  int up = m > 1.4142135623730951;
  *k = up ? e + 1.0 : e;
  return up ? m * 0.5 : m;
}

LACC_MATH double lacc_log_core(double x, double *k, double *f, double *hfsq) {
  double e, m = lacc_log_reduce(x, &e);
  double fm = m - 1.0;   /* exact */
  double s = fm / (2.0 + fm), z = s * s, w = z * z;
  double t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  double t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01 +
                   w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  double h = 0.5 * fm * fm;
  *k = e;
  *f = fm;
  *hfsq = h;
  return s * (h + t1 + t2);
}

/* the ends of a logarithm per C99 Annex F (lg: the value for a positive finite x) */
LACC_MATH double lacc_log_ends(double x, double lg) {
  double r = x == 0.0 ? -INFINITY : lg;
  r = x < 0.0 ? NAN : r;
  r = x == INFINITY ? x : r;
  return x != x ? x : r;
}

LACC_MATH double lacc_log(double x) {
  double k, f, h;
  double s2 = lacc_log_core(x > 0.0 ? x : 1.0, &k, &f, &h);
  double lg = k * 6.93147180369123816490e-01 - ((h - (s2 + k * 1.90821492927058770002e-10)) - f);
  return lacc_log_ends(x, lg);
}

/* log(1 + f) as hi + *lo, hi with 21 significant bits, so that hi times a 32-bit constant
 * is exact */
LACC_MATH double lacc_log_split(double f, double h, double s2, double *lo) {
  double hi = lacc_as_double(lacc_as_long(f - h) & (int64_t)0xffffffff00000000UL);
  *lo = (f - hi) - h + s2;
  return hi;
}

LACC_MATH double lacc_log2(double x) {
  double k, f, h, lo;
  double s2 = lacc_log_core(x > 0.0 ? x : 1.0, &k, &f, &h);
  double hi = lacc_log_split(f, h, s2, &lo);
  double vhi = hi * 1.44269504072144627571e+00;
  double vlo = (lo + hi) * 1.6751713164886512e-10 + lo * 1.44269504072144627571e+00;
  double w = k + vhi;
  vlo += (k - w) + vhi;
  return lacc_log_ends(x, vlo + w);
}

LACC_MATH double lacc_log10(double x) {
  double k, f, h, lo;
  double s2 = lacc_log_core(x > 0.0 ? x : 1.0, &k, &f, &h);
  double hi = lacc_log_split(f, h, s2, &lo);
  double vhi = hi * 4.34294481878168880939e-01, y2 = k * 3.01029995663611771306e-01;
  double vlo = k * 3.694239077158931e-13 + (lo + hi) * 2.5082946711645275e-11 +
               lo * 4.34294481878168880939e-01;
  double w = y2 + vhi;
  vlo += (y2 - w) + vhi;
  return lacc_log_ends(x, vlo + w);
}

/* log(1 + x): the log of u = 1 + x, plus the part of x the sum rounded away, c / u */
LACC_MATH double lacc_log1p(double x) {
  double u = 1.0 + x;
  double c = u >= 2.0 ? 1.0 - (u - x) : x - (u - 1.0);
  c = c / (u > 0.0 ? u : 1.0);
  double k, f, h;
  double s2 = lacc_log_core(u > 0.0 ? u : 1.0, &k, &f, &h);
  double lg = k * 6.93147180369123816490e-01 -
              ((h - (s2 + (k * 1.90821492927058770002e-10 + c))) - f);
  lg = x == 0.0 ? x : lg;
  return lacc_log_ends(u, lg);   /* u: -1 gives -inf, below it NaN */
}

/* e^a / 4 = hi + *lo for a in [0, 710.6] (the largest finite sinh and cosh need e^a / 2
 * past the largest double) */
LACC_MATH double lacc_exp_quarter(double a, double *lo) {
  return lacc_exp_hilo(a, 2.0, 0.0, lo);
}

LACC_MATH double lacc_sinh(double x) {
  double a = lacc_abs_d(x);
  double z = a * a, p = 1.0 / 51090942171709440000.0;   /* sinh a = a + a^3 p(a^2), a < 1 */
  p = p * z + 1.0 / 121645100408832000.0;
  p = p * z + 1.0 / 355687428096000.0;
  p = p * z + 1.0 / 1307674368000.0;
  p = p * z + 1.0 / 6227020800.0;
  p = p * z + 1.0 / 39916800.0;
  p = p * z + 1.0 / 362880.0;
  p = p * z + 1.0 / 5040.0;
  p = p * z + 1.0 / 120.0;
  p = p * z + 1.0 / 6.0;
  double small = a + a * (z * p);
  double ca = a > 710.6 ? 710.6 : a, lo, q = lacc_exp_quarter(ca, &lo);
  double large = 2.0 * (q + (lo - 0.0625 / q));
  double v = a < 1.0 ? small : large;
  v = x < 0.0 ? -v : v;
  return (x == 0.0) | (x != x) ? x : v;
}

LACC_MATH double lacc_cosh(double x) {
  double a = lacc_abs_d(x);
  double z = a * a, p = 1.0 / 2432902008176640000.0;   /* cosh a = 1 + a^2 p(a^2), a < 1/2 */
  p = p * z + 1.0 / 6402373705728000.0;
  p = p * z + 1.0 / 20922789888000.0;
  p = p * z + 1.0 / 87178291200.0;
  p = p * z + 1.0 / 479001600.0;
  p = p * z + 1.0 / 3628800.0;
  p = p * z + 1.0 / 40320.0;
  p = p * z + 1.0 / 720.0;
  p = p * z + 1.0 / 24.0;
  p = p * z + 0.5;
  double small = 1.0 + z * p;
  double ca = a > 710.6 ? 710.6 : a, lo, q = lacc_exp_quarter(ca, &lo);
  double large = 2.0 * (q + (lo + 0.0625 / q));
  double v = a < 0.5 ? small : large;
  return x != x ? x : v;
}

/* tanh a = e / (e + 2), e = e^2a - 1 as a sum of two doubles, divided as one (the remainder
 * of the first quotient exact by fma) */
LACC_MATH double lacc_tanh(double x) {
  double a = lacc_abs_d(x);
  a = a > 22.0 ? 22.0 : a;
  double elo, ehi = lacc_exp_hilo(2.0 * a, 1.0, 0.5, &elo);
  double nh = 2.0 * ehi, nl = 2.0 * elo;
  double dh = nh + 2.0, bb = dh - nh;
  double dl = ((nh - (dh - bb)) + (2.0 - bb)) + nl;
  double q = nh / dh;
  double v = q + ((fma(-q, dh, nh) + nl) - q * dl) / dh;
  v = x < 0.0 ? -v : v;
  return (x == 0.0) | (x != x) ? x : v;
}

/* atan a for a >= 0 as *hi + lo (lo within 0.2 or so), da a correction to a (atan(a + da)
 * = atan a + da / (1 + a^2)): fdlibm's intervals: a itself below 7/16, else (a - c) / (1 +
 * c a) for c = 1/2, 1 or 3/2 (a - c exact), or -1 / a past 39/16 */
LACC_MATH double lacc_atan_parts(double a, double da, double *hi) {
  int i0 = a >= 0.4375, i1 = a >= 0.6875, i2 = a >= 1.1875, i3 = a >= 2.4375;
  /* one select at a time: gcc vectorised no loop of a nested choice among five constants */
  double c = i0 ? 0.5 : 0.0, h = i0 ? 4.63647609000806093515e-01 : 0.0;
  double l = i0 ? 2.2698777452961687e-17 : 0.0;
  c = i1 ? 1.0 : c;
  h = i1 ? 7.85398163397448278999e-01 : h;
  l = i1 ? 3.061616997868383e-17 : l;
  c = i2 ? 1.5 : c;
  h = i2 ? 9.82793723247329054082e-01 : h;
  l = i2 ? 1.3903311031230998e-17 : l;
  h = i3 ? 1.57079632679489655800e+00 : h;
  l = i3 ? 6.123233995736766e-17 : l;
  double num = i3 ? -1.0 : a - c, den = i3 ? a : 1.0 + c * a;
  double t = num / den;
  double z = t * t, w = z * z;
  double s1 = z * (3.33333333333329318027e-01 + w * (1.42857142725034663711e-01 +
              w * (9.09088713343650656196e-02 + w * (6.66107313738753120669e-02 +
              w * (4.97687799461593236017e-02 + w * 1.62858201153657823623e-02)))));
  double s2 = w * (-1.99999999998764832476e-01 + w * (-1.11111104054623557880e-01 +
              w * (-7.69187620504482999495e-02 + w * (-5.83357013379057348645e-02 +
              w * -3.65315727442169155270e-02))));
  double corr = da / (1.0 + a * a);
  *hi = h;
  return (t - (t * (s1 + s2) - (l + corr)));
}

LACC_MATH double lacc_atan(double x) {
  double a = lacc_abs_d(x);
  double hi, lo = lacc_atan_parts(a, 0.0, &hi);
  double v = hi + lo;
  v = x < 0.0 ? -v : v;
  return (x == 0.0) | (x != x) ? x : v;
}

/* atan2(y, x): atan of t = min / max of |y| and |x| (t's rounding error, from fma, goes in as
 * a correction), then pi/2 - that where |y| > |x| and pi - that where x < 0, each a
 * two-sum with pi's low part added, so the one rounding is the last; the signs and ends
 * per C99 Annex F */
LACC_MATH double lacc_atan2(double y, double x) {
  double ay = lacc_abs_d(y);
  double ax = lacc_abs_d(x);
  int swap = ay > ax;
  double u = swap ? ax : ay, v = swap ? ay : ax;
  int inf2 = u == INFINITY;   /* both infinite: t = 1 */
  double vv = v > 0.0 ? v : 1.0;
  double t = inf2 ? 1.0 : u / vv;
  /* the quotient's error: (u - t v) / v, with u and v scaled into range when v is large
   * (fma's remainder would overflow) */
  double sc = v > 1e300 ? 0x1p-600 : v < 1e-300 ? 0x1p600 : 1.0;
  double dt = inf2 | (v == INFINITY) ? 0.0 : fma(-t, vv * sc, u * sc) / (vv * sc);
  double hi, lo = lacc_atan_parts(t, dt, &hi);
  /* swapped: pi/2 - (hi + lo) */
  double ph = 1.5707963267948966, s = ph - hi, bb = s - ph;
  double err = (ph - (s - bb)) + (-hi - bb);
  double hi1 = swap ? s : hi, lo1 = swap ? (err + 6.123233995736766e-17) - lo : lo;
  int neg = lacc_as_long(x) < 0;   /* x < 0 or x = -0: pi - that */
  double pp = 3.141592653589793, s2 = pp - hi1, b2 = s2 - pp;
  double err2 = (pp - (s2 - b2)) + (-hi1 - b2);
  double hi2 = neg ? s2 : hi1, lo2 = neg ? (err2 + 1.2246467991473532e-16) - lo1 : lo1;
  double r = hi2 + lo2;
  r = (u == 0.0) & !swap ? (neg ? pp : 0.0) : r;   /* y = +-0: 0 or pi */
  r = lacc_as_long(y) < 0 ? -r : r;
  return (x != x) | (y != y) ? x + y : r;
}

/* ---- f64 sin, cos and tan
 *
 * |x| = n pi/2 + r, r in [-pi/4, pi/4] as a sum of two doubles: below 2^24 by pi/2 in three
 * parts (x - n p1 exact by fma, the rest two-sums), above by Payne and Hanek's method in
 * 32-bit limbs (192 bits of 2 / pi from the argument's exponent on: the fraction to 2^-126,
 * enough for the nearest a double comes to a multiple of pi/2, about 2^-61 of it); then
 * Taylor's series for sin r and cos r to r^19 and r^20 (within 2^-60), each kept as a sum of
 * two doubles so that tan's quotient is rounded once. */

/* v < 2^52 as a double, exactly (no integer conversion, which AVX2 lacks) */
LACC_MATH double lacc_u52(uint64_t v) {
  return lacc_as_double((int64_t)(v | 0x4330000000000000UL)) - 4503599627370496.0;   /* 2^52 */
}

/* |x| mod pi/2 for |x| >= 2^24 (finite): *rl, the quadrant in *q */
LACC_MATH double lacc_reduce_big(double a, double *rl, int *q) {
  int64_t b = lacc_as_long(a);
  /* a = M 2^E, E = exponent - 1075; from bit E - 1 of 2 / pi (table bit E + 30), earlier bits
   * giving multiples of 4; every lane computes this, reading inside the table */
  int t = (int)((b >> 52) & 0x7ff) - 1045;
  t = t < 0 ? 0 : t;
  uint64_t m = (uint64_t)(b & 0x000fffffffffffffL) | 0x0010000000000000UL;
  uint64_t m0 = m & 0xffffffffu, m1 = m >> 32;
  uint64_t w0 = lacc_two_over_pi_word(t, 0), w1 = lacc_two_over_pi_word(t, 1);
  uint64_t w2 = lacc_two_over_pi_word(t, 2), w3 = lacc_two_over_pi_word(t, 3);
  uint64_t w4 = lacc_two_over_pi_word(t, 4), w5 = lacc_two_over_pi_word(t, 5);
  /* M W = sum of m0 w_j 2^(32 (5 - j)) and m1 w_j 2^(32 (6 - j)), by 32-bit columns: bits 190
   * and 191 the quadrant, below them the fraction */
  uint64_t a0 = m0 * w0, a1 = m0 * w1, a2 = m0 * w2, a3 = m0 * w3, a4 = m0 * w4, a5 = m0 * w5;
  uint64_t b1 = m1 * w1, b2 = m1 * w2, b3 = m1 * w3, b4 = m1 * w4, b5 = m1 * w5;
  /* column 0 (a5's low half alone) carries nothing; column 1's carry reaches column 2 */
  uint64_t v1 = (a4 & 0xffffffffu) + (a5 >> 32) + (b5 & 0xffffffffu);
  uint64_t v2 = (v1 >> 32) + (a3 & 0xffffffffu) + (a4 >> 32) + (b4 & 0xffffffffu) + (b5 >> 32);
  uint64_t v3 = (v2 >> 32) + (a2 & 0xffffffffu) + (a3 >> 32) + (b3 & 0xffffffffu) + (b4 >> 32);
  uint64_t v4 = (v3 >> 32) + (a1 & 0xffffffffu) + (a2 >> 32) + (b2 & 0xffffffffu) + (b3 >> 32);
  uint64_t v5 = (v4 >> 32) + (a0 & 0xffffffffu) + (a1 >> 32) + (b1 & 0xffffffffu) + (b2 >> 32);
  uint64_t l2 = v2 & 0xffffffffu, l3 = v3 & 0xffffffffu, l4 = v4 & 0xffffffffu;
  uint64_t l5 = v5 & 0xffffffffu;
  uint64_t fh = ((l5 & 0x3fffffffu) << 34) | (l4 << 2) | (l3 >> 30);   /* 2^-1 .. 2^-64 */
  uint64_t fl = ((l3 & 0x3fffffffu) << 32) | l2;                       /* 2^-65 .. 2^-126 */
  int up = (int)(fh >> 63);   /* to the nearest quadrant: the fraction less 1 */
  *q = (int)(((l5 >> 30) + (uint64_t)up) & 3u);
  double top = lacc_u52(fh >> 12) * 0x1p-52;
  top = up ? top - 1.0 : top;
  double bot = lacc_u52(fh & 0xfffu) * 0x1p-64;
  double h = top + bot, hb = h - top, e = (top - (h - hb)) + (bot - hb);
  double l = e + (lacc_u52(fl >> 10) * 0x1p-116 + lacc_u52(fl & 0x3ffu) * 0x1p-126);
  double f = h + l, fe = l - (f - h);
  /* r = f pi/2 */
  double r = f * 1.5707963267948966;
  *rl = fma(f, 1.5707963267948966, -r) + (f * 6.123233995736766e-17 + fe * 1.5707963267948966);
  return r;
}

/* |x| = n pi/2 + r: r as the result + *rl, n mod 4 in *q (x finite) */
LACC_MATH double lacc_trig_reduce(double x, double *rl, int *q) {
  double a = lacc_abs_d(x);
  double n = lacc_round_d(a * 0.6366197723675814);
  double r1 = fma(-n, 1.5707963267948966, a);   /* exact below 2^24 */
  double th = n * 6.123233995736766e-17, tl = fma(n, 6.123233995736766e-17, -th);
  double s = r1 - th, sb = s - r1, e = (r1 - (s - sb)) + (-th - sb);
  double l = (e - tl) - n * -1.4973849048591698e-33;
  double r = s + l, rlo = l - (r - s);
  int k = (int)(((uint64_t)lacc_as_long(n + 6755399441055744.0)) & 3u);
  double bl;
  int bq;
  double br = lacc_reduce_big(a, &bl, &bq);
  int big = a >= 16777216.0;
  *q = big ? bq : k;
  *rl = big ? bl : rlo;
  return big ? br : r;
}

/* sin(r + rl) as the result + *lo, |r| <= pi/4 (rl a few units of r's last place) */
LACC_MATH double lacc_sin_dd(double r, double rl, double *lo) {
  double z = r * r, p = -1.0 / 121645100408832000.0;
  p = p * z + 1.0 / 355687428096000.0;
  p = lacc_sin_tail(z, p * z - 1.0 / 1307674368000.0);
  double t = r * (z * p);
  double h = r + t;
  *lo = (t - (h - r)) + rl * (1.0 - 0.5 * z);
  return h;
}

/* cos(r + rl) as the result + *lo, |r| <= pi/4 */
LACC_MATH double lacc_cos_dd(double r, double rl, double *lo) {
  double z = r * r, ze = fma(r, r, -z), hz = 0.5 * z;
  double q = 1.0 / 2432902008176640000.0;
  q = q * z - 1.0 / 6402373705728000.0;
  q = lacc_cos_tail(z, q * z + 1.0 / 20922789888000.0);
  double c1 = 1.0 - hz, e1 = (1.0 - c1) - hz;
  double l = e1 - 0.5 * ze + z * z * q - r * rl;
  double h = c1 + l;
  *lo = l - (h - c1);
  return h;
}

/* sin and cos of |x| mod pi/2, each a sum of two doubles; the quadrant returned (x finite
 * or not: infinities and NaN reduce 0) */
LACC_MATH int lacc_sincos(double x, double *sh, double *sl, double *ch, double *cl) {
  double rl;
  int q;
  double r = lacc_trig_reduce(x - x == 0.0 ? x : 0.0, &rl, &q);
  *sh = lacc_sin_dd(r, rl, sl);
  *ch = lacc_cos_dd(r, rl, cl);
  return q;
}

LACC_MATH double lacc_sin(double x) {
  double sh, sl, ch, cl;
  int q = lacc_sincos(x, &sh, &sl, &ch, &cl);
  double v = (q & 1) ? ch + cl : sh + sl;
  v = (q & 2) ? -v : v;
  v = x < 0.0 ? -v : v;
  v = x == 0.0 ? x : v;
  return x - x != 0.0 ? NAN : v;   /* infinities and NaN */
}

LACC_MATH double lacc_cos(double x) {
  double sh, sl, ch, cl;
  int q = lacc_sincos(x, &sh, &sl, &ch, &cl);
  double v = (q & 1) ? sh + sl : ch + cl;
  v = ((q + 1) & 2) ? -v : v;
  return x - x != 0.0 ? NAN : v;
}

/* tan: sin / cos (or -cos / sin in odd quadrants), divided as sums of two doubles */
LACC_MATH double lacc_tan(double x) {
  double sh, sl, ch, cl;
  int odd = lacc_sincos(x, &sh, &sl, &ch, &cl) & 1;
  double nh = odd ? ch : sh, nl = odd ? cl : sl, dh = odd ? sh : ch, dl = odd ? sl : cl;
  double t = nh / dh;
  double v = t + ((fma(-t, dh, nh) + nl) - t * dl) / dh;
  v = odd ? -v : v;
  v = x < 0.0 ? -v : v;
  v = x == 0.0 ? x : v;
  return x - x != 0.0 ? NAN : v;
}

LACC_MATH float lacc_exp2f(float x) { return (float)lacc_exp2((double)x); }
LACC_MATH float lacc_atanf(float x) { return (float)lacc_atan((double)x); }
LACC_MATH float lacc_atan2f(float y, float x) { return (float)lacc_atan2((double)y, (double)x); }

/* x^y for f32: e^(y log |x|) in f64 (within 2^-44 of the exact value before the rounding to
 * f32), the sign and ends per C99 Annex F */
LACC_MATH float lacc_powf(float x, float y) {
  double dx = (double)x, dy = (double)y;
  double ax = dx < 0.0 ? -dx : dx;
  /* the f32 functions' cheaper log and exp (f64 steps within a few units of 2^-53): |y log
   * |x|| past 110 over- or underflows f32 whatever the rest */
  double l = lacc_log_d((ax > 0.0) & (ax < INFINITY) ? ax : 1.0);
  l = ax == 0.0 ? -INFINITY : ax == INFINITY ? INFINITY : ax != ax ? ax : l;
  double p = dy * l;
  double m = lacc_exp_d(p != p ? 0.0 : p < -110.0 ? -110.0 : p > 110.0 ? 110.0 : p);
  m = p != p ? p : m;
  int whole = floor(dy) == dy;   /* infinities too */
  double hy = dy * 0.5;
  int odd = whole & (floor(hy) != hy);
  int neg = lacc_as_int(x) < 0;   /* x < 0 or x = -0 */
  double r = neg & odd ? -m : m;
  r = (x < 0.0f) & (x - x == 0.0f) & !whole ? NAN : r;
  r = ((ax == 1.0) & (dy - dy != 0.0) & (dy == dy)) | (x == 1.0f) | (y == 0.0f) ? 1.0 : r;
  return (float)r;
}

/* log x as hi + *lo within 2^-66 or so of the exact value (relative), for a positive finite
 * x: x = 2^k m, m in [sqrt(1/2), sqrt(2)), m = c (1 + s) / (1 - s) for c = 0.8 (a double), 1 or 5/4
 * (|s| <= 0.062), log m = log c + 2 atanh s, s = (m - c) / (m + c) as a sum of two doubles
 * (fma's remainder), 2 s^3 / 3 as one too, the rest of the series (to s^19) in doubles;
 * k ln2 in three parts (the first times k exact) and log c in two */
LACC_MATH double lacc_log_hilo(double x, double *lo) {
  double k, m = lacc_log_reduce(x, &k);
  int below = m < 0.8944271909999159, above = m >= 1.118033988749895;   /* 2/sqrt 5, sqrt 5/2 */
  double c = below ? 0.8 : 1.0;
  c = above ? 1.25 : c;
  /* the log of the double nearest 4/5 */
  double lch = below ? -0.2231435513142097 : 0.0, lcl = below ? 9.091270597324798e-18 : 0.0;
  lch = above ? 0.22314355131420976 : lch;
  lcl = above ? -9.091270597324799e-18 : lcl;
  double f = m - c;   /* exact */
  double d = m + c, dd = d - m, dl = (m - (d - dd)) + (c - dd);   /* m + c = d + dl */
  double sh = f / d;
  double sl = (fma(-sh, d, f) - sh * dl) / d;
  double z = sh * sh, ze = fma(sh, sh, -z);
  double s3 = z * sh, s3e = fma(z, sh, -s3) + ze * sh;   /* s^3 = s3 + s3e */
  double t3 = 0.6666666666666666 * s3;
  double t3e = fma(0.6666666666666666, s3, -t3) + (3.700743415417188e-17 * s3 + 0.6666666666666666 * s3e);
  double p = lacc_atanh_tail(z);
  double rest = 2.0 * sl + 2.0 * z * sl + 2.0 * (s3 * z) * p + t3e + lcl +
                k * 1.9082149292705877e-10 + k * 1.1612227229362532e-26;
  double a = k * 6.93147180369123816490e-01, bv = 2.0 * sh;   /* both exact */
  double h0 = a + lch, b0 = h0 - a, e0 = (a - (h0 - b0)) + (lch - b0);
  double h1 = h0 + bv, b1 = h1 - h0, e1 = (h0 - (h1 - b1)) + (bv - b1);
  double h2 = h1 + t3, b2 = h2 - h1, e2 = (h1 - (h2 - b2)) + (t3 - b2);
  double l = e0 + e1 + e2 + rest;
  double h = h2 + l, hb = h - h2;
  *lo = (h2 - (h - hb)) + (l - hb);
  return h;
}

/* x^y for f64: e^(y log |x|) with y log |x| a sum of two doubles, e^ of it as one, rounded
 * once and scaled by 2^n in two factors (a subnormal result rounded by the last product);
 * the sign and ends per C99 Annex F */
LACC_MATH double lacc_pow(double x, double y) {
  double ax = lacc_abs_d(x);
  double llo, lhi = lacc_log_hilo((ax > 0.0) & (ax < INFINITY) ? ax : 1.0, &llo);
  double ph = y * lhi;
  double pl = fma(y, lhi, -ph) + y * llo;
  /* past these it over- or underflows whatever the rest (pl, NaN or infinite there, left out) */
  double cp = ph != ph ? 0.0 : ph;
  cp = cp < -746.0 ? -746.0 : cp;
  cp = cp > 710.0 ? 710.0 : cp;
  pl = (ph > -746.0) & (ph < 710.0) ? pl : 0.0;
  double n = lacc_round_d(cp * 1.4426950408889634);
  double hi = cp - n * 6.93147180369123816490e-01;   /* exact */
  double lo = n * 1.90821492927058770002e-10 - pl;
  double r = hi - lo, c = (hi - r) - lo;
  double elo, ehi = lacc_exp_core(r, c, 1.0, 0.0, &elo);
  double mag = lacc_scale_2n(ehi + elo, n);
  /* the ends: log |x| of 0 and inf, then NaN from y log |x| */
  double lx = ax == 0.0 ? -INFINITY : INFINITY;
  double pe = y * lx;
  double emag = pe > 0.0 ? INFINITY : pe;
  emag = pe < 0.0 ? 0.0 : emag;
  mag = ph != ph ? ph : mag;
  mag = (ax == 0.0) | (ax == INFINITY) ? emag : mag;
  int whole = floor(y) == y;   /* infinities too */
  double hy = y * 0.5;
  int odd = whole & (floor(hy) != hy);
  int neg = lacc_as_long(x) < 0;   /* x < 0 or x = -0 */
  double v = neg & odd ? -mag : mag;
  v = (x < 0.0) & (x - x == 0.0) & !whole ? NAN : v;
  v = ((ax == 1.0) & (y - y != 0.0) & (y == y)) | (x == 1.0) | (y == 0.0) ? 1.0 : v;
  return (x != x) & (y != 0.0) ? x : v;
}

#endif

#endif
