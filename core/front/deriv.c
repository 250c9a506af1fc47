/* deriv.c: derivatives of scalar expressions, as new expressions of the same graph.
 *
 * Owns: lacc_exp_jvp, forward mode on the scalar level: the derivative of an expression
 * along tangents given for some of its nodes (variables, or any node treated as one, such
 * as an array read), built from the expression's own nodes, so the primal values a rule
 * reads are shared with the primal, not copied (sharing recovery later finds them once,
 * and a pullback recomputes them rather than storing them); the rule of every scalar
 * primitive, cond, cast, tuple and projection; lacc_exp_reads, whether an expression
 * reads an array, and lacc_exp_sites, where; lacc_exp_is_op, whether a combining function
 * is one primitive (a fold of + has a rule of its own); lacc_exp_is_position, whether a
 * read is at the reader's own position (its cotangent then needs no scatter), and
 * lacc_exp_index_dims, whether it is at some of its dimensions and constants (a sum over
 * the others, no scatter either); lacc_exp_dims_used, which of a position's dimensions an
 * expression reads (a scatter from the others' sum). The array level's rules, built from these, are lua/lacc/grad.lua's.
 * Must not: change the expression it differentiates, or differentiate what has no rule
 * (a loop, a match) where it depends on a tangent: that is an error naming it.
 */
#include <math.h>
#include <stdlib.h>
#include "front/front.h"
#include "base/vec.h"

typedef struct {
  lacc_ctx *ctx;
  const char *where;
  int n;
  lacc_node *const *vars, *const *tans;
  uint64_t gen;        /* nodes with mark == gen hold the index of their derivative in tmp */
  lacc_node **memo;    /* derivatives by tmp; NULL: zero */
  int nmemo, capmemo;
  lacc_node **made;    /* every node built here: released at the end (the result retained) */
  int nmade, capmade;
  int failed;
} jvp_state;

static lacc_node *keep(jvp_state *s, lacc_node *x) {
  if (x == NULL) {
    s->failed = 1;
    return NULL;
  }
  if (vec_reserve(&s->made, &s->capmade, s->nmade + 1, 64, sizeof *s->made) != 0) {
    lacc_node_release(x);
    err_oom(s->ctx);
    s->failed = 1;
    return NULL;
  }
  s->made[s->nmade++] = x;
  return x;
}

static lacc_node *op(jvp_state *s, const char *name, int n, lacc_node *a, lacc_node *b,
                     lacc_node *c) {
  if (s->failed) return NULL;
  lacc_node *args[3] = { a, b, c };
  return keep(s, lacc_exp_op(s->ctx, name, n, args, s->where));
}
static lacc_node *op1(jvp_state *s, const char *name, lacc_node *a) { return op(s, name, 1, a, NULL, NULL); }
static lacc_node *op2(jvp_state *s, const char *name, lacc_node *a, lacc_node *b) {
  return op(s, name, 2, a, b, NULL);
}

/* A float constant of x's type. */
static lacc_node *num(jvp_state *s, const lacc_node *x, double v) {
  if (s->failed) return NULL;
  return keep(s, lacc_exp_const_f(s->ctx, x->type->sig, v, s->where));
}

/* The zero of type t (tuples of zeros; NULL on failure). */
static lacc_node *zero_of(jvp_state *s, const lacc_type *t) {
  if (s->failed) return NULL;
  if (t->kind == T_SCALAR) {
    if (t->scalar == S_BOOL) {
      lacc_value v = { .kind = LACC_VALUE_BOOL, .name = "boolean" };
      return keep(s, lacc_exp_const_value(s->ctx, t->sig, &v, s->where));
    }
    return keep(s, lacc_exp_const_i(s->ctx, t->sig, 0, s->where));
  }
  if (t->kind != T_TUPLE || t->n > LACC_MAX_ARGS) {
    ctx_error(s->ctx, LACC_ERR_TYPE, "derivative: no zero of type %s (at %s)", t->sig, s->where);
    s->failed = 1;
    return NULL;
  }
  lacc_node *f[LACC_MAX_ARGS];
  for (int i = 0; i < t->n; i++)
    if ((f[i] = zero_of(s, t->fields[i])) == NULL) return NULL;
  return keep(s, lacc_exp_op(s->ctx, "tuple", t->n, f, s->where));
}

