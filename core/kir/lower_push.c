/* lower_push.c: push arrays, stencils and permute.
 *
 * Owns: materialised push arrays (append, interleave: one loop per part,
 * "Defunctionalizing Push Arrays"), stencils (boundary code only on the border, plain
 * reads inside), and permute (defaults copied, then the source scattered in order or
 * with compare-and-swap).
 * Must not: read a push array as a pull array (lower_pull.c does).
 */
#include "kir/lower.h"

/* ---- push arrays materialised: one loop per part, no per-element test ("Defunctionalizing Push Arrays") */

typedef struct {
  int out, o, m;             /* output slot, row, row length */
  int lo, hi;                /* the part of the row this call writes */
  kindex row;                /* outer indices of the row */
  int r;
} pusher;

/* ceil(x / s) for s > 0, with the floor division of idiv. */
static int ceil_div(lower *L, int x, int s) {
  int zero = lw_k_int(L, S_I64, 0);
  return lw_k_prim(L, P_SUB, zero, lw_k_prim(L, P_IDIV, lw_k_prim(L, P_SUB, zero, x), s));
}

/* Writes the elements j < limit of term t at row positions base + stride j that fall in
 * [lo, hi): pushing through nested appends and interleaves, pulling anything else. */
static void push_apply(lower *L, const pusher *P, const lacc_node *t, const aenv *env, int base,
                       int stride, int limit) {
  int r = P->r;
  if ((t->kind == K_APPEND || t->kind == K_INTERLEAVE) && lw_slot_of(L, t) < 0) {
    const lacc_node *xs = t->kids[0], *ys = t->kids[1];
    int n1 = lw_shape_of(L, xs, env)[r - 1], n2 = lw_shape_of(L, ys, env)[r - 1];
    if (t->kind == K_APPEND) {
      /* an append within limit: the first part, then what of the second fits */
      push_apply(L, P, xs, env, base, stride, lw_k_prim(L, P_MIN, n1, limit));
      int rest = lw_k_prim(L, P_MAX, lw_k_prim(L, P_SUB, limit, n1), lw_k_int(L, S_I64, 0));
      push_apply(L, P, ys, env, lw_k_prim(L, P_ADD, base, lw_k_prim(L, P_MUL, stride, n1)), stride,
                 lw_k_prim(L, P_MIN, n2, rest));
    } else {
      int two = lw_k_int(L, S_I64, 2);
      int pairs = lw_k_prim(L, P_MIN, n1, n2);
      int wide = lw_k_prim(L, P_MUL, stride, two);
      push_apply(L, P, xs, env, base, wide, lw_k_prim(L, P_MIN, pairs, ceil_div(L, limit, two)));
      push_apply(L, P, ys, env, lw_k_prim(L, P_ADD, base, stride), wide,
                 lw_k_prim(L, P_MIN, pairs, lw_k_prim(L, P_IDIV, limit, two)));
    }
    return;
  }
  int n = lw_k_prim(L, P_MIN, lw_shape_of(L, t, env)[r - 1], limit);
  int zero = lw_k_int(L, S_I64, 0);
  int jlo = lw_k_prim(L, P_MAX, ceil_div(L, lw_k_prim(L, P_SUB, P->lo, base), stride), zero);
  int jhi = lw_k_prim(L, P_MIN, ceil_div(L, lw_k_prim(L, P_SUB, P->hi, base), stride), n);
  int j = lw_var(L, S_I64);
  lw_k_for(L, j, jlo, jhi, 1);
  int pos = lw_k_prim(L, P_ADD, base, lw_k_prim(L, P_MUL, stride, j));
  int *v = lw_part_elem(L, t, env, &P->row, r, j);
  lw_store_elem(L, P->out, lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, P->o, P->m), pos), v);
  k_end(L);
}

