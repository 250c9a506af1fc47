/* emit_c.c: the kernel IR printed as C11 for the system compiler, or as OpenCL C 1.2.
 *
 * Owns: the spelling of every IR instruction in both dialects (they differ only in
 * function headers, atomics, bit casts, constants and failure reports), and preludes of
 * small helpers that give each primitive exactly prim.c's meaning (wrapping integers,
 * total division, Lua's float modulo, saturating float->int casts) without undefined
 * behaviour.
 * Must not: decide anything about the program: it prints what lower.c built.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "kir/kir.h"
#include "kir/kabi.h"
#include "base/text.h"

typedef struct {
  text t;
  int cl;              /* printing OpenCL C (opencl/launch.c runs it), else C (cpu/launch.c) */
  signed char *counts; /* per variable of the function printed: its constant shift count */
  int *kslot;          /* per variable: the plan's constant that defines it, or -1 */
  const kplan *P;      /* the plan printed */
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  text_vput(&b->t, fmt, ap);
  va_end(ap);
}

static const char *ctype(scalar_kind k) {
  static const char *const names[S_NSCALAR] = {
    "uint8_t", "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t", "float", "double"
  };
  return names[k];
}

/* The unsigned type integer arithmetic wraps in (never int, so never overflow UB). */
static const char *wtype(scalar_kind k) { return scalar_bits(k) > 32 ? "uint64_t" : "uint32_t"; }

static const char *utype(scalar_kind k) {
  switch (scalar_bits(k)) {
  case 8: return "uint8_t";
  case 16: return "uint16_t";
  case 32: return "uint32_t";
  default: return "uint64_t";
  }
}

/* Helpers both dialects share (OpenCL C spells the types through typedefs and macros). */
static const char *const helpers =
  "static inline uint64_t lacc_ipow(uint64_t x, uint64_t n, int neg) {\n"
  "  if (neg) return x == 1 ? 1 : x == UINT64_MAX ? ((n & 1) ? UINT64_MAX : 1) : 0;\n"
  "  uint64_t r = 1;\n  for (; n != 0; n >>= 1) {\n    if (n & 1) r *= x;\n    x *= x;\n  }\n"
  "  return r;\n}\n"
  "static inline int64_t lacc_sfdiv(int64_t x, int64_t y) {\n"
  "  if (y == -1) return (int64_t)(0 - (uint64_t)x);\n"
  "  int64_t q = x / y;\n  if (x % y != 0 && ((x < 0) != (y < 0))) q--;\n  return q;\n}\n"
  "static inline int64_t lacc_sfmod(int64_t x, int64_t y) {\n"
  "  if (y == -1) return 0;\n"
  "  int64_t r = x % y;\n  if (r != 0 && ((r < 0) != (y < 0))) r += y;\n  return r;\n}\n"
  "static inline double lacc_fmod(double a, double b) {\n"
  "  double m = fmod(a, b);\n  if (m != 0 && (m < 0) != (b < 0)) m += b;\n  return m;\n}\n"
  "static inline float lacc_fmodf(float a, float b) {\n"
  "  float m = fmodf(a, b);\n  if (m != 0 && (m < 0) != (b < 0)) m += b;\n  return m;\n}\n"
  "static inline double lacc_signum(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }\n"
  "static inline int64_t lacc_f2i(double d, int64_t lo, int64_t hi) {\n"
  "  if (isnan(d)) return 0;\n"
  "  int64_t v = d >= 9223372036854775807.0 ? INT64_MAX\n"
  "            : d <= -9223372036854775808.0 ? INT64_MIN : (int64_t)d;\n"
  "  return v > hi ? hi : v < lo ? lo : v;\n}\n"
  "static inline uint64_t lacc_f2u(double d, uint64_t hi) {\n"
  "  if (isnan(d) || d <= 0) return 0;\n"
  "  uint64_t v = d >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)d;\n"
  "  return v > hi ? hi : v;\n}\n";

/* lacc's own math (base/ownmath.h, as text: build/gen/ownmath.inc), which the C compiler
 * vectorises; the interpreter runs the same code. */
static const char *const own_math =
#include "ownmath.inc"
  ;
static const char *const own_math_names =
  "#undef expf\n#undef logf\n#define expf lacc_expf\n#define logf lacc_logf\n"
  "#if !defined(__OPENCL_VERSION__) || defined(LACC_FP64)\n"
  "#undef log2f\n#undef log10f\n#undef log1pf\n#undef expm1f\n#undef sinhf\n#undef coshf\n"
  "#undef tanhf\n#undef sinf\n#undef cosf\n#undef tanf\n#undef atanf\n#undef atan2f\n"
  "#undef powf\n#undef exp2f\n#define exp2f lacc_exp2f\n#define log2f lacc_log2f\n"
  "#define log10f lacc_log10f\n#define sinf lacc_sinf\n#define cosf lacc_cosf\n#define tanf lacc_tanf\n"
  "#define log1pf lacc_log1pf\n#define expm1f lacc_expm1f\n#define sinhf lacc_sinhf\n"
  "#define coshf lacc_coshf\n#define tanhf lacc_tanhf\n#define atanf lacc_atanf\n"
  "#define atan2f lacc_atan2f\n#define powf lacc_powf\n"
  "#undef exp\n#undef log\n#undef log2\n#undef log10\n#undef log1p\n#undef expm1\n"
  "#undef sinh\n#undef cosh\n#undef tanh\n#undef atan\n#undef atan2\n#undef pow\n"
  "#undef sin\n#undef cos\n#undef tan\n#define sin lacc_sin\n#define cos lacc_cos\n#define tan lacc_tan\n"
  "#undef exp2\n#define exp2 lacc_exp2\n"
  "#define exp lacc_exp\n#define log lacc_log\n#define log2 lacc_log2\n#define log10 lacc_log10\n"
  "#define log1p lacc_log1p\n#define expm1 lacc_expm1\n#define sinh lacc_sinh\n"
  "#define cosh lacc_cosh\n#define tanh lacc_tanh\n#define atan lacc_atan\n"
  "#define atan2 lacc_atan2\n#define pow lacc_pow\n#endif\n";