/* a' + b', either NULL (zero). */
static lacc_node *plus(jvp_state *s, lacc_node *a, lacc_node *b) {
  if (a == NULL) return b;
  if (b == NULL) return a;
  return op2(s, "add", a, b);
}
/* k * d, d NULL (zero) or k NULL (one). */
static lacc_node *times(jvp_state *s, lacc_node *k, lacc_node *d) {
  if (d == NULL) return NULL;
  return k == NULL ? d : op2(s, "mul", k, d);
}

/* Whether anything a tangent is given for lies under x. */
static int holds_tangent(jvp_state *s, lacc_node *x);

static lacc_node *d(jvp_state *s, lacc_node *x);

/* The rule of a primitive: e = p(a, ...), da... the kids' derivatives (NULL: zero). */
static lacc_node *d_prim(jvp_state *s, lacc_node *e) {
  lacc_node *a = e->nkids > 0 ? e->kids[0] : NULL, *b = e->nkids > 1 ? e->kids[1] : NULL;
  lacc_node *da = a ? d(s, a) : NULL, *db = b ? d(s, b) : NULL;
  lacc_node *dc = e->nkids > 2 ? d(s, e->kids[2]) : NULL;
  if (s->failed || (da == NULL && db == NULL && dc == NULL)) return NULL;
  switch (e->prim) {
  case P_ADD: return plus(s, da, db);
  case P_SUB: return db == NULL ? da : da == NULL ? op1(s, "neg", db) : op2(s, "sub", da, db);
  case P_NEG: return op1(s, "neg", da);
  case P_MUL: return plus(s, times(s, b, da), times(s, a, db));
  case P_DIV:   /* (a' - e b') / b */
    return op2(s, "div", db == NULL ? da : da == NULL ? op1(s, "neg", op2(s, "mul", e, db))
                                         : op2(s, "sub", da, op2(s, "mul", e, db)), b);
  case P_POW: {   /* a' b a^(b-1) + b' e log a */
    lacc_node *t1 = da ? times(s, op2(s, "mul", b, op2(s, "pow", a, op2(s, "sub", b, num(s, b, 1)))), da) : NULL;
    lacc_node *t2 = db ? times(s, op2(s, "mul", e, op1(s, "log", a)), db) : NULL;
    return plus(s, t1, t2);
  }
  case P_MOD:   /* a - b floor(a / b) */
    return db == NULL ? da : plus(s, da, op1(s, "neg", times(s, op1(s, "floor", op2(s, "div", a, b)), db)));
  case P_ABS: return times(s, op1(s, "signum", a), da);
  case P_MIN: case P_MAX: {   /* the argument it returns; a tie: the first */
    lacc_node *first = op2(s, e->prim == P_MIN ? "le" : "ge", a, b);
    lacc_node *za = da ? da : num(s, e, 0), *zb = db ? db : num(s, e, 0);
    return op(s, "cond", 3, first, za, zb);
  }
  case P_SQRT: return op2(s, "div", da, op2(s, "mul", num(s, e, 2), e));
  case P_EXP: return times(s, e, da);
  case P_EXP2: return times(s, op2(s, "mul", e, num(s, e, M_LN2)), da);
  case P_EXPM1: return times(s, op2(s, "add", e, num(s, e, 1)), da);
  case P_LOG: return op2(s, "div", da, a);
  case P_LOG2: return op2(s, "div", da, op2(s, "mul", a, num(s, e, M_LN2)));
  case P_LOG10: return op2(s, "div", da, op2(s, "mul", a, num(s, e, M_LN10)));
  case P_LOG1P: return op2(s, "div", da, op2(s, "add", a, num(s, e, 1)));
  case P_SIN: return times(s, op1(s, "cos", a), da);
  case P_COS: return times(s, op1(s, "neg", op1(s, "sin", a)), da);
  case P_TAN: return times(s, op2(s, "add", num(s, e, 1), op2(s, "mul", e, e)), da);
  case P_SINH: return times(s, op1(s, "cosh", a), da);
  case P_COSH: return times(s, op1(s, "sinh", a), da);
  case P_TANH: return times(s, op2(s, "sub", num(s, e, 1), op2(s, "mul", e, e)), da);
  case P_ASIN: case P_ACOS: {   /* +-1 / sqrt(1 - a^2) */
    lacc_node *r = op2(s, "div", da, op1(s, "sqrt", op2(s, "sub", num(s, e, 1), op2(s, "mul", a, a))));
    return e->prim == P_ASIN ? r : op1(s, "neg", r);
  }
  case P_ATAN: return op2(s, "div", da, op2(s, "add", num(s, e, 1), op2(s, "mul", a, a)));
  case P_ASINH: return op2(s, "div", da, op1(s, "sqrt", op2(s, "add", op2(s, "mul", a, a), num(s, e, 1))));
  case P_ACOSH: return op2(s, "div", da, op1(s, "sqrt", op2(s, "sub", op2(s, "mul", a, a), num(s, e, 1))));
  case P_ATANH: return op2(s, "div", da, op2(s, "sub", num(s, e, 1), op2(s, "mul", a, a)));
  case P_CBRT: return op2(s, "div", da, op2(s, "mul", num(s, e, 3), op2(s, "mul", e, e)));
  case P_ATAN2: {   /* atan2(a, b): (b a' - a b') / (a^2 + b^2) */
    lacc_node *den = op2(s, "add", op2(s, "mul", a, a), op2(s, "mul", b, b));
    lacc_node *num_ = plus(s, times(s, b, da), db ? op1(s, "neg", op2(s, "mul", a, db)) : NULL);
    return op2(s, "div", num_, den);
  }
  case P_HYPOT: return op2(s, "div", plus(s, times(s, a, da), times(s, b, db)), e);
  case P_FMA: return plus(s, plus(s, times(s, b, da), times(s, a, db)), dc);
  default:
    /* floor, ceil, round, truncate, round_even, signum, idiv: steps (zero almost
     * everywhere); comparisons, bits and integer arithmetic are not floats */
    return NULL;
  }
}

