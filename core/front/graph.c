/* graph.c: building the HOAS graph.
 *
 * Owns: lacc_node creation, type checking of every node when it is built, and
 * reference counting. Sharing is node identity: a value the host uses twice is the
 * same node. Errors name the operation, the expected and actual types, and the host's
 * source place. Operations called by name are found in the node table (base/nodes.h).
 * Must not: convert, simplify or run programs (sharing.c, interp.c do).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "front/front.h"

static const char *place(const char *where) { return where != NULL ? where : "?"; }

lacc_node *node_new(lacc_ctx *ctx, node_kind k, const lacc_type *t, int rank, int nkids,
                    lacc_node *const *kids, const char *where) {
  int depth = 0;
  for (int i = 0; i < nkids; i++)
    if (kids[i]->depth > depth) depth = kids[i]->depth;
  if (depth + 1 > LACC_MAX_DEPTH) {
    ctx_error(ctx, LACC_ERR_ARG, "%s: expression deeper than %d levels (at %s)", kind_name(k),
              LACC_MAX_DEPTH, place(where));
    return NULL;
  }
  lacc_node *n = ctx_alloc(ctx, sizeof *n);
  if (n == NULL) return NULL;
  n->kids = ctx_alloc(ctx, sizeof *n->kids * (size_t)(nkids ? nkids : 1));
  n->where = strdup(place(where));
  if (n->kids == NULL || n->where == NULL) {
    free(n->kids);
    free(n->where);
    free(n);
    err_oom(ctx);
    return NULL;
  }
  n->kind = k;
  n->refs = 1;
  n->ctx = ctx;
  n->type = t;
  n->rank = rank;
  n->depth = depth + 1;
  n->id = ctx->next_id++;
  n->nkids = nkids;
  for (int i = 0; i < nkids; i++) {
    n->kids[i] = kids[i];
    kids[i]->refs++;
  }
  ctx_retain(ctx);
  return n;
}

void lacc_node_retain(lacc_node *n) { n->refs++; }

static void node_free(lacc_node *n) {
  if (n->array != NULL) lacc_array_release(n->array);
  if (n->sub != NULL)   /* K_AWHILE: condition, bodies, variables, then one per kid but the
                           loop's arrays (nparams of them) */
    for (int i = 0; i < n->nkids + 1 + n->nparams; i++) lacc_node_release(n->sub[i]);
  free(n->sub);
  lacc_ctx *ctx = n->ctx;
  free(n->kids);
  free(n->where);
  free(n);
  lacc_ctx_release(ctx);
}

/* Iterative, so that releasing a long chain cannot exhaust the C stack. */
void lacc_node_release(lacc_node *n) {
  if (n == NULL || --n->refs > 0) return;
  size_t cap = 64, len = 0;
  lacc_node **stack = malloc(cap * sizeof *stack);
  lacc_node *cur = n;
  for (;;) {
    for (int i = 0; i < cur->nkids; i++) {
      lacc_node *k = cur->kids[i];
      if (--k->refs > 0) continue;
      if (len == cap) {
        lacc_node **grown = stack != NULL ? realloc(stack, 2 * cap * sizeof *stack) : NULL;
        if (grown == NULL) continue;   /* out of memory: leak the subtree rather than crash */
        stack = grown;
        cap *= 2;
      }
      stack[len++] = k;
    }
    node_free(cur);
    if (stack == NULL || len == 0) break;
    cur = stack[--len];
  }
  free(stack);
}

const char *lacc_node_type(const lacc_node *n) { return n->type->sig; }
int lacc_node_rank(const lacc_node *n) { return node_level_of(n->kind) == L_ACC ? n->rank : -1; }

const char *lacc_node_level(const lacc_node *n) {
  switch (node_level_of(n->kind)) {
  case L_ACC: return "acc";
  case L_LAM: return "lam";
  default: return "exp";
  }
}

/* ---- argument checks shared by the builders */

/* A match takes its value and one alternative per constructor, an awhile three nodes
 * per array of its loop and its condition; everything else at most LACC_MAX_ARGS
 * arguments. */
static int max_args(const char *op) {
  node_kind k;
  if (!node_lookup(op, &k)) return LACC_MAX_ARGS;
  if (k == K_AWHILE) return 1 + 3 * LACC_MAX_FIELDS;
  return node_has(k, NF_WIDE) ? 1 + LACC_MAX_CONSTRUCTORS : LACC_MAX_ARGS;
}

static int check_args(lacc_ctx *ctx, const char *op, int nargs, lacc_node *const *args,
                      const char *where) {
  ctx_clear(ctx);
  if (nargs < 0 || nargs > max_args(op))
    return ctx_error(ctx, LACC_ERR_ARG, "%s: too many arguments (%d; at most %d) (at %s)", op,
                     nargs, max_args(op), place(where));
  for (int i = 0; i < nargs; i++) {
    if (args[i] == NULL)
      return ctx_error(ctx, LACC_ERR_ARG, "%s: argument %d is missing (at %s)", op, i + 1,
                       place(where));
    if (args[i]->ctx != ctx)
      return ctx_error(ctx, LACC_ERR_ARG,
                       "%s: argument %d belongs to another lacc context (Lua state) (at %s)", op,
                       i + 1, place(where));
  }
  return LACC_OK;
}