static const char *const prelude =
  "#include <stdint.h>\n#include <string.h>\n#include <math.h>\n"
  LACC_KABI_SOURCE
  "static inline uint64_t lacc_bits_f32(float x) { uint32_t b; memcpy(&b, &x, 4); return b; }\n"
  "static inline uint64_t lacc_bits_f64(double x) { uint64_t b; memcpy(&b, &x, 8); return b; }\n"
  "static inline float lacc_f32_bits(uint64_t x) { uint32_t b = (uint32_t)x; float f;"
  " memcpy(&f, &b, 4); return f; }\n"
  "static inline double lacc_f64_bits(uint64_t x) { double f; memcpy(&f, &x, 8); return f; }\n"
  /* a failure report through a cold function: gcc then takes every path to one as
   * unlikely. Without it, the guesses of a function of many checks (a gradient's tile:
   * 28,000 lines, shapes checked first) left its hot loop so rare that gcc optimised it
   * for size: its lanes in memory, not vectorised, 2.8x slower */
  "#if defined(__GNUC__) && !defined(__TINYC__)\n"
  "__attribute__((cold, noinline))\n"
  "#endif\n"
  "static void lacc_failed(lacc_krt *rt, int64_t key, int check, const int64_t *vals, int n) {\n"
  "  rt->fail(rt, key, check, vals, n);\n}\n"
  /* tcc (the cpu backend's fast tier) has no atomic builtins: its build of a parallel
   * permute's scatter is plain code the executor never runs (cpu/code.c: atomics) */
  "#ifdef __TINYC__\n"
  "#define LACC_ALOAD(p) (*(p))\n"
  "#define LACC_CAS(p, e, d) (*(p) == *(e) ? (*(p) = (d), 1) : (*(e) = *(p), 0))\n"
  "#else\n"
  "#define LACC_ALOAD(p) __atomic_load_n(p, __ATOMIC_RELAXED)\n"
  "#define LACC_CAS(p, e, d) __atomic_compare_exchange_n(p, e, d, 0, __ATOMIC_RELAXED, "
  "__ATOMIC_RELAXED)\n"
  "#endif\n";

/* OpenCL C: the C prelude's types and helpers, spelled for OpenCL C 1.2. Programs that
 * use f64 are only run on devices with cl_khr_fp64 (LACC_FP64); on others the helpers'
 * double arithmetic is float. 64-bit atomics need LACC_I64_ATOMICS; without it the
 * executor never launches a kernel that uses them. */
static const char *const cl_prelude =
  "#ifdef LACC_CONTRACT\n#pragma OPENCL FP_CONTRACT ON\n#else\n#pragma OPENCL FP_CONTRACT OFF\n#endif\n"
  "#ifdef LACC_FP64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#else\n#define double float\n#endif\n"
  "#ifdef LACC_I64_ATOMICS\n#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
  "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n#endif\n"
  "typedef char int8_t; typedef uchar uint8_t; typedef short int16_t; typedef ushort uint16_t;\n"
  "typedef int int32_t; typedef uint uint32_t; typedef long int64_t; typedef ulong uint64_t;\n"
  "#define INT64_C(x) (x##L)\n#define UINT64_C(x) (x##UL)\n"
  "#define INT64_MAX LONG_MAX\n#define INT64_MIN LONG_MIN\n#define UINT64_MAX ULONG_MAX\n"
  "#define sqrtf sqrt\n#define expf exp\n#define logf log\n#define sinf sin\n#define cosf cos\n"
  "#define tanf tan\n#define asinf asin\n#define acosf acos\n#define atanf atan\n"
  "#define atan2f atan2\n#define powf pow\n#define fabsf fabs\n#define floorf floor\n"
  "#define ceilf ceil\n#define roundf round\n#define truncf trunc\n#define fmodf fmod\n"
  "#define sinhf sinh\n#define coshf cosh\n#define tanhf tanh\n#define asinhf asinh\n"
  "#define acoshf acosh\n#define atanhf atanh\n#define log2f log2\n#define log10f log10\n"
  "#define log1pf log1p\n#define expm1f expm1\n#define cbrtf cbrt\n#define hypotf hypot\n"
  "#define rintf rint\n#define fmaf fma\n#define exp2f exp2\n"
  /* a branch hint (KO_IF's expect) where the compiler is clang's or gcc's, as on PoCL
   * and most GPU drivers; elsewhere the plain test */
  "#if defined(__clang__) || defined(__GNUC__)\n#define LACC_EXPECT(c, v) __builtin_expect((c), (v))\n"
  "#else\n#define LACC_EXPECT(c, v) (c)\n#endif\n"
  "static inline uint64_t lacc_bits_f32(float x) { return as_uint(x); }\n"
  "static inline float lacc_f32_bits(uint64_t x) { return as_float((uint)x); }\n"
  "#ifdef LACC_FP64\n"
  "static inline uint64_t lacc_bits_f64(double x) { return as_ulong(x); }\n"
  "static inline double lacc_f64_bits(uint64_t x) { return as_double(x); }\n"
  "#endif\n"
  /* compare-and-swap on the bits of an element; 8- and 16-bit elements through their
   * aligned 32-bit word (device buffers are padded to 8 bytes) */
  "static inline int lacc_cas32(volatile __global void *p, uint e, uint d) {\n"
  "  return atomic_cmpxchg((volatile __global uint *)p, e, d) == e;\n}\n"
  "static inline int lacc_cas_narrow(volatile __global void *p, uint e, uint d, uint mask) {\n"
  "  ulong a = (ulong)p;\n  uint sh = (uint)(a & 3) * 8;\n"
  "  volatile __global uint *w = (volatile __global uint *)(a - (a & 3));\n"
  "  uint old = *w;\n  for (;;) {\n"
  "    if (((old >> sh) & mask) != e) return 0;\n"
  "    uint got = atomic_cmpxchg(w, old, (old & ~(mask << sh)) | (d << sh));\n"
  "    if (got == old) return 1;\n    old = got;\n  }\n}\n"
  "#ifdef LACC_I64_ATOMICS\n"
  "static inline int lacc_cas64(volatile __global void *p, ulong e, ulong d) {\n"
  "  return atom_cmpxchg((volatile __global ulong *)p, e, d) == e;\n}\n"
  "#else\n"
  "static inline int lacc_cas64(volatile __global void *p, ulong e, ulong d) {\n"
  "  volatile __global ulong *q = (volatile __global ulong *)p;\n"
  "  if (*q != e) return 0;\n  *q = d;\n  return 1;\n}\n"
  "#endif\n"
  /* F[0]: the smallest failing element (or a flag), F[1]: that element, F[2]: the check,
   * F[3]: the number of values, F[4..]: the values. Of failures with one key (a fold's
   * elements share their row's) the first recorded stays, as on the cpu backend. */
  "static void lacc_fail(__global long *F, long key, int check, const long *vals, int n) {\n"
  "#ifdef LACC_I64_ATOMICS\n"
  "  if (key >= atom_min(&F[0], key)) return;\n"
  "#else\n"
  "  if (atomic_cmpxchg((volatile __global int *)F, 0, 1) != 0) return;\n"
  "#endif\n"
  "  F[1] = key;\n  F[2] = check;\n  F[3] = n;\n"
  "  for (int i = 0; i < n && i < 16; i++) F[4 + i] = vals[i];\n}\n";

