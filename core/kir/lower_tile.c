/* lower_tile.c: folds of many rows in tiles, one row per vector lane.
 *
 * Owns: FN_TILE, the cpu backend's way to fold many rows whose elements lie side by side
 * across neighbouring rows (a matrix product's b[k, j]; any element function of the
 * rows' own index): a tile is LW neighbouring outputs of two neighbouring output rows
 * (each read of b serves both: half the traffic from cache), and lane l folds output
 * jb + l of each, over its row in order, so that any combining function gives the
 * interpreter's result exactly, while the C compiler keeps the lanes in vector
 * registers. Tiles are numbered block-major (tile jb of every outer row before jb + LW),
 * so that a chunk of tiles rereads one block of the operands from cache. The function
 * is kept (pass_tiles, after bounds.c) only where every read of a lane is the same
 * for all lanes or its neighbour's next element (else the plain segments vectorise
 * better, along the row), and where bounds.c left no check in it.
 * Must not: change what a fold computes.
 */
#include "kir/lower.h"
#include "kir/passes.h"

enum { TILE_ROWS = 2 };   /* outer rows per tile: each read of b serves both */

static int tiles_on(void) {
  return setting_switch("LACC_TILES", 1);
}

/* Lanes of a tile: TUNE_TILE_BYTES of accumulators over all of an element's fields, at
 * most TUNE_TILE_LANES_MOST; TUNE_TILE_STREAM_BYTES, at most TUNE_TILE_STREAM_LANES_MOST,
 * where the elements stream (below). */
static int tile_lanes(const lacc_type *t, int stream) {
  int size = 0, most = stream ? TUNE_TILE_STREAM_LANES_MOST : TUNE_TILE_LANES_MOST;
  for (int i = 0; i < t->nleaves; i++) size += (int)scalar_size(type_leaf(t, i));
  int n = (stream ? TUNE_TILE_STREAM_BYTES : TUNE_TILE_BYTES) / (size > 0 ? size : 1);
  return n > most ? most : n < 4 ? 4 : n;
}

/* Fields a tile folds: a scalar's one, a tuple of scalars' each (an N-body step's two
 * accelerations), at most TUNE_TILE_FIELDS; 0 for anything else. */
static int tile_fields(const lacc_type *t) {
  if (t->kind == T_SCALAR) return 1;
  return t->kind == T_TUPLE && !t->has_sum && t->nleaves <= TUNE_TILE_FIELDS ? t->nleaves : 0;
}

/* Whether array t is read from memory (materialised, or a name for such an array). */
static int loaded(lower *L, const lacc_node *t, const aenv *env) {
  if (lw_slot_of(L, t) >= 0) return 1;
  if (t->kind != K_AVAR) return 0;
  const aenv *e = lw_a_lookup(env, t->field);
  return e->slot >= 0 || (e->node != NULL && loaded(L, e->node, e->env));
}

/* Whether each element of a fold is one read of one array in memory (through a
 * backpermute, as a fold along an outer dimension reads it, maybe under a map of it):
 * no read is the same for all lanes, so there is nothing to keep in registers, and a
 * tile four times wider reads runs of each row four times longer (column sums of a
 * 4096 x 4096 f32 matrix: 0.48x hand-written C in 256 lanes, 0.90x in 64; a matrix
 * product, whose reads of a are shared by all lanes, is slower in wider tiles). */
static int streaming(lower *L, const lacc_node *xs, const aenv *env) {
  if (xs->kind == K_ALET) return streaming(L, xs->kids[1], lw_bind_let(L, xs->kids[0], env));
  if (xs->kind == K_MAP && xs->nkids == 2) return streaming(L, xs->kids[1], env);
  if (xs->kind == K_BACKPERMUTE) return loaded(L, xs->kids[2], env);
  return loaded(L, xs, env);
}

/* ---- how a read moves from lane to lane: 0 (the same), 1 (the next element), else 2 */