int lw_step_push(lower *L, const lacc_node *t, const aenv *env) {
  int r = t->rank;
  int st = lw_new_step(L, SK_MAP, t, r);
  int out = lw_new_slot(L, SLOT_KERNEL, t->type, r, lw_out_plan(L, t->type));
  L->P->steps[st].out = out;
  L->P->steps[st].fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  int *ext = lw_shape_of(L, t, env);
  for (int d = 0; d < r; d++) {
    kinst *in = lw_emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  /* elements p0 <= i < p1 of the output: the rows they touch, each clipped */
  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_BODY);
  int *oext = lw_slot_ext(L, out);
  pusher P = { .out = out, .r = r, .m = oext[r - 1] };
  int zero = lw_k_int(L, S_I64, 0);
  k_if(L, lw_k_prim(L, P_GT, P.m, zero));
  int o = lw_var(L, S_I64);
  lw_k_for(L, o, lw_k_prim(L, P_IDIV, 0, P.m), ceil_div(L, 1, P.m), 1);
  L->key = lw_k_prim(L, P_MUL, o, P.m);
  P.o = o;
  int start = lw_k_prim(L, P_MUL, o, P.m);
  P.lo = lw_k_prim(L, P_MAX, lw_k_prim(L, P_SUB, 0, start), zero);
  P.hi = lw_k_prim(L, P_MIN, lw_k_prim(L, P_SUB, 1, start), P.m);
  lw_unravel(L, r - 1, oext, o, P.row.ix);
  lw_start_desc(L);
  push_apply(L, &P, t, env, zero, lw_k_int(L, S_I64, 1), P.m);
  L->describe = 0;
  k_end(L);
  k_end(L);
  return out;
}

/* ---- stencils: boundary code only on the border; interior columns of interior rows read
 * their neighbours at fixed offsets */

typedef struct {
  const lacc_node *a, *xs;
  const aenv *env;
  int rank, w[3], count;
  boundary_kind b;
  int *ext;                  /* the array's extents, also the output's */
  int *cval;                 /* the constant boundary's leaves */
  int out;
} stenciler;

/* Index k of dimension d through the boundary; *inside set for a constant boundary. */
static int st_bound(lower *L, const stenciler *S, int d, int k, int *inside) {
  int zero = lw_k_int(L, S_I64, 0), one = lw_k_int(L, S_I64, 1), n = S->ext[d];
  int last = lw_k_prim(L, P_SUB, n, one);
  switch (S->b) {
  case B_WRAP: return lw_k_prim(L, P_MOD, k, lw_k_prim(L, P_MAX, n, one));
  case B_MIRROR:
    k = lw_k_select(L, lw_k_prim(L, P_LT, k, zero), lw_k_prim(L, P_SUB, zero, k),
                 lw_k_select(L, lw_k_prim(L, P_GT, k, last),
                          lw_k_prim(L, P_SUB, lw_k_prim(L, P_SUB, lw_k_prim(L, P_ADD, n, n), lw_k_int(L, S_I64, 2)), k), k));
    break;
  case B_CONSTANT: {
    int in = lw_k_prim(L, P_LAND, lw_k_prim(L, P_GE, k, zero), lw_k_prim(L, P_LE, k, last));
    *inside = *inside < 0 ? in : lw_k_prim(L, P_LAND, *inside, in);
    break;
  }
  default: break;
  }
  return lw_k_prim(L, P_MIN, lw_k_prim(L, P_MAX, k, zero), last);
}

/* The element at output index ix (linear lin): f of its window. */
static void st_element(lower *L, const stenciler *S, const int *ix, int lin, int fast) {
  int nl = S->xs->type->nleaves, r = S->rank;
  int *args = ints(L, S->count * nl);
  for (int c = 0; c < S->count; c++) {
    int rest = c, off[3], inside = -1;
    for (int d = r - 1; d >= 0; d--) {
      off[d] = rest % S->w[d] - (S->w[d] - 1) / 2;
      rest /= S->w[d];
    }
    kindex k;
    if (fast) {
      int delta = 0;
      for (int d = 0; d < r; d++) {
        delta = d == 0 ? lw_k_int(L, S_I64, off[0])
                       : lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, delta, S->ext[d]), lw_k_int(L, S_I64, off[d]));
        k.ix[d] = lw_k_prim(L, P_ADD, ix[d], lw_k_int(L, S_I64, off[d]));
      }
      k.lin = lw_k_prim(L, P_ADD, lin, delta);
    } else {
      for (int d = 0; d < r; d++)
        k.ix[d] = st_bound(L, S, d, lw_k_prim(L, P_ADD, ix[d], lw_k_int(L, S_I64, off[d])), &inside);
      k.lin = lw_ravel(L, r, S->ext, k.ix);
    }
    int *v = lw_elem(L, S->xs, S->env, &k);
    for (int l = 0; l < nl; l++)
      args[c * nl + l] = inside >= 0 ? lw_k_select(L, inside, v[l], S->cval[l]) : v[l];
  }
  const lacc_type *pt = S->a->kids[0]->kids[0]->type;
  lw_store_elem(L, S->out, lin, lw_apply(L, S->a->kids[0], NULL, S->env, &pt, args));
}