static const char *level_word(node_level l) {
  return l == L_ACC ? "an array" : l == L_LAM ? "a function" : "a scalar expression";
}

static int expect_level(lacc_ctx *ctx, const char *op, int i, const lacc_node *n, node_level l,
                        const char *where) {
  node_level got = node_level_of(n->kind);
  if (got == l) return LACC_OK;
  return ctx_error(ctx, LACC_ERR_TYPE, "%s: argument %d: expected %s, got %s (at %s)", op, i + 1,
                   level_word(l), level_word(got), place(where));
}

static int expect_type(lacc_ctx *ctx, const char *op, const char *what, const lacc_type *want,
                       const lacc_type *got, const char *where) {
  if (want == got) return LACC_OK;
  return ctx_error(ctx, LACC_ERR_TYPE, "%s: %s: expected %s, got %s (at %s)", op, what,
                   want->sig, got->sig, place(where));
}

/* A function argument: n parameters of the given types; returns its result type. */
static const lacc_type *expect_fun(lacc_ctx *ctx, const char *op, int i, const lacc_node *f,
                                   int nparams, const lacc_type *const *params,
                                   const char *where) {
  if (expect_level(ctx, op, i, f, L_LAM, where) != LACC_OK) return NULL;
  if (f->nparams != nparams) {
    ctx_error(ctx, LACC_ERR_TYPE, "%s: expected a function of %d argument%s, got one of %d (at %s)",
              op, nparams, nparams == 1 ? "" : "s", f->nparams, place(where));
    return NULL;
  }
  for (int p = 0; p < nparams; p++) {
    char what[64];
    snprintf(what, sizeof what, "function argument %d", p + 1);
    if (expect_type(ctx, op, what, params[p], f->kids[p]->type, where) != LACC_OK) return NULL;
  }
  return f->type;
}

static int expect_shape(lacc_ctx *ctx, const char *op, const lacc_node *sh, int *rank,
                        const char *where) {
  if (expect_level(ctx, op, 0, sh, L_EXP, where) != LACC_OK) return ctx->errcode;
  if (!type_is_shape(sh->type, rank))
    return ctx_error(ctx, LACC_ERR_TYPE,
                     "%s: expected a shape (i64, or a tuple of 0 or 2 to 8 i64), got %s (at %s)",
                     op, sh->type->sig, place(where));
  return LACC_OK;
}

/* ---- scalar level */

/* A constant's type must be a scalar; v is converted to it (wrapping, saturating). */
static lacc_node *constant(lacc_ctx *ctx, const char *type, scalar_kind from, lacc_val v,
                           const char *where) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  if (t == NULL) return NULL;
  if (t->kind != T_SCALAR) {
    ctx_error(ctx, LACC_ERR_TYPE, "constant: expected a scalar type, got %s (at %s)", t->sig,
              place(where));
    return NULL;
  }
  lacc_node *n = node_new(ctx, K_CONST, t, -1, 0, NULL, where);
  if (n != NULL) n->cval = val_cast(t->scalar, from, v);
  return n;
}

lacc_node *lacc_exp_const_i(lacc_ctx *ctx, const char *type, int64_t v, const char *where) {
  lacc_val x = { .i = v };
  return constant(ctx, type, S_I64, x, where);
}

lacc_node *lacc_exp_const_f(lacc_ctx *ctx, const char *type, double v, const char *where) {
  lacc_val x = { .d = v };
  return constant(ctx, type, S_F64, x, where);
}

lacc_node *lacc_exp_const_value(lacc_ctx *ctx, const char *type, const lacc_value *v,
                                const char *where) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  if (t == NULL) return NULL;
  lacc_val x = { .i = 0 };
  scalar_kind from = S_I64;
  if (t->kind == T_SCALAR && value_route(ctx, t->scalar, v, 1, place(where), &x, &from) != LACC_OK)
    return NULL;
  return constant(ctx, type, from, x, where);
}

lacc_node *lacc_exp_var(lacc_ctx *ctx, const char *type, const char *where) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  return t != NULL ? node_new(ctx, K_VAR, t, -1, 0, NULL, where) : NULL;
}

lacc_node *lacc_exp_prj(lacc_ctx *ctx, int field, lacc_node *tuple, const char *where) {
  if (check_args(ctx, "prj", 1, &tuple, where) != LACC_OK) return NULL;
  if (expect_level(ctx, "prj", 0, tuple, L_EXP, where) != LACC_OK) return NULL;
  const lacc_type *t = tuple->type;
  if (t->kind != T_TUPLE || field < 0 || field >= t->n) {
    ctx_error(ctx, LACC_ERR_TYPE, "prj: field %d of a value of type %s does not exist (at %s)",
              field + 1, t->sig, place(where));
    return NULL;
  }
  lacc_node *n = node_new(ctx, K_PRJ, t->fields[field], -1, 1, &tuple, where);
  if (n != NULL) n->field = field;
  return n;
}

