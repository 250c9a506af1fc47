/* lower_fold.c: map steps, strips and folds.
 *
 * Owns: a materialised map's body (in strips of 256 elements on the cpu backend where
 * the code is straight-line), and folds: segments in order, partials per chunk with
 * per-lane accumulators for one commutative primitive, the combine of partials, and on
 * OpenCL the work-group tree (FN_GROUP).
 * Must not: change what a fold computes: only how its loops are laid out.
 */
#include "kir/lower.h"

/* ---- steps */

int lw_new_step(lower *L, step_kind kind, const lacc_node *node, int rank) {
  kplan *P = L->P;
  lw_grow(L, (void **)&P->steps, &P->stcap, P->nsteps, sizeof *P->steps);
  pstep *s = &P->steps[P->nsteps];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->node = node;
  s->rank = rank;
  for (int f = 0; f < SF_COUNT; f++) s->fn[f] = -1;
  s->guard = L->guard;
  L->step = P->nsteps;
  return P->nsteps++;
}

void lw_start_desc(lower *L) {
  L->describe = 1;
  L->dlen = L->dcap = 0;
  lw_describe(L, "", "");
}

static int strips_on(void) {
  return setting_switch("LACC_STRIPS", 1);
}

/* Per-lane accumulators in the segments of a fold (not its partials): LACC_LANES=0 folds
 * each segment in order, as the interpreter does. */
static int lanes_on(void) {
  return setting_switch("LACC_LANES", 1);
}

/* What the lowering has written so far, to take back an attempt (fold_strips). */
typedef struct {
  int body, lanes, loads;
  size_t dlen;
} mark;

static mark mark_here(lower *L) {
  kfn *F = fn(L);
  return (mark){ F->body.n, F->nlanes, L->nloads, L->dlen };
}

static void back_to(lower *L, mark m) {
  kfn *F = fn(L);
  F->body.n = m.body;
  F->nlanes = m.lanes;
  L->nloads = m.loads;
  if (L->describe && L->dlen > m.dlen) {
    L->dlen = m.dlen;
    L->P->steps[L->step].desc[m.dlen] = '\0';
  }
}

/* Whether the code since m is straight-line for the C compiler's vectoriser: no loop,
 * store or failure report, and every conditional only selects values. */
static int straight_since(lower *L, mark m) {
  const klist *l = &fn(L)->body;
  int depth = 0;
  for (int i = m.body; i < l->n; i++) {
    switch (l->v[i].op) {
    case KO_IF: depth++; break;
    case KO_ELSE: break;
    case KO_END: depth--; break;
    case KO_MOV: case KO_CONST: break;
    case KO_PRIM: case KO_CAST: case KO_TOBITS: case KO_FROMBITS: case KO_LOAD: case KO_LGET:
    case KO_LSET:
      if (depth > 0) return 0;
      break;
    default: return 0;
    }
  }
  return 1;
}

/* Strips: for s in [lo, hi) by TUNE_FOLD_STRIP, first for q in [0, TUNE_FOLD_STRIP)
 * element s + q into lane arrays, its matches and conds speculated (a loop with no branch
 * and no store to an array that might alias an input, which the C compiler vectorises),
 * then for q again with the element read back. */
typedef struct {
  mark m, inner;
  const lacc_type *t;
  int *arr, nl, s, q, zero, len, before;
} strip;

/* Leaves of an element that are integer arithmetic (+, -, *) on the element index and
 * values fixed for the whole strip (an argmin's index, generate's i + 1) are not put in
 * the lane arrays but computed again in the loop that reads the others back: a lane of
 * 64-bit integers beside 32-bit floats made PoCL's vectoriser take 4 lanes where the
 * floats alone took 8. */
enum { REMAT_DEPTH = 6 };

/* Whether v holds the same value throughout both loops of strip S: no instruction since
 * the strip opened writes it. */
static int strip_fixed(lower *L, const strip *S, int v) {
  const klist *l = &fn(L)->body;
  if (v == S->s || v == S->q) return 0;
  for (int i = S->m.body; i < l->n; i++)
    if (kinst_def(&l->v[i]) == v) return 0;
  return 1;
}