static int def_in(const klist *l, int from, int to, int v, int *at) {
  int n = 0;
  for (int i = from; i < to; i++)
    if (kinst_def(&l->v[i]) == v) {
      n++;
      *at = i;
    }
  return n;
}

static int step_of(const klist *l, int from, int to, int v, int lane, int depth) {
  if (v == lane) return 1;
  int at;
  int n = def_in(l, from, to, v, &at);
  if (n == 0) return 0;                /* set before the lanes' loop: the same for all */
  if (n > 1 || depth == 0) return 2;
  const kinst *in = &l->v[at];
  switch (in->op) {
  case KO_CONST: case KO_KCONST: case KO_EXTENT: return 0;
  case KO_MOV: case KO_CAST: return step_of(l, from, to, in->a, lane, depth - 1);
  case KO_LOAD: case KO_LGET:
    return step_of(l, from, to, in->op == KO_LOAD ? in->a : in->b, lane, depth - 1) == 0 ? 0 : 2;
  case KO_PRIM: {
    if (in->nargs > 0) return 2;   /* fma's third operand */
    int a = step_of(l, from, to, in->a, lane, depth - 1);
    int b = in->b >= 0 ? step_of(l, from, to, in->b, lane, depth - 1) : 0;
    if (a == 0 && b == 0) return 0;
    if (in->prim == P_ADD && a + b == 1) return 1;
    if (in->prim == P_SUB && a == 1 && b == 0) return 1;
    return 2;
  }
  default: return 2;
  }
}

/* Whether F's lanes' main loop (the first, which hoist.c's fast copy is, if any) has no
 * check left after bounds.c and hoist.c, and every read in it is the same for all lanes
 * or contiguous across them. */
static int tile_good(const kfn *F) {
  const klist *l = &F->body;
  int from = -1, to = -1, depth = 0;
  for (int i = 0; i < l->n; i++) {
    kop op = l->v[i].op;
    if (from < 0 && op == KO_FOR && l->v[i].dst == F->tile_lane) {
      from = i + 1;
      depth = 0;
    } else if (from >= 0 && to < 0) {
      if (op == KO_IF || op == KO_FOR || op == KO_LOOP) depth++;
      if (op == KO_END && depth-- == 0) to = i;
    }
  }
  if (from < 0 || to < 0) return 0;
  for (int i = from; i < to; i++)
    if (l->v[i].op == KO_FAIL) return 0;
  for (int i = from; i < to; i++)
    if (l->v[i].op == KO_LOAD && step_of(l, from, to, l->v[i].a, F->tile_lane, 64) > 1) return 0;
  return 1;
}

/* After bounds.c: each fold's FN_TILE kept where it is good, else emptied and unused (the
 * segments vectorise along the row instead, or keep the order of a check's reports). */
int pass_tiles(kplan *P) {
  for (int s = 0; s < P->nsteps; s++) {
    pstep *st = &P->steps[s];
    if (st->kind != SK_FOLD || st->fn[SF_TILE] < 0 || tile_good(&P->fns[st->fn[SF_TILE]])) continue;
    P->fns[st->fn[SF_TILE]].pro.n = P->fns[st->fn[SF_TILE]].body.n = 0;
    st->fn[SF_TILE] = -1;
  }
  return LACC_OK;
}

/* ---- the tile function */

typedef struct {
  const lacc_node *a, *xs;
  const aenv *env;
  const int *sx, *oix;   /* the xs's extents; the outer row's index (r - 2 of them) */
  int r, J, base;        /* base: the outer row's first output, q * J */
} tile;

/* Element k of output j (its row's index) of the tile's outer row. */
static int *tile_elem(lower *L, const tile *T, int j, int k) {
  int oix[LACC_MAX_RANK];
  for (int d = 0; d + 2 < T->r; d++) oix[d] = T->oix[d];
  oix[T->r - 2] = j;
  return lw_fold_elem(L, T->xs, T->env, T->sx, oix, lw_k_prim(L, P_ADD, T->base, j), k);
}