/* Whether the shift by variable c of type k prints as a plain shift by a count the code
 * then holds. Where c is a constant of the plan's table, the code depends on its value
 * either way: no program of another value may run this plan (memo.c). */
static int known_shift(const sbuf *b, int c, scalar_kind k) {
  if (b->counts == NULL) return 0;
  if (b->kslot[c] >= 0 && b->P->ksrc != NULL) b->P->ksrc[b->kslot[c]].read = 1;
  return b->counts[c] >= 0 && b->counts[c] < scalar_bits(k);
}

/* Shifts by any count, negative counts shifting the other way (prim.c's shift). */
static void shift_helpers(sbuf *b) {
  for (int k = S_I8; k <= S_U64; k++) {
    const char *t = ctype((scalar_kind)k), *u = utype((scalar_kind)k);
    int bits = scalar_bits((scalar_kind)k), sgn = scalar_is_signed((scalar_kind)k);
    put(b, "static inline %s lacc_shift_%d(%s x, int64_t n, int left) {\n", t, k, t);
    put(b, "  if (n < 0) { left = !left; n = n == INT64_MIN ? %d : -n; }\n", bits);
    put(b, "  if (left) return n >= %d ? 0 : (%s)((%s)x << n);\n", bits, t, u);
    if (sgn) put(b, "  return n >= %d ? (x < 0 ? -1 : 0) : (%s)(x >> n);\n}\n", bits, t);
    else put(b, "  return n >= %d ? 0 : (%s)(x >> n);\n}\n", bits, t);
  }
}

static void vname(sbuf *b, int v) { put(b, "v%d", v); }

static void constant(sbuf *b, scalar_kind k, lacc_val v) {
  switch (k) {
  case S_BOOL: put(b, "%d", v.u != 0); return;
  case S_F32: case S_F64: {
    double d = k == S_F32 ? (double)v.f : v.d;
    const char *cast = k == S_F32 ? "(float)" : "";
    if (isnan(d)) put(b, "%s(%sNAN)", cast, signbit(d) ? "-" : "");
    else if (isinf(d)) put(b, "%s(%sINFINITY)", cast, d < 0 ? "-" : "");
    else put(b, "%s%a%s", cast, d, b->cl && k == S_F32 ? "f" : "");
    return;
  }
  default:
    if (scalar_is_signed(k)) {
      if (v.i == INT64_MIN) put(b, "(%s)(-INT64_MAX - 1)", ctype(k));
      else put(b, "(%s)INT64_C(%" PRId64 ")", ctype(k), v.i);
    } else {
      put(b, "(%s)UINT64_C(%" PRIu64 ")", ctype(k), v.u);
    }
  }
}

static const char *cmp_op(prim_op p) {
  switch (p) {
  case P_EQ: return "==";
  case P_NE: return "!=";
  case P_LT: return "<";
  case P_LE: return "<=";
  case P_GT: return ">";
  default: return ">=";
  }
}

static const char *float_fn(prim_op p) {
  switch (p) {
  case P_POW: return "pow";
  case P_ATAN2: return "atan2";
  case P_ABS: return "fabs";
  case P_SQRT: return "sqrt";
  case P_EXP: return "exp";
  case P_LOG: return "log";
  case P_SIN: return "sin";
  case P_COS: return "cos";
  case P_TAN: return "tan";
  case P_ASIN: return "asin";
  case P_ACOS: return "acos";
  case P_ATAN: return "atan";
  case P_FLOOR: return "floor";
  case P_CEIL: return "ceil";
  case P_ROUND: return "round";
  case P_TRUNCATE: return "trunc";
  case P_SINH: return "sinh";
  case P_COSH: return "cosh";
  case P_TANH: return "tanh";
  case P_ASINH: return "asinh";
  case P_ACOSH: return "acosh";
  case P_ATANH: return "atanh";
  case P_LOG2: return "log2";
  case P_LOG10: return "log10";
  case P_LOG1P: return "log1p";
  case P_EXPM1: return "expm1";
  case P_EXP2: return "exp2";
  case P_CBRT: return "cbrt";
  case P_HYPOT: return "hypot";
  case P_ROUNDEVEN: return "rint";
  default: return NULL;
  }
}

