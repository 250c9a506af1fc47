/* lower_fold.c: map steps, strips and folds.
 *
 * Owns: a materialised map's body (in strips of 256 elements on the cpu backend where
 * the code is straight-line; by rows at rank 2 and more), and folds: segments in order,
 * partials per chunk with per-lane accumulators for one commutative primitive (a float
 * min or max's partials from an infinity, passing over NaNs), the combine of partials,
 * and on OpenCL the work-group tree (FN_GROUP); a group of sibling folds or maps
 * (hfuse.c) in the same loops; a fold group's rows folded in the row loop of a scan of
 * the same rows (SF_HROWS), and a later fold1's error on empty rows at its own place.
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
  s->empty = node;
  s->rank = rank;
  for (int f = 0; f < SF_COUNT; f++) s->fn[f] = -1;
  s->wout = -1;
  s->hscan = s->hfold = -1;
  s->guard = L->guard;
  L->step = P->nsteps;
  return P->nsteps++;
}

void lw_step_results(lower *L, int st, int k, const int *out, int partials) {
  pstep *s = &L->P->steps[st];
  s->out = out[0];
  if (k < 2) return;
  s->nsib = k - 1;
  s->sib_out = kplan_alloc(L->P, sizeof *s->sib_out * (size_t)(partials ? 2 * s->nsib : s->nsib));
  if (s->sib_out == NULL) oom(L);
  if (partials) s->sib_partial = s->sib_out + s->nsib;
  for (int i = 1; i < k; i++) {
    s->sib_out[i - 1] = out[i];
    if (partials) s->sib_partial[i - 1] = -1;
  }
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
  const scalar_kind *kinds;   /* the element's leaves: one fold's, or a group's in turn */
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

/* Opens both loops for elements of those leaves; returns the element index s + q for the
 * caller to lower. */
static int strip_open_leaves(lower *L, strip *S, const scalar_kind *kinds, int nl, int lo,
                             int hi) {
  S->kinds = kinds;
  S->nl = nl;
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
    S->arr[l] = lw_lane_array(L, S->kinds[l], TUNE_FOLD_STRIP);
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

/* A map step's arrays: one, or sibling maps over the same rows (hfuse.c), each its own
 * output; their elements are computed and stored in one loop. */
typedef struct {
  int k;
  const lacc_node *t[TUNE_HFUSE_MOST];
  int out[TUNE_HFUSE_MOST];
  const aenv *env;
} maps;

/* Elements [lo, hi) of rank-1 maps on the cpu backend in strips, then stored. Returns
 * the first element left: lo when there is nothing to speculate (the plain loop then
 * vectorises as well, without the copy) or the elements' code is not straight-line even
 * so. Other ranks go by rows (map_rows). */
static int map_strips(lower *L, const maps *M, int lo, int hi) {
  if (!L->P->caps.cpu_like || M->t[0]->rank != 1 || !strips_on()) return lo;
  int nl = 0;
  for (int i = 0; i < M->k; i++) nl += M->t[i]->type->nleaves;
  scalar_kind *kinds = kplan_alloc(L->P, sizeof *kinds * (size_t)(nl ? nl : 1));
  int *all = ints(L, nl ? nl : 1);
  if (kinds == NULL) oom(L);
  for (int i = 0, l0 = 0; i < M->k; l0 += M->t[i]->type->nleaves, i++)
    for (int l = 0; l < M->t[i]->type->nleaves; l++) kinds[l0 + l] = type_leaf(M->t[i]->type, l);
  strip S;
  kindex k;
  k.lin = k.ix[0] = strip_open_leaves(L, &S, kinds, nl, lo, hi);
  L->key = k.lin;
  for (int i = 0, l0 = 0; i < M->k; l0 += M->t[i]->type->nleaves, i++) {
    shape_facts(L, M->t[i], M->env, k.ix);   /* the strips cover [lo, hi) of [0, n) */
    memcpy(all + l0, lw_elem(L, M->t[i], M->env, &k), sizeof *all * (size_t)M->t[i]->type->nleaves);
  }
  int *y = strip_fill(L, &S, all, 1);
  if (y == NULL) return lo;
  int at = lw_k_prim(L, P_ADD, S.s, S.q);
  for (int i = 0, l0 = 0; i < M->k; l0 += M->t[i]->type->nleaves, i++)
    lw_store_elem(L, M->out[i], at, y + l0);
  return strip_close(L, &S);
}

/* Each map's element at index k, stored; divided: k's multi-index was divided out of
 * k->lin (a group's elements, a kernel's element by element, not a row's loop), so that
 * operands of a map's rows are read at k->lin itself (lower_pull.c map_rows_agree) */
static void map_elems(lower *L, const maps *M, const kindex *k, int divided) {
  int **v = kplan_alloc(L->P, sizeof *v * (size_t)M->k);
  if (v == NULL) oom(L);
  for (int m = 0; m < M->k; m++) {
    shape_facts(L, M->t[m], M->env, k->ix);
    v[m] = lw_elem_by_division(L, M->t[m], M->env, k, divided);
  }
  L->describe = 0;
  for (int m = 0; m < M->k; m++) lw_store_elem(L, M->out[m], k->lin, v[m]);
}

/* Elements [lo, hi) of maps of rank 2 or more on the cpu backend, row by row: the row
 * and the outer indices from divisions once a row, then a loop along the row whose
 * index moves by one, without divisions (which no vector unit has), in which the outer
 * indices stay the same (so that hoist.c tests their reads' checks once a row). */
static void map_rows(lower *L, const maps *M, int lo, const int *oext) {
  int r = M->t[0]->rank, J = oext[r - 1];
  k_if(L, lw_k_prim(L, P_LT, lo, 1));   /* none: J may be 0 */
  int o = lw_var(L, S_I64), j = lw_var(L, S_I64), zero = lw_k_int(L, S_I64, 0);
  int last = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_SUB, 1, lw_k_int(L, S_I64, 1)), J);
  lw_k_for(L, o, lw_k_prim(L, P_QUOT, lo, J), lw_k_prim(L, P_ADD, last, lw_k_int(L, S_I64, 1)), 1);
  int base = lw_k_prim(L, P_MUL, o, J);
  int jlo = lw_k_prim(L, P_MAX, lw_k_prim(L, P_SUB, lo, base), zero);
  int jhi = lw_k_prim(L, P_MIN, lw_k_prim(L, P_SUB, 1, base), J);
  kindex k;
  lw_unravel_in(L, r - 1, oext, o, k.ix);
  lw_k_for(L, j, jlo, jhi, 1);
  lw_fact(L, j, J, -1);
  k.ix[r - 1] = j;
  k.lin = lw_k_prim(L, P_ADD, base, j);
  L->key = k.lin;
  map_elems(L, M, &k, 0);
  k_end(L);
  k_end(L);
  k_end(L);
}