static lacc_node *d_uncached(jvp_state *s, lacc_node *x) {
  for (int i = 0; i < s->n; i++)
    if (x == s->vars[i]) return s->tans[i];
  if (x->type->kind == T_SCALAR && !scalar_is_float(x->type->scalar)) return NULL;
  switch (x->kind) {
  case K_CONST: case K_VAR: case K_SHAPE: case K_SIZE: case K_INDEX:
    return NULL;   /* an array read: a constant unless a tangent is given for it */
  case K_PRIM: return d_prim(s, x);
  case K_CAST:
    if (x->field) {   /* a bitcast: its float's bits come from a non-float */
      if (!holds_tangent(s, x->kids[0])) return NULL;
      break;
    } else {
      lacc_node *dk = d(s, x->kids[0]);
      return dk == NULL ? NULL : keep(s, lacc_exp_cast(s->ctx, x->type->sig, dk, s->where));
    }
  case K_COND: {
    lacc_node *dt = d(s, x->kids[1]), *de = d(s, x->kids[2]);
    if (s->failed || (dt == NULL && de == NULL)) return NULL;
    if (dt == NULL) dt = zero_of(s, x->type);
    if (de == NULL) de = zero_of(s, x->type);
    return op(s, "cond", 3, x->kids[0], dt, de);
  }
  case K_TUPLE: {
    lacc_node *f[LACC_MAX_ARGS];
    int any = 0;
    for (int i = 0; i < x->nkids; i++) any |= (f[i] = d(s, x->kids[i])) != NULL;
    if (s->failed || !any) return NULL;
    for (int i = 0; i < x->nkids; i++)
      if (f[i] == NULL && (f[i] = zero_of(s, x->kids[i]->type)) == NULL) return NULL;
    return keep(s, lacc_exp_op(s->ctx, "tuple", x->nkids, f, s->where));
  }
  case K_PRJ: {
    lacc_node *dt = d(s, x->kids[0]);
    if (dt == NULL) return NULL;
    if (dt->kind == K_TUPLE) return dt->kids[x->field];
    return keep(s, lacc_exp_prj(s->ctx, x->field, dt, s->where));
  }
  default:
    if (!holds_tangent(s, x)) return NULL;
    break;
  }
  if (!s->failed)
    ctx_error(s->ctx, LACC_ERR_ARG, "derivative: no rule for %s (built at %s) of a value "
              "being differentiated (at %s)", x->kind == K_CAST ? "bitcast" : kind_name(x->kind),
              x->where, s->where);
  s->failed = 1;
  return NULL;
}