/* Columns lo <= j < hi of row o (outer indices oix). */
static void st_columns(lower *L, const stenciler *S, int o, const int *oix, int lo, int hi, int fast) {
  int r = S->rank, m = S->ext[r - 1];
  int j = lw_var(L, S_I64);
  lw_k_for(L, j, lo, hi, 1);
  int ix[3];
  for (int d = 0; d + 1 < r; d++) ix[d] = oix[d];
  ix[r - 1] = j;
  st_element(L, S, ix, lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, o, m), j), fast);
  k_end(L);
}

int lw_step_stencil(lower *L, const lacc_node *a, const aenv *env) {
  stenciler S0 = { .a = a, .xs = a->kids[1], .env = env, .rank = a->rank }, *S = &S0;
  int r = a->rank;
  S->b = stencil_boundary(a->field);
  S->count = 1;
  for (int d = 0; d < r; d++) S->count *= (S->w[d] = stencil_window(a->field, d));
  int st = lw_new_step(L, SK_MAP, a, r);
  S->out = lw_new_slot(L, SLOT_KERNEL, a->type, r, lw_out_plan(L, a->type));
  L->P->steps[st].out = S->out;
  L->P->steps[st].fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  int *ext = lw_shape_of(L, S->xs, env);
  for (int d = 0; d < r; d++) {
    kinst *in = lw_emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_BODY);
  S->ext = lw_shape_of(L, S->xs, env);
  if (S->b == B_CONSTANT) S->cval = lw_copy(L, S->xs->type, lw_lower_exp(L, a->kids[2], NULL, env));
  int zero = lw_k_int(L, S_I64, 0), m = S->ext[r - 1];
  k_if(L, lw_k_prim(L, P_GT, m, zero));
  int o = lw_var(L, S_I64);
  lw_k_for(L, o, lw_k_prim(L, P_IDIV, 0, m), ceil_div(L, 1, m), 1);
  int start = lw_k_prim(L, P_MUL, o, m);
  L->key = start;
  int lo = lw_k_prim(L, P_MAX, lw_k_prim(L, P_SUB, 0, start), zero);
  int hi = lw_k_prim(L, P_MIN, lw_k_prim(L, P_SUB, 1, start), m);
  int oix[3];
  lw_unravel(L, r - 1, S->ext, o, oix);
  /* interior rows: every outer index at least half a window from the edges */
  int inner = lw_k_prim(L, P_EQ, zero, zero);
  for (int d = 0; d + 1 < r; d++) {
    int h = lw_k_int(L, S_I64, (S->w[d] - 1) / 2);
    int ok = lw_k_prim(L, P_LAND, lw_k_prim(L, P_GE, oix[d], h),
                    lw_k_prim(L, P_LT, oix[d], lw_k_prim(L, P_SUB, S->ext[d], h)));
    inner = lw_k_prim(L, P_LAND, inner, ok);
  }
  int h = lw_k_int(L, S_I64, (S->w[r - 1] - 1) / 2);
  int b1 = lw_k_prim(L, P_MIN, h, m), b2 = lw_k_prim(L, P_MAX, lw_k_prim(L, P_SUB, m, h), b1);
  lw_start_desc(L);
  k_if(L, inner);
  st_columns(L, S, o, oix, lo, lw_k_prim(L, P_MIN, hi, b1), 0);
  st_columns(L, S, o, oix, lw_k_prim(L, P_MAX, lo, b1), lw_k_prim(L, P_MIN, hi, b2), 1);
  st_columns(L, S, o, oix, lw_k_prim(L, P_MAX, lo, b2), hi, 0);
  k_else(L);
  st_columns(L, S, o, oix, lo, hi, 0);
  k_end(L);
  L->describe = 0;
  k_end(L);
  k_end(L);
  return S->out;
}