/* ---- grouped producers: rank-1 maps whose element i shares work with its neighbours
 * through i >> c (a Philox block gives four neighbouring words), lower_group.c's algebra */

static int groups_on(void) {
  return setting_switch("LACC_GROUPS", 1);
}

/* Whether term e has a right shift within `budget` nodes: only then is a group looked for. */
static int has_shift(const lacc_node *e, int *budget) {
  if (e == NULL || --*budget < 0) return 0;
  if (e->kind == K_PRIM && e->prim == P_SHR) return 1;
  for (int i = 0; i < e->nkids; i++)
    if (has_shift(e->kids[i], budget)) return 1;
  return 0;
}

/* The width of a group of these maps' elements: 2^c for the largest shift by c (1 to 3) of
 * the element index they compute, found by lowering them once at an index, then taken
 * back; 0 for none. */
static int group_width(lower *L, const maps *M, const int *oext) {
  int budget = 4096, any = 0;
  if (!groups_on()) return 0;
  for (int i = 0; i < M->k && !any; i++) any = has_shift(M->t[i], &budget);
  if (!any) return 0;
  mark m = mark_here(L);
  int describe = L->describe, key = L->key;
  int pro = fn(L)->pro.n, nvars = fn(L)->nvars, nfacts = fn(L)->nfacts;
  memo *memos = L->memos;
  grp g;
  lw_group_begin(L, &g, lw_var(L, S_I64), 1);
  kindex k;
  k.lin = lw_group_index(L, 0);
  lw_unravel(L, M->t[0]->rank, oext, k.lin, k.ix);
  L->key = k.lin;
  map_elems(L, M, &k, 1);
  L->grp = NULL;
  L->describe = describe;
  back_to(L, m);
  /* and everything else the probe wrote: the function's text is then as if it never ran */
  fn(L)->pro.n = pro;
  fn(L)->nvars = nvars;
  fn(L)->nfacts = nfacts;
  L->memos = memos;
  L->key = key;
  return g.shift > 0 ? 1 << g.shift : 0;
}

/* Elements [lo, hi) of maps: in groups of w at multiples of w of the row-major index,
 * each group's elements lowered at b + k so that what they share is computed from the same
 * variables (the C compiler computes it once), then the elements before the first group
 * and after the last one by one. At rank 2 and more the indices come from divisions, which
 * the C compiler drops where only the row-major index is read (a reshaped generate). */
static void map_groups(lower *L, const maps *M, int w, int lo, int hi, const int *oext) {
  int r = M->t[0]->rank;
  int zero = lw_k_int(L, S_I64, 0);
  int up = lw_k_prim(L, P_BAND, lw_k_prim(L, P_ADD, lo, lw_k_int(L, S_I64, w - 1)),
                     lw_k_int(L, S_I64, -(int64_t)w));
  int first = lw_k_prim(L, P_MIN, up, hi), b = lw_var(L, S_I64);
  lw_k_for(L, b, first, hi, w);
  int from = fn(L)->body.n;
  grp g;
  lw_group_begin(L, &g, b, w);
  for (int k = 0; k < w; k++) {
    kindex ix;
    ix.lin = lw_group_index(L, k);
    lw_unravel(L, r, oext, ix.lin, ix.ix);
    L->key = ix.lin;
    map_elems(L, M, &ix, 1);
  }
  L->grp = NULL;
  lw_cse_since(L, from);
  k_end(L);
  /* b is the first element after the groups: the rest is [lo, first) and [b, hi) */
  int head = lw_k_prim(L, P_SUB, first, lo), j = lw_var(L, S_I64);
  lw_k_for(L, j, zero, lw_k_prim(L, P_ADD, head, lw_k_prim(L, P_SUB, hi, b)), 1);
  kindex ix;
  ix.lin = lw_k_select(L, lw_k_prim(L, P_LT, j, head), lw_k_prim(L, P_ADD, lo, j),
                       lw_k_prim(L, P_ADD, b, lw_k_prim(L, P_SUB, j, head)));
  lw_unravel(L, r, oext, ix.lin, ix.ix);
  L->key = ix.lin;
  map_elems(L, M, &ix, 1);
  k_end(L);
}

static int step_maps(lower *L, maps *M) {
  const lacc_node *t = M->t[0];
  int st = lw_new_step(L, SK_MAP, t, t->rank);
  for (int i = 0; i < M->k; i++)
    M->out[i] = lw_new_slot(L, SLOT_KERNEL, M->t[i]->type, t->rank, lw_out_plan(L, M->t[i]->type));
  lw_step_results(L, st, M->k, M->out, 0);
  L->P->steps[st].fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  int *ext = lw_shape_of(L, t, M->env);
  for (int d = 0; d < t->rank; d++) {
    kinst *in = lw_emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_BODY);
  int *oext = lw_slot_ext(L, M->out[0]);
  lw_start_desc(L);
  int w = group_width(L, M, oext);
  if (w > 0) {
    map_groups(L, M, w, 0, 1, oext);
    L->P->steps[st].group = w;
    return M->out[0];
  }
  int lo = map_strips(L, M, 0, 1);
  if (lo != 0) L->describe = 0;   /* the strips described the elements */
  if (t->rank >= 2 && L->P->caps.cpu_like) {
    map_rows(L, M, lo, oext);
    return M->out[0];
  }
  int i = lw_var(L, S_I64);
  lw_k_for(L, i, lo, 1, 1);
  L->key = i;
  kindex k;
  k.lin = i;
  lw_unravel(L, t->rank, oext, i, k.ix);
  map_elems(L, M, &k, 1);
  k_end(L);
  return M->out[0];
}