static void touch(lacc_node *x, uint64_t gen) {
  if (x->mark != gen) {
    x->mark = gen;
    x->tmp = -1;
  }
}

static lacc_node *d(jvp_state *s, lacc_node *x) {
  if (s->failed) return NULL;
  touch(x, s->gen);
  if (x->tmp >= 0) return s->memo[x->tmp];
  lacc_node *r = d_uncached(s, x);
  if (s->failed) return NULL;
  if (vec_reserve(&s->memo, &s->capmemo, s->nmemo + 1, 64, sizeof *s->memo) != 0) {
    err_oom(s->ctx);
    s->failed = 1;
    return NULL;
  }
  s->memo[s->nmemo] = r;
  x->tmp = s->nmemo++;
  return r;
}

/* A walk that visits each node of a DAG once: the nodes seen, searched linearly (the
 * walks below run only at bitcasts, loops, matches and array reads: small sets); past
 * WALK_MAX nodes the answer is "yes", which gives an error, never a wrong derivative. */
enum { WALK_MAX = 4096 };
typedef struct {
  const lacc_node *seen[WALK_MAX];
  int n;
} walk;

static int seen_before(walk *w, const lacc_node *x) {
  for (int i = 0; i < w->n; i++)
    if (w->seen[i] == x) return 1;
  return 0;
}

/* 1: x holds a var with a tangent; 0: not; -1: too many nodes to tell. */
static int holds_rec(jvp_state *s, walk *w, const lacc_node *x) {
  for (int i = 0; i < s->n; i++)
    if (x == s->vars[i] && s->tans[i] != NULL) return 1;
  if (seen_before(w, x)) return 0;
  if (w->n == WALK_MAX) return -1;
  w->seen[w->n++] = x;
  for (int i = 0; i < x->nkids; i++) {
    int r = holds_rec(s, w, x->kids[i]);
    if (r != 0) return r;
  }
  return 0;
}
static int holds_tangent(jvp_state *s, lacc_node *x) {
  walk *w = malloc(sizeof *w);
  if (w == NULL) return 1;
  w->n = 0;
  int r = holds_rec(s, w, x);
  free(w);
  return r != 0;
}

lacc_node *lacc_exp_jvp(lacc_ctx *ctx, lacc_node *e, int n, lacc_node *const *vars,
                        lacc_node *const *tangents, const char *where) {
  ctx_clear(ctx);
  if (where == NULL) where = "?";
  if (e == NULL || n < 0 || (n > 0 && (vars == NULL || tangents == NULL))) {
    ctx_error(ctx, LACC_ERR_ARG, "derivative: missing expression or variables (at %s)", where);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    if (vars[i] == NULL || node_level_of(vars[i]->kind) != L_EXP ||
        (tangents[i] != NULL && tangents[i]->type != vars[i]->type)) {
      ctx_error(ctx, LACC_ERR_TYPE, "derivative: tangent %d is not of its variable's type "
                "(at %s)", i + 1, where);
      return NULL;
    }
  }
  if (node_level_of(e->kind) != L_EXP) {
    ctx_error(ctx, LACC_ERR_TYPE, "derivative: expected a scalar expression (at %s)", where);
    return NULL;
  }
  jvp_state s = { .ctx = ctx, .where = where, .n = n, .vars = vars, .tans = tangents,
                  .gen = ++ctx->next_mark };
  lacc_node *r = d(&s, e);
  if (!s.failed && r == NULL) r = zero_of(&s, e->type);
  if (!s.failed) lacc_node_retain(r);
  for (int i = 0; i < s.nmade; i++) lacc_node_release(s.made[i]);
  free(s.made);
  free(s.memo);
  return s.failed ? NULL : r;
}