/* for l in [0, LW): a tile's lanes; cl_unroll copies asked of the OpenCL C compiler */
static int lane_loop(lower *L, int LW, int cl_unroll) {
  int l = lw_var(L, S_I64);
  lw_k_for(L, l, lw_k_int(L, S_I64, 0), lw_k_int(L, S_I64, LW), 1)->cl_unroll = cl_unroll;
  return l;
}

/* A full tile: outputs jb .. jb + LW - 1 of nrows neighbouring outer rows (T[0..]),
 * lane by lane: each read of b serves every row of the tile. */
static void tile_full(lower *L, const tile *T, int nrows, int jb, int LW) {
  const lacc_type *t = T->a->type;
  const lacc_node *f = T->a->kids[0];
  int with_z = T->a->kind == K_FOLD, K = T->sx[T->r - 1], nf = t->nleaves;
  int acc[TILE_ROWS][TUNE_TILE_FIELDS], cur[TUNE_TILE_FIELDS];
  for (int r = 0; r < nrows; r++)
    for (int i = 0; i < nf; i++) acc[r][i] = lw_lane_array(L, type_leaf(t, i), LW);
  int *z = with_z ? lw_copy(L, t, lw_lower_exp(L, T->a->kids[1], NULL, T->env)) : NULL;
  int l = lane_loop(L, LW, 0);
  int j = lw_k_prim(L, P_ADD, jb, l);
  lw_fact(L, j, T->J, -1);               /* the tile is whole: jb + LW <= J */
  for (int r = 0; r < nrows; r++) {
    int *first = with_z ? z : tile_elem(L, &T[r], j, lw_k_int(L, S_I64, 0));
    for (int i = 0; i < nf; i++) lw_k_lset(L, acc[r][i], l, first[i]);
  }
  k_end(L);
  int k = lw_var(L, S_I64);
  lw_k_for(L, k, lw_k_int(L, S_I64, with_z ? 0 : 1), K, 1);
  /* the lanes of one step along the rows, unrolled whole on OpenCL: PoCL then keeps
   * them in vector registers, as gcc does unasked (measured: docs/design.md, Measurements) */
  l = lane_loop(L, LW, LW);
  fn(L)->tile_lane = l;
  j = lw_k_prim(L, P_ADD, jb, l);
  lw_fact(L, j, T->J, -1);
  for (int r = 0; r < nrows; r++) {
    for (int i = 0; i < nf; i++) cur[i] = lw_k_lget(L, acc[r][i], l);
    int *x = tile_elem(L, &T[r], j, k);
    int *v = lw_combine(L, f, t, cur, x, T->env);
    for (int i = 0; i < nf; i++) lw_k_lset(L, acc[r][i], l, v[i]);
  }
  k_end(L);
  k_end(L);
  l = lane_loop(L, LW, 0);
  for (int r = 0; r < nrows; r++) {
    int o = lw_k_prim(L, P_ADD, T[r].base, lw_k_prim(L, P_ADD, jb, l));
    for (int i = 0; i < nf; i++) cur[i] = lw_k_lget(L, acc[r][i], l);
    lw_store_elem(L, L->P->steps[L->step].out, o, cur);
  }
  k_end(L);
}

/* The rest of an outer row, outputs jb .. J - 1, each in order on its own. */
static void tile_rest(lower *L, const tile *T, int jb) {
  const lacc_type *t = T->a->type;
  int with_z = T->a->kind == K_FOLD, K = T->sx[T->r - 1];
  int j = lw_var(L, S_I64);
  lw_k_for(L, j, jb, T->J, 1);
  lw_fact(L, j, T->J, -1);
  int oix[LACC_MAX_RANK];
  for (int d = 0; d + 2 < T->r; d++) oix[d] = T->oix[d];
  oix[T->r - 2] = j;
  int o = lw_k_prim(L, P_ADD, T->base, j);
  int *acc = lw_fresh(L, t);
  if (with_z) lw_assign(L, t, acc, lw_lower_exp(L, T->a->kids[1], NULL, T->env));
  else lw_assign(L, t, acc, tile_elem(L, T, j, lw_k_int(L, S_I64, 0)));
  lw_fold_plain(L, T->a, T->env, T->sx, oix, o, lw_k_int(L, S_I64, with_z ? 0 : 1), K, acc);
  lw_store_elem(L, L->P->steps[L->step].out, o, acc);
  k_end(L);
}