/* The one instruction of the strip's first loop that writes v, outside any branch, or
 * NULL (several, or one inside a branch). */
static const kinst *strip_def(lower *L, const strip *S, int v) {
  const klist *l = &fn(L)->body;
  const kinst *def = NULL;
  int depth = 0;
  for (int i = S->inner.body; i < l->n; i++) {
    const kinst *in = &l->v[i];
    if (in->op == KO_IF) depth++;
    if (in->op == KO_END) depth--;
    if (kinst_def(in) != v) continue;
    if (def != NULL || depth != 0) return NULL;
    def = in;
  }
  return def;
}

/* Whether v can be computed again from the element index and fixed values. */
static int strip_remat(lower *L, const strip *S, int v, int depth) {
  if (v == S->s || v == S->q || strip_fixed(L, S, v)) return 1;
  if (depth == 0 || !scalar_is_int(vtype(L, v))) return 0;
  const kinst *in = strip_def(L, S, v);
  if (in == NULL) return 0;
  switch (in->op) {
  case KO_CONST: return 1;
  case KO_MOV: case KO_CAST:
    return scalar_is_int(vtype(L, in->a)) && strip_remat(L, S, in->a, depth - 1);
  case KO_PRIM:
    return (in->prim == P_ADD || in->prim == P_SUB || in->prim == P_MUL) &&
           strip_remat(L, S, in->a, depth - 1) && strip_remat(L, S, in->b, depth - 1);
  default: return 0;
  }
}

/* v computed again where the lowering is now (strip_remat said it can be). */
static int strip_recompute(lower *L, const strip *S, int v) {
  if (v == S->s || v == S->q || strip_fixed(L, S, v)) return v;
  kinst def = *strip_def(L, S, v);   /* a copy: emitting moves the list */
  if (def.op != KO_CONST) def.a = strip_recompute(L, S, def.a);
  if (def.op == KO_PRIM) def.b = strip_recompute(L, S, def.b);
  def.dst = lw_var(L, vtype(L, v));
  *lw_emit(L, def.op) = def;
  return def.dst;
}

/* Opens both loops; returns the element index s + q for the caller to lower. */
static int strip_open(lower *L, strip *S, const lacc_type *t, int lo, int hi) {
  S->t = t;
  S->nl = t->nleaves;
  S->arr = ints(L, S->nl);
  S->m = mark_here(L);
  S->s = lw_var(L, S_I64);
  S->q = lw_var(L, S_I64);
  S->zero = lw_k_int(L, S_I64, 0);
  S->len = lw_k_int(L, S_I64, TUNE_FOLD_STRIP);
  lw_k_for(L, S->s, lo, hi, TUNE_FOLD_STRIP);
  lw_k_for(L, S->q, S->zero, S->len, 1);
  S->inner = mark_here(L);
  S->before = L->speculated;
  L->speculate = 1;
  return lw_k_prim(L, P_ADD, S->s, S->q);
}

/* Puts element x into the strip and opens the loop that reads it back: returns the
 * element read back, or NULL with everything since strip_open taken back when the
 * element's code is not straight-line (or, with need_spec, nothing was speculated). */
static int *strip_fill(lower *L, strip *S, const int *x, int need_spec) {
  L->speculate = 0;
  int *again = ints(L, S->nl);
  for (int l = 0; l < S->nl; l++) {
    again[l] = strip_remat(L, S, x[l], REMAT_DEPTH);
    if (again[l]) continue;
    S->arr[l] = lw_lane_array(L, type_leaf(S->t, l), TUNE_FOLD_STRIP);
    lw_k_lset(L, S->arr[l], S->q, x[l]);
  }
  if ((need_spec && L->speculated == S->before) || !straight_since(L, S->inner)) {
    back_to(L, S->m);
    return NULL;
  }
  k_end(L);
  lw_k_for(L, S->q, S->zero, S->len, 1);
  int *y = ints(L, S->nl);
  for (int l = 0; l < S->nl; l++)
    y[l] = again[l] ? strip_recompute(L, S, x[l]) : lw_k_lget(L, S->arr[l], S->q);
  return y;
}

