/* lower_scan.c: scans along the innermost dimension.
 *
 * Owns: the four scans (left and right, with and without a start value): rows in order,
 * and for long rows three passes (reduce each chunk, carries in order, scan each chunk
 * from its carry); a row's scan for a loop that also folds it (lw_scan_row).
 * Must not: reorder applications of the function beyond associativity.
 */
#include "kir/lower.h"

/* ---- scans */

typedef struct {
  const lacc_node *a, *xs, *f;
  const aenv *env;
  const lacc_type *t;
  int right, with_z;
  int out, part;             /* slots */
  int *sx, oix[LACC_MAX_RANK], o, n, m;
} scanner;

/* Element j of the input row. */
static int *scan_in(lower *L, scanner *S, int j) {
  return lw_fold_elem(L, S->xs, S->env, S->sx, S->oix, S->o, j);
}

/* out[o, k] = v, where k is an index of the output row (m elements). */
static void scan_out(lower *L, scanner *S, int k, const int *v) {
  lw_store_elem(L, S->out, lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, S->o, S->m), k), v);
}

/* One step: acc = f(acc, x) from the left, f(x, acc) from the right. */
static void scan_step(lower *L, scanner *S, int *acc, const int *x) {
  const lacc_type *pt[2] = { S->t, S->t };
  int nl = S->t->nleaves;
  int *args = ints(L, 2 * nl);
  memcpy(args + (S->right ? nl : 0), acc, sizeof *args * (size_t)nl);
  memcpy(args + (S->right ? 0 : nl), x, sizeof *args * (size_t)nl);
  lw_assign(L, S->t, acc, lw_copy(L, S->t, lw_apply(L, S->f, NULL, S->env, pt, args)));
}

/* Input elements lo <= j < hi in scan order (right: from hi - 1 down), each folded into
 * acc and, with out, stored at its output index (one further for scanl). */
static void scan_loop(lower *L, scanner *S, int lo, int hi, int *acc, int store) {
  int t = lw_var(L, S_I64);
  lw_k_for(L, t, lo, hi, 1);
  int j = S->right ? lw_k_prim(L, P_SUB, lw_k_prim(L, P_ADD, lo, lw_k_prim(L, P_SUB, hi, lw_k_int(L, S_I64, 1))), t)
                   : t;
  scan_step(L, S, acc, scan_in(L, S, j));
  if (store)
    scan_out(L, S, S->with_z && !S->right ? lw_k_prim(L, P_ADD, j, lw_k_int(L, S_I64, 1)) : j, acc);
  k_end(L);
}

/* The carry-less start of a scan1 row: acc = its first element in scan order, stored. */
static int scan1_start(lower *L, scanner *S, int *acc) {
  int one = lw_k_int(L, S_I64, 1);
  int j = S->right ? lw_k_prim(L, P_SUB, S->n, one) : lw_k_int(L, S_I64, 0);
  lw_assign(L, S->t, acc, scan_in(L, S, j));
  scan_out(L, S, j, acc);
  return j;
}

/* Output index of the start value: 0 from the left, n from the right. */
static int scan_z_index(lower *L, scanner *S) {
  return S->right ? S->n : lw_k_int(L, S_I64, 0);
}

static void scan_row(lower *L, scanner *S, int *acc) {
  int zero = lw_k_int(L, S_I64, 0), one = lw_k_int(L, S_I64, 1);
  if (S->with_z) {
    lw_assign(L, S->t, acc, lw_lower_exp(L, S->a->kids[1], NULL, S->env));
    scan_out(L, S, scan_z_index(L, S), acc);
    scan_loop(L, S, zero, S->n, acc, 1);
  } else if (S->right) {
    scan1_start(L, S, acc);
    scan_loop(L, S, zero, lw_k_prim(L, P_SUB, S->n, one), acc, 1);
  } else {
    scan1_start(L, S, acc);
    scan_loop(L, S, one, S->n, acc, 1);
  }
}

static void scan_begin(lower *L, scanner *S, int o) {
  int r = S->xs->rank;
  S->sx = lw_shape_of(L, S->xs, S->env);
  S->n = S->sx[r - 1];
  S->m = S->with_z ? lw_k_prim(L, P_ADD, S->n, lw_k_int(L, S_I64, 1)) : S->n;
  S->o = o;
  lw_unravel_in(L, r - 1, S->sx, o, S->oix);   /* o is a row the executor hands over */
}

/* The chunk [lo, hi) of row o in order into acc: the partial of a chunk. */
static void scan_reduce(lower *L, scanner *S, int lo, int hi, int *acc) {
  int one = lw_k_int(L, S_I64, 1);
  if (S->right) {
    int last = lw_k_prim(L, P_SUB, hi, one);
    lw_assign(L, S->t, acc, scan_in(L, S, last));
    scan_loop(L, S, lo, last, acc, 0);
  } else {
    lw_assign(L, S->t, acc, scan_in(L, S, lo));
    scan_loop(L, S, lw_k_prim(L, P_ADD, lo, one), hi, acc, 0);
  }
}