static void prim_float(sbuf *b, prim_op p, scalar_kind k, int a, int c) {
  const char *f = k == S_F32 ? "f" : "";
  switch (p) {
  case P_ADD: put(b, "v%d + v%d", a, c); return;
  case P_SUB: put(b, "v%d - v%d", a, c); return;
  case P_MUL: put(b, "v%d * v%d", a, c); return;
  case P_DIV: put(b, "v%d / v%d", a, c); return;
  case P_IDIV: put(b, "floor%s(v%d / v%d)", f, a, c); return;
  case P_MOD: put(b, "lacc_fmod%s(v%d, v%d)", f, a, c); return;
  case P_NEG: put(b, "-v%d", a); return;
  case P_SIGNUM: put(b, "(%s)lacc_signum((double)v%d)", ctype(k), a); return;
  case P_MIN: put(b, "v%d < v%d ? v%d : v%d", c, a, c, a); return;
  case P_MAX: put(b, "v%d > v%d ? v%d : v%d", c, a, c, a); return;
  case P_ISNAN: put(b, "isnan(v%d) != 0", a); return;
  case P_ISINF: put(b, "isinf(v%d) != 0", a); return;
  case P_TANH:   /* PoCL's tanh(inf) is 1 - 2^-24: the limit, as C99 Annex F has it */
    if (b->cl) {
      put(b, "isinf(v%d) ? copysign((%s)1, v%d) : tanh%s(v%d)", a, ctype(k), a, f, a);
      return;
    }
    put(b, "tanh%s(v%d)", f, a);
    return;
  case P_ISFINITE: put(b, "isfinite(v%d) != 0", a); return;
  case P_POW: case P_ATAN2: case P_HYPOT: put(b, "%s%s(v%d, v%d)", float_fn(p), f, a, c); return;
  default: put(b, "%s%s(v%d)", float_fn(p), f, a); return;
  }
}

static void prim_int(sbuf *b, prim_op p, scalar_kind k, int a, int c) {
  const char *t = ctype(k), *w = wtype(k);
  int sgn = scalar_is_signed(k);
  switch (p) {
  case P_ADD: put(b, "(%s)((%s)v%d + (%s)v%d)", t, w, a, w, c); return;
  case P_SUB: put(b, "(%s)((%s)v%d - (%s)v%d)", t, w, a, w, c); return;
  case P_MUL: put(b, "(%s)((%s)v%d * (%s)v%d)", t, w, a, w, c); return;
  case P_NEG: put(b, "(%s)(0 - (%s)v%d)", t, w, a); return;
  case P_ABS:
    if (sgn) put(b, "(%s)(v%d < 0 ? 0 - (%s)v%d : (%s)v%d)", t, a, w, a, w, a);
    else put(b, "v%d", a);
    return;
  case P_SIGNUM:
    if (sgn) put(b, "(%s)((v%d > 0) - (v%d < 0))", t, a, a);
    else put(b, "(%s)(v%d != 0)", t, a);
    return;
  case P_MIN: put(b, "v%d < v%d ? v%d : v%d", c, a, c, a); return;
  case P_MAX: put(b, "v%d > v%d ? v%d : v%d", c, a, c, a); return;
  case P_IDIV:
    if (sgn) put(b, "(%s)(v%d ? lacc_sfdiv(v%d, v%d) : 0)", t, c, a, c);
    else put(b, "(%s)(v%d ? v%d / v%d : 0)", t, c, a, c);
    return;
  case P_MOD:
    if (sgn) put(b, "(%s)(v%d ? lacc_sfmod(v%d, v%d) : 0)", t, c, a, c);
    else put(b, "(%s)(v%d ? v%d %% v%d : 0)", t, c, a, c);
    return;
  case P_QUOT:
    if (sgn) put(b, "(%s)(v%d == 0 ? 0 : v%d == -1 ? (int64_t)(0 - (uint64_t)v%d) : v%d / v%d)",
                 t, c, c, a, a, c);
    else put(b, "(%s)(v%d ? v%d / v%d : 0)", t, c, a, c);
    return;
  case P_REM:
    if (sgn) put(b, "(%s)(v%d == 0 || v%d == -1 ? 0 : v%d %% v%d)", t, c, c, a, c);
    else put(b, "(%s)(v%d ? v%d %% v%d : 0)", t, c, a, c);
    return;
  case P_BAND: put(b, "(%s)(v%d & v%d)", t, a, c); return;
  case P_BOR: put(b, "(%s)(v%d | v%d)", t, a, c); return;
  case P_BXOR: put(b, "(%s)(v%d ^ v%d)", t, a, c); return;
  case P_BNOT: put(b, "(%s)~v%d", t, a); return;
  case P_SHL:
    if (known_shift(b, c, k))
      put(b, "(%s)((%s)v%d << %d)", t, utype(k), a, b->counts[c]);
    else put(b, "lacc_shift_%d(v%d, (int64_t)v%d, 1)", (int)k, a, c);
    return;
  case P_SHR:
    if (known_shift(b, c, k))
      put(b, "(%s)(v%d >> %d)", t, a, b->counts[c]);
    else put(b, "lacc_shift_%d(v%d, (int64_t)v%d, 0)", (int)k, a, c);
    return;
  case P_IPOW:
    put(b, "(%s)lacc_ipow((uint64_t)v%d, (uint64_t)v%d, ", t, a, c);
    if (sgn) put(b, "v%d < 0)", c);
    else put(b, "0)");
    return;
  default: return;
  }
}