/* Element reads only: an array's shape and size carry no derivative. */
static int reads_rec(walk *w, const lacc_node *x, const lacc_node *a) {
  if (x->kind == K_INDEX && x->kids[0] == a) return 1;
  if (node_level_of(x->kind) == L_ACC || seen_before(w, x)) return 0;   /* an array's own
                                                                           inputs: not read here */
  if (w->n == WALK_MAX) return 1;
  w->seen[w->n++] = x;
  for (int i = 0; i < x->nkids; i++)
    if (reads_rec(w, x->kids[i], a)) return 1;
  return 0;
}

int lacc_exp_is_zero(const lacc_node *e) {
  if (e == NULL || e->kind != K_CONST || e->type->kind != T_SCALAR) return 0;
  scalar_kind k = e->type->scalar;
  if (k == S_F32) return e->cval.f == 0.0f;
  if (k == S_F64) return e->cval.d == 0.0;
  return e->cval.i == 0;
}

static int uses_rec(walk *w, const lacc_node *e, const lacc_node *x) {
  if (e == x) return 1;
  if (node_level_of(e->kind) == L_ACC || seen_before(w, e)) return 0;
  if (w->n == WALK_MAX) return 1;
  w->seen[w->n++] = e;
  for (int i = 0; i < e->nkids; i++)
    if (uses_rec(w, e->kids[i], x)) return 1;
  return 0;
}

int lacc_exp_uses(const lacc_node *e, const lacc_node *x) {
  if (e == NULL || x == NULL) return 0;
  walk *w = malloc(sizeof *w);
  if (w == NULL) return 1;
  w->n = 0;
  int r = uses_rec(w, e, x);
  free(w);
  return r;
}

static int depends_rec(walk *w, const lacc_node *e, const lacc_node *x) {
  if (e == x) return 1;
  if (seen_before(w, e)) return 0;
  if (w->n == WALK_MAX) return 1;
  w->seen[w->n++] = e;
  for (int i = 0; i < e->nkids; i++)
    if (depends_rec(w, e->kids[i], x)) return 1;
  return 0;
}

int lacc_acc_depends(const lacc_node *e, int from, const lacc_node *x) {
  if (e == NULL || x == NULL) return 0;
  walk *w = malloc(sizeof *w);
  if (w == NULL) return 1;
  w->n = 0;
  int r = 0;
  for (int i = from < 0 ? 0 : from; i < e->nkids && !r; i++) r = depends_rec(w, e->kids[i], x);
  free(w);
  return r;
}

int lacc_exp_reads(const lacc_node *e, const lacc_node *a) {
  if (e == NULL || a == NULL) return 0;
  walk *w = malloc(sizeof *w);
  if (w == NULL) return 1;
  w->n = 0;
  int r = 0;
  /* an array node's own array arguments are its inputs, not reads: only its functions
   * and scalar arguments are walked */
  if (node_level_of(e->kind) == L_EXP) r = reads_rec(w, e, a);
  for (int i = 0; i < e->nkids && !r && node_level_of(e->kind) != L_EXP; i++)
    if (node_level_of(e->kids[i]->kind) != L_ACC) r = reads_rec(w, e->kids[i], a);
  free(w);
  return r;
}

static int sites_rec(walk *w, const lacc_node *x, const lacc_node *a, lacc_node **out,
                     lacc_node **index, int cap, int *n) {
  if (node_level_of(x->kind) == L_ACC || seen_before(w, x)) return 0;
  if (w->n == WALK_MAX) return -1;
  w->seen[w->n++] = x;
  if (x->kind == K_INDEX && x->kids[0] == a) {
    if (*n == cap) return -1;
    out[*n] = (lacc_node *)x;
    index[(*n)++] = x->kids[1];
    return 0;
  }
  for (int i = 0; i < x->nkids; i++)
    if (sites_rec(w, x->kids[i], a, out, index, cap, n) < 0) return -1;
  return 0;
}

