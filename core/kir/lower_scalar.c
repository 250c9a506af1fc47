/* lower_scalar.c: scalar code in kernel IR.
 *
 * Owns: the scalar language: primitives (with the checks of integer division), conds,
 * tuples, casts, indexing of delayed or materialised arrays, iterate and while loops,
 * matches on sums, and speculation (every cheap arm computed and the result selected,
 * for branch-free strips).
 * Must not: plan steps or loops over elements (the step files do).
 */
#include "kir/lower.h"

/* ---- scalar code */

const aenv *lw_a_lookup(const aenv *env, int k) {
  while (k-- > 0) env = env->up;
  return env;
}

const aenv *lw_a_push(lower *L, const aenv *env, const lacc_node *node, const aenv *nenv,
                      int slot) {
  aenv *e = lw_alloc(L, sizeof *e);
  *e = (aenv){ node, nenv, slot, env, NULL, -1 };
  return e;
}

static const senv *s_push(lower *L, const senv *se, const int *v) {
  senv *n = lw_alloc(L, sizeof *n);
  n->v = v;
  n->up = se;
  return n;
}

int *lw_apply(lower *L, const lacc_node *lam, const senv *se, const aenv *ae,
              const lacc_type *const *ptypes, const int *args) {
  for (int p = 0; p < lam->nparams; p++) {
    se = s_push(L, se, args);
    args += ptypes[p]->nleaves;
  }
  return lw_lower_exp(L, lam->kids[0], se, ae);
}

/* A fresh mutable copy of a value (results of branches and loops). */
int *lw_fresh(lower *L, const lacc_type *t) {
  int *v = ints(L, t->nleaves);
  for (int k = 0; k < t->nleaves; k++) v[k] = lw_var(L, type_leaf(t, k));
  return v;
}

void lw_assign(lower *L, const lacc_type *t, const int *dst, const int *src) {
  for (int k = 0; k < t->nleaves; k++) lw_k_mov(L, dst[k], src[k]);
}

int *lw_copy(lower *L, const lacc_type *t, const int *src) {
  int *d = lw_fresh(L, t);
  lw_assign(L, t, d, src);
  return d;
}


/* Whether c is a float constant +-2^k whose reciprocal is exact (*r): then x / c and
 * x * r are the same number for every x (each rounds x / c once), and a multiplication
 * costs a tenth of a division (a stencil's `/ 256`). */
static int exact_reciprocal(const lacc_node *c, lacc_val *r) {
  int e;
  if (c->kind != K_CONST) return 0;
  if (scalar_is_float(c->type->scalar)) node_value_read(c);   /* the code chosen by its value */
  if (c->type->scalar == S_F32) {   /* a power of two, and 1/c neither 0 nor inf */
    float q = 1.0f / c->cval.f;
    r->f = q;
    return fabsf(frexpf(c->cval.f, &e)) == 0.5f && isfinite(q) && q != 0 && q * c->cval.f == 1.0f;
  }
  if (c->type->scalar == S_F64) {
    double q = 1.0 / c->cval.d;
    r->d = q;
    return fabs(frexp(c->cval.d, &e)) == 0.5 && isfinite(q) && q != 0 && q * c->cval.d == 1.0;
  }
  return 0;
}

static int speculable(const lacc_node *e, int *budget);
enum { SPECULATE_NODES = 400 };   /* the arms' AST nodes, all together */

/* land / lor: the right side only when the left does not decide (as Lua's `and` / `or`),
 * so that a guarded read (`lor(eq(i, 1), eq(v[i - 1], 1))`) never fails; a right side
 * that can neither fail nor loop is computed either way, without a branch. */
static int *lower_logic(lower *L, const lacc_node *e, int a, const senv *se, const aenv *ae) {
  int *out = ints(L, 1), budget = SPECULATE_NODES;
  if (speculable(e->kids[1], &budget)) {
    out[0] = lw_k_prim(L, e->prim, a, lw_lower_exp(L, e->kids[1], se, ae)[0]);
    return out;
  }
  int r = lw_var(L, S_BOOL), left = lw_k_prim(L, e->prim, a, a);
  lw_k_mov(L, r, left);
  k_if(L, e->prim == P_LAND ? left : lw_k_prim(L, P_LNOT, left, -1));
  lw_k_mov(L, r, lw_k_prim(L, e->prim, a, lw_lower_exp(L, e->kids[1], se, ae)[0]));
  k_end(L);
  out[0] = r;
  return out;
}