/* Materialise the delayed array (t, env): a map-like kernel. */
int lw_step_map(lower *L, const lacc_node *t, const aenv *env) {
  maps M = { .k = 1, .t = { t }, .env = env };
  return step_maps(L, &M);
}

int lw_step_maps(lower *L, const lacc_node *t, const aenv *env) {
  maps M = { .k = 0, .env = env };
  for (const lacc_node *m = t->hlead; m != NULL && M.k < TUNE_HFUSE_MOST; m = m->hnext)
    M.t[M.k++] = m;
  step_maps(L, &M);
  int out = -1;
  for (int i = 0; i < M.k; i++) {
    lw_set_slot(L, M.t[i], M.out[i]);
    if (M.t[i] == t) out = M.out[i];
  }
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

/* ---- folds: one, or a group of siblings over the same rows (hfuse.c) in one loop */

/* A fold step's folds: each its own combining function, start value, accumulator, output
 * and partials; their elements are each fold's own input's, pulled at the same index (the
 * C compiler shares what they have in common). Every fold of a group folds the same way
 * (hfuse.c), so each fold's elements combine in the order of its own loop. */
typedef struct {
  int k;
  const lacc_node *a[TUNE_HFUSE_MOST];
  const int *sx[TUNE_HFUSE_MOST];   /* each input's shape (one at run time) */
  int out[TUNE_HFUSE_MOST], part[TUNE_HFUSE_MOST];
  const aenv *env;
  int defer;                        /* its first fold1 comes after a member with a start
                                       value, or after the let it is planned at: an empty
                                       row is reported at that fold1's place, and folded */
  int write;                        /* the slot of a map the loops also write, or -1: */
  const lacc_node *wnode;           /* the map, in */
  const aenv *wenv;                 /* its environment */
} folds;

static const lacc_node *xs_of(const folds *F, int i) { return fold_input(F->a[i]); }
static const lacc_type *t_of(const folds *F, int i) { return F->a[i]->type; }

/* Each fold's element j of segment o; a map the loops write gets its element j stored
 * (every path but tiles, which a writing fold has none of, visits each element once). */
static int **folds_elem(lower *L, const folds *F, const int *oix, int o, int j) {
  int **x = kplan_alloc(L->P, sizeof *x * (size_t)F->k);
  if (x == NULL) oom(L);
  if (F->write < 0) {
    for (int i = 0; i < F->k; i++) x[i] = lw_fold_elem(L, xs_of(F, i), F->env, F->sx[i], oix, o, j);
    return x;
  }
  /* the map's element j, stored, and then the folds' elements from it: the folds read the
   * map (variable 0) only there, once or more (hfuse.c: can_write), so its entry holds the
   * element rather than the term (a C compiler need not merge two calls of expf) */
  int r = xs_of(F, 0)->rank;
  kindex k;
  for (int d = 0; d + 1 < r; d++) k.ix[d] = oix[d];
  k.ix[r - 1] = j;
  k.lin = lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, o, F->sx[0][r - 1]), j);
  lw_fact(L, j, F->sx[0][r - 1], -1);
  const lacc_node *b = F->wnode;
  kindex kb = k;   /* a flattened map's index: its own, from the linear one */
  if (b->rank != r) lw_unravel(L, b->rank, lw_shape_of(L, b, F->wenv), k.lin, kb.ix);
  int *w = lw_copy(L, b->type, lw_elem_by_division(L, b, F->wenv, &kb, b->rank != r));
  lw_store_elem(L, F->write, k.lin, w);
  aenv *at = lw_alloc(L, sizeof *at);
  *at = *lw_a_lookup(F->env, 0);
  at->elem = w;
  at->elem_slot = F->write;
  for (int i = 0; i < F->k; i++) x[i] = lw_elem(L, xs_of(F, i), at, &k);
  return x;
}

static int **folds_fresh(lower *L, const folds *F) {
  int **acc = kplan_alloc(L->P, sizeof *acc * (size_t)F->k);
  if (acc == NULL) oom(L);
  for (int i = 0; i < F->k; i++) acc[i] = lw_fresh(L, t_of(F, i));
  return acc;
}

static void folds_accumulate(lower *L, const folds *F, int **acc, int **x) {
  for (int i = 0; i < F->k; i++) lw_accumulate(L, F->a[i]->kids[0], t_of(F, i), acc[i], x[i], F->env);
}

/* A canonical float min or max (fold_nan_chunks): its primitive, or -1. Its chunks and
 * lanes start from +inf (-inf), so that a NaN element never enters (y < acc is false), a
 * chunk of NaNs gives inf, which changes nothing in the in-order combine of the partials,
 * and every tie still goes to the first. */
static int nan_lanes(const folds *F, int i) { return fold_nan_chunks(F->a[i]->kids[0], t_of(F, i)); }

/* That start: +inf (min), -inf (max). */
static int nan_start(lower *L, const folds *F, int i) {
  lacc_val v;
  double inf = nan_lanes(F, i) == (int)P_MIN ? INFINITY : -INFINITY;
  if (t_of(F, i)->scalar == S_F32) v.f = (float)inf;
  else v.d = inf;
  return lw_k_const(L, t_of(F, i)->scalar, v);
}

/* The start of such a fold's partial of the executor's chunk from lo (variable p1), x0
 * its first element: the infinity, but a fold1's first chunk starts from x0, as the
 * in-order fold does (a NaN there stays: the row's start). */
static int nan_chunk_start(lower *L, const folds *F, int i, int lo, int x0) {
  int s = nan_start(L, F, i);
  if (F->a[i]->kind != K_FOLD1) return s;
  return lw_k_select(L, lw_k_prim(L, P_EQ, lo, lw_k_int(L, S_I64, 0)), x0, s);
}

/* The start of fold i's partial of a chunk from its first element x: x, or for a float
 * min or max its chunk's start combined with x (f(x, x) = x, bit for bit). */
static void chunk_start(lower *L, const folds *F, int i, int *acc, const int *x) {
  const lacc_type *t = t_of(F, i);
  if (nan_lanes(F, i) < 0) {
    lw_assign(L, t, acc, x);
    return;
  }
  int s = nan_chunk_start(L, F, i, 1, x[0]);
  lw_k_mov(L, acc[0], lw_combine(L, F->a[i]->kids[0], t, &s, x, F->env)[0]);
}