static void scanner_init(scanner *S, const lacc_node *a, const aenv *env) {
  S->a = a;
  S->env = env;
  S->t = a->type;
  S->f = a->kids[0];
  S->with_z = scan_with_z(a->kind);
  S->right = scan_right(a->kind);
  S->xs = a->kids[S->with_z ? 2 : 1];
}

void lw_scan_row(lower *L, const lacc_node *a, const aenv *env, int out, int o) {
  scanner S0 = { 0 }, *S = &S0;
  scanner_init(S, a, env);
  S->out = out;
  scan_begin(L, S, o);
  /* the fold's rows may be empty: a scan1's then has none (no element 0 to start from) */
  if (!S->with_z) k_if(L, lw_k_prim(L, P_GT, S->n, lw_k_int(L, S_I64, 0)));
  scan_row(L, S, lw_fresh(L, S->t));
  if (!S->with_z) k_end(L);
}

int lw_step_scan(lower *L, const lacc_node *a, const aenv *env) {
  scanner S0 = { 0 }, *S = &S0;
  scanner_init(S, a, env);
  int r = S->xs->rank;
  int st = lw_new_step(L, SK_SCAN, a, a->rank);
  S->out = lw_new_slot(L, SLOT_KERNEL, S->t, a->rank, lw_out_plan(L, S->t));
  S->part = lw_new_slot(L, SLOT_PARTIAL, S->t, 1, lw_out_plan(L, S->t));
  L->P->steps[st].out = S->out;
  L->P->steps[st].partial = S->part;
  L->P->steps[st].with_z = S->with_z;
  L->P->steps[st].ordered = fold_ordered_only(S->f, S->t);

  /* shape: the input's, one more inner element with a start value; then the inner n */
  L->P->steps[st].fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  scan_begin(L, S, lw_k_int(L, S_I64, 0));
  for (int d = 0; d <= r; d++) {
    kinst *in = lw_emit(L, KO_OUT);
    in->a = d < r - 1 ? S->sx[d] : d == r - 1 ? S->m : S->n;
    in->imm.i = d;
  }

  /* rows p0 <= o < p1, each in order */
  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_SEG);
  int o = lw_var(L, S_I64);
  lw_k_for(L, o, 0, 1, 1);
  L->key = o;
  scan_begin(L, S, o);
  lw_start_desc(L);
  scan_row(L, S, lw_fresh(L, S->t));
  L->describe = 0;
  k_end(L);

  /* a chunk of row p0 reduced in order into partial p3 */
  L->P->steps[st].fn[SF_PART] = lw_new_fn(L, FN_PART);
  L->key = 1;
  scan_begin(L, S, 0);
  int *acc = lw_fresh(L, S->t);
  scan_reduce(L, S, 1, 2, acc);
  lw_store_elem(L, S->part, 3, acc);

  /* partials 0 <= c < p1 of row p0 become carries: each chunk's start value */
  L->P->steps[st].fn[SF_COMBINE] = lw_new_fn(L, FN_COMBINE);
  L->key = lw_k_int(L, S_I64, -1);
  scan_begin(L, S, 0);
  acc = lw_fresh(L, S->t);
  int zero = lw_k_int(L, S_I64, 0), one = lw_k_int(L, S_I64, 1);
  int c = lw_var(L, S_I64), ci;
  int *tmp;
  if (S->with_z) {
    lw_assign(L, S->t, acc, lw_lower_exp(L, a->kids[1], NULL, env));
    lw_k_for(L, c, zero, 1, 1);
  } else {
    /* the first chunk in scan order starts itself */
    lw_assign(L, S->t, acc, lw_load_elem(L, S->part, S->right ? lw_k_prim(L, P_SUB, 1, one) : zero));
    lw_k_for(L, c, one, 1, 1);
  }
  ci = S->right ? lw_k_prim(L, P_SUB, lw_k_prim(L, P_SUB, 1, one), c) : c;
  tmp = lw_copy(L, S->t, lw_load_elem(L, S->part, ci));
  lw_store_elem(L, S->part, ci, acc);
  scan_step(L, S, acc, tmp);
  k_end(L);

  /* chunk p3 = [p1, p2) of row p0 from its carry */
  L->P->steps[st].fn[SF_CHUNK] = lw_new_fn(L, FN_CHUNK);
  L->key = 1;
  scan_begin(L, S, 0);
  acc = lw_fresh(L, S->t);
  int first = S->right ? lw_k_prim(L, P_EQ, 2, S->n) : lw_k_prim(L, P_EQ, 1, lw_k_int(L, S_I64, 0));
  if (S->with_z) {
    lw_assign(L, S->t, acc, lw_load_elem(L, S->part, 3));
    k_if(L, first);
    scan_out(L, S, scan_z_index(L, S), acc);
    k_end(L);
    scan_loop(L, S, 1, 2, acc, 1);
  } else {
    k_if(L, first);
    int j = scan1_start(L, S, acc);
    if (S->right) scan_loop(L, S, 1, j, acc, 1);
    else scan_loop(L, S, lw_k_prim(L, P_ADD, j, lw_k_int(L, S_I64, 1)), 2, acc, 1);
    k_else(L);
    lw_assign(L, S->t, acc, lw_load_elem(L, S->part, 3));
    scan_loop(L, S, 1, 2, acc, 1);
    k_end(L);
  }
  return S->out;
}