static void prim(sbuf *b, const kfn *F, const kinst *in) {
  scalar_kind k = F->vt[in->a];
  prim_op p = in->prim;
  switch (p) {
  case P_EQ: case P_NE: case P_LT: case P_LE: case P_GT: case P_GE:
    put(b, "v%d %s v%d", in->a, cmp_op(p), in->b);
    return;
  case P_LAND: put(b, "v%d && v%d", in->a, in->b); return;
  case P_LOR: put(b, "v%d || v%d", in->a, in->b); return;
  case P_LNOT: put(b, "!v%d", in->a); return;
  case P_FMA:
    put(b, "fma%s(v%d, v%d, v%d)", k == S_F32 ? "f" : "", in->a, in->b, in->args[0]);
    return;
  default: break;
  }
  if (scalar_is_float(k)) prim_float(b, p, k, in->a, in->b);
  else prim_int(b, p, k, in->a, in->b);
}

static void cast(sbuf *b, scalar_kind to, scalar_kind from, int a) {
  if (to == S_BOOL) {
    put(b, "v%d != 0", a);
  } else if (scalar_is_float(from) && scalar_is_int(to)) {
    int bits = scalar_bits(to);
    if (scalar_is_signed(to)) {
      if (bits == 64) put(b, "lacc_f2i((double)v%d, INT64_MIN, INT64_MAX)", a);
      else put(b, "(%s)lacc_f2i((double)v%d, -INT64_C(%lld), INT64_C(%lld))", ctype(to), a,
               1LL << (bits - 1), (1LL << (bits - 1)) - 1);
    } else {
      if (bits == 64) put(b, "lacc_f2u((double)v%d, UINT64_MAX)", a);
      else put(b, "(%s)lacc_f2u((double)v%d, UINT64_C(%llu))", ctype(to), a,
               (1ULL << bits) - 1);
    }
  } else {
    put(b, "(%s)v%d", ctype(to), a);
  }
}

static void tobits(sbuf *b, scalar_kind from, int a) {
  if (from == S_F32) put(b, "lacc_bits_f32(v%d)", a);
  else if (from == S_F64) put(b, "lacc_bits_f64(v%d)", a);
  else put(b, "(uint64_t)(%s)v%d", from == S_BOOL ? "uint8_t" : utype(from), a);
}

static void frombits_u(sbuf *b, scalar_kind to, const char *u) {
  if (to == S_F32) put(b, "as_float((uint)%s)", u);
  else if (to == S_F64) put(b, "as_double((ulong)%s)", u);
  else put(b, "(%s)%s", ctype(to), u);
}

static void frombits(sbuf *b, scalar_kind to, int a) {
  if (to == S_F32) put(b, "lacc_f32_bits(v%d)", a);
  else if (to == S_F64) put(b, "lacc_f64_bits(v%d)", a);
  else if (to == S_BOOL) put(b, "v%d != 0", a);
  else put(b, "(%s)v%d", ctype(to), a);
}

static void indent(sbuf *b, int depth) {
  static const char spaces[] = "                                                                ";
  for (int n = 2 * depth; n > 0; n -= (int)sizeof spaces - 1)
    text_append(&b->t, spaces, (size_t)(n < (int)sizeof spaces - 1 ? n : (int)sizeof spaces - 1));
}

/* OpenCL: an atomic read is a volatile read of the element's bits. */
static void cl_aload(sbuf *b, const kfn *F, const kinst *in) {
  scalar_kind k = F->vt[in->dst];
  const char *u = utype(k);
  put(b, "{ %s u_ = *(volatile __global %s *)&b%d_%d[v%d]; v%d = ", u, u, in->slot, in->buf,
      in->a, in->dst);
  frombits_u(b, k, "u_");
  put(b, "; }");
}

/* OpenCL: compare-and-swap of the element's bits (narrow ones through their word). */
static void cl_cas(sbuf *b, const kfn *F, const kinst *in) {
  scalar_kind k = F->vt[in->b];
  int bits = scalar_bits(k);
  put(b, "v%d = ", in->dst);
  if (bits >= 32) put(b, "lacc_cas%d(&b%d_%d[v%d], ", bits, in->slot, in->buf, in->a);
  else put(b, "lacc_cas_narrow(&b%d_%d[v%d], ", in->slot, in->buf, in->a);
  put(b, "(%s)", bits == 64 ? "ulong" : "uint");
  tobits(b, k, in->args[0]);
  put(b, ", (%s)", bits == 64 ? "ulong" : "uint");
  tobits(b, k, in->b);
  if (bits < 32) put(b, ", 0x%xu", (1u << bits) - 1);
  put(b, ")");
}