static int *lower_prim(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  int a = lw_lower_exp(L, e->kids[0], se, ae)[0];
  if ((e->prim == P_LAND || e->prim == P_LOR) && e->nkids == 2) return lower_logic(L, e, a, se, ae);
  int *out = ints(L, 1);
  lacc_val r;
  if (e->prim == P_DIV && e->nkids == 2 && exact_reciprocal(e->kids[1], &r)) {
    out[0] = lw_k_prim(L, P_MUL, a, lw_k_user_const(L, NULL, e->kids[1]->type, r));
    return out;
  }
  int b = e->nkids > 1 ? lw_lower_exp(L, e->kids[1], se, ae)[0] : -1;
  if (e->prim == P_TAPE_LIMIT) {   /* a, once the check of b against c has passed */
    int vals[2] = { b, lw_lower_exp(L, e->kids[2], se, ae)[0] };
    k_if(L, lw_k_prim(L, P_GT, vals[0], vals[1]));
    lw_k_fail(L, lw_add_check(L, CK_TAPE, prim_name(e->prim), e->where, 0), 2, vals);
    k_end(L);
    out[0] = a;
    return out;
  }
  if (e->nkids == 3) {
    out[0] = lw_k_prim3(L, e->prim, a, b, lw_lower_exp(L, e->kids[2], se, ae)[0]);
    return out;
  }
  lacc_val z = { .u = 0 };
  int zero_divisor = -1;
  if (prim_has(e->prim, PF_DIV) && scalar_is_int(vtype(L, a)))
    zero_divisor = lw_k_prim(L, P_EQ, b, lw_k_const(L, vtype(L, b), z));
  else if (e->prim == P_IPOW && scalar_is_signed(vtype(L, a)))   /* 0 to a negative power */
    zero_divisor = lw_k_prim(L, P_LAND, lw_k_prim(L, P_EQ, a, lw_k_const(L, vtype(L, a), z)),
                             lw_k_prim(L, P_LT, b, lw_k_const(L, vtype(L, b), z)));
  if (zero_divisor >= 0) {
    k_if(L, zero_divisor);
    lw_k_fail(L, lw_add_check(L, CK_DIVZERO, prim_name(e->prim), e->where, 0), 0, NULL);
    k_end(L);
  }
  out[0] = lw_k_prim(L, e->prim, a, b);
  return out;
}

static int *lower_index(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  const lacc_node *av = e->kids[0];
  int rank = av->rank;
  int *ix = lw_lower_exp(L, e->kids[1], se, ae);
  int *ext = lw_shape_of(L, av, ae);
  if (rank == 0) {
    kindex k = { .lin = lw_k_int(L, S_I64, 0) };
    return lw_elem(L, av, ae, &k);
  }
  int zero = lw_k_int(L, S_I64, 0), ok = -1;
  for (int d = 0; d < rank; d++) {
    ok = lw_k_and(L, ok, lw_k_in_range(L, ix[d], zero, ext[d]));
  }
  k_if(L, lw_k_prim(L, P_LNOT, ok, -1));
  int args[2 * LACC_MAX_RANK] = { 0 };
  for (int d = 0; d < rank; d++) {
    args[d] = ix[d];
    args[rank + d] = ext[d];
  }
  lw_k_fail(L, lw_add_check(L, CK_INDEX, "index", e->where, rank), 2 * rank, args);
  k_end(L);
  kindex k;
  for (int d = 0; d < rank; d++) k.ix[d] = lw_k_select(L, ok, ix[d], zero);
  k.lin = lw_ravel(L, rank, ext, k.ix);
  return lw_elem(L, av, ae, &k);
}