int lacc_exp_sites(const lacc_node *e, const lacc_node *a, lacc_node **out, lacc_node **index,
                   int cap) {
  if (e == NULL || a == NULL || out == NULL || index == NULL || cap < 0) return -1;
  walk *w = malloc(sizeof *w);
  if (w == NULL) return -1;
  w->n = 0;
  int n = 0, rc = 0;
  if (node_level_of(e->kind) == L_EXP) rc = sites_rec(w, e, a, out, index, cap, &n);
  for (int i = 0; i < e->nkids && rc == 0 && node_level_of(e->kind) != L_EXP; i++)
    if (node_level_of(e->kids[i]->kind) != L_ACC) rc = sites_rec(w, e->kids[i], a, out, index, cap, &n);
  free(w);
  return rc < 0 ? -1 : n;
}

int lacc_exp_is_op(const lacc_node *e, const char *op, const lacc_node *x, const lacc_node *y) {
  prim_op p;
  if (e == NULL || op == NULL || e->kind != K_PRIM || !prim_lookup(op, &p) || e->prim != p ||
      e->nkids != 2)
    return 0;
  return (e->kids[0] == x && e->kids[1] == y) || (e->kids[0] == y && e->kids[1] == x);
}

/* e as v plus a constant offset (*off), through + and - of integer constants: 1, or 0. */
static int offset_of(const lacc_node *e, const lacc_node *v, int64_t *off, int depth) {
  if (e == v) {
    *off = 0;
    return 1;
  }
  if (depth > 16 || e->kind != K_PRIM || e->nkids != 2 ||
      (e->prim != P_ADD && e->prim != P_SUB))
    return 0;
  const lacc_node *a = e->kids[0], *b = e->kids[1];
  if (b->kind == K_CONST && b->type->kind == T_SCALAR && scalar_is_int(b->type->scalar) &&
      offset_of(a, v, off, depth + 1)) {
    *off += e->prim == P_ADD ? b->cval.i : -b->cval.i;
    return 1;
  }
  if (e->prim == P_ADD && a->kind == K_CONST && a->type->kind == T_SCALAR &&
      scalar_is_int(a->type->scalar) && offset_of(b, v, off, depth + 1)) {
    *off += a->cval.i;
    return 1;
  }
  return 0;
}

/* Whether e is dimension d of position v (v itself for rank 1, else prj(v, d)), maybe
 * through a +1 and a -1. */
static int is_dim(const lacc_node *e, const lacc_node *v, int d, int rank) {
  int64_t off = 0;
  if (rank == 1) return offset_of(e, v, &off, 0) && off == 0;
  /* find the projection under the offsets */
  const lacc_node *x = e;
  for (int k = 0; k < 16 && x->kind == K_PRIM && x->nkids == 2; k++) x = x->kids[0];
  if (x->kind != K_PRJ || x->kids[0] != v || x->field != d) return 0;
  return offset_of(e, x, &off, 0) && off == 0;
}

int lacc_exp_is_position(const lacc_node *idx, const lacc_node *v) {
  if (idx == NULL || v == NULL) return 0;
  int rank = v->type->kind == T_TUPLE ? v->type->n : 1;
  if (rank == 1) return is_dim(idx, v, 0, 1);
  if (idx->kind != K_TUPLE || idx->nkids != rank) return 0;
  for (int d = 0; d < rank; d++)
    if (!is_dim(idx->kids[d], v, d, rank)) return 0;
  return 1;
}

/* e as an integer constant, through + and - of constants (an index written 1 and made
 * 0-based: 1 - 1): 1 and *out, or 0. */