static void instr(sbuf *b, const kfn *F, const kinst *in, int *depth) {
  if (in->op == KO_ELSE || in->op == KO_END) (*depth)--;
  indent(b, *depth);
  switch (in->op) {
  case KO_CONST: vname(b, in->dst); put(b, " = "); constant(b, F->vt[in->dst], in->imm); break;
  case KO_MOV: put(b, "v%d = v%d", in->dst, in->a); break;
  case KO_PRIM: vname(b, in->dst); put(b, " = "); prim(b, F, in); break;
  case KO_CAST: vname(b, in->dst); put(b, " = "); cast(b, F->vt[in->dst], F->vt[in->a], in->a); break;
  case KO_TOBITS: vname(b, in->dst); put(b, " = "); tobits(b, F->vt[in->a], in->a); break;
  case KO_FROMBITS: vname(b, in->dst); put(b, " = "); frombits(b, F->vt[in->dst], in->a); break;
  case KO_LOAD: put(b, "v%d = b%d_%d[v%d]", in->dst, in->slot, in->buf, in->a); break;
  case KO_STORE: put(b, "b%d_%d[v%d] = v%d", in->slot, in->buf, in->a, in->b); break;
  case KO_EXTENT:
    if (b->cl) put(b, "v%d = E[%d]", in->dst, in->slot * LACC_MAX_RANK + (int)in->imm.i);
    else put(b, "v%d = S[%d].ext[%d]", in->dst, in->slot, (int)in->imm.i);
    break;
  case KO_OUT: put(b, "out[%d] = v%d", (int)in->imm.i, in->a); break;
  case KO_IF:
    if (in->expect != 0 && b->cl)
      put(b, "if (LACC_EXPECT(v%d, %d)) {\n", in->a, in->expect > 0);
    else
      put(b, "if (v%d) {\n", in->a);
    (*depth)++;
    return;
  case KO_ELSE: put(b, "} else {\n"); (*depth)++; return;
  case KO_END: put(b, "}\n"); return;
  case KO_FOR:
    if (in->unroll > 1 && !b->cl) {
      put(b, "\n#ifndef __TINYC__\n_Pragma(\"GCC unroll %d\")\n#endif\n", in->unroll);
      indent(b, *depth);
    }
    if (in->cl_unroll > 1 && b->cl) {
      put(b, "\n#pragma unroll %d\n", in->cl_unroll);
      indent(b, *depth);
    }
    put(b, "for (v%d = v%d; v%d + %d <= v%d; v%d += %d) {\n", in->dst, in->a, in->dst,
        (int)in->imm.i, in->b, in->dst, (int)in->imm.i);
    (*depth)++;
    return;
  case KO_LOOP: put(b, "for (;;) {\n"); (*depth)++; return;
  case KO_BREAKIFNOT: put(b, "if (!v%d) break", in->a); break;
  case KO_RETURN: put(b, "return"); break;
  case KO_KCONST: {
    scalar_kind k = F->vt[in->dst];
    int i = (int)in->imm.i;
    if (b->cl) {
      if (k == S_F32) put(b, "v%d = as_float((uint)K[%d])", in->dst, i);
      else if (k == S_F64) put(b, "v%d = as_double(K[%d])", in->dst, i);
      else put(b, "v%d = (%s)K[%d]", in->dst, ctype(k), i);
      break;
    }
    if (k == S_F32) put(b, "v%d = rt->K[%d].f", in->dst, i);
    else if (k == S_F64) put(b, "v%d = rt->K[%d].d", in->dst, i);
    else put(b, "v%d = (%s)rt->K[%d].%s", in->dst, ctype(k), i, scalar_is_signed(k) ? "i" : "u");
    break;
  }
  case KO_LGET: put(b, "v%d = v%d[v%d]", in->dst, in->a, in->b); break;
  case KO_ALOAD:
    if (b->cl) {
      cl_aload(b, F, in);
      break;
    } else {
    const char *u = utype(F->vt[in->dst]);
    put(b, "{ %s u_ = LACC_ALOAD((%s *)&b%d_%d[v%d]); "
           "memcpy(&v%d, &u_, sizeof u_); }", u, u, in->slot, in->buf, in->a, in->dst);
    break;
    }
  case KO_CAS: {
    if (b->cl) {
      cl_cas(b, F, in);
      break;
    }
    const char *u = utype(F->vt[in->b]);
    put(b, "{ %s e_, d_; memcpy(&e_, &v%d, sizeof e_); memcpy(&d_, &v%d, sizeof d_); "
           "v%d = LACC_CAS((%s *)&b%d_%d[v%d], &e_, d_); }", u, in->args[0], in->b, in->dst, u,
        in->slot, in->buf, in->a);
    break;
  }
  case KO_LSET: put(b, "v%d[v%d] = v%d", in->dst, in->a, in->b); break;
  case KO_LMSTORE: put(b, "lm_[v%d] = v%d", in->a, in->b); break;
  case KO_LMLOAD: put(b, "v%d = lm_[v%d]", in->dst, in->a); break;
  case KO_BARRIER: put(b, "barrier(CLK_LOCAL_MEM_FENCE)"); break;
  case KO_FAIL:
    if (in->nargs == 0) {
      put(b, b->cl ? "lacc_fail(F, v%d, %d, 0, 0)" : "lacc_failed(rt, v%d, %d, 0, 0)", in->a, in->check);
    } else {
      put(b, "{ const int64_t fv[%d] = {", in->nargs);
      for (int i = 0; i < in->nargs; i++) put(b, "%sv%d", i ? ", " : " ", in->args[i]);
      put(b, b->cl ? " }; lacc_fail(F, v%d, %d, fv, %d); }" : " }; lacc_failed(rt, v%d, %d, fv, %d); }",
          in->a, in->check, in->nargs);
      put(b, "\n");
      return;
    }
    break;
  }
  put(b, ";\n");
}

int kfn_uses_buffer(const kfn *F, int slot, int buf, int *written) {
  int used = 0;
  const klist *ls[2] = { &F->pro, &F->body };
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < ls[l]->n; i++) {
      const kinst *in = &ls[l]->v[i];
      int mem = in->op == KO_LOAD || in->op == KO_STORE || in->op == KO_ALOAD || in->op == KO_CAS;
      if (mem && in->slot == slot && in->buf == buf) {
        used = 1;
        if (in->op == KO_STORE || in->op == KO_CAS) *written = 1;
      }
    }
  return used;
}

static int lanes_of(const kfn *F, int v) {
  for (int i = 0; i < F->nlanes; i += 2)
    if (F->lanes[i] == v) return F->lanes[i + 1];
  return 0;
}

static void declare_vars(sbuf *b, const kfn *F, int from_params) {
  static const char *const p[4] = { "p0", "p1", "p2", "p3" };
  for (int v = 0; v < F->nvars; v++) {
    int lanes = lanes_of(F, v);
    if (lanes > 0)
      put(b, "  %s v%d[%d];\n", ctype(F->vt[v]), v, lanes);
    else
      put(b, "  %s v%d = %s;\n", ctype(F->vt[v]), v, from_params && v < 4 ? p[v] : "0");
  }
}

