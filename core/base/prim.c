/* prim.c: scalar primitives: names, typing rules and exact semantics.
 *
 * Owns: what every primitive means for every scalar type, with no undefined
 * behaviour (integers wrap, division by zero is reported, float->int saturates).
 * The interpreter and the OpenCL backend's host functions call prim_eval; the preludes of
 * emit_c.c give the generated code the same meaning. The names, arities and classes
 * are the primitive table's (nodes.h).
 * Must not: know about nodes, arrays or evaluation order.
 */
#include <math.h>
#include <string.h>
#include "base/internal.h"

/* lacc's own exp, exp2, log, log2, log10, log1p, expm1, sinh, cosh, tanh, sin, cos, tan,
 * atan, atan2 and pow (f32 and f64): the kernels' (emit_c.c), so that every backend gives the same
 * bits */
#include "base/ownmath.h"

/* Operand classes a primitive accepts (PRIMDEF's operands column). */
typedef enum { C_NUM, C_INT, C_FLOAT, C_BOOL, C_ANY } operand_class;

typedef struct {
  const char *name;
  int arity;
  operand_class cls;
  int flags;
} prim_info;

static const prim_info prims[P_NPRIMS] = {
#define PRIM_INFO(e, name, arity, operands, flags) { name, arity, C_##operands, flags },
  PRIMDEF(PRIM_INFO)
#undef PRIM_INFO
};

const char *prim_name(prim_op p) { return prims[p].name; }
int prim_arity(prim_op p) { return prims[p].arity; }
int prim_has(prim_op p, int flag) { return (prims[p].flags & flag) != 0; }

int prim_lookup(const char *name, prim_op *out) {
  for (int p = 0; p < P_NPRIMS; p++) {
    if (strcmp(prims[p].name, name) == 0) {
      *out = (prim_op)p;
      return 1;
    }
  }
  return 0;
}

static int class_accepts(operand_class c, const lacc_type *t) {
  if (t->kind != T_SCALAR) return 0;
  switch (c) {
  case C_NUM: return t->scalar != S_BOOL;
  case C_INT: return scalar_is_int(t->scalar);
  case C_FLOAT: return scalar_is_float(t->scalar);
  case C_BOOL: return t->scalar == S_BOOL;
  default: return 1;
  }
}

static const char *class_name(operand_class c) {
  switch (c) {
  case C_NUM: return "a number type";
  case C_INT: return "an integer type";
  case C_FLOAT: return "f32 or f64";
  case C_BOOL: return "bool";
  default: return "a scalar type";
  }
}

const lacc_type *prim_result_type(lacc_ctx *ctx, prim_op p, int nargs,
                                  const lacc_type *const *args, const char *where) {
  prim_info s = prims[p];
  if (nargs != s.arity) {
    ctx_error(ctx, LACC_ERR_TYPE, "%s: expected %d argument%s, got %d (at %s)", s.name,
              s.arity, s.arity == 1 ? "" : "s", nargs, where);
    return NULL;
  }
  for (int i = 0; i < nargs; i++) {
    if (!class_accepts(s.cls, args[i])) {
      ctx_error(ctx, LACC_ERR_TYPE, "%s: expected %s, got %s (at %s)", s.name,
                class_name(s.cls), args[i]->sig, where);
      return NULL;
    }
  }
  for (int i = 1; i < nargs; i++) {
    if (args[i] != args[0]) {
      ctx_error(ctx, LACC_ERR_TYPE, "%s: expected %s operands of one type, got %s and %s (at %s)",
                s.name, nargs == 2 ? "two" : "three", args[0]->sig, args[i]->sig, where);
      return NULL;
    }
  }
  return (s.flags & PF_BOOL) ? type_scalar(ctx, S_BOOL) : args[0];
}

/* ---- integers: computed on 64 bits, wrapped to the operand width by the caller */

static int64_t sfloordiv(int64_t x, int64_t y) {
  if (y == -1) return (int64_t)(0 - (uint64_t)x);   /* INT64_MIN / -1 wraps */
  int64_t q = x / y;
  if (x % y != 0 && ((x < 0) != (y < 0))) q--;
  return q;
}