/* ---- permute: the defaults copied (in parallel), then the source scattered into them */

/* A permute step's permutes: one, or siblings with one index function (hfuse.c), each its
 * own defaults, source, combining function and output. A group computes each source
 * element's target once and then combines each member's element into that member's
 * targets. Each member's code runs where its bit of the function's mask parameter is
 * set: the executors set every bit when the members' extents agree, else run the step
 * once per member, each as it would run alone. */
typedef struct {
  int k;
  const lacc_node *a[TUNE_HFUSE_MOST];
  int out[TUNE_HFUSE_MOST], part[TUNE_HFUSE_MOST];
  const aenv *env;
  int guarded;   /* member code tests the mask: always but in scatter's first loop */
} permutes;

/* Whether bit m of variable mask is set. */
static int mask_bit(lower *L, int mask, int m) {
  int bit = lw_k_prim(L, P_BAND, lw_k_prim(L, P_SHR, mask, lw_k_int(L, S_I64, m)), lw_k_int(L, S_I64, 1));
  return lw_k_prim(L, P_NE, bit, lw_k_int(L, S_I64, 0));
}

/* Opens member m's code (closed by member_close): nothing for a permute alone, nor in
 * the loop that runs every member. */
static void member_open(lower *L, const permutes *G, int mask, int m) {
  if (G->k > 1 && G->guarded) k_if(L, mask_bit(L, mask, m));
}

static void member_close(lower *L, const permutes *G) {
  if (G->k > 1 && G->guarded) k_end(L);
}

/* The source's shape: a group's first member's in the mask (all of them agree when the
 * mask has every bit). */
static int *source_shape(lower *L, const permutes *G, int mask) {
  int r = G->a[0]->kids[3]->rank;
  int *sx = lw_shape_of(L, G->a[G->k - 1]->kids[3], G->env);
  for (int m = G->k - 2; m >= 0; m--) {
    int *sm = lw_shape_of(L, G->a[m]->kids[3], G->env);
    int on = mask_bit(L, mask, m);
    int *sel = ints(L, r ? r : 1);
    for (int d = 0; d < r; d++) sel[d] = lw_k_select(L, on, sm[d], sx[d]);
    sx = sel;
  }
  return sx;
}

/* Member m's element x combined into its targets at t: plainly (into slot dst at base +
 * t: a private copy, when dst >= 0), or with compare-and-swap loops. */
static void combine_into(lower *L, const permutes *G, int m, int atomic, int dst, int base, int t,
                         const int *x) {
  const lacc_node *a = G->a[m];
  const lacc_type *pt[2] = { a->type, a->type };
  int nl = a->type->nleaves;
  int *args = ints(L, 2 * nl);
  memcpy(args, x, sizeof *args * (size_t)nl);
  if (atomic) {
    int b0 = L->P->slots[G->out[m]].plan->leaf_buf[0];
    lw_emit(L, KO_LOOP);
    int old = lw_k_read(L, KO_ALOAD, G->out[m], b0, t);
    args[nl] = lw_k_cast(L, a->type->scalar, old);
    int *nv = lw_apply(L, a->kids[0], NULL, G->env, pt, args);
    int done = lw_k_cas(L, G->out[m], b0, t, old, nv[0]);
    int again = lw_k_prim(L, P_LNOT, done, -1);
    lw_emit(L, KO_BREAKIFNOT)->a = again;
    k_end(L);
  } else {
    int slot = dst >= 0 ? dst : G->out[m], at = dst >= 0 ? lw_k_prim(L, P_ADD, base, t) : t;
    int *old = lw_load_elem(L, slot, at);
    memcpy(args + nl, old, sizeof *args * (size_t)nl);
    lw_store_elem(L, slot, at, lw_apply(L, a->kids[0], NULL, G->env, pt, args));
  }
}