static int *lower_loop(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  const lacc_type *t = e->type;
  int *cur = lw_copy(L, t, lw_lower_exp(L, e->kids[2], se, ae));
  const lacc_type *pt[1] = { t };
  if (e->kind == K_ITERATE) {
    int n = lw_lower_exp(L, e->kids[0], se, ae)[0];
    int i = lw_var(L, S_I64);
    lw_k_for(L, i, lw_k_int(L, S_I64, 0), n, 1);
  } else {
    lw_emit(L, KO_LOOP);
    int c = lw_apply(L, e->kids[0], se, ae, pt, cur)[0];
    lw_emit(L, KO_BREAKIFNOT)->a = c;
  }
  int *next = lw_copy(L, t, lw_apply(L, e->kids[1], se, ae, pt, cur));
  lw_assign(L, t, cur, next);
  k_end(L);
  return cur;
}

/* Whether the value v of type t is the accumulator of the fold being lowered (an arm
 * of a cond in its function that keeps it): on most data a min, max or argmin keeps it
 * at almost every element. */
static int keeps_acc(const lower *L, const lacc_type *t, const int *v) {
  if (L->acc == NULL || t->nleaves != L->nacc || L->nacc == 0) return 0;
  for (int k = 0; k < L->nacc; k++)
    if (v[k] != L->acc[k]) return 0;
  return 1;
}

/* ---- speculation: every arm computed, the result selected
 *
 * A match on elements in random order mispredicts most of its tag tests. Inside a strip
 * loop (fold_strips) every arm of a cheap match or cond is computed and the result
 * selected, so the loop has no branch and the C compiler vectorises it. Only arms that
 * cannot fail or loop (no indexing, no integer division, no iterate/while): whatever
 * bits an inactive alternative's fields hold, the arithmetic on them is defined (float
 * operations, wrapping integers, clamped casts) and its result is dropped. */

static int speculable(const lacc_node *e, int *budget) {
  if (--*budget < 0) return 0;
  switch (e->kind) {
  case K_CONST: case K_EVAR: return 1;
  case K_PRIM:
    if (prim_has(e->prim, PF_DIV) && scalar_is_int(e->kids[0]->type->scalar)) return 0;
    if (e->prim == P_IPOW || e->prim == P_TAPE_LIMIT) return 0;
    break;
  case K_TUPLE: case K_PRJ: case K_CAST: case K_COND: case K_CON: case K_CASE: case K_ELET:
  case K_LAM:
    break;
  default: return 0;
  }
  for (int i = e->kind == K_LAM ? e->nparams : 0; i < e->nkids; i++)
    if (!speculable(e->kids[i], budget)) return 0;
  return 1;
}

/* An arm that costs nothing to compute: a constant, a bound variable, a projection of
 * one, or a cond of such. Selecting between such arms is never slower than branching,
 * and a loop of selects has no control flow, which the C compiler needs to vectorise it
 * (an argmin over unrolled candidates: a chain of conds on constants). */
static int free_arm(const lacc_node *e, int depth) {
  if (depth > 64) return 0;
  switch (e->kind) {
  case K_CONST: case K_EVAR: return 1;
  case K_PRJ: return free_arm(e->kids[0], depth + 1);
  case K_COND:
    for (int i = 0; i < 3; i++)
      if (!free_arm(e->kids[i], depth + 1)) return 0;
    return 1;
  default: return 0;
  }
}

static int free_arms(const lacc_node *const *arms, int n) {
  for (int i = 0; i < n; i++)
    if (!free_arm(arms[i], 0)) return 0;
  return 1;
}

static int speculate_arms(lower *L, const lacc_node *const *arms, int n) {
  int budget = SPECULATE_NODES;
  if (!L->speculate) return 0;
  for (int i = 0; i < n; i++)
    if (!speculable(arms[i], &budget)) return 0;
  L->speculated++;
  return 1;
}

/* c ? a : b, leaf by leaf */
static int *select_value(lower *L, const lacc_type *t, int c, const int *a, const int *b) {
  int *o = ints(L, t->nleaves);
  for (int k = 0; k < t->nleaves; k++) o[k] = lw_k_select(L, c, a[k], b[k]);
  return o;
}