/* FN_TILE for fold step st of a (after its other functions): tiles p0 <= t < p1 of the
 * ceil(Q / 2) * ceil(J / LW) tiles, Q outer rows of J outputs each, two rows a tile. */
void lw_fold_tiles(lower *L, int st, const lacc_node *a, const aenv *env) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1];
  const lacc_type *t = a->type;
  int r = xs->rank;
  /* OpenCL: on CPU devices (opencl/launch.c), a work-item's tiles in order as a chunk */
  if (!L->P->caps.cpu_like || !tiles_on() || r < 2 || tile_fields(t) == 0) return;
  int LW = tile_lanes(t, streaming(L, xs, env)), fi = lw_new_fn(L, FN_TILE);
  tile T0 = { a, xs, env, NULL, NULL, r, 0, 0 };
  int *sx = lw_shape_of(L, xs, env), *oix = ints(L, r);
  T0.sx = sx;
  T0.J = sx[r - 2];
  int pro = L->pro;
  L->pro = 1;
  int one = lw_k_int(L, S_I64, 1), lw = lw_k_int(L, S_I64, LW);
  int Q = lw_k_prim(L, P_MAX, lw_size_of(L, r - 2, sx), one);
  L->pro = pro;
  int ti = lw_var(L, S_I64);
  lw_k_for(L, ti, 0, 1, 1);
  L->key = ti;
  /* tile ti: rows q, q + 1 (pair ti % Q2 of the Q2 = ceil(Q / 2)), outputs from jb */
  int two = lw_k_int(L, S_I64, TILE_ROWS);
  int Q2 = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_ADD, Q, one), two);
  int q = lw_k_prim(L, P_MUL, lw_k_prim(L, P_REM, ti, Q2), two);
  int jb = lw_k_prim(L, P_MUL, lw_k_prim(L, P_QUOT, ti, Q2), lw);
  tile T[TILE_ROWS] = { T0, T0 };
  lw_unravel_in(L, r - 2, sx, q, oix);   /* q < Q: 2 (ti % Q2) <= 2 Q2 - 2 <= Q - 1 */
  T[0].oix = oix;
  T[0].base = lw_k_prim(L, P_MUL, q, T0.J);
  int q1 = lw_k_prim(L, P_ADD, q, one), has1 = lw_k_prim(L, P_LT, q1, Q);
  int spec = L->speculate;
  L->speculate = 1;                      /* no branch in a lane: matches compute every arm */
  k_if(L, lw_k_prim(L, P_LE, lw_k_prim(L, P_ADD, jb, lw), T0.J));
  k_if(L, has1);
  T[1].oix = ints(L, r);
  lw_unravel_in(L, r - 2, sx, q1, (int *)T[1].oix);   /* inside: q + 1 < Q */
  T[1].base = lw_k_prim(L, P_MUL, q1, T0.J);
  tile_full(L, T, 2, jb, LW);
  k_else(L);
  tile_full(L, T, 1, jb, LW);
  k_end(L);
  k_else(L);
  L->speculate = spec;
  tile_rest(L, &T[0], jb);
  k_if(L, has1);
  T[1].oix = ints(L, r);
  lw_unravel_in(L, r - 2, sx, q1, (int *)T[1].oix);
  T[1].base = lw_k_prim(L, P_MUL, q1, T0.J);
  tile_rest(L, &T[1], jb);
  k_end(L);
  k_end(L);
  k_end(L);
  pstep *s = &L->P->steps[st];
  s->fn[SF_TILE] = fi;
  s->tile_lanes = LW;
  s->tile_rows = TILE_ROWS;
}