/* Elements [lo, hi) of one segment folded in strips. Returns the first element left
 * (lo when the elements' code is not straight-line even with speculation). */
static int fold_strips(lower *L, const folds *F, const int *oix, int o, int lo, int hi,
                       int **acc) {
  int nl = 0;
  for (int i = 0; i < F->k; i++) nl += t_of(F, i)->nleaves;
  scalar_kind *kinds = kplan_alloc(L->P, sizeof *kinds * (size_t)(nl ? nl : 1));
  if (kinds == NULL) oom(L);
  for (int i = 0, l0 = 0; i < F->k; l0 += t_of(F, i)->nleaves, i++)
    for (int l = 0; l < t_of(F, i)->nleaves; l++) kinds[l0 + l] = type_leaf(t_of(F, i), l);
  strip S;
  int j = strip_open_leaves(L, &S, kinds, nl, lo, hi);
  int **x = folds_elem(L, F, oix, o, j);
  int *all = ints(L, nl ? nl : 1);
  for (int i = 0, l0 = 0; i < F->k; l0 += t_of(F, i)->nleaves, i++)
    memcpy(all + l0, x[i], sizeof *all * (size_t)t_of(F, i)->nleaves);
  int *y = strip_fill(L, &S, all, 0);
  if (y == NULL) return lo;
  for (int i = 0, l0 = 0; i < F->k; l0 += t_of(F, i)->nleaves, i++) x[i] = y + l0;
  folds_accumulate(L, F, acc, x);
  return strip_close(L, &S);
}

static void folds_plain(lower *L, const folds *F, const int *oix, int o, int lo, int hi,
                        int **acc) {
  int j = lw_var(L, S_I64);
  lw_k_for(L, j, lo, hi, 1);
  folds_accumulate(L, F, acc, folds_elem(L, F, oix, o, j));
  k_end(L);
}

/* Sequential loop j in [lo, hi) over one segment into acc. */
void lw_fold_plain(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                   const int *oix, int o, int lo, int hi, int *acc) {
  folds F = { .k = 1, .a = { a }, .sx = { sx }, .env = env, .write = -1 };
  folds_plain(L, &F, oix, o, lo, hi, &acc);
}

/* The same, on the cpu backend in strips where the elements' code allows. */
static void fold_range(lower *L, const folds *F, const int *oix, int o, int lo, int hi,
                       int **acc) {
  int described = L->describe;
  if (L->P->caps.cpu_like && strips_on() && F->write < 0) {   /* a strip stores nothing */
    int rest = fold_strips(L, F, oix, o, lo, hi, acc);
    if (rest != lo) L->describe = 0;   /* the strips described the elements */
    lo = rest;
  }
  folds_plain(L, F, oix, o, lo, hi, acc);
  L->describe = described;
}

/* Lanes: TUNE_LANE_BYTES, enough independent chains to hide the latency of a vector
 * add, and a multiple of every narrower vector width. */
static int lanes_for(scalar_kind k) {
  size_t size = scalar_size(k);
  return (int)(TUNE_LANE_BYTES / (size ? size : 1));
}

/* ---- per-lane accumulators */

/* A float min or max (nan_lanes) folds in lanes too: each lane starts from the infinity,
 * so y < lane ? y : lane passes over NaNs as the in-order fold does and keeps the lane's
 * first element of its least value. The in-order fold ends with the first element of the
 * least value of all; equal values have equal bits but for zeros, so when the least is a
 * zero and the lanes hold zeros of both signs, the elements are read again, in order, up
 * to the first zero. The result is the in-order fold's, bit for bit, whatever the lanes'
 * alignment (lanes that kept positions instead were slower: docs/design.md,
 * Measurements). Lanes arr of fold i over elements [lo, end), folded into acc after its
 * start (chunk: [lo, ...) is the executor's chunk, nan_chunk_start). */
static void nan_lanes_end(lower *L, const folds *F, int i, int arr, int W, const int *oix,
                          int o, int lo, int end, int chunk, int *acc) {
  const lacc_node *f = F->a[i]->kids[0];
  const lacc_type *t = t_of(F, i);
  scalar_kind k = t->scalar;
  lacc_val zv, sv;
  if (k == S_F32) zv.f = 0.0f;
  else zv.d = 0.0;
  sv.u = k == S_F32 ? UINT64_C(0x80000000) : UINT64_C(0x8000000000000000);
  int zero = lw_k_const(L, k, zv), sign = lw_k_const(L, S_U64, sv);
  int best = lw_var(L, k), neg = lw_var(L, S_U8), pos = lw_var(L, S_U8);
  lw_k_mov(L, best, nan_start(L, F, i));
  lw_k_mov(L, neg, lw_k_int(L, S_U8, 0));
  lw_k_mov(L, pos, lw_k_int(L, S_U8, 0));
  int l = lw_var(L, S_I64);
  lw_k_for(L, l, lw_k_int(L, S_I64, 0), lw_k_int(L, S_I64, W), 1);
  int v = lw_k_lget(L, arr, l);
  lw_k_mov(L, best, lw_combine(L, f, t, &best, &v, F->env)[0]);
  int z = lw_k_prim(L, P_EQ, v, zero), b = bits_of(L, v);
  lw_k_mov(L, neg, lw_k_prim(L, P_LOR, neg, lw_k_prim(L, P_LAND, z, lw_k_prim(L, P_GE, b, sign))));
  lw_k_mov(L, pos, lw_k_prim(L, P_LOR, pos, lw_k_prim(L, P_LAND, z, lw_k_prim(L, P_LT, b, sign))));
  k_end(L);
  int both = lw_k_prim(L, P_LAND, neg, pos);
  k_if(L, lw_k_prim(L, P_LAND, lw_k_prim(L, P_EQ, best, zero), both));
  int j = lw_var(L, S_I64);
  lw_k_mov(L, j, lo);
  lw_emit(L, KO_LOOP);
  int more = lw_k_prim(L, P_LT, j, end);   /* before the break that reads it */
  lw_emit(L, KO_BREAKIFNOT)->a = more;
  int x = lw_fold_elem(L, xs_of(F, i), F->env, F->sx[i], oix, o, j)[0];
  lw_k_mov(L, best, x);
  int nonzero = lw_k_prim(L, P_NE, x, zero);
  lw_emit(L, KO_BREAKIFNOT)->a = nonzero;
  lw_k_mov(L, j, lw_k_prim(L, P_ADD, j, lw_k_int(L, S_I64, 1)));
  k_end(L);
  k_end(L);
  int s = nan_start(L, F, i);
  if (chunk && F->a[i]->kind == K_FOLD1)
    s = nan_chunk_start(L, F, i, lo, lw_fold_elem(L, xs_of(F, i), F->env, F->sx[i], oix, o, lo)[0]);
  lw_k_mov(L, acc[0], lw_combine(L, f, t, &s, &best, F->env)[0]);
}