/* Source elements p0 <= i < p1 combined into their targets: plainly (one thread), or
 * with compare-and-swap loops on a one-scalar element (any number of threads); with
 * dst, plainly into slot dst[m] at base[m] + the target (private copies). The mask is
 * variable 2. */
static void scatter_loop(lower *L, const permutes *G, int atomic, const int *dst, const int *base) {
  const lacc_node *a0 = G->a[0], *ixf = a0->kids[2], *xs0 = a0->kids[3];
  int *oext[TUNE_HFUSE_MOST];
  for (int m = 0; m < G->k; m++) oext[m] = lw_slot_ext(L, G->out[m]);
  int *sx = G->k > 1 && G->guarded ? source_shape(L, G, 2) : lw_shape_of(L, xs0, G->env);
  int i = lw_var(L, S_I64);
  kinst *loop = lw_k_for(L, i, 0, 1, 1);
  if (dst != NULL) loop->unroll = 4;   /* private copies: a few operations per element */
  L->key = i;
  kindex k;
  k.lin = i;
  lw_unravel_in(L, xs0->rank, sx, i, k.ix);   /* i < the source's size: the executor's chunks */
  const lacc_type *shape_t = type_shape(L->ctx, xs0->rank);
  if (shape_t == NULL) oom(L);
  int *to = lw_apply(L, ixf, NULL, G->env, &shape_t, k.ix);
  int zero = lw_k_int(L, S_I64, 0), minus1 = lw_k_int(L, S_I64, -1);
  int ignore = -1, ok0 = -1;
  for (int d = 0; d < a0->rank; d++) {
    int ig = lw_k_prim(L, P_EQ, to[d], minus1), in = lw_k_in_range(L, to[d], zero, oext[0][d]);
    ignore = lw_k_and(L, ignore, ig);
    ok0 = lw_k_and(L, ok0, in);
  }
  for (int m = 0; m < G->k; m++) {
    const lacc_node *a = G->a[m];
    member_open(L, G, 2, m);
    int ok = ok0;
    for (int d = 0; m > 0 && d < a->rank; d++)
      ok = lw_k_and(L, d == 0 ? -1 : ok, lw_k_in_range(L, to[d], zero, oext[m][d]));
    if (ok >= 0) k_if(L, ok);
    int t = lw_ravel(L, a->rank, oext[m], to);
    if (!atomic && m == 0) lw_start_desc(L);
    int *x = lw_elem_by_division(L, a->kids[3], G->env, &k, 1);
    L->describe = 0;
    combine_into(L, G, m, atomic, dst != NULL ? dst[m] : -1, dst != NULL ? base[m] : -1, t, x);
    if (ok >= 0) {   /* the failure on the else side: the loop's common path calls nothing */
      k_else(L);
      k_if(L, lw_k_prim(L, P_LNOT, ignore, -1));
      lw_k_fail(L, lw_add_check(L, CK_PERMUTE, "permute", a->where, 0), 0, NULL);
      k_end(L);
      k_end(L);
    }
    member_close(L, G);
  }
  k_end(L);
}

/* The scatter loop; a group's twice: every member at each element when the mask has
 * every bit (no test in the loop), else each member where its bit is set. */
static void scatter(lower *L, permutes *G, int atomic, const int *dst, const int *base) {
  if (G->k == 1) {
    scatter_loop(L, G, atomic, dst, base);
    return;
  }
  k_if(L, lw_k_prim(L, P_EQ, 2, lw_k_int(L, S_I64, -1)));
  G->guarded = 0;
  scatter_loop(L, G, atomic, dst, base);
  G->guarded = 1;
  k_else(L);
  scatter_loop(L, G, atomic, dst, base);
  k_end(L);
}

/* ---- permute onto few targets: a private copy of the targets per chunk, then merged */

/* The identity of commutative primitive p (fold_commutative's) on type k: what a private
 * copy starts from, and a chunk of a contraction tile's rows (lower_tile.c) (-0.0 for a
 * float sum: -0.0 + x is x for every x, -0.0 too; +0.0 would turn a sum of -0.0 into
 * +0.0). */