static int *lower_case_speculative(lower *L, const lacc_node *e, const senv *se,
                                   const aenv *ae, const int *v) {
  const lacc_type *t = e->kids[0]->type;
  int **arm = lw_alloc(L, sizeof *arm * (size_t)t->n);
  int off = 1;
  for (int c = 0; c < t->n; c++) {
    int n = t->fields[c]->nleaves, *args = ints(L, n);
    for (int i = 0; i < n; i++) args[i] = lw_reload(L, v[off + i]);
    arm[c] = lw_apply(L, e->kids[c + 1], se, ae, (const lacc_type *const *)t->fields[c]->fields,
                   args);
    off += n;
  }
  int *out = arm[t->n - 1];
  for (int c = t->n - 2; c >= 0; c--) {
    lacc_val cv = { .u = (uint64_t)c };
    out = select_value(L, e->type, lw_k_prim(L, P_EQ, v[0], lw_k_const(L, S_U32, cv)), arm[c], out);
  }
  return out;
}

/* Alternative c of case e, applied to its fields in v (at leaf off), assigned to out. */
static void lower_arm(lower *L, const lacc_node *e, const senv *se, const aenv *ae,
                      const int *v, int off, int c, int *out) {
  const lacc_type *t = e->kids[0]->type;
  int n = t->fields[c]->nleaves, *args = ints(L, n);
  for (int i = 0; i < n; i++) args[i] = lw_reload(L, v[off + i]);
  lw_assign(L, e->type, out,
         lw_apply(L, e->kids[c + 1], se, ae, (const lacc_type *const *)t->fields[c]->fields, args));
}

/* Alternatives lo..hi-1 as a binary search on the tag: an element takes O(log n) tests,
 * and the code nests O(log n) deep (a chain of 4096 else-ifs would nest past what C and
 * OpenCL compilers accept, and indent the source quadratically). off[c]: alternative c's
 * first leaf in v. */
static void lower_arms(lower *L, const lacc_node *e, const senv *se, const aenv *ae,
                       const int *v, const int *off, int lo, int hi, int *out) {
  if (hi - lo == 1) {
    lower_arm(L, e, se, ae, v, off[lo], lo, out);
    return;
  }
  int mid = lo + (hi - lo) / 2;
  /* of two alternatives, tag < lo + 1 is tag == lo: the plain test of a two-way match */
  lacc_val cv = { .u = (uint64_t)(hi - lo == 2 ? lo : mid) };
  k_if(L, lw_k_prim(L, hi - lo == 2 ? P_EQ : P_LT, v[0], lw_k_const(L, S_U32, cv)));
  lower_arms(L, e, se, ae, v, off, lo, mid, out);
  k_else(L);
  lower_arms(L, e, se, ae, v, off, mid, hi, out);
  k_end(L);
}

static int *lower_case(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  const lacc_type *t = e->kids[0]->type;
  int *v = lw_lower_exp(L, e->kids[0], se, ae);
  if (speculate_arms(L, (const lacc_node *const *)e->kids + 1, t->n))
    return lower_case_speculative(L, e, se, ae, v);
  int *out = lw_fresh(L, e->type), *off = ints(L, t->n);
  for (int c = 0, o = 1; c < t->n; o += t->fields[c]->nleaves, c++) off[c] = o;
  lower_arms(L, e, se, ae, v, off, 0, t->n, out);
  return out;
}