/* bits: a bitcast, the same bits read as another type of their width (field 1). */
static lacc_node *build_cast(lacc_ctx *ctx, const char *type, lacc_node *x, int bits,
                             const char *where) {
  const char *op = bits ? "bitcast" : "cast";
  if (check_args(ctx, op, 1, &x, where) != LACC_OK) return NULL;
  if (expect_level(ctx, op, 0, x, L_EXP, where) != LACC_OK) return NULL;
  const lacc_type *t = type_parse(ctx, type);
  if (t == NULL) return NULL;
  if (t->kind != T_SCALAR || x->type->kind != T_SCALAR) {
    ctx_error(ctx, LACC_ERR_TYPE, "%s: expected scalar types, got %s to %s (at %s)", op,
              x->type->sig, t->sig, place(where));
    return NULL;
  }
  scalar_kind to = t->scalar, from = x->type->scalar;
  if (bits && (to == S_BOOL || from == S_BOOL || scalar_bits(to) != scalar_bits(from))) {
    ctx_error(ctx, LACC_ERR_TYPE, "bitcast: expected number types of one width, got %s "
              "(%d bits) to %s (%d bits) (at %s)", x->type->sig, scalar_bits(from), t->sig,
              scalar_bits(to), place(where));
    return NULL;
  }
  lacc_node *n = node_new(ctx, K_CAST, t, -1, 1, &x, where);
  if (n != NULL) n->field = bits;
  return n;
}

lacc_node *lacc_exp_cast(lacc_ctx *ctx, const char *type, lacc_node *x, const char *where) {
  return build_cast(ctx, type, x, 0, where);
}

lacc_node *lacc_exp_bitcast(lacc_ctx *ctx, const char *type, lacc_node *x, const char *where) {
  return build_cast(ctx, type, x, 1, where);
}

lacc_node *lacc_lam(lacc_ctx *ctx, int nparams, lacc_node *const *params, lacc_node *body,
                    const char *where) {
  lacc_node *kids[LACC_MAX_ARGS + 1];
  if (nparams < 0 || nparams >= LACC_MAX_ARGS) {
    ctx_error(ctx, LACC_ERR_ARG, "function: too many parameters (%d) (at %s)", nparams,
              place(where));
    return NULL;
  }
  for (int i = 0; i < nparams; i++) kids[i] = params[i];
  kids[nparams] = body;
  if (check_args(ctx, "function", nparams + 1, kids, where) != LACC_OK) return NULL;
  for (int i = 0; i < nparams; i++) {
    if (params[i]->kind != K_VAR) {
      ctx_error(ctx, LACC_ERR_ARG, "function: parameter %d is not a variable (at %s)", i + 1,
                place(where));
      return NULL;
    }
  }
  if (body->kind == K_LAM || node_level_of(body->kind) != L_EXP) {
    ctx_error(ctx, LACC_ERR_TYPE, "function: expected a scalar result, got %s (at %s)",
              level_word(node_level_of(body->kind)), place(where));
    return NULL;
  }
  lacc_node *n = node_new(ctx, K_LAM, body->type, -1, nparams + 1, kids, where);
  if (n != NULL) n->nparams = nparams;
  return n;
}

static lacc_node *build_prim(lacc_ctx *ctx, prim_op p, int nargs, lacc_node *const *args,
                             const char *where) {
  const lacc_type *ts[LACC_MAX_ARGS];
  for (int i = 0; i < nargs; i++) {
    if (expect_level(ctx, prim_name(p), i, args[i], L_EXP, where) != LACC_OK) return NULL;
    ts[i] = args[i]->type;
  }
  const lacc_type *r = prim_result_type(ctx, p, nargs, ts, place(where));
  if (r == NULL) return NULL;
  lacc_node *n = node_new(ctx, K_PRIM, r, -1, nargs, args, where);
  if (n != NULL) n->prim = p;
  return n;
}

static int expect_arity(lacc_ctx *ctx, const char *op, int want, int got, const char *where) {
  if (want == got) return LACC_OK;
  return ctx_error(ctx, LACC_ERR_ARG, "%s: expected %d argument%s, got %d (at %s)", op, want,
                   want == 1 ? "" : "s", got, place(where));
}

static lacc_node *build_cond(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                             const char *w) {
  const char *op = kind_name(k);
  for (int i = 0; i < nargs; i++)
    if (expect_level(ctx, op, i, args[i], L_EXP, w) != LACC_OK) return NULL;
  if (expect_type(ctx, op, "condition", type_scalar(ctx, S_BOOL), args[0]->type, w) ||
      expect_type(ctx, op, "else branch", args[1]->type, args[2]->type, w))
    return NULL;
  return node_new(ctx, k, args[1]->type, -1, nargs, args, w);
}