int lw_identity(lower *L, prim_op p, scalar_kind k) {
  lacc_val v = { .u = 0 };
  int bits = scalar_bits(k), sgn = scalar_is_signed(k);
  int64_t smax = bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
  switch (p) {
  case P_ADD:
    if (k == S_F32) v.f = -0.0f;
    else if (k == S_F64) v.d = -0.0;
    break;
  case P_MUL:
    if (k == S_F32) v.f = 1.0f;
    else if (k == S_F64) v.d = 1.0;
    else v.i = 1;
    break;
  case P_MIN:
    if (sgn) v.i = smax;
    else v.u = UINT64_MAX;
    break;
  case P_MAX:
    if (sgn) v.i = -smax - 1;
    break;
  case P_BAND: case P_LAND:
    if (k == S_BOOL) v.u = 1;
    else v.u = UINT64_MAX;
    break;
  default: break;   /* bor, bxor, lor: 0 */
  }
  return lw_k_const(L, k, v);
}

/* FN_SCATTER for private copies: copy p3 of the targets (n of them, at p3 * (n + gap)
 * of the partial slot) set to the identity, then source elements p0 <= i < p1 combined into it
 * in order. Then FN_BODY: targets p0 <= t < p1, each the default combined with the p2
 * copies in turn (its mask is variable 3). Only for one commutative primitive (any order
 * gives one answer, up to a float sum's rounding; a group's members all have one:
 * hfuse.c), and on the cpu backend (run_permute chooses). */
static void permute_private(lower *L, int st, permutes *G) {
  if (!L->P->caps.private_scatter || fold_commutative(G->a[0]->kids[0], G->a[0]->type) < 0) return;
  for (int m = 0; m < G->k; m++) {
    const lacc_type *t = G->a[m]->type;
    G->part[m] = lw_new_slot(L, SLOT_PARTIAL, t, 1, lw_out_plan(L, t));
  }
  pstep *S = &L->P->steps[st];   /* after the slots: lowering's arrays may move */
  S->partial = G->part[0];
  for (int m = 1; m < G->k; m++) S->sib_partial[m - 1] = G->part[m];
  S->fn[SF_PSCATTER] = lw_new_fn(L, FN_SCATTER);
  int base[TUNE_HFUSE_MOST];
  for (int m = 0; m < G->k; m++) {
    const lacc_node *a = G->a[m];
    member_open(L, G, 2, m);
    int n = lw_size_of(L, a->rank, lw_slot_ext(L, G->out[m]));
    int stride = lw_k_prim(L, P_ADD, n, lw_k_int(L, S_I64, LACC_PRIVATE_GAP));
    base[m] = lw_k_prim(L, P_MUL, 3, stride);
    int id = lw_identity(L, (prim_op)fold_commutative(a->kids[0], a->type), a->type->scalar);
    int j = lw_var(L, S_I64);
    lw_k_for(L, j, lw_k_int(L, S_I64, 0), n, 1);
    lw_store_elem(L, G->part[m], lw_k_prim(L, P_ADD, base[m], j), &id);
    k_end(L);
    member_close(L, G);
  }
  scatter(L, G, 0, G->part, base);

  L->P->steps[st].fn[SF_PMERGE] = lw_new_fn(L, FN_BODY);
  int stride[TUNE_HFUSE_MOST];
  for (int m = 0; m < G->k; m++) {
    int n = lw_size_of(L, G->a[m]->rank, lw_slot_ext(L, G->out[m]));
    stride[m] = lw_k_prim(L, P_ADD, n, lw_k_int(L, S_I64, LACC_PRIVATE_GAP));
  }
  int i = lw_var(L, S_I64);
  lw_k_for(L, i, 0, 1, 1);
  L->key = i;
  for (int m = 0; m < G->k; m++) {
    const lacc_type *t = G->a[m]->type;
    member_open(L, G, 3, m);
    int acc = lw_copy(L, t, lw_load_elem(L, G->out[m], i))[0];
    int c = lw_var(L, S_I64);
    lw_k_for(L, c, lw_k_int(L, S_I64, 0), 2, 1);
    const lacc_type *pt[2] = { t, t };
    int args[2] = { lw_load_elem(L, G->part[m], lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, c, stride[m]), i))[0],
                    acc };
    lw_k_mov(L, acc, lw_apply(L, G->a[m]->kids[0], NULL, G->env, pt, args)[0]);
    k_end(L);
    lw_store_elem(L, G->out[m], i, &acc);
    member_close(L, G);
  }
  k_end(L);
}