/* Elements [lo, hi) of segment o into acc through W per-lane accumulators a fold (hi - lo
 * >= 2W; a group's folds have scalars of one size, so one W): lane l folds elements lo +
 * l, lo + l + W, ...; then the lanes in order (a float min or max: nan_lanes), then the
 * rest. chunk: [lo, hi) is the executor's chunk (p1, p2). */
static void fold_lanes(lower *L, const folds *F, const int *oix, int o, int lo, int hi,
                       int **acc, int chunk) {
  int W = lanes_for(t_of(F, 0)->scalar);
  int *arr = ints(L, F->k);
  for (int i = 0; i < F->k; i++) arr[i] = lw_lane_array(L, t_of(F, i)->scalar, W);
  int w = lw_k_int(L, S_I64, W), l = lw_var(L, S_I64);   /* each loop a lane variable of
                                                             its own (bounds.c, hoist.c) */
  lw_k_for(L, l, lw_k_int(L, S_I64, 0), w, 1);
  int **x = folds_elem(L, F, oix, o, lw_k_prim(L, P_ADD, lo, l));
  for (int i = 0; i < F->k; i++) {
    int v = x[i][0];
    if (nan_lanes(F, i) >= 0) {
      int s = nan_start(L, F, i);
      v = lw_combine(L, F->a[i]->kids[0], t_of(F, i), &s, &v, F->env)[0];
    }
    lw_k_lset(L, arr[i], l, v);
  }
  k_end(L);
  int j = lw_var(L, S_I64);
  lw_k_for(L, j, lw_k_prim(L, P_ADD, lo, w), hi, W);
  l = lw_var(L, S_I64);
  lw_k_for(L, l, lw_k_int(L, S_I64, 0), w, 1);
  int *cur = ints(L, F->k);
  for (int i = 0; i < F->k; i++) cur[i] = lw_k_lget(L, arr[i], l);
  x = folds_elem(L, F, oix, o, lw_k_prim(L, P_ADD, j, l));
  for (int i = 0; i < F->k; i++) {
    int *r = lw_combine(L, F->a[i]->kids[0], t_of(F, i), &cur[i], x[i], F->env);
    lw_k_lset(L, arr[i], l, r[0]);
  }
  k_end(L);
  k_end(L);
  int any = 0;
  for (int i = 0; i < F->k; i++) {
    if (nan_lanes(F, i) >= 0) nan_lanes_end(L, F, i, arr[i], W, oix, o, lo, j, chunk, acc[i]);
    else any = 1, lw_k_mov(L, acc[i][0], lw_k_lget(L, arr[i], lw_k_int(L, S_I64, 0)));
  }
  if (any) {
    l = lw_var(L, S_I64);
    lw_k_for(L, l, lw_k_int(L, S_I64, 1), w, 1);
    for (int i = 0; i < F->k; i++) {
      if (nan_lanes(F, i) >= 0) continue;
      int lane = lw_k_lget(L, arr[i], l);
      lw_accumulate(L, F->a[i]->kids[0], t_of(F, i), acc[i], &lane, F->env);
    }
    k_end(L);
  }
  folds_plain(L, F, oix, o, j, hi, acc);
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
 * associative function will do), through local words word * p3 + item (a group's folds'
 * leaves one after the other). Every item meets every barrier: the rounds depend on p3
 * alone. Item 0 adds each start value and stores. */
static void fold_group(lower *L, int st, const folds *F) {
  int nl = 0;
  for (int i = 0; i < F->k; i++) nl += t_of(F, i)->nleaves;
  if (nl > L->P->group_words) L->P->group_words = nl;
  L->P->steps[st].fn[SF_GROUP] = lw_new_fn(L, FN_GROUP);
  int one = lw_k_int(L, S_I64, 1), zero = lw_k_int(L, S_I64, 0);
  int lo = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_MUL, 1, 2), 3);
  int hi = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_MUL, 1, lw_k_prim(L, P_ADD, 2, one)), 3);
  int **acc = folds_fresh(L, F);
  int **x = kplan_alloc(L->P, sizeof *x * (size_t)F->k);
  if (x == NULL) oom(L);
  for (int i = 0; i < F->k; i++) lw_assign(L, t_of(F, i), acc[i], lw_load_elem(L, F->part[i], lo));
  int c = lw_var(L, S_I64);
  lw_k_for(L, c, lw_k_prim(L, P_ADD, lo, one), hi, 1);
  for (int i = 0; i < F->k; i++) x[i] = lw_load_elem(L, F->part[i], c);
  folds_accumulate(L, F, acc, x);
  k_end(L);
  int s = lw_var(L, S_I64);
  lw_k_mov(L, s, one);
  lw_emit(L, KO_LOOP);
  int more = lw_k_prim(L, P_LT, s, 3);
  lw_emit(L, KO_BREAKIFNOT)->a = more;
  int twice = lw_k_prim(L, P_ADD, s, s), m = lw_k_prim(L, P_REM, 2, twice);
  int partner = lw_k_prim(L, P_ADD, 2, s);
  k_if(L, lw_k_prim(L, P_EQ, m, s));
  for (int i = 0, w = 0; i < F->k; i++)
    for (int l = 0; l < t_of(F, i)->nleaves; l++, w++)
      k_lmstore(L, group_word(L, w, 2), bits_of(L, acc[i][l]));
  k_end(L);
  lw_emit(L, KO_BARRIER);
  k_if(L, lw_k_prim(L, P_LAND, lw_k_prim(L, P_EQ, m, zero), lw_k_prim(L, P_LT, partner, 3)));
  for (int i = 0, w = 0; i < F->k; i++) {
    const lacc_type *t = t_of(F, i);
    x[i] = ints(L, t->nleaves);
    for (int l = 0; l < t->nleaves; l++, w++)
      x[i][l] = lw_from_bits(L, type_leaf(t, l), k_lmload(L, group_word(L, w, partner)));
  }
  folds_accumulate(L, F, acc, x);
  k_end(L);
  lw_emit(L, KO_BARRIER);
  lw_k_mov(L, s, twice);
  k_end(L);
  k_if(L, lw_k_prim(L, P_EQ, 2, zero));
  for (int i = 0; i < F->k; i++) {
    const lacc_node *a = F->a[i];
    int *r = acc[i];
    if (a->kind == K_FOLD) {
      int *z = lw_copy(L, a->type, lw_lower_exp(L, a->kids[1], NULL, F->env));
      r = lw_combine(L, a->kids[0], a->type, z, r, F->env);
    }
    lw_store_elem(L, F->out[i], 0, r);
  }
  k_end(L);
}