static lacc_node *build_tuple(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                              const char *w) {
  const lacc_type *ts[LACC_MAX_ARGS];
  for (int i = 0; i < nargs; i++) {
    if (expect_level(ctx, kind_name(k), i, args[i], L_EXP, w) != LACC_OK) return NULL;
    ts[i] = args[i]->type;
  }
  const lacc_type *t = type_tuple(ctx, nargs, ts);
  return t != NULL ? node_new(ctx, k, t, -1, nargs, args, w) : NULL;
}

static lacc_node *build_index(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                              const char *w) {
  const char *op = kind_name(k);
  if (expect_level(ctx, op, 0, args[0], L_ACC, w) != LACC_OK ||
      expect_level(ctx, op, 1, args[1], L_EXP, w) != LACC_OK)
    return NULL;
  const lacc_type *want = type_shape(ctx, args[0]->rank);
  if (want == NULL || expect_type(ctx, op, "index", want, args[1]->type, w) != LACC_OK)
    return NULL;
  return node_new(ctx, k, args[0]->type, -1, nargs, args, w);
}

static lacc_node *build_of_array(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                                 const char *w) {
  if (expect_level(ctx, kind_name(k), 0, args[0], L_ACC, w) != LACC_OK) return NULL;
  const lacc_type *t = k == K_SHAPE ? type_shape(ctx, args[0]->rank) : type_scalar(ctx, S_I64);
  return t != NULL ? node_new(ctx, k, t, -1, nargs, args, w) : NULL;
}

/* iterate(n, f, x): f applied n times; while(c, f, x): f applied while c holds. */
static lacc_node *build_loop(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                             const char *w) {
  const char *op = kind_name(k);
  if (expect_level(ctx, op, 2, args[2], L_EXP, w) != LACC_OK) return NULL;
  const lacc_type *t = args[2]->type;
  const lacc_type *step = expect_fun(ctx, op, 1, args[1], 1, &t, w);
  if (step == NULL || expect_type(ctx, op, "step result", t, step, w) != LACC_OK) return NULL;
  if (k == K_ITERATE) {
    if (expect_level(ctx, op, 0, args[0], L_EXP, w) != LACC_OK ||
        expect_type(ctx, op, "count", type_scalar(ctx, S_I64), args[0]->type, w) != LACC_OK)
      return NULL;
  } else {
    const lacc_type *c = expect_fun(ctx, op, 0, args[0], 1, &t, w);
    if (c == NULL ||
        expect_type(ctx, op, "condition result", type_scalar(ctx, S_BOOL), c, w) != LACC_OK)
      return NULL;
  }
  return node_new(ctx, k, t, -1, nargs, args, w);
}

lacc_node *lacc_exp_con(lacc_ctx *ctx, const char *type, int con, int nargs,
                        lacc_node *const *args, const char *where) {
  if (check_args(ctx, "constructor", nargs, args, where) != LACC_OK) return NULL;
  const lacc_type *t = type_parse(ctx, type);
  if (t == NULL) return NULL;
  if (t->kind != T_SUM || con < 0 || con >= t->n) {
    ctx_error(ctx, LACC_ERR_TYPE, "constructor %d of %s does not exist (at %s)", con + 1, t->sig,
              place(where));
    return NULL;
  }
  const lacc_type *payload = t->fields[con];
  char op[96];
  /* a structural variant's members are numbered, not named */
  const char *cn = t->cnames[con];
  snprintf(op, sizeof op, "%s%s", cn[0] >= '0' && cn[0] <= '9' ? "variant member " : "", cn);
  if (expect_arity(ctx, op, payload->n, nargs, where) != LACC_OK) return NULL;
  for (int i = 0; i < nargs; i++) {
    char what[64];
    snprintf(what, sizeof what, "field %d", i + 1);
    if (expect_level(ctx, op, i, args[i], L_EXP, where) != LACC_OK ||
        expect_type(ctx, op, what, payload->fields[i], args[i]->type, where) != LACC_OK)
      return NULL;
  }
  lacc_node *n = node_new(ctx, K_CON, t, -1, nargs, args, where);
  if (n != NULL) n->field = con;
  return n;
}

/* case(v, f1, ..., fn): one function per constructor of v's type, all with one result type. */
static lacc_node *build_case(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                             const char *w) {
  if (nargs < 1 || expect_level(ctx, "match", 0, args[0], L_EXP, w) != LACC_OK) {
    if (nargs < 1) ctx_error(ctx, LACC_ERR_ARG, "match: missing value (at %s)", place(w));
    return NULL;
  }
  const lacc_type *t = args[0]->type;
  if (t->kind != T_SUM) {
    ctx_error(ctx, LACC_ERR_TYPE, "match: expected a value of a sum type, got %s (at %s)", t->sig,
              place(w));
    return NULL;
  }
  if (nargs - 1 != t->n) {
    ctx_error(ctx, LACC_ERR_TYPE, "match: %s has %d constructors, got %d alternatives (at %s)",
              t->sig, t->n, nargs - 1, place(w));
    return NULL;
  }
  const lacc_type *result = NULL;
  for (int c = 0; c < t->n; c++) {
    const lacc_type *payload = t->fields[c];
    const lacc_type *r = expect_fun(ctx, "match", c + 1, args[c + 1], payload->n,
                                    (const lacc_type *const *)payload->fields, w);
    if (r == NULL) return NULL;
    if (result != NULL && r != result) {
      ctx_error(ctx, LACC_ERR_TYPE, "match: alternative %s: expected a result of %s, got %s (at %s)",
                t->cnames[c], result->sig, r->sig, place(w));
      return NULL;
    }
    result = r;
  }
  return node_new(ctx, k, result, -1, nargs, args, w);
}