/* The shift counts known when a function is printed: a variable defined once, by a
 * constant (a user's constant too, from the table: the count becomes part of the
 * kernel's code). A plain shift by a number the C compiler sees is one it vectorises;
 * the helper's tests for counts out of range are branches it does not. -1: unknown, or
 * outside 0..63. NULL when out of memory (every shift then takes the helper). */
static signed char *shift_counts(const kplan *P, const kfn *F, int **kslot) {
  int n = F->nvars > 0 ? F->nvars : 1;
  signed char *c = malloc((size_t)n);
  unsigned char *defs = calloc((size_t)n, 1);
  *kslot = malloc(sizeof **kslot * (size_t)n);
  if (c == NULL || defs == NULL || *kslot == NULL) {
    free(c);
    free(defs);
    free(*kslot);
    *kslot = NULL;
    return NULL;
  }
  memset(c, -1, (size_t)n);
  for (int v = 0; v < n; v++) (*kslot)[v] = -1;
  const klist *lists[2] = { &F->pro, &F->body };
  for (int li = 0; li < 2; li++)
    for (int i = 0; i < lists[li]->n; i++) {
      const kinst *in = &lists[li]->v[i];
      int d = kinst_def(in);
      if (d < 0 || d >= n) continue;
      if (defs[d] < 2) defs[d]++;
      scalar_kind k = F->vt[d];
      if (in->op != KO_CONST && in->op != KO_KCONST) continue;
      if (k == S_BOOL || scalar_is_float(k)) continue;
      if (in->op == KO_KCONST) (*kslot)[d] = (int)in->imm.i;
      lacc_val v = in->op == KO_CONST ? in->imm : P->consts[in->imm.i];
      int64_t x = scalar_is_signed(k) ? v.i : (int64_t)v.u;
      if (!scalar_is_signed(k) && v.u > 63) x = -1;
      c[d] = (signed char)(x >= 0 && x <= 63 ? x : -1);
    }
  for (int v = 0; v < n; v++)
    if (defs[v] != 1) {
      c[v] = -1;
      (*kslot)[v] = -1;
    }
  free(defs);
  return c;
}

static void function(sbuf *b, const kplan *P, int k) {
  const kfn *F = &P->fns[k];
  put(b, "\nvoid lacc_f%d(const lacc_kslot *S, lacc_krt *rt, int64_t p0, int64_t p1,"
         " int64_t p2, int64_t p3, int64_t *out) {\n", k);
  put(b, "  (void)S; (void)rt; (void)out;\n");
  declare_vars(b, F, 1);
  for (int s = 0; s < P->nslots; s++)
    for (int buf = 0; buf < P->slots[s].plan->nbufs; buf++) {
      int written = 0;
      if (!kfn_uses_buffer(F, s, buf, &written)) continue;
      const char *t = ctype(P->slots[s].plan->buf_kind[buf]);
      put(b, "  %s%s *restrict b%d_%d = (%s%s *)S[%d].buf[%d];\n", written ? "" : "const ", t,
          s, buf, written ? "" : "const ", t, s, buf);
    }
  int depth = 1;
  b->P = P;
  b->counts = shift_counts(P, F, &b->kslot);
  for (int i = 0; i < F->pro.n; i++) instr(b, F, &F->pro.v[i], &depth);
  for (int i = 0; i < F->body.n; i++) instr(b, F, &F->body.v[i], &depth);
  free(b->counts);
  free(b->kslot);
  b->counts = NULL;
  b->kslot = NULL;
  put(b, "}\n");
}

/* OpenCL: work-item c_ of nch takes its share of the range the role splits (the same
 * shares cpu/launch.c gives its chunks): elements p0 <= i < p1, or a segment's elements below
 * p2 with its chunk index in p3; combines and shapes run as one work-item. */
static void cl_role(sbuf *b, const kfn *F) {
  const char *v[4];
  switch (F->role) {
  case FN_BODY: case FN_SEG: case FN_SCATTER: case FN_TILE:
    v[0] = "p0 + (p1 - p0) * c_ / nch";
    v[1] = "p0 + (p1 - p0) * (c_ + 1) / nch";
    v[2] = "p2";
    v[3] = "p3";
    break;
  case FN_PART: case FN_CHUNK:
    v[0] = "p0";
    v[1] = "p2 * c_ / nch";
    v[2] = "p2 * (c_ + 1) / nch";
    v[3] = "c_";
    break;
  case FN_GTILE:   /* work-groups of LACC_GROUP items, a tile each */
    v[0] = "c_ / " LACC_GROUP_TEXT;
    v[1] = "c_ % " LACC_GROUP_TEXT;
    v[2] = "p2";
    v[3] = "p3";
    break;
  case FN_GROUP:   /* one work-group of nch items */
    v[0] = "p0";
    v[1] = "p1";
    v[2] = "c_";
    v[3] = "nch";
    break;
  default:
    v[0] = "p0";
    v[1] = "p1";
    v[2] = "p2";
    v[3] = "p3";
  }
  for (int i = 0; i < 4 && i < F->nvars; i++) put(b, "  v%d = %s;\n", i, v[i]);
}