static int step_fold(lower *L, folds *F);

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
  folds F = { .k = 1, .a = { a }, .env = env, .write = -1 };
  const lacc_node *saved = L->fold_input;
  L->fold_input = term_of(fold_input(a), env);
  int out = step_fold(L, &F);
  L->fold_input = saved;
  return out;
}

static void group_step(lower *L, folds *F, const lacc_node *first) {
  int fold1 = 0;
  for (const lacc_node *m = first; m != NULL && F->k < TUNE_HFUSE_MOST; m = m->hnext) {
    F->a[F->k++] = m;
    fold1 = fold1 || m->kind == K_FOLD1;
  }
  F->defer = F->defer && fold1;
  const lacc_node *saved = L->fold_input;
  L->fold_input = term_of(fold_input(F->a[0]), F->env);
  step_fold(L, F);
  L->fold_input = saved;
  for (int i = 0; i < F->k; i++) lw_set_slot(L, F->a[i], F->out[i]);
}

/* Whether every array t's elements come from is in memory (t is maps of them), so that
 * its reads along a row are never side by side across rows and a fold of it alone never
 * takes tiles (lower_tile.c's tile_good): a group of folds along rows then takes the
 * path each would alone. A let-bound array not materialised may be computed from its
 * index (a contraction's products), which tiles fold in order. */
static int from_memory(const lacc_node *t, const aenv *env) {
  switch (t->kind) {
  case K_USE: case K_PARAM: return 1;
  case K_AVAR: {
    const aenv *e = lw_a_lookup(env, t->field);
    return e->slot >= 0 || (e->node != NULL && from_memory(e->node, e->env));
  }
  case K_RESHAPE: return from_memory(t->kids[1], env);   /* the same linear index */
  case K_MAP:
    for (int i = 1; i < t->nkids; i++)
      if (!from_memory(t->kids[i], env)) return 0;
    return 1;
  default: return 0;
  }
}

/* Whether group a (a member) must be lowered apart: along rows, an array its rows are
 * read from may be computed from its index. */
static int group_apart(const lacc_node *a, const aenv *env) {
  for (const lacc_node *m = a->hlead; a->rank > 0 && m != NULL; m = m->hnext)
    if (!from_memory(fold_input(m), env)) return 1;
  return 0;
}


int lw_step_folds(lower *L, const lacc_node *a, const aenv *env) {
  if (group_apart(a, env)) {
    int s = lw_step_fold(L, a, env);
    L->P->steps[L->step].hwhy = "an array the rows are read from is computed from its "
                                "index, which tiles may fold alone";
    lw_set_slot(L, a, s);
    return s;
  }
  folds F = { .k = 0, .env = env, .write = -1, .defer = a->kind != K_FOLD1 };
  group_step(L, &F, a->hlead);
  if (a->kind == K_FOLD1) L->P->steps[L->step].empty = a;   /* reached first: its error */
  return lw_slot_of(L, a);
}

/* The body's folds read the let's variable (0) as the map itself, pulled: element j is
 * computed once in their loop, stored, and folded. b (in benv: the lets the bound term is
 * made of) is the map; env is the let's. */
int lw_step_folds_writing(lower *L, const lacc_node *b, const aenv *benv, const aenv *env) {
  int s = lw_new_slot(L, SLOT_KERNEL, b->type, b->rank, lw_out_plan(L, b->type));
  folds F = { .k = 0, .env = lw_a_push(L, env, b, benv, -1), .write = s, .wnode = b,
              .wenv = benv, .defer = 1 };
  const lacc_node *a = b->hwrite;
  group_step(L, &F, a->hlead != NULL ? a->hlead : a);
  L->P->steps[L->step].wout = s;
  lw_set_slot(L, b, s);
  return s;
}

/* The step whose results include slot, or -1. */
static int step_of_slot(const kplan *P, int slot) {
  for (int k = P->nsteps - 1; k >= 0; k--) {
    const pstep *s = &P->steps[k];
    if (s->kind != SK_FOLD) continue;
    if (s->out == slot) return k;
    for (int i = 0; i < s->nsib; i++)
      if (s->sib_out[i] == slot) return k;
  }
  return -1;
}

/* A step that reports fold1 t's error when its rows are empty (and there are rows). */
static void empty_check_step(lower *L, const lacc_node *t, const aenv *env) {
  int out = lw_bool_step(L, t, SK_MAP);
  L->P->steps[L->step].check_only = 1;
  int i = lw_var(L, S_I64);
  lw_k_for(L, i, 0, 1, 1);
  L->key = lw_k_int(L, S_I64, -1);
  const lacc_node *xs = fold_input(t);
  int r = xs->rank, zero = lw_k_int(L, S_I64, 0);
  int *sx = lw_shape_of(L, xs, env);
  int bad = lw_k_prim(L, P_LAND, lw_k_prim(L, P_EQ, sx[r - 1], zero),
                      lw_k_prim(L, P_GT, lw_size_of(L, r - 1, sx), zero));
  k_if(L, bad);
  lw_k_fail(L, lw_add_check(L, CK_EMPTY, "fold1", t->where, 0), 0, NULL);
  k_end(L);
  lw_store_elem(L, out, i, &bad);
  k_end(L);
}