/* Closes both loops; returns the first element left after the strips. */
static int strip_close(lower *L, strip *S) {
  k_end(L);
  k_end(L);
  return S->s;
}

/* The element index ix of a map step is inside the step's shape: the shape this
 * function computes (as its shape function did, so the output's extents) rather than
 * the output's extents read back, so that bounds.c can follow it to the arrays the
 * shape came from. */
static void shape_facts(lower *L, const lacc_node *t, const aenv *env, const int *ix) {
  int *sx = lw_shape_of(L, t, env);
  for (int d = 0; d < t->rank; d++) lw_fact(L, ix[d], sx[d], -1);
}

/* Elements [lo, hi) of a rank-1 map on the cpu backend in strips, then stored. Returns
 * the first element left: lo when there is nothing to speculate (the plain loop then
 * vectorises as well, without the copy) or the element's code is not straight-line even
 * so. Other ranks unravel the index with divisions, which no vector unit has. */
static int map_strips(lower *L, const lacc_node *t, const aenv *env, int out, int lo, int hi) {
  if (!L->P->caps.cpu_like || t->rank != 1 || !strips_on()) return lo;
  strip S;
  kindex k;
  k.lin = k.ix[0] = strip_open(L, &S, t->type, lo, hi);
  shape_facts(L, t, env, k.ix);   /* the strips cover [lo, hi) of [0, n) */
  L->key = k.lin;
  int *y = strip_fill(L, &S, lw_elem(L, t, env, &k), 1);
  if (y == NULL) return lo;
  lw_store_elem(L, out, lw_k_prim(L, P_ADD, S.s, S.q), y);
  return strip_close(L, &S);
}

/* Materialise the delayed array (t, env): a map-like kernel. */
int lw_step_map(lower *L, const lacc_node *t, const aenv *env) {
  int st = lw_new_step(L, SK_MAP, t, t->rank);
  int out = lw_new_slot(L, SLOT_KERNEL, t->type, t->rank, lw_out_plan(L, t->type));
  L->P->steps[st].out = out;
  L->P->steps[st].fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  int *ext = lw_shape_of(L, t, env);
  for (int d = 0; d < t->rank; d++) {
    kinst *in = lw_emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_BODY);
  int *oext = lw_slot_ext(L, out);
  lw_start_desc(L);
  int lo = map_strips(L, t, env, out, 0, 1);
  if (lo != 0) L->describe = 0;   /* the strips described the elements */
  int i = lw_var(L, S_I64);
  lw_k_for(L, i, lo, 1, 1);
  L->key = i;
  kindex k;
  k.lin = i;
  lw_unravel(L, t->rank, oext, i, k.ix);
  shape_facts(L, t, env, k.ix);
  int *v = lw_elem(L, t, env, &k);
  L->describe = 0;
  lw_store_elem(L, out, i, v);
  k_end(L);
  return out;
}

/* Element j of segment o of the folded array (outer index oix). Every caller asks for
 * an element inside the row (0 <= j < its length), which bounds.c is told. */
int *lw_fold_elem(lower *L, const lacc_node *xs, const aenv *env, const int *sx,
                  const int *oix, int o, int j) {
  int r = xs->rank;
  lw_fact(L, j, sx[r - 1], -1);
  kindex k;
  for (int d = 0; d + 1 < r; d++) k.ix[d] = oix[d];
  k.ix[r - 1] = j;
  k.lin = lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, o, sx[r - 1]), j);
  return lw_elem(L, xs, env, &k);
}

int *lw_combine(lower *L, const lacc_node *f, const lacc_type *t, const int *acc,
                const int *x, const aenv *env) {
  const lacc_type *pt[2] = { t, t };
  int *args = ints(L, 2 * t->nleaves);
  memcpy(args, acc, sizeof *args * (size_t)t->nleaves);
  memcpy(args + t->nleaves, x, sizeof *args * (size_t)t->nleaves);
  return lw_apply(L, f, NULL, env, pt, args);
}