/* ---- array level */

lacc_node *lacc_acc_use(lacc_ctx *ctx, lacc_array *a, const char *where) {
  ctx_clear(ctx);
  if (a == NULL || a->ctx != ctx) {
    ctx_error(ctx, LACC_ERR_ARG, "use: %s (at %s)",
              a == NULL ? "missing array" : "array belongs to another lacc context (Lua state)",
              place(where));
    return NULL;
  }
  lacc_node *n = node_new(ctx, K_USE, a->type, a->rank, 0, NULL, where);
  if (n != NULL) {
    n->array = a;
    lacc_array_retain(a);
  }
  return n;
}

/* An array argument of a program made by lacc_program_new: its type, rank and layout
 * are fixed when it is traced; the array arrives with each run. */
lacc_node *lacc_acc_param(lacc_ctx *ctx, int index, const char *type, int rank,
                          const char *layout, const char *where) {
  ctx_clear(ctx);
  layout_strategy st;
  const lacc_type *t = type_parse(ctx, type);
  if (t == NULL) return NULL;
  if (index < 0 || rank < 0 || rank > LACC_MAX_RANK || !layout_lookup(layout, &st)) {
    ctx_error(ctx, LACC_ERR_ARG, "param: bad index, rank or layout (at %s)", place(where));
    return NULL;
  }
  lacc_node *n = node_new(ctx, K_PARAM, t, rank, 0, NULL, where);
  if (n != NULL) {
    n->field = index;
    n->cval.i = (int64_t)st;
  }
  return n;
}

static lacc_node *build_unit(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                             const char *w) {
  if (expect_level(ctx, kind_name(k), 0, args[0], L_EXP, w) != LACC_OK) return NULL;
  return node_new(ctx, k, args[0]->type, 0, nargs, args, w);
}

static lacc_node *build_generate(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                                 const char *w) {
  const char *op = kind_name(k);
  int rank;
  if (expect_shape(ctx, op, args[0], &rank, w) != LACC_OK) return NULL;
  const lacc_type *t = expect_fun(ctx, op, 1, args[1], 1, &args[0]->type, w);
  return t != NULL ? node_new(ctx, k, t, rank, nargs, args, w) : NULL;
}

static lacc_node *build_map(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                            const char *w) {
  const lacc_type *ts[LACC_MAX_ARGS];
  if (nargs < 2) {
    ctx_error(ctx, LACC_ERR_ARG, "map: expected a function and at least one array (at %s)",
              place(w));
    return NULL;
  }
  for (int i = 1; i < nargs; i++) {
    if (expect_level(ctx, "map", i, args[i], L_ACC, w) != LACC_OK) return NULL;
    if (args[i]->rank != args[1]->rank) {
      ctx_error(ctx, LACC_ERR_TYPE, "map: arrays of one rank expected, got ranks %d and %d (at %s)",
                args[1]->rank, args[i]->rank, place(w));
      return NULL;
    }
    ts[i - 1] = args[i]->type;
  }
  const lacc_type *t = expect_fun(ctx, "map", 0, args[0], nargs - 1, ts, w);
  return t != NULL ? node_new(ctx, k, t, args[1]->rank, nargs, args, w) : NULL;
}

/* fold, fold1 and the four scans: a function of two elements, a start value for fold,
 * scanl and scanr, and an array of rank 1 or more. */
static lacc_node *build_fold(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                             const char *w) {
  const char *op = kind_name(k);
  int with_z = node_has(k, NF_Z);
  if (expect_level(ctx, op, nargs - 1, args[nargs - 1], L_ACC, w) != LACC_OK) return NULL;
  const lacc_node *xs = args[nargs - 1];
  if (xs->rank < 1) {
    ctx_error(ctx, LACC_ERR_TYPE, "%s: expected an array of rank 1 or more, got rank 0 (at %s)", op,
              place(w));
    return NULL;
  }
  const lacc_type *ps[2] = { xs->type, xs->type };
  const lacc_type *r = expect_fun(ctx, op, 0, args[0], 2, ps, w);
  if (r == NULL || expect_type(ctx, op, "function result", xs->type, r, w) != LACC_OK) return NULL;
  if (with_z && (expect_level(ctx, op, 1, args[1], L_EXP, w) != LACC_OK ||
                 expect_type(ctx, op, "initial value", xs->type, args[1]->type, w)))
    return NULL;
  return node_new(ctx, k, xs->type, is_scan(k) ? xs->rank : xs->rank - 1, nargs, args, w);
}