int *lw_lower_exp(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  switch (e->kind) {
  case K_CONST: {
    int *o = ints(L, 1);
    o[0] = lw_k_user_const(L, e, e->type, e->cval);
    return o;
  }
  case K_EVAR: {
    const senv *s = se;
    for (int k = 0; k < e->field; k++) s = s->up;
    return (int *)s->v;
  }
  case K_PRIM: return lower_prim(L, e, se, ae);
  case K_TUPLE: {
    int *o = ints(L, e->type->nleaves), off = 0;
    for (int i = 0; i < e->nkids; i++) {
      int *v = lw_lower_exp(L, e->kids[i], se, ae);
      memcpy(o + off, v, sizeof *o * (size_t)e->kids[i]->type->nleaves);
      off += e->kids[i]->type->nleaves;
    }
    return o;
  }
  case K_PRJ: {
    int *v = lw_lower_exp(L, e->kids[0], se, ae);
    return v + type_leaf_offset(e->kids[0]->type, e->field);
  }
  case K_CAST: {
    int *o = ints(L, 1);
    int x = lw_lower_exp(L, e->kids[0], se, ae)[0];
    o[0] = e->field ? lw_k_unary(L, KO_FROMBITS, e->type->scalar, bits_of(L, x))
                    : lw_k_cast(L, e->type->scalar, x);
    return o;
  }
  case K_COND: {
    int c = lw_lower_exp(L, e->kids[0], se, ae)[0];
    const lacc_node *const *arms = (const lacc_node *const *)e->kids + 1;
    lacc_val known;
    if (L->grp != NULL && lw_group_known(L, c, &known))   /* a grouped producer's element k */
      return lw_lower_exp(L, arms[known.u != 0 ? 0 : 1], se, ae);
    if (free_arms(arms, 2)) {
      /* a fold's accumulator kept on most elements: a predicted branch breaks the
       * dependency from one element to the next that a select would carry */
      int *a = lw_lower_exp(L, e->kids[1], se, ae), *b = lw_lower_exp(L, e->kids[2], se, ae);
      int keeps = keeps_acc(L, e->type, b) ? -1 : keeps_acc(L, e->type, a) ? 1 : 0;
      if (keeps == 0 || L->speculate) return select_value(L, e->type, c, a, b);
      int *o = lw_fresh(L, e->type);
      const klist *l = L->pro ? &fn(L)->pro : &fn(L)->body;
      int at = l->n;
      k_if(L, c);
      lw_assign(L, e->type, o, a);
      k_else(L);
      lw_assign(L, e->type, o, b);
      k_end(L);
      l->v[at].expect = keeps;
      return o;
    }
    if (speculate_arms(L, arms, 2)) {
      int *a = lw_lower_exp(L, e->kids[1], se, ae);
      return select_value(L, e->type, c, a, lw_lower_exp(L, e->kids[2], se, ae));
    }
    int *o = lw_fresh(L, e->type);
    const klist *l = L->pro ? &fn(L)->pro : &fn(L)->body;
    int at = l->n;
    k_if(L, c);
    int *a = lw_lower_exp(L, e->kids[1], se, ae);
    lw_assign(L, e->type, o, a);
    k_else(L);
    int *b = lw_lower_exp(L, e->kids[2], se, ae);
    lw_assign(L, e->type, o, b);
    k_end(L);
    l->v[at].expect = keeps_acc(L, e->type, b) ? -1 : keeps_acc(L, e->type, a) ? 1 : 0;
    return o;
  }
  case K_INDEX: return lower_index(L, e, se, ae);
  case K_SHAPE: return lw_shape_of(L, e->kids[0], ae);
  case K_SIZE: {
    const lacc_node *a = e->kids[0];
    int *ext = lw_shape_of(L, a, ae), *o = ints(L, 1);
    o[0] = lw_k_int(L, S_I64, 1);
    for (int d = 0; d < a->rank; d++) o[0] = lw_k_prim(L, P_MUL, o[0], ext[d]);
    return o;
  }
  case K_ITERATE: case K_WHILE: return lower_loop(L, e, se, ae);
  case K_CON: {
    const lacc_type *t = e->type;
    int *o = ints(L, t->nleaves);
    lacc_val z = { .u = 0 }, k = { .u = (uint64_t)e->field };
    for (int i = 0; i < t->nleaves; i++) o[i] = lw_k_const(L, type_leaf(t, i), i == 0 ? k : z);
    int off = 1;
    for (int c = 0; c < e->field; c++) off += t->fields[c]->nleaves;
    for (int i = 0; i < e->nkids; i++) {
      int *v = lw_lower_exp(L, e->kids[i], se, ae);
      memcpy(o + off, v, sizeof *o * (size_t)e->kids[i]->type->nleaves);
      off += e->kids[i]->type->nleaves;
    }
    return o;
  }
  case K_CASE: return lower_case(L, e, se, ae);
  case K_ELET: {
    int *v = lw_lower_exp(L, e->kids[0], se, ae);
    return lw_lower_exp(L, e->kids[1], s_push(L, se, v), ae);
  }
  default:
    ctx_error(L->ctx, LACC_ERR_ARG, "lower: unexpected %s node in scalar code", kind_name(e->kind));
    oom(L);
    return NULL;
  }
}