/* Whether member a's targets could take compare-and-swap updates. */
static int atomic_ok(lower *L, const lacc_node *a, int out) {
  const layout_plan *op = L->P->slots[out].plan;
  return a->type->kind == T_SCALAR && !op->raw && op->leaf_buf[0] >= 0;
}

static int step_permutes(lower *L, permutes *G) {
  const lacc_node *a0 = G->a[0];
  int st = lw_new_step(L, SK_PERMUTE, a0, a0->rank);
  for (int m = 0; m < G->k; m++)
    G->out[m] = lw_new_slot(L, SLOT_KERNEL, G->a[m]->type, a0->rank, lw_out_plan(L, G->a[m]->type));
  lw_step_results(L, st, G->k, G->out, 1);
  pstep *S = &L->P->steps[st];
  S->atomic = 1;   /* a group's only if every member's may: else in order, which any
                      member may take alone too (compare-and-swap orders nothing) */
  for (int m = 0; m < G->k; m++) S->atomic = S->atomic && atomic_ok(L, G->a[m], G->out[m]);

  /* shape, member by member: the defaults', then the number of source elements */
  L->P->steps[st].fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  for (int m = 0; m < G->k; m++) {
    const lacc_node *a = G->a[m];
    int *ext = lw_shape_of(L, a->kids[1], G->env);
    for (int d = 0; d <= a->rank; d++) {
      int v = d < a->rank ? ext[d] : lw_size_of(L, a->kids[3]->rank, lw_shape_of(L, a->kids[3], G->env));
      kinst *in = lw_emit(L, KO_OUT);
      in->a = v;
      in->imm.i = m * (a->rank + 1) + d;
    }
  }

  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_BODY);
  int *oext[TUNE_HFUSE_MOST];
  for (int m = 0; m < G->k; m++) oext[m] = lw_slot_ext(L, G->out[m]);
  int i = lw_var(L, S_I64);
  lw_k_for(L, i, 0, 1, 1);
  L->key = i;
  for (int m = 0; m < G->k; m++) {
    member_open(L, G, 2, m);
    kindex k;
    k.lin = i;
    lw_unravel(L, a0->rank, oext[m], i, k.ix);
    lw_store_elem(L, G->out[m], i, lw_elem_by_division(L, G->a[m]->kids[1], G->env, &k, 1));
    member_close(L, G);
  }
  k_end(L);

  L->P->steps[st].fn[SF_SCATTER] = lw_new_fn(L, FN_SCATTER);
  scatter(L, G, 0, NULL, NULL);
  if (L->P->steps[st].atomic) {
    L->P->steps[st].fn[SF_ASCATTER] = lw_new_fn(L, FN_SCATTER);
    scatter(L, G, 1, NULL, NULL);
  }
  permute_private(L, st, G);
  return st;
}

int lw_step_permute(lower *L, const lacc_node *a, const aenv *env) {
  permutes G = { .k = 1, .a = { a }, .env = env, .guarded = 1 };
  step_permutes(L, &G);
  return G.out[0];
}

int lw_step_permutes(lower *L, const lacc_node *a, const aenv *env) {
  permutes G = { .k = 0, .env = env, .guarded = 1 };
  for (const lacc_node *m = a->hlead; m != NULL && G.k < TUNE_HFUSE_MOST; m = m->hnext)
    G.a[G.k++] = m;
  step_permutes(L, &G);
  int out = -1;
  for (int m = 0; m < G.k; m++) {
    lw_set_slot(L, G.a[m], G.out[m]);
    if (G.a[m] == a) out = G.out[m];
  }
  return out;
}
