/* values.c: a host language's value (lacc_value) checked against a scalar type.
 *
 * Owns: which values an element write and a constant take, how each goes into the type
 * (as an int64 or a double, for the casts of prim.c), and the words when one does not
 * fit; both bindings describe their values and call through here, so the rules and the
 * words exist once.
 * Must not: know a host language (the binding names the value's type) or write arrays
 * and build nodes (array.c and front/graph.c do, after the route is known).
 */
#include <math.h>
#include <stdio.h>
#include "base/internal.h"

static int is_float(scalar_kind k) { return k == S_F32 || k == S_F64; }

/* The value as words: its number for numbers, else the host's name of its type. */
static void shown(const lacc_value *v, char *buf, size_t n) {
  if (v->kind == LACC_VALUE_FLOAT) snprintf(buf, n, "%.14g", v->f);
  else snprintf(buf, n, "%s", v->name != NULL ? v->name : "?");
}

static int refuse(lacc_ctx *ctx, scalar_kind k, const lacc_value *v, int as_const,
                  const char *where) {
  const char *t = scalar_name(k);
  const char *got = v->name != NULL ? v->name : "?";
  const char *w = where != NULL ? where : "?";
  char num[64];
  if (k == S_BOOL)
    return as_const
      ? ctx_error(ctx, LACC_ERR_TYPE, "constant: expected a boolean for bool, got %s (at %s)", got, w)
      : ctx_error(ctx, LACC_ERR_ARG, "expected a boolean for bool, got %s", got);
  if (is_float(k) || (as_const && v->kind != LACC_VALUE_FLOAT))
    return as_const
      ? ctx_error(ctx, LACC_ERR_TYPE, "constant: expected a number for %s, got %s (at %s)", t, got, w)
      : ctx_error(ctx, LACC_ERR_ARG, "expected a number for %s, got %s", t, got);
  shown(v, num, sizeof num);
  return as_const
    ? ctx_error(ctx, LACC_ERR_TYPE, "constant: %s is not a value of %s (cast the other "
                "operand?) (at %s)", num, t, w)
    : ctx_error(ctx, LACC_ERR_ARG, "expected an integer for %s, got %s", t, num);
}

int value_route(lacc_ctx *ctx, scalar_kind k, const lacc_value *v, int as_const,
                const char *where, lacc_val *out, scalar_kind *from) {
  int number = v->kind == LACC_VALUE_INT || v->kind == LACC_VALUE_UINT ||
               v->kind == LACC_VALUE_FLOAT;
  if (k == S_BOOL) {
    if (v->kind != LACC_VALUE_BOOL) return refuse(ctx, k, v, as_const, where);
    out->i = v->i != 0;
    *from = S_I64;
    return LACC_OK;
  }
  if (!number) return refuse(ctx, k, v, as_const, where);
  if (is_float(k)) {
    out->d = v->kind == LACC_VALUE_FLOAT ? v->f
           : v->kind == LACC_VALUE_UINT ? (double)(uint64_t)v->i : (double)v->i;
    *from = S_F64;
    return LACC_OK;
  }
  if (v->kind == LACC_VALUE_FLOAT) {   /* an integral float: exact in int64, or u64's bits */
    double d = v->f;
    if (d != floor(d) || !(d >= -9223372036854775808.0 && d < 18446744073709551616.0))
      return refuse(ctx, k, v, as_const, where);
    out->i = d < 9223372036854775808.0 ? (int64_t)d : (int64_t)(uint64_t)d;
    *from = S_I64;
    return LACC_OK;
  }
  out->i = v->i;      /* an integer type takes the low bits, as C's conversion does */
  *from = S_I64;
  return LACC_OK;
}