void lw_accumulate(lower *L, const lacc_node *f, const lacc_type *t, int *acc, const int *x,
                   const aenv *env) {
  const int *outer = L->acc;
  int nouter = L->nacc;
  L->acc = acc;
  L->nacc = t->nleaves;
  int *r = lw_copy(L, t, lw_combine(L, f, t, acc, x, env));
  L->acc = outer;
  L->nacc = nouter;
  lw_assign(L, t, acc, r);
}

/* Elements [lo, hi) of one segment folded in strips. Returns the first element left
 * (lo when the element's code is not straight-line even with speculation). */
static int fold_strips(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                       const int *oix, int o, int lo, int hi, int *acc) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1];
  strip S;
  int j = strip_open(L, &S, a->type, lo, hi);
  int *y = strip_fill(L, &S, lw_fold_elem(L, xs, env, sx, oix, o, j), 0);
  if (y == NULL) return lo;
  lw_accumulate(L, a->kids[0], a->type, acc, y, env);
  return strip_close(L, &S);
}

/* Sequential loop j in [lo, hi) over one segment into acc. */
void lw_fold_plain(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                   const int *oix, int o, int lo, int hi, int *acc) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1];
  int j = lw_var(L, S_I64);
  lw_k_for(L, j, lo, hi, 1);
  lw_accumulate(L, a->kids[0], a->type, acc, lw_fold_elem(L, xs, env, sx, oix, o, j), env);
  k_end(L);
}

/* The same, on the cpu backend in strips where the elements' code allows. */
static void fold_range(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                       const int *oix, int o, int lo, int hi, int *acc) {
  int described = L->describe;
  if (L->P->caps.cpu_like && strips_on()) {
    int rest = fold_strips(L, a, env, sx, oix, o, lo, hi, acc);
    if (rest != lo) L->describe = 0;   /* the strips described the elements */
    lo = rest;
  }
  lw_fold_plain(L, a, env, sx, oix, o, lo, hi, acc);
  L->describe = described;
}

/* A combining function that is one float min or max of its two parameters: not
 * associative once NaNs appear (which one wins depends on the grouping), so such folds
 * and scans run each row in order, never in chunks. */
int lw_ordered_only(const lacc_node *f, const lacc_type *t) {
  if (t->kind != T_SCALAR || !scalar_is_float(t->scalar) || f->kind != K_LAM || f->nparams != 2)
    return 0;
  const lacc_node *e = f->kids[0];
  return e->kind == K_PRIM && (e->prim == P_MIN || e->prim == P_MAX);
}

/* A combining function whose operands may be swapped as well as regrouped: one
 * primitive, commutative bit for bit (float min/max are not: which NaN wins depends on
 * the order), of the two parameters. Only such folds take per-lane accumulators, which
 * combine elements l, l + W, l + 2W, ... before their neighbours; any other associative
 * function is folded in order within a chunk. (A permute onto few targets also uses it:
 * lower_push.c.) */
int lw_commutative(const lacc_node *f, const lacc_type *t) {
  if (t->kind != T_SCALAR || f->kind != K_LAM || f->nparams != 2) return -1;
  const lacc_node *e = f->kids[0];
  if (e->kind != K_PRIM || e->nkids != 2) return -1;
  const lacc_node *x = e->kids[0], *y = e->kids[1];
  if (x->kind != K_EVAR || y->kind != K_EVAR || x->field + y->field != 1) return -1;
  switch (e->prim) {
  case P_ADD: case P_MUL: return (int)e->prim;
  case P_MIN: case P_MAX: case P_BAND: case P_BOR: case P_BXOR: case P_LAND: case P_LOR:
    return scalar_is_float(t->scalar) ? -1 : (int)e->prim;
  default: return -1;
  }
}

/* Lanes: TUNE_LANE_BYTES, enough independent chains to hide the latency of a vector
 * add, and a multiple of every narrower vector width. */
static int lanes_for(scalar_kind k) {
  size_t size = scalar_size(k);
  return (int)(TUNE_LANE_BYTES / (size ? size : 1));
}