static int const_value(const lacc_node *e, int64_t *out, int depth) {
  if (e->type->kind != T_SCALAR || !scalar_is_int(e->type->scalar) || depth > 16) return 0;
  if (e->kind == K_CONST) {
    *out = e->cval.i;
    return 1;
  }
  int64_t a, b;
  if (e->kind != K_PRIM || e->nkids != 2 || (e->prim != P_ADD && e->prim != P_SUB) ||
      !const_value(e->kids[0], &a, depth + 1) || !const_value(e->kids[1], &b, depth + 1))
    return 0;
  *out = (int64_t)(e->prim == P_ADD ? (uint64_t)a + (uint64_t)b : (uint64_t)a - (uint64_t)b);
  return 1;
}

/* e as x plus a constant (*off), through + and - of integer constants: x. */
static const lacc_node *peel(const lacc_node *e, int64_t *off) {
  *off = 0;
  for (int k = 0; k < 16 && e->kind == K_PRIM && e->nkids == 2 &&
                  (e->prim == P_ADD || e->prim == P_SUB); k++) {
    int64_t c;
    if (!const_value(e->kids[1], &c, 0)) break;
    *off += e->prim == P_ADD ? c : -c;
    e = e->kids[0];
  }
  return e;
}

/* A read that broadcasts dimension d (array arithmetic on shapes known only when the
 * program runs): cond(C, k, position d) plus offsets, reading index 0 where C holds and
 * the position where it does not: d, and *cond = C; or -1. */
static int broadcast_dim(const lacc_node *c, const lacc_node *v, int vrank,
                         const lacc_node **cond) {
  int64_t off, kval, poff;
  const lacc_node *x = peel(c, &off);
  if (x->kind != K_COND || !const_value(x->kids[1], &kval, 0) || kval + off != 0) return -1;
  const lacc_node *p = peel(x->kids[2], &poff);
  if (poff + off != 0) return -1;
  for (int d = 0; d < vrank; d++) {
    if (is_dim(p, v, d, vrank)) {
      *cond = x->kids[0];
      return d;
    }
  }
  return -1;
}

int lacc_exp_index_dims(const lacc_node *idx, const lacc_node *v, int rank, int *dims,
                        int64_t *consts, lacc_node **conds) {
  if (idx == NULL || v == NULL || rank < 0 || rank > LACC_MAX_RANK) return 0;
  int vrank = v->type->kind == T_TUPLE ? v->type->n : 1;
  if (rank > 1 && (idx->kind != K_TUPLE || idx->nkids != rank)) return 0;
  for (int k = 0; k < rank; k++) {
    const lacc_node *c = rank == 1 ? idx : idx->kids[k];
    dims[k] = -1;
    consts[k] = 0;
    if (conds != NULL) conds[k] = NULL;
    if (const_value(c, &consts[k], 0)) continue;
    for (int d = 0; d < vrank && dims[k] < 0; d++)
      if (is_dim(c, v, d, vrank)) dims[k] = d;
    if (dims[k] < 0 && conds != NULL) {
      const lacc_node *cond = NULL;
      dims[k] = broadcast_dim(c, v, vrank, &cond);
      conds[k] = (lacc_node *)cond;
    }
    if (dims[k] < 0) return 0;
  }
  return 1;
}

static int64_t dims_rec(walk *w, const lacc_node *x, const lacc_node *v, int vrank) {
  if (x->kind == K_PRJ && x->kids[0] == v) return (int64_t)1 << x->field;
  if (x == v) return vrank >= 63 ? -1 : ((int64_t)1 << vrank) - 1;
  if (seen_before(w, x)) return 0;
  if (w->n == WALK_MAX) return -1;
  w->seen[w->n++] = x;
  int64_t m = 0;
  for (int i = 0; i < x->nkids; i++) {
    int64_t k = dims_rec(w, x->kids[i], v, vrank);
    if (k < 0) return -1;
    m |= k;
  }
  return m;
}

int64_t lacc_exp_dims_used(const lacc_node *e, const lacc_node *v) {
  if (e == NULL || v == NULL) return -1;
  int vrank = v->type->kind == T_TUPLE ? v->type->n : 1;
  walk *w = malloc(sizeof *w);
  if (w == NULL) return -1;
  w->n = 0;
  int64_t m = dims_rec(w, e, v, vrank);
  free(w);
  return m;
}