static lacc_node *build_backpermute(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                                    const char *w) {
  const char *op = kind_name(k);
  int rank;
  if (expect_shape(ctx, op, args[0], &rank, w) != LACC_OK ||
      expect_level(ctx, op, 2, args[2], L_ACC, w) != LACC_OK)
    return NULL;
  const lacc_type *src = type_shape(ctx, args[2]->rank);
  const lacc_type *r = expect_fun(ctx, op, 1, args[1], 1, &args[0]->type, w);
  if (src == NULL || r == NULL ||
      expect_type(ctx, op, "index function result", src, r, w) != LACC_OK)
    return NULL;
  return node_new(ctx, k, args[2]->type, rank, nargs, args, w);
}

static lacc_node *build_compute(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                                const char *w) {
  if (expect_level(ctx, kind_name(k), 0, args[0], L_ACC, w) != LACC_OK) return NULL;
  return node_new(ctx, k, args[0]->type, args[0]->rank, nargs, args, w);
}

/* sortperm(keys): keys of u32 or u64, rank 1 or more; the positions (i64) of each row's
 * elements in their stable ascending order. sortkeys(keys): the keys, each row sorted. */
static lacc_node *build_sortperm(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                                 const char *w) {
  const char *op = kind_name(k);
  if (expect_level(ctx, op, 0, args[0], L_ACC, w) != LACC_OK) return NULL;
  const lacc_type *t = args[0]->type;
  if (t->kind != T_SCALAR || (t->scalar != S_U32 && t->scalar != S_U64) || args[0]->rank < 1) {
    ctx_error(ctx, LACC_ERR_TYPE, "%s: expected keys of u32 or u64 of rank 1 or more, got rank %d "
              "%s (at %s)", op, args[0]->rank, t->sig, place(w));
    return NULL;
  }
  const lacc_type *r = k == K_SORTKEYS ? t : type_scalar(ctx, S_I64);
  return node_new(ctx, k, r, args[0]->rank, nargs, args, w);
}

/* permute(combine, defaults, f, xs): f maps source indices to target indices of the
 * defaults' shape, all -1 to drop the element; combine(new, old). */
static lacc_node *build_permute(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                                const char *w) {
  const char *op = kind_name(k);
  if (expect_level(ctx, op, 1, args[1], L_ACC, w) != LACC_OK ||
      expect_level(ctx, op, 3, args[3], L_ACC, w) != LACC_OK)
    return NULL;
  const lacc_node *def = args[1], *xs = args[3];
  if (expect_type(ctx, op, "source element", def->type, xs->type, w) != LACC_OK) return NULL;
  const lacc_type *ps[2] = { def->type, def->type };
  const lacc_type *r = expect_fun(ctx, op, 0, args[0], 2, ps, w);
  if (r == NULL || expect_type(ctx, op, "function result", def->type, r, w) != LACC_OK)
    return NULL;
  const lacc_type *src = type_shape(ctx, xs->rank), *dst = type_shape(ctx, def->rank);
  if (src == NULL || dst == NULL) return NULL;
  const lacc_type *ti = expect_fun(ctx, op, 2, args[2], 1, &src, w);
  if (ti == NULL || expect_type(ctx, op, "index function result", dst, ti, w) != LACC_OK)
    return NULL;
  return node_new(ctx, k, def->type, def->rank, nargs, args, w);
}

/* append(xs, ys), interleave(xs, ys): arrays of one type and rank (1 or more); the outer
 * dimensions intersect; the innermost has n1 + n2, or 2 min(n1, n2), elements. */
static lacc_node *build_push(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                             const char *w) {
  const char *op = kind_name(k);
  if (expect_level(ctx, op, 0, args[0], L_ACC, w) != LACC_OK ||
      expect_level(ctx, op, 1, args[1], L_ACC, w) != LACC_OK ||
      expect_type(ctx, op, "second array's element", args[0]->type, args[1]->type, w) != LACC_OK)
    return NULL;
  if (args[0]->rank != args[1]->rank || args[0]->rank < 1) {
    ctx_error(ctx, LACC_ERR_TYPE, "%s: arrays of one rank, 1 or more, expected, got ranks %d and %d (at %s)",
              op, args[0]->rank, args[1]->rank, place(w));
    return NULL;
  }
  return node_new(ctx, k, args[0]->type, args[0]->rank, nargs, args, w);
}

/* stencil(f, xs, spec [, c]): spec an i64 constant (boundary, window sizes); f takes one
 * tuple of the window's elements in row-major order; c the constant boundary's value. */