static void cl_function(sbuf *b, const kplan *P, int k) {
  const kfn *F = &P->fns[k];
  /* a function with barriers is inlined into the kernel: PoCL's barrier passes need it
   * (without its optimisations, -cl-opt-disable, a called one ran wrong) */
  int wg = F->role == FN_GROUP || F->role == FN_GTILE;
  put(b, "\nstatic %svoid lacc_f%d(__global const long *E, __global const ulong *K, "
         "__global long *F, long p0, long p1, long p2, long p3, long nch, long c_",
      wg ? "inline __attribute__((always_inline)) " : "", k);
  for (int s = 0; s < P->nslots; s++)
    for (int buf = 0; buf < P->slots[s].plan->nbufs; buf++) {
      int written = 0;
      if (!kfn_uses_buffer(F, s, buf, &written)) continue;
      put(b, ",\n    __global %s%s *restrict b%d_%d", written ? "" : "const ",
          ctype(P->slots[s].plan->buf_kind[buf]), s, buf);
    }
  if (wg) put(b, ",\n    __local ulong *lm_");
  put(b, ") {\n  (void)E; (void)K; (void)F;\n");
  declare_vars(b, F, 0);
  cl_role(b, F);
  int depth = 1;
  b->P = P;
  b->counts = shift_counts(P, F, &b->kslot);
  for (int i = 0; i < F->pro.n; i++) instr(b, F, &F->pro.v[i], &depth);
  for (int i = 0; i < F->body.n; i++) instr(b, F, &F->body.v[i], &depth);
  free(b->counts);
  free(b->kslot);
  b->counts = NULL;
  b->kslot = NULL;
  put(b, "}\n");
}

int cl_kernel_buffer(const kplan *P, int slot, int buf, int *written) {
  int used = 0;
  for (int k = 0; k < P->nfns; k++)
    if (P->fns[k].role != FN_SHAPE) used |= kfn_uses_buffer(&P->fns[k], slot, buf, written);
  return used;
}

/* The one kernel of a program: PoCL's cost of building a program grows with its number
 * of kernels, not with their size, so the functions sit behind a switch on `which`. */
/* Whether function k is printed: shape functions run on the host, work-group ones only
 * where the executor launches them. */
static int cl_printed(const kplan *P, int k, int groups) {
  /* groups: CL_TREES and CL_TILES, the work-group functions the executor launches */
  fn_role r = P->fns[k].role;
  if (r == FN_GROUP) return (groups & CL_TREES) != 0;
  if (r == FN_GTILE) return (groups & CL_TILES) != 0 && P->fns[k].body.n > 0;
  return r != FN_SHAPE;
}

static void cl_kernel_main(sbuf *b, const kplan *P, int groups) {
  put(b, "\n__kernel void lacc_main(__global const long *E, __global const ulong *K, "
         "__global long *F, long p0, long p1, long p2, long p3, long nch, int which");
  for (int s = 0; s < P->nslots; s++)
    for (int buf = 0; buf < P->slots[s].plan->nbufs; buf++) {
      int written = 0;
      if (cl_kernel_buffer(P, s, buf, &written))
        put(b, ",\n    __global %s%s *b%d_%d", written ? "" : "const ",
            ctype(P->slots[s].plan->buf_kind[buf]), s, buf);
    }
  put(b, ") {\n");
  /* local memory is declared at kernel scope (OpenCL 1.2 allows it nowhere else) */
  if (groups && P->group_words > 0)
    put(b, "  __local ulong lm_[%d];\n", LACC_GROUP * P->group_words);
  put(b, "  const long c_ = get_global_id(0);\n  if (c_ >= nch) return;\n"
         "  switch (which) {\n");
  for (int k = 0; k < P->nfns; k++) {
    const kfn *F = &P->fns[k];
    if (!cl_printed(P, k, groups)) continue;
    put(b, "  case %d: lacc_f%d(E, K, F, p0, p1, p2, p3, nch, c_", k, k);
    for (int s = 0; s < P->nslots; s++)
      for (int buf = 0; buf < P->slots[s].plan->nbufs; buf++) {
        int written = 0;
        if (kfn_uses_buffer(F, s, buf, &written)) put(b, ", b%d_%d", s, buf);
      }
    put(b, F->role == FN_GROUP || F->role == FN_GTILE ? ", lm_); break;\n" : "); break;\n");
  }
  put(b, "  default: break;\n  }\n}\n");
}

static char *finish(sbuf *b) {
  if (b->t.oom) {
    free(b->t.s);
    return NULL;
  }
  return b->t.s;
}

char *emit_cl(const kplan *P, int groups) {
  sbuf b = { .cl = 1 };
  /* LACC_OWN_MATH (CPU devices): lacc's own f32 exp and log, which the device compiler
   * vectorises (PoCL's built-ins kept its loops scalar: docs/design.md, Measurements) */
  const char *const pieces[] = { "/* generated by lacc */\n", cl_prelude, "#ifdef LACC_OWN_MATH\n",
                                 own_math, own_math_names, "#endif\n", helpers };
  for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) text_append(&b.t, pieces[i], strlen(pieces[i]));
  shift_helpers(&b);
  for (int k = 0; k < P->nfns; k++)
    if (cl_printed(P, k, groups)) cl_function(&b, P, k);
  cl_kernel_main(&b, P, groups);
  return finish(&b);
}

/* The text every C translation unit starts with, the same for every plan: built once
 * (pthread_once; never changed after), then copied rather than formatted again (a small
 * program's C is 90% this: formatting it twice through vsnprintf, and hashing it for the
 * cache, were three quarters of a program built anew and run: kcache.c hashes it once). */
static void put_prefix(sbuf *b) {
  put(b, "/* generated by lacc */\n%s%s%s%s", prelude, own_math, own_math_names, helpers);
  shift_helpers(b);
}

static pthread_once_t prefix_once = PTHREAD_ONCE_INIT;
static char *prefix_text;
static void build_prefix(void) {
  sbuf b = { 0 };
  put_prefix(&b);
  prefix_text = finish(&b);
}

const char *emit_c_prefix(void) {
  pthread_once(&prefix_once, build_prefix);
  return prefix_text;
}

char *emit_c_part(const kplan *P, int lo, int hi) {
  sbuf b = { 0 };
  const char *pre = emit_c_prefix();
  if (pre != NULL) text_append(&b.t, pre, strlen(pre));
  else put_prefix(&b);   /* out of memory once: formatted here, as it would have been */
  for (int k = lo; k < hi; k++) function(&b, P, k);
  return finish(&b);
}

char *emit_c(const kplan *P) { return emit_c_part(P, 0, P->nfns); }