static int64_t sfloormod(int64_t x, int64_t y) {
  if (y == -1) return 0;
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

static lacc_val shift(scalar_kind k, lacc_val x, int64_t n, int left) {
  int bits = scalar_bits(k);
  lacc_val r;
  if (n < 0) {
    left = !left;
    n = n == INT64_MIN ? bits : -n;
  }
  if (left) {
    r.u = n >= bits ? 0 : x.u << n;
  } else if (scalar_is_signed(k)) {
    r.i = n >= bits ? (x.i < 0 ? -1 : 0) : x.i >> n;
  } else {
    r.u = n >= bits ? 0 : x.u >> n;
  }
  return r;
}

static int compare_int(prim_op p, scalar_kind k, lacc_val x, lacc_val y) {
  int lt = scalar_is_signed(k) ? x.i < y.i : x.u < y.u;
  int eq = x.u == y.u;
  switch (p) {
  case P_EQ: return eq;
  case P_NE: return !eq;
  case P_LT: return lt;
  case P_LE: return lt || eq;
  case P_GT: return !lt && !eq;
  default: return !lt;
  }
}

/* x to the power n on 64 bits (wrapped by the caller); a negative n (neg) gives the
 * integer part of 1 / x^-n: 1 for x = 1, -1 or 1 for x = -1 by n's parity, else 0 (x = 0
 * is a division by zero, reported before this is reached). */
uint64_t prim_ipow(uint64_t x, uint64_t n, int neg) {
  if (neg) return x == 1 ? 1 : x == UINT64_MAX ? ((n & 1) ? UINT64_MAX : 1) : 0;
  uint64_t r = 1;
  for (; n != 0; n >>= 1) {
    if (n & 1) r *= x;
    x *= x;
  }
  return r;
}

static int eval_int(prim_op p, scalar_kind k, const lacc_val *a, lacc_val *out) {
  lacc_val x = a[0], y = a[1], r = { .u = 0 };
  int sgn = scalar_is_signed(k);
  if (prim_has(p, PF_CMP)) {
    out->u = (uint64_t)compare_int(p, k, x, y);
    return LACC_OK;
  }
  if (prim_has(p, PF_DIV) && y.u == 0) return LACC_ERR_DIVZERO;
  if (p == P_IPOW && sgn && y.i < 0 && x.u == 0) return LACC_ERR_DIVZERO;
  switch (p) {
  case P_ADD: r.u = x.u + y.u; break;
  case P_SUB: r.u = x.u - y.u; break;
  case P_MUL: r.u = x.u * y.u; break;
  case P_NEG: r.u = 0 - x.u; break;
  case P_ABS: r.u = sgn && x.i < 0 ? 0 - x.u : x.u; break;
  case P_SIGNUM: r.i = sgn ? (x.i > 0) - (x.i < 0) : x.u != 0; break;
  case P_MIN: r = compare_int(P_LT, k, y, x) ? y : x; break;
  case P_MAX: r = compare_int(P_GT, k, y, x) ? y : x; break;
  case P_IDIV: case P_QUOT:
    if (!sgn) r.u = x.u / y.u;
    else if (p == P_IDIV) r.i = sfloordiv(x.i, y.i);
    else r.i = y.i == -1 ? (int64_t)(0 - x.u) : x.i / y.i;
    break;
  case P_MOD: case P_REM:
    if (!sgn) r.u = x.u % y.u;
    else if (p == P_MOD) r.i = sfloormod(x.i, y.i);
    else r.i = y.i == -1 ? 0 : x.i % y.i;
    break;
  case P_BAND: r.u = x.u & y.u; break;
  case P_BOR: r.u = x.u | y.u; break;
  case P_BXOR: r.u = x.u ^ y.u; break;
  case P_BNOT: r.u = ~x.u; break;
  case P_SHL: r = shift(k, x, y.i, 1); break;
  case P_SHR: r = shift(k, x, y.i, 0); break;
  case P_IPOW: r.u = prim_ipow(x.u, y.u, sgn && y.i < 0); break;
  default: return LACC_ERR_ARG;
  }
  *out = val_cast(k, sgn ? S_I64 : S_U64, r);
  return LACC_OK;
}

/* ---- floats: f64 in double, f32 in float with the float library functions */

/* Lua's float %: fmod truncates, so correct by one divisor when the remainder and
 * the divisor differ in sign. */
static double lua_fmod(double a, double b) {
  double m = fmod(a, b);
  if (m != 0 && (m < 0) != (b < 0)) m += b;
  return m;
}

static float lua_fmodf(float a, float b) {
  float m = fmodf(a, b);
  if (m != 0 && (m < 0) != (b < 0)) m += b;
  return m;
}

static int compare_float(prim_op p, double x, double y) {
  switch (p) {
  case P_EQ: return x == y;
  case P_NE: return x != y;
  case P_LT: return x < y;
  case P_LE: return x <= y;
  case P_GT: return x > y;
  default: return x >= y;
  }
}

static double signum_d(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }

static int eval_f64(prim_op p, const lacc_val *a, lacc_val *out) {
  double x = a[0].d, y = a[1].d, r;
  if (prim_has(p, PF_CMP)) {
    out->u = (uint64_t)compare_float(p, x, y);
    return LACC_OK;
  }
  switch (p) {
  case P_ADD: r = x + y; break;
  case P_SUB: r = x - y; break;
  case P_MUL: r = x * y; break;
  case P_DIV: r = x / y; break;
  case P_IDIV: r = floor(x / y); break;
  case P_MOD: r = lua_fmod(x, y); break;
  case P_POW: r = lacc_pow(x, y); break;
  case P_ATAN2: r = lacc_atan2(x, y); break;
  case P_NEG: r = -x; break;
  case P_ABS: r = fabs(x); break;
  case P_SIGNUM: r = signum_d(x); break;
  case P_MIN: r = y < x ? y : x; break;
  case P_MAX: r = y > x ? y : x; break;
  case P_SQRT: r = sqrt(x); break;
  case P_EXP: r = lacc_exp(x); break;
  case P_LOG: r = lacc_log(x); break;
  case P_SIN: r = lacc_sin(x); break;
  case P_COS: r = lacc_cos(x); break;
  case P_TAN: r = lacc_tan(x); break;
  case P_ASIN: r = asin(x); break;
  case P_ACOS: r = acos(x); break;
  case P_ATAN: r = lacc_atan(x); break;
  case P_FLOOR: r = floor(x); break;
  case P_CEIL: r = ceil(x); break;
  case P_ROUND: r = round(x); break;
  case P_TRUNCATE: r = trunc(x); break;
  case P_SINH: r = lacc_sinh(x); break;
  case P_COSH: r = lacc_cosh(x); break;
  case P_TANH: r = lacc_tanh(x); break;
  case P_ASINH: r = asinh(x); break;
  case P_ACOSH: r = acosh(x); break;
  case P_ATANH: r = atanh(x); break;
  case P_LOG2: r = lacc_log2(x); break;
  case P_LOG10: r = lacc_log10(x); break;
  case P_LOG1P: r = lacc_log1p(x); break;
  case P_EXPM1: r = lacc_expm1(x); break;
  case P_EXP2: r = lacc_exp2(x); break;
  case P_CBRT: r = cbrt(x); break;
  case P_HYPOT: r = hypot(x, y); break;
  case P_ROUNDEVEN: r = rint(x); break;   /* ties to even: the default rounding mode */
  case P_ISNAN: out->u = isnan(x) != 0; return LACC_OK;
  case P_ISINF: out->u = isinf(x) != 0; return LACC_OK;
  case P_ISFINITE: out->u = isfinite(x) != 0; return LACC_OK;
  default: return LACC_ERR_ARG;
  }
  out->d = r;
  return LACC_OK;
}

static int eval_f32(prim_op p, const lacc_val *a, lacc_val *out) {
  float x = a[0].f, y = a[1].f, r;
  if (prim_has(p, PF_CMP)) {
    out->u = (uint64_t)compare_float(p, x, y);
    return LACC_OK;
  }
  switch (p) {
  case P_ADD: r = x + y; break;
  case P_SUB: r = x - y; break;
  case P_MUL: r = x * y; break;
  case P_DIV: r = x / y; break;
  case P_IDIV: r = floorf(x / y); break;
  case P_MOD: r = lua_fmodf(x, y); break;
  case P_POW: r = lacc_powf(x, y); break;
  case P_ATAN2: r = lacc_atan2f(x, y); break;
  case P_NEG: r = -x; break;
  case P_ABS: r = fabsf(x); break;
  case P_SIGNUM: r = (float)signum_d(x); break;
  case P_MIN: r = y < x ? y : x; break;
  case P_MAX: r = y > x ? y : x; break;
  case P_SQRT: r = sqrtf(x); break;
  case P_EXP: r = lacc_expf(x); break;
  case P_LOG: r = lacc_logf(x); break;
  case P_SIN: r = lacc_sinf(x); break;
  case P_COS: r = lacc_cosf(x); break;
  case P_TAN: r = lacc_tanf(x); break;
  case P_ASIN: r = asinf(x); break;
  case P_ACOS: r = acosf(x); break;
  case P_ATAN: r = lacc_atanf(x); break;
  case P_FLOOR: r = floorf(x); break;
  case P_CEIL: r = ceilf(x); break;
  case P_ROUND: r = roundf(x); break;
  case P_TRUNCATE: r = truncf(x); break;
  case P_SINH: r = lacc_sinhf(x); break;
  case P_COSH: r = lacc_coshf(x); break;
  case P_TANH: r = lacc_tanhf(x); break;
  case P_ASINH: r = asinhf(x); break;
  case P_ACOSH: r = acoshf(x); break;
  case P_ATANH: r = atanhf(x); break;
  case P_LOG2: r = lacc_log2f(x); break;
  case P_LOG10: r = lacc_log10f(x); break;
  case P_LOG1P: r = lacc_log1pf(x); break;
  case P_EXPM1: r = lacc_expm1f(x); break;
  case P_EXP2: r = lacc_exp2f(x); break;
  case P_CBRT: r = cbrtf(x); break;
  case P_HYPOT: r = hypotf(x, y); break;
  case P_ROUNDEVEN: r = rintf(x); break;   /* ties to even: the default rounding mode */
  case P_ISNAN: out->u = isnan(x) != 0; return LACC_OK;
  case P_ISINF: out->u = isinf(x) != 0; return LACC_OK;
  case P_ISFINITE: out->u = isfinite(x) != 0; return LACC_OK;
  default: return LACC_ERR_ARG;
  }
  out->f = r;
  return LACC_OK;
}

static int eval_bool(prim_op p, const lacc_val *a, lacc_val *out) {
  uint64_t x = a[0].u != 0, y = a[1].u != 0;
  if (prim_has(p, PF_CMP)) {
    lacc_val vx = { .u = x }, vy = { .u = y };
    out->u = (uint64_t)compare_int(p, S_U8, vx, vy);
    return LACC_OK;
  }
  switch (p) {
  case P_LAND: out->u = x && y; return LACC_OK;
  case P_LOR: out->u = x || y; return LACC_OK;
  case P_LNOT: out->u = !x; return LACC_OK;
  default: return LACC_ERR_ARG;
  }
}

int prim_eval(prim_op p, scalar_kind k, int nargs, const lacc_val *x, lacc_val *out) {
  if (p == P_TAPE_LIMIT) {   /* tape_limit(x, have, limit): x, or past the limit an error */
    if (x[1].i > x[2].i) return LACC_ERR_MEMORY;
    *out = x[0];
    return LACC_OK;
  }
  if (p == P_FMA) {
    if (k == S_F64) out->d = fma(x[0].d, x[1].d, x[2].d);
    else out->f = fmaf(x[0].f, x[1].f, x[2].f);
    return LACC_OK;
  }
  lacc_val a[2] = { x[0], nargs > 1 ? x[1] : x[0] };
  if (k == S_BOOL) return eval_bool(p, a, out);
  if (k == S_F64) return eval_f64(p, a, out);
  if (k == S_F32) return eval_f32(p, a, out);
  return eval_int(p, k, a, out);
}