void lw_fold_reached(lower *L, const lacc_node *t, const aenv *env, int slot) {
  if (t->kind != K_FOLD1) return;
  int k = step_of_slot(L->P, slot);
  if (k < 0 || L->P->steps[k].empty_later != 1) return;
  /* nothing came between but the scan that folds the group's rows (on empty rows it reads
   * nothing, and its shape is the group's): the group reports it */
  if (k == L->P->nsteps - 1 || L->P->steps[k].hscan == L->P->nsteps - 1) {
    L->P->steps[k].empty = t;
    L->P->steps[k].empty_later = 0;
    return;
  }
  L->P->steps[k].empty_later = 2;
  empty_check_step(L, t, env);
}

/* Each fold's start value into its accumulator (fold), or element 0 (fold1); the first
 * element the loops take. zstart: some fold has a start value (a fold1 beside it is a
 * float min or max, which folding element 0 again leaves as it is: hfuse.c). */
static int *zero_leaves(lower *L, const lacc_type *t) {
  int *o = ints(L, t->nleaves ? t->nleaves : 1);
  lacc_val z = { .u = 0 };
  for (int k = 0; k < t->nleaves; k++) o[k] = lw_k_const(L, type_leaf(t, k), z);
  return o;
}

static int folds_start(lower *L, const folds *F, const int *oix, int o, int **acc, int zstart) {
  int r = xs_of(F, 0)->rank;
  /* a deferred group folds empty rows too: no element 0 there, a fold1 starts from 0 bits
   * (element 0's index is a variable of its own, defined inside the test: bounds.c takes
   * it as inside the row wherever it is defined) */
  int rowful = F->defer ? lw_k_prim(L, P_GT, F->sx[0][r - 1], lw_k_int(L, S_I64, 0)) : -1;
  if (!zstart) {
    if (rowful >= 0) {
      for (int i = 0; i < F->k; i++) lw_assign(L, t_of(F, i), acc[i], zero_leaves(L, t_of(F, i)));
      k_if(L, rowful);
    }
    int **x = folds_elem(L, F, oix, o, lw_k_int(L, S_I64, 0));
    for (int i = 0; i < F->k; i++) lw_assign(L, t_of(F, i), acc[i], x[i]);
    if (rowful >= 0) k_end(L);
    return lw_k_int(L, S_I64, 1);
  }
  for (int i = 0; i < F->k; i++) {
    const lacc_node *a = F->a[i];
    const lacc_type *t = t_of(F, i);
    if (a->kind == K_FOLD) {
      lw_assign(L, t, acc[i], lw_lower_exp(L, a->kids[1], NULL, F->env));
      continue;
    }
    if (rowful >= 0) {
      lw_assign(L, t, acc[i], zero_leaves(L, t));
      k_if(L, rowful);
    }
    lw_assign(L, t, acc[i], lw_fold_elem(L, xs_of(F, i), F->env, F->sx[i], oix, o,
                                         lw_k_int(L, S_I64, 0)));
    if (rowful >= 0) k_end(L);
  }
  return lw_k_int(L, S_I64, 0);
}

static void folds_store(lower *L, const folds *F, const int *slot, int at, int **acc) {
  for (int i = 0; i < F->k; i++) lw_store_elem(L, slot[i], at, acc[i]);
}

static void folds_shapes(lower *L, folds *F) {
  for (int i = 0; i < F->k; i++) F->sx[i] = lw_shape_of(L, xs_of(F, i), F->env);
}

/* Whether some fold of F has a start value (the others start from element 0). */
static int folds_with_z(const folds *F) {
  for (int i = 0; i < F->k; i++)
    if (F->a[i]->kind == K_FOLD) return 1;
  return 0;
}

/* Segment o of fold step st folded, in order, into its outputs (F's shapes computed in
 * this function: folds_shapes); describe: record what it pulls (explain). */
static void fold_row(lower *L, const folds *F, int st, int o, int describe) {
  const lacc_type *t = F->a[0]->type;
  int r = xs_of(F, 0)->rank;
  const int *sx = F->sx[0];
  int oix[LACC_MAX_RANK];
  lw_unravel_in(L, r - 1, sx, o, oix);
  int **acc = folds_fresh(L, F);
  int j0 = folds_start(L, F, oix, o, acc, folds_with_z(F));
  int lanes_seg = L->P->steps[st].lanes && L->P->caps.lane_segments && lanes_on();
  if (lanes_seg) {   /* a long segment of a commutative primitive: per-lane accumulators */
    int len = lw_k_prim(L, P_SUB, sx[r - 1], j0);
    k_if(L, lw_k_prim(L, P_GE, len, lw_k_int(L, S_I64, 2 * lanes_for(t->scalar))));
    int **part = folds_fresh(L, F);
    fold_lanes(L, F, oix, o, j0, sx[r - 1], part, 0);
    folds_accumulate(L, F, acc, part);
    k_else(L);
  }
  if (describe) lw_start_desc(L);
  fold_range(L, F, oix, o, j0, sx[r - 1], acc);
  L->describe = 0;
  if (lanes_seg) k_end(L);
  folds_store(L, F, F->out, o, acc);
}