static lacc_node *build_stencil(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                                const char *w) {
  if (nargs < 3 || nargs > 4) {
    ctx_error(ctx, LACC_ERR_ARG, "stencil: expected 3 or 4 arguments, got %d (at %s)", nargs, place(w));
    return NULL;
  }
  if (expect_level(ctx, "stencil", 1, args[1], L_ACC, w) != LACC_OK) return NULL;
  const lacc_node *xs = args[1], *spec = args[2];
  if (spec->kind != K_CONST || xs->rank < 1 || xs->rank > LACC_MAX_STENCIL_RANK) {
    ctx_error(ctx, LACC_ERR_ARG, "stencil: expected a window spec and an array of rank 1 to %d "
              "(at %s)", LACC_MAX_STENCIL_RANK, place(w));
    return NULL;
  }
  int s = (int)spec->cval.i, count = 1;
  boundary_kind b = stencil_boundary(s);
  for (int d = 0; d < xs->rank; d++) {
    int win = stencil_window(s, d);
    if (win < 1 || win > LACC_MAX_WINDOW || win % 2 == 0) {
      ctx_error(ctx, LACC_ERR_ARG, "stencil: window sizes must be odd, 1 to %d (at %s)",
                LACC_MAX_WINDOW, place(w));
      return NULL;
    }
    count *= win;
  }
  if (b > B_CONSTANT || (b == B_CONSTANT) != (nargs == 4)) {
    ctx_error(ctx, LACC_ERR_ARG, "stencil: a bad boundary (at %s)", place(w));
    return NULL;
  }
  if (b == B_CONSTANT && (expect_level(ctx, "stencil", 3, args[3], L_EXP, w) != LACC_OK ||
                          expect_type(ctx, "stencil", "boundary value", xs->type, args[3]->type, w)))
    return NULL;
  if (expect_level(ctx, "stencil", 0, args[0], L_LAM, w) != LACC_OK) return NULL;
  const lacc_node *f = args[0];
  const lacc_type *pt = f->nparams == 1 ? f->kids[0]->type : NULL;
  int ok = pt != NULL && pt->kind == T_TUPLE && pt->n == count;
  for (int i = 0; ok && i < count; i++) ok = pt->fields[i] == xs->type;
  if (!ok) {
    ctx_error(ctx, LACC_ERR_TYPE, "stencil: expected a function of a %d-element window of %s (at %s)",
              count, xs->type->sig, place(w));
    return NULL;
  }
  lacc_node *kids[3] = { args[0], args[1], nargs == 4 ? args[3] : NULL };
  lacc_node *n = node_new(ctx, k, f->type, xs->rank, nargs == 4 ? 3 : 2, kids, w);
  if (n != NULL) n->field = s;
  return n;
}

static lacc_node *build_acond(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                              const char *w) {
  const char *op = kind_name(k);
  if (expect_level(ctx, op, 0, args[0], L_EXP, w) != LACC_OK ||
      expect_level(ctx, op, 1, args[1], L_ACC, w) != LACC_OK ||
      expect_level(ctx, op, 2, args[2], L_ACC, w) != LACC_OK)
    return NULL;
  const lacc_type *b = type_parse(ctx, "bool");
  if (b == NULL || expect_type(ctx, op, "condition", b, args[0]->type, w) != LACC_OK ||
      expect_type(ctx, op, "else array's element", args[1]->type, args[2]->type, w) != LACC_OK)
    return NULL;
  if (args[1]->rank != args[2]->rank) {
    ctx_error(ctx, LACC_ERR_TYPE, "acond: arrays of one rank expected, got ranks %d and %d (at %s)",
              args[1]->rank, args[2]->rank, place(w));
    return NULL;
  }
  return node_new(ctx, k, args[1]->type, args[1]->rank, nargs, args, w);
}

/* awhile(init, var, cond, body): var the parameter node the two were traced with. */
/* awhile(init_1..init_m, x_1..x_m, cond, body_1..body_m): the loop of m arrays (the node
 * is its first); awhile(loop, i): array i (an integer constant, 0-based) of that loop. */
static lacc_node *build_awhile_array(lacc_ctx *ctx, lacc_node *const *args, const char *w) {
  const lacc_node *i = args[1];
  if (args[0]->kind != K_AWHILE || i->kind != K_CONST || i->type->kind != T_SCALAR ||
      !scalar_is_int(i->type->scalar) ||
      i->cval.i < 0 || i->cval.i >= args[0]->nparams) {
    ctx_error(ctx, LACC_ERR_ARG, "awhile: expected a loop and the index of one of its arrays "
              "(at %s)", place(w));
    return NULL;
  }
  return awhile_array(ctx, args[0], (int)i->cval.i, w);
}