/* Elements [lo, hi) of segment o into acc through W per-lane accumulators (hi - lo >= 2W):
 * lane l folds elements lo + l, lo + l + W, ...; then the lanes in order, then the rest. */
static void fold_lanes(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                       const int *oix, int o, int lo, int hi, int *acc) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1], *f = a->kids[0];
  const lacc_type *t = a->type;
  int W = lanes_for(t->scalar);
  int arr = lw_lane_array(L, t->scalar, W);
  int w = lw_k_int(L, S_I64, W), l = lw_var(L, S_I64);   /* each loop a lane variable of
                                                             its own (bounds.c, hoist.c) */
  lw_k_for(L, l, lw_k_int(L, S_I64, 0), w, 1);
  lw_k_lset(L, arr, l, lw_fold_elem(L, xs, env, sx, oix, o, lw_k_prim(L, P_ADD, lo, l))[0]);
  k_end(L);
  int j = lw_var(L, S_I64);
  lw_k_for(L, j, lw_k_prim(L, P_ADD, lo, w), hi, W);
  l = lw_var(L, S_I64);
  lw_k_for(L, l, lw_k_int(L, S_I64, 0), w, 1);
  int cur = lw_k_lget(L, arr, l);
  int *r = lw_combine(L, f, t, &cur, lw_fold_elem(L, xs, env, sx, oix, o, lw_k_prim(L, P_ADD, j, l)), env);
  lw_k_lset(L, arr, l, r[0]);
  k_end(L);
  k_end(L);
  lw_k_mov(L, acc[0], lw_k_lget(L, arr, lw_k_int(L, S_I64, 0)));
  l = lw_var(L, S_I64);
  lw_k_for(L, l, lw_k_int(L, S_I64, 1), w, 1);
  int lane = lw_k_lget(L, arr, l);
  lw_accumulate(L, f, t, acc, &lane, env);
  k_end(L);
  lw_fold_plain(L, a, env, sx, oix, o, j, hi, acc);
}

static void k_lmstore(lower *L, int word, int bits) {
  kinst *in = lw_emit(L, KO_LMSTORE);
  in->a = word;
  in->b = bits;
}

static int k_lmload(lower *L, int word) { return lw_k_unary(L, KO_LMLOAD, S_U64, word); }

/* The local word of leaf l of work-item `item` (p3 items: variable 3). */
static int group_word(lower *L, int l, int item) {
  return lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, lw_k_int(L, S_I64, l), 3), item);
}

/* The work-group combine of a fold's partials (FN_GROUP): item p2 of p3 folds partials
 * [p1 p2 / p3, p1 (p2 + 1) / p3), never empty; then in rounds s = 1, 2, 4, ... item l, a
 * multiple of 2s, takes item l + s's value after its own (which keeps the order, so any
 * associative function will do), through local words leaf * p3 + item. Every item meets
 * every barrier: the rounds depend on p3 alone. Item 0 adds the start value and stores. */