static int step_fold(lower *L, folds *F) {
  const lacc_node *a = F->a[0], *first1 = NULL;
  int with_z = folds_with_z(F);   /* the others start from element 0 */
  for (int i = 0; i < F->k && first1 == NULL; i++)
    if (F->a[i]->kind == K_FOLD1) first1 = F->a[i];
  const lacc_node *xs = fold_input(a);
  const lacc_type *t = a->type;
  int r = xs->rank;
  int st = lw_new_step(L, SK_FOLD, a, a->rank);
  for (int i = 0; i < F->k; i++) {
    F->out[i] = lw_new_slot(L, SLOT_KERNEL, t_of(F, i), a->rank, lw_out_plan(L, t_of(F, i)));
    F->part[i] = lw_new_slot(L, SLOT_PARTIAL, t_of(F, i), 1, lw_out_plan(L, t_of(F, i)));
  }
  if (L->then.map != NULL && F->k == 1) {   /* the results as the map makes them */
    const lacc_type *mt = L->then.map->type;
    L->P->slots[F->out[0]].type = mt;
    L->P->slots[F->out[0]].plan = lw_out_plan(L, mt);
    L->then.slot = F->out[0];
    L->P->steps[st].then = L->then.map;
  }
  lw_step_results(L, st, F->k, F->out, 1);
  pstep *s = &L->P->steps[st];
  s->partial = F->part[0];
  s->with_z = first1 == NULL;
  s->empty = first1 != NULL ? first1 : a;
  s->empty_later = F->defer;
  s->lanes = fold_lanes_ok(a);
  s->ordered = fold_in_order(a);
  if (F->k > 1) {
    s->sib_kind = kplan_alloc(L->P, sizeof *s->sib_kind * (size_t)s->nsib);
    if (s->sib_kind == NULL) oom(L);
    for (int i = 1; i < F->k; i++) {
      s->sib_kind[i - 1] = F->a[i]->kind;
      s->sib_partial[i - 1] = F->part[i];
    }
  }

  s->fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  int *sx = lw_shape_of(L, xs, F->env);
  for (int d = 0; d < r; d++) {
    kinst *in = lw_emit(L, KO_OUT);
    in->a = sx[d];
    in->imm.i = d;
  }
  if (F->write >= 0 && F->wnode->rank != r) {   /* a flattened map: its own extents after */
    int *wx = lw_shape_of(L, F->wnode, F->wenv);
    for (int d = 0; d < F->wnode->rank; d++) {
      kinst *in = lw_emit(L, KO_OUT);
      in->a = wx[d];
      in->imm.i = r + d;
    }
    L->P->steps[st].wext = r;
  }

  /* segments in order, each sequential: the interpreter's order exactly */
  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_SEG);
  folds_shapes(L, F);
  int o = lw_var(L, S_I64);
  lw_k_for(L, o, 0, 1, 1);
  L->key = o;
  fold_row(L, F, st, o, 1);
  k_end(L);
  sx = (int *)F->sx[0];
  int oix[LACC_MAX_RANK];
  int **acc;

  /* one chunk of one segment into a partial; lanes reassociate commutative functions */
  L->P->steps[st].fn[SF_PART] = lw_new_fn(L, FN_PART);
  folds_shapes(L, F);
  sx = (int *)F->sx[0];
  o = 0;
  lw_unravel_in(L, r - 1, sx, o, oix);
  lw_fact(L, 1, sx[r - 1], -1);   /* the executor's chunk: p1 < p2 <= the row's length */
  lw_fact(L, 2, sx[r - 1], 0);
  L->key = 1;
  acc = folds_fresh(L, F);
  int lanes = L->P->steps[st].lanes;
  if (lanes) {
    int len = lw_k_prim(L, P_SUB, 2, 1);
    k_if(L, lw_k_prim(L, P_GE, len, lw_k_int(L, S_I64, 2 * lanes_for(t->scalar))));
    fold_lanes(L, F, oix, o, 1, 2, acc, 1);
    k_else(L);
  }
  int **x = folds_elem(L, F, oix, o, 1);
  for (int i = 0; i < F->k; i++) chunk_start(L, F, i, acc[i], x[i]);
  fold_range(L, F, oix, o, lw_k_prim(L, P_ADD, 1, lw_k_int(L, S_I64, 1)), 2, acc);
  if (lanes) k_end(L);
  folds_store(L, F, F->part, 3, acc);

  /* the partials of a segment, in order */
  L->P->steps[st].fn[SF_COMBINE] = lw_new_fn(L, FN_COMBINE);
  acc = folds_fresh(L, F);
  int c0;
  if (with_z) {   /* a fold1 beside folds takes its partial 0 twice (folds_start) */
    for (int i = 0; i < F->k; i++)
      lw_assign(L, t_of(F, i), acc[i],
                F->a[i]->kind == K_FOLD ? lw_lower_exp(L, F->a[i]->kids[1], NULL, F->env)
                                        : lw_load_elem(L, F->part[i], lw_k_int(L, S_I64, 0)));
    c0 = lw_k_int(L, S_I64, 0);
  } else {
    for (int i = 0; i < F->k; i++)
      lw_assign(L, t_of(F, i), acc[i], lw_load_elem(L, F->part[i], lw_k_int(L, S_I64, 0)));
    c0 = lw_k_int(L, S_I64, 1);
  }
  int c = lw_var(L, S_I64);
  lw_k_for(L, c, c0, 1, 1);
  x = kplan_alloc(L->P, sizeof *x * (size_t)F->k);
  if (x == NULL) oom(L);
  for (int i = 0; i < F->k; i++) x[i] = lw_load_elem(L, F->part[i], c);
  folds_accumulate(L, F, acc, x);
  k_end(L);
  folds_store(L, F, F->out, 0, acc);
  if (L->P->caps.work_groups) fold_group(L, st, F);
  if (F->k == 1 && F->write < 0) {   /* a group's rows are not laid out in tiles (yet) */
    lw_fold_tiles(L, st, a, F->env);
    lw_fold_gtiles(L, st, a, F->env);
  }
  return F->out[0];
}

int lw_step_fold_scan(lower *L, const lacc_node *lead, const lacc_node *sc,
                      const lacc_node *reached, const aenv *env) {
  if (lead->hlead != NULL && group_apart(lead, env)) return -1;
  folds F = { .k = 0, .env = env, .write = -1,
              .defer = reached == NULL || reached->kind != K_FOLD1 };
  group_step(L, &F, lead);
  int fk = L->step;
  if (reached != NULL && reached->kind == K_FOLD1) L->P->steps[fk].empty = reached;
  int out = lw_step_scan(L, sc, env);
  lw_set_slot(L, sc, out);
  int sk = L->step;
  L->P->steps[sk].hfold = fk;
  L->P->steps[fk].hscan = sk;
  L->P->steps[sk].fn[SF_HROWS] = lw_new_fn(L, FN_SEG);
  const lacc_node *saved = L->fold_input;
  L->fold_input = term_of(fold_input(F.a[0]), env);
  folds_shapes(L, &F);
  int o = lw_var(L, S_I64);
  lw_k_for(L, o, 0, 1, 1);
  L->key = o;
  fold_row(L, &F, fk, o, 0);
  L->fold_input = saved;
  lw_scan_row(L, sc, env, out, o);
  k_end(L);
  return 0;
}