static lacc_node *build_awhile(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                               const char *w) {
  const char *op = kind_name(k);
  if (nargs == 2) return build_awhile_array(ctx, args, w);
  int m = (nargs - 1) / 3;
  if (nargs < 4 || nargs % 3 != 1 || m > LACC_MAX_FIELDS) {
    ctx_error(ctx, LACC_ERR_ARG, "awhile: expected 3m + 1 arguments (m initial arrays, m "
              "variables, a condition, m bodies), got %d (at %s)", nargs, place(w));
    return NULL;
  }
  for (int i = 0; i < nargs; i++)
    if (expect_level(ctx, op, i, args[i], L_ACC, w) != LACC_OK) return NULL;
  lacc_node *const *init = args, *const *var = args + m, *cond = args[2 * m],
                   *const *body = args + 2 * m + 1;
  const lacc_type *b = type_parse(ctx, "bool");
  if (b == NULL) return NULL;
  for (int i = 0; i < m; i++) {
    if (var[i]->kind != K_PARAM || var[i]->type != init[i]->type ||
        var[i]->rank != init[i]->rank || var[i]->field < 0) {
      ctx_error(ctx, LACC_ERR_ARG, "awhile: the loop's variable must be a fresh parameter of "
                "the initial array's type (at %s)", place(w));
      return NULL;
    }
    for (int j = 0; j < i; j++)
      if (var[j] == var[i]) {
        ctx_error(ctx, LACC_ERR_ARG, "awhile: the loop's variables must be distinct (at %s)",
                  place(w));
        return NULL;
      }
    if (expect_type(ctx, op, "body's element", init[i]->type, body[i]->type, w) != LACC_OK)
      return NULL;
    if (body[i]->rank != init[i]->rank) {
      ctx_error(ctx, LACC_ERR_TYPE, "awhile: the body must keep the array's rank (at %s)", place(w));
      return NULL;
    }
  }
  if (expect_type(ctx, op, "condition's element", b, cond->type, w) != LACC_OK) return NULL;
  if (cond->rank != 0) {
    ctx_error(ctx, LACC_ERR_TYPE, "awhile: the condition must give an array of rank 0 (at %s)",
              place(w));
    return NULL;
  }
  return awhile_build(ctx, m, init, var, cond, body, w);
}

static lacc_node *build_reshape(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                                const char *w) {
  const char *op = kind_name(k);
  int rank;
  if (expect_shape(ctx, op, args[0], &rank, w) != LACC_OK ||
      expect_level(ctx, op, 1, args[1], L_ACC, w) != LACC_OK)
    return NULL;
  return node_new(ctx, k, args[1]->type, rank, nargs, args, w);
}

/* ---- operations called by name */

typedef lacc_node *(*builder)(lacc_ctx *ctx, node_kind k, int nargs, lacc_node *const *args,
                              const char *w);

/* One per NF_OP kind of the node table (nodes.h), which names them and fixes their
 * level and, where fixed, their arity. */
static const builder builders[K_NKINDS] = {
  [K_COND] = build_cond, [K_TUPLE] = build_tuple, [K_INDEX] = build_index,
  [K_SHAPE] = build_of_array, [K_SIZE] = build_of_array, [K_ITERATE] = build_loop,
  [K_WHILE] = build_loop, [K_CASE] = build_case,
  [K_UNIT] = build_unit, [K_GENERATE] = build_generate, [K_MAP] = build_map,
  [K_FOLD] = build_fold, [K_FOLD1] = build_fold, [K_SCANL] = build_fold,
  [K_SCANL1] = build_fold, [K_SCANR] = build_fold, [K_SCANR1] = build_fold,
  [K_BACKPERMUTE] = build_backpermute, [K_RESHAPE] = build_reshape,
  [K_COMPUTE] = build_compute, [K_PERMUTE] = build_permute, [K_APPEND] = build_push,
  [K_INTERLEAVE] = build_push, [K_STENCIL] = build_stencil, [K_ACOND] = build_acond,
  [K_AWHILE] = build_awhile, [K_SORTPERM] = build_sortperm,
  [K_SORTKEYS] = build_sortperm,
};

/* The operation op of level l: its kind looked up in the node table, its arguments
 * counted when the table fixes their number, then built. */
static lacc_node *build_op(lacc_ctx *ctx, node_level l, const char *op, int nargs,
                           lacc_node *const *args, const char *where) {
  node_kind k;
  if (!node_lookup(op, &k) || node_level_of(k) != l || builders[k] == NULL) {
    ctx_error(ctx, LACC_ERR_ARG, "unknown %s operation '%s' (at %s)",
              l == L_ACC ? "array" : "scalar", op, place(where));
    return NULL;
  }
  int want = node_arity(k);
  if (want != ARITY_ANY && expect_arity(ctx, op, want, nargs, where) != LACC_OK) return NULL;
  return builders[k](ctx, k, nargs, args, where);
}

lacc_node *lacc_exp_op(lacc_ctx *ctx, const char *op, int nargs, lacc_node *const *args,
                       const char *where) {
  if (op == NULL) op = "?";
  if (check_args(ctx, op, nargs, args, where) != LACC_OK) return NULL;
  prim_op p;
  if (prim_lookup(op, &p)) return build_prim(ctx, p, nargs, args, where);
  return build_op(ctx, L_EXP, op, nargs, args, where);
}

lacc_node *lacc_acc_op(lacc_ctx *ctx, const char *op, int nargs, lacc_node *const *args,
                       const char *where) {
  if (op == NULL) op = "?";
  if (check_args(ctx, op, nargs, args, where) != LACC_OK) return NULL;
  return build_op(ctx, L_ACC, op, nargs, args, where);
}