static void fold_group(lower *L, int st, const lacc_node *a, const aenv *env) {
  const lacc_type *t = a->type;
  const lacc_node *f = a->kids[0];
  int part = L->P->steps[st].partial, out = L->P->steps[st].out, nl = t->nleaves;
  if (nl > L->P->group_words) L->P->group_words = nl;
  L->P->steps[st].fn[SF_GROUP] = lw_new_fn(L, FN_GROUP);
  int one = lw_k_int(L, S_I64, 1), zero = lw_k_int(L, S_I64, 0);
  int lo = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_MUL, 1, 2), 3);
  int hi = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_MUL, 1, lw_k_prim(L, P_ADD, 2, one)), 3);
  int *acc = lw_fresh(L, t);
  lw_assign(L, t, acc, lw_load_elem(L, part, lo));
  int c = lw_var(L, S_I64);
  lw_k_for(L, c, lw_k_prim(L, P_ADD, lo, one), hi, 1);
  lw_accumulate(L, f, t, acc, lw_load_elem(L, part, c), env);
  k_end(L);
  int s = lw_var(L, S_I64);
  lw_k_mov(L, s, one);
  lw_emit(L, KO_LOOP);
  int more = lw_k_prim(L, P_LT, s, 3);
  lw_emit(L, KO_BREAKIFNOT)->a = more;
  int twice = lw_k_prim(L, P_ADD, s, s), m = lw_k_prim(L, P_REM, 2, twice);
  int partner = lw_k_prim(L, P_ADD, 2, s);
  k_if(L, lw_k_prim(L, P_EQ, m, s));
  for (int l = 0; l < nl; l++) k_lmstore(L, group_word(L, l, 2), bits_of(L, acc[l]));
  k_end(L);
  lw_emit(L, KO_BARRIER);
  k_if(L, lw_k_prim(L, P_LAND, lw_k_prim(L, P_EQ, m, zero), lw_k_prim(L, P_LT, partner, 3)));
  int *other = ints(L, nl);
  for (int l = 0; l < nl; l++)
    other[l] = lw_from_bits(L, type_leaf(t, l), k_lmload(L, group_word(L, l, partner)));
  lw_accumulate(L, f, t, acc, other, env);
  k_end(L);
  lw_emit(L, KO_BARRIER);
  lw_k_mov(L, s, twice);
  k_end(L);
  k_if(L, lw_k_prim(L, P_EQ, 2, zero));
  if (a->kind == K_FOLD) {
    int *z = lw_copy(L, t, lw_lower_exp(L, a->kids[1], NULL, env));
    acc = lw_combine(L, f, t, z, acc, env);
  }
  lw_store_elem(L, out, 0, acc);
  k_end(L);
}

static int step_fold(lower *L, const lacc_node *a, const aenv *env);

/* The term an array expression stands for, through lets (`let a0 = use .. in generate
 * ..`, as matmul's products come) and variables not yet materialised: the node whose
 * shape is computed. Lets are passed without binding them; a variable one of them binds
 * is that let's bound term. */
static const lacc_node *term_of(const lacc_node *t, const aenv *env) {
  const lacc_node *lets[16];
  int n = 0;
  for (;;) {
    if (t->kind == K_ALET && n < 16) {
      lets[n++] = t;
      t = t->kids[1];
    } else if (t->kind == K_AVAR && t->field < n) {
      const lacc_node *let = lets[n - 1 - t->field];
      n -= t->field + 1;   /* the bound term sees the lets outside its own */
      t = let->kids[0];
    } else if (t->kind == K_AVAR) {
      const aenv *e = lw_a_lookup(env, t->field - n);
      if (e->slot >= 0 || e->node == NULL) return t;
      t = e->node;
      env = e->env;
      n = 0;
    } else {
      return t;
    }
  }
}

/* A fold's input, fused, is the loop nest of a contraction (matmul's products): counted
 * as an iteration space, not as an array (size_check). */
int lw_step_fold(lower *L, const lacc_node *a, const aenv *env) {
  const lacc_node *saved = L->fold_input;
  L->fold_input = term_of(a->kids[a->kind == K_FOLD ? 2 : 1], env);
  int out = step_fold(L, a, env);
  L->fold_input = saved;
  return out;
}

static int step_fold(lower *L, const lacc_node *a, const aenv *env) {
  int with_z = a->kind == K_FOLD;
  const lacc_node *xs = a->kids[with_z ? 2 : 1], *f = a->kids[0];
  const lacc_type *t = a->type;
  int r = xs->rank;
  int st = lw_new_step(L, SK_FOLD, a, a->rank);
  int out = lw_new_slot(L, SLOT_KERNEL, t, a->rank, lw_out_plan(L, t));
  int part = lw_new_slot(L, SLOT_PARTIAL, t, 1, lw_out_plan(L, t));
  pstep *s = &L->P->steps[st];
  s->out = out;
  s->partial = part;
  s->with_z = with_z;
  s->lanes = lw_commutative(f, t) >= 0;
  s->ordered = lw_ordered_only(f, t);

  s->fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  int *sx = lw_shape_of(L, xs, env);
  for (int d = 0; d < r; d++) {
    kinst *in = lw_emit(L, KO_OUT);
    in->a = sx[d];
    in->imm.i = d;
  }

  /* segments in order, each sequential: the interpreter's order exactly */
  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_SEG);
  sx = lw_shape_of(L, xs, env);
  int o = lw_var(L, S_I64);
  lw_k_for(L, o, 0, 1, 1);
  L->key = o;
  int oix[LACC_MAX_RANK];
  lw_unravel_in(L, r - 1, sx, o, oix);
  int *acc = lw_fresh(L, t), j0;
  if (with_z) {
    lw_assign(L, t, acc, lw_lower_exp(L, a->kids[1], NULL, env));
    j0 = lw_k_int(L, S_I64, 0);
  } else {
    lw_assign(L, t, acc, lw_fold_elem(L, xs, env, sx, oix, o, lw_k_int(L, S_I64, 0)));
    j0 = lw_k_int(L, S_I64, 1);
  }
  int lanes_seg = L->P->steps[st].lanes && L->P->caps.lane_segments && lanes_on();
  if (lanes_seg) {   /* a long segment of a commutative primitive: per-lane accumulators */
    int len = lw_k_prim(L, P_SUB, sx[r - 1], j0);
    k_if(L, lw_k_prim(L, P_GE, len, lw_k_int(L, S_I64, 2 * lanes_for(t->scalar))));
    int *part = lw_fresh(L, t);
    fold_lanes(L, a, env, sx, oix, o, j0, sx[r - 1], part);
    lw_accumulate(L, f, t, acc, part, env);
    k_else(L);
  }
  lw_start_desc(L);
  fold_range(L, a, env, sx, oix, o, j0, sx[r - 1], acc);
  L->describe = 0;
  if (lanes_seg) k_end(L);
  lw_store_elem(L, out, o, acc);
  k_end(L);

  /* one chunk of one segment into a partial; lanes reassociate commutative functions */
  L->P->steps[st].fn[SF_PART] = lw_new_fn(L, FN_PART);
  sx = lw_shape_of(L, xs, env);
  o = 0;
  lw_unravel_in(L, r - 1, sx, o, oix);
  lw_fact(L, 1, sx[r - 1], -1);   /* the executor's chunk: p1 < p2 <= the row's length */
  lw_fact(L, 2, sx[r - 1], 0);
  L->key = 1;
  acc = lw_fresh(L, t);
  int lanes = L->P->steps[st].lanes;
  if (lanes) {
    int len = lw_k_prim(L, P_SUB, 2, 1);
    k_if(L, lw_k_prim(L, P_GE, len, lw_k_int(L, S_I64, 2 * lanes_for(t->scalar))));
    fold_lanes(L, a, env, sx, oix, o, 1, 2, acc);
    k_else(L);
  }
  lw_assign(L, t, acc, lw_fold_elem(L, xs, env, sx, oix, o, 1));
  fold_range(L, a, env, sx, oix, o, lw_k_prim(L, P_ADD, 1, lw_k_int(L, S_I64, 1)), 2, acc);
  if (lanes) k_end(L);
  lw_store_elem(L, part, 3, acc);

  /* the partials of a segment, in order */
  L->P->steps[st].fn[SF_COMBINE] = lw_new_fn(L, FN_COMBINE);
  acc = lw_fresh(L, t);
  int c0;
  if (with_z) {
    lw_assign(L, t, acc, lw_lower_exp(L, a->kids[1], NULL, env));
    c0 = lw_k_int(L, S_I64, 0);
  } else {
    lw_assign(L, t, acc, lw_load_elem(L, part, lw_k_int(L, S_I64, 0)));
    c0 = lw_k_int(L, S_I64, 1);
  }
  int c = lw_var(L, S_I64);
  lw_k_for(L, c, c0, 1, 1);
  lw_accumulate(L, f, t, acc, lw_load_elem(L, part, c), env);
  k_end(L);
  lw_store_elem(L, out, 0, acc);
  if (L->P->caps.work_groups) fold_group(L, st, a, env);
  lw_fold_tiles(L, st, a, env);
  lw_fold_gtiles(L, st, a, env);
  return out;
}
