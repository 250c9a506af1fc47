/* lower_tile.c: folds of many rows in tiles, one row per vector lane.
 *
 * Owns: FN_TILE, the cpu backend's way to fold many rows whose elements lie side by side
 * across neighbouring rows (a matrix product's b[k, j]; any element function of the
 * rows' own index): a tile is LW neighbouring outputs of R neighbouring output rows
 * (each read of b serves them all: 1/R of the traffic from cache; R accumulators of LW
 * lanes held in vector registers across the row, as a BLAS micro-kernel holds its block),
 * and lane l folds output jb + l of each, over its row in order, so that any combining function gives the
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

enum { TILE_ROWS_MOST = 16 };   /* outer rows per tile: each read of b serves them all */

static int tiles_on(void) {
  return setting_switch("LACC_TILES", 1);
}

/* Whether the kernels' compiler targets 32 vector registers of 64 bytes (AVX-512, as
 * -march=native gives on such a CPU): a tile of one scalar then takes TILE_WIDE_ROWS
 * outer rows of TUNE_TILE_WIDE_BYTES of outputs (24 registers of accumulators, each read
 * of b serving 6 rows, each broadcast of a 4 registers: a 1024 f32 product 13.1 ms, from
 * 15.3-21 in 8 rows of 128 bytes and 19-21 in 2 rows of 64 outputs; f64 512: 4.0 ms from
 * 4.6-4.9 and 7.9), for scalars up to the backend's wide_tile_most (kcaps; an OpenCL CPU
 * device keeps 8 rows of 128 bytes, its wide_tile_rows and _bytes). With 16 registers of
 * 32 bytes (AVX2) such tiles spill (37 ms against 28), so there and for tuples and
 * streaming tiles the shape stays 2 rows of TUNE_TILE_BYTES. */
enum { TILE_WIDE_ROWS = 6 };
static int wide_vectors(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx512f");
#else
  return 0;
#endif
}

static int leaf_bytes(const lacc_type *t) {
  int size = 0;
  for (int i = 0; i < t->nleaves; i++) size += (int)scalar_size(type_leaf(t, i));
  return size > 0 ? size : 1;
}

/* Lanes of a tile: TUNE_TILE_BYTES of accumulators over all of an element's fields, at
 * most TUNE_TILE_LANES_MOST; TUNE_TILE_STREAM_BYTES, at most TUNE_TILE_STREAM_LANES_MOST,
 * where the elements stream (below); TUNE_TILE_WIDE_BYTES of one scalar on wide vectors.
 * LACC_TILE_LANES sets it. */
static int wide_tile(lower *L, const lacc_type *t, int stream) {
  return !stream && t->nleaves == 1 && leaf_bytes(t) <= L->P->caps.wide_tile_most && wide_vectors();
}

static int tile_lanes(lower *L, const lacc_type *t, int stream) {
  int most = stream ? TUNE_TILE_STREAM_LANES_MOST : TUNE_TILE_LANES_MOST;
  int bytes = stream ? TUNE_TILE_STREAM_BYTES : TUNE_TILE_BYTES;
  if (wide_tile(L, t, stream))
    bytes = L->P->caps.wide_tile_bytes > 0 ? L->P->caps.wide_tile_bytes : TUNE_TILE_WIDE_BYTES;
  int n = bytes / leaf_bytes(t);
  n = n > most ? most : n < 4 ? 4 : n;
  return (int)setting_number("LACC_TILE_LANES", n, 4, 256, 1);
}

/* Outer rows of a tile: TILE_WIDE_ROWS (or the backend's) for one scalar on wide
 * vectors, else 2; the setting LACC_TILE_ROWS. */
static int tile_rows(lower *L, const lacc_type *t, int stream) {
  int wide = L->P->caps.wide_tile_rows > 0 ? L->P->caps.wide_tile_rows : TILE_WIDE_ROWS;
  int n = wide_tile(L, t, stream) ? wide : 2;
  return (int)setting_number("LACC_TILE_ROWS", n, 1, TILE_ROWS_MOST, 1);
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

static int step_of(const klist *l, int from, int to, int v, int lane, int depth);

/* A select's step (lw_k_select: v set in both arms of an if, at `at` the else arm's): its
 * arms' where they step alike and its condition is the same for all lanes, else 2 (a map
 * pulled at a row-major index reads its operands at it, or at its multi-index raveled
 * again: lower_pull.c's map_rows_agree) */
static int select_step(const klist *l, int from, int to, int at, int lane, int depth) {
  if (at < from + 3 || at + 1 >= to || l->v[at + 1].op != KO_END || l->v[at - 1].op != KO_ELSE ||
      l->v[at - 2].op != KO_MOV || l->v[at - 3].op != KO_IF || l->v[at].op != KO_MOV ||
      l->v[at - 2].dst != l->v[at].dst || depth == 0)
    return 2;
  if (step_of(l, from, to, l->v[at - 3].a, lane, depth - 1) != 0) return 2;
  int a = step_of(l, from, to, l->v[at - 2].a, lane, depth - 1);
  int b = step_of(l, from, to, l->v[at].a, lane, depth - 1);
  return a == b ? a : 2;
}

static int step_of(const klist *l, int from, int to, int v, int lane, int depth) {
  if (v == lane) return 1;
  int at;
  int n = def_in(l, from, to, v, &at);
  if (n == 0) return 0;                /* set before the lanes' loop: the same for all */
  if (n == 2) return select_step(l, from, to, at, lane, depth);
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
 * check left after bounds.c and hoist.c (else 0): 1 where every read in it is the same for
 * all lanes or contiguous across them, 2 where some lane reads apart from its neighbour's
 * (its own row of a fold along the innermost dimension: a gather; *gathers: how many). */
static int tile_good(const kfn *F, int *gathers) {
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
  int good = 1;
  *gathers = 0;
  for (int i = from; i < to; i++)
    if (l->v[i].op == KO_LOAD && step_of(l, from, to, l->v[i].a, F->tile_lane, 64) > 1) {
      good = 2;
      ++*gathers;
    }
  return good;
}

static void drop_fn(kplan *P, pstep *st, step_fn which) {
  if (st->fn[which] < 0) return;
  P->fns[st->fn[which]].pro.n = P->fns[st->fn[which]].body.n = 0;
  st->fn[which] = -1;
}

/* After bounds.c: each fold's FN_TILE kept where it is good, else emptied and unused (the
 * segments vectorise along the row instead, or keep the order of a check's reports). A
 * tile whose lanes read apart is kept on the cpu backend (lane_segments) as a strided
 * one, which the executor takes only where rows are short or the plain loop cannot
 * vectorise along them (launch.c): folds along rows of 8 of {1M, 8} f32, sum 2.0 ->
 * 1.45 ms, argmin 5.6 -> 2.0 (and 3.5x faster along rows of 256); sums along rows of 16
 * or more ran faster in the plain loop's vectors, and so did a long row's element that
 * gathers much (an N-body gradient's pairs, 6 gathers: 77 ms plain, 162 in tiles). */
int pass_tiles(kplan *P) {
  for (int s = 0; s < P->nsteps; s++) {
    pstep *st = &P->steps[s];
    if (st->kind != SK_FOLD || st->fn[SF_TILE] < 0) continue;
    int good = tile_good(&P->fns[st->fn[SF_TILE]], &st->tile_gathers);
    st->tile_strided = good == 2;
    int keep = good == 1 || (good == 2 && P->caps.lane_segments);
    if (!keep) drop_fn(P, st, SF_TILE);
    if (!keep || good != 1) drop_fn(P, st, SF_TCOMBINE);   /* strided tiles' rows are short */
  }
  return LACC_OK;
}

/* ---- the tile function */

typedef struct {
  const lacc_node *a, *xs;
  const aenv *env;
  const int *sx, *oix;   /* the xs's extents; the outer row's index (r - 2 of them) */
  int r, J, base;        /* base: the outer row's first output, q * J */
  int klo, khi;          /* the rows' elements klo <= k < khi (variables), or -1: all */
  int split;             /* a bool variable: a chunk of a tile's rows, into partial chunk */
  int chunk, outs;       /* `chunk` of `outs` outputs each (FN_TCOMBINE adds them); -1: none */
} tile;

/* Element k of output j (its row's index) of the tile's outer row. */
static int *tile_elem(lower *L, const tile *T, int j, int k) {
  int oix[LACC_MAX_RANK];
  for (int d = 0; d + 2 < T->r; d++) oix[d] = T->oix[d];
  oix[T->r - 2] = j;
  return lw_fold_elem(L, T->xs, T->env, T->sx, oix, lw_k_prim(L, P_ADD, T->base, j), k);
}

/* for l in [0, LW), or [0, nl) where nl >= 0 is a variable (the last columns, fewer than
 * LW): a tile's lanes; cl_unroll copies asked of the OpenCL C compiler */
static int lane_loop(lower *L, int LW, int nl, int cl_unroll) {
  int l = lw_var(L, S_I64);
  int hi = nl >= 0 ? nl : lw_k_int(L, S_I64, LW);
  lw_k_for(L, l, lw_k_int(L, S_I64, 0), hi, 1)->cl_unroll = nl >= 0 ? 0 : cl_unroll;
  return l;
}

/* Lane groups of a tile of LW lanes: on a backend whose compiler keeps lane arrays in
 * registers only when each loop is one vector (kcaps.tile_group_bytes), a full tile's
 * lanes go in groups of that many bytes, each with accumulators of its own. One loop of
 * 16 f64 lanes was two vectors a step, and gcc kept both in registers for some kernels
 * and in memory for others of the same C (a 512 f64 product through generate: 10.8 ms
 * against 4.9 through matmul, the hot loop adding into the stack). */
enum { TILE_GROUPS_MOST = 8 };
static int lane_groups(lower *L, const lacc_type *t, int LW, int nl) {
  int bytes = L->P->caps.tile_group_bytes, size = leaf_bytes(t);
  if (nl >= 0 || bytes <= 0 || t->nleaves != 1 || bytes % size != 0) return 1;
  int per = bytes / size;
  if (LW <= per || LW % per != 0 || LW / per > TILE_GROUPS_MOST) return 1;
  return LW / per;
}

/* Each group's lanes of each row (acc) set to z, or where z is NULL to the rows' element
 * k0 (in a chunk of rows, T->split, to id instead). */
static void lanes_start(lower *L, const tile *T, int nrows, const int *at, int NG, int GW, int nl,
                        int acc[][TILE_ROWS_MOST][TUNE_TILE_FIELDS], const int *z, int k0, int id) {
  int nf = T->a->type->nleaves;
  for (int g = 0; g < NG; g++) {
    int l = lane_loop(L, GW, nl, 0);
    int j = lw_k_prim(L, P_ADD, at[g], l);
    lw_fact(L, j, T->J, -1);             /* jb + LW <= J, or nl = J - jb */
    for (int r = 0; r < nrows; r++) {
      const int *first = z;
      int one[1];                        /* a chunk's start: fold_commutative's scalars */
      if (first == NULL) first = tile_elem(L, &T[r], j, k0);
      if (z == NULL && id >= 0) {
        one[0] = lw_k_select(L, T->split, id, first[0]);
        first = one;
      }
      for (int i = 0; i < nf; i++) lw_k_lset(L, acc[g][r][i], l, first[i]);
    }
    k_end(L);
  }
}

/* A tile: outputs jb .. jb + LW - 1 (or the nl there are, nl >= 0 a variable) of nrows
 * neighbouring outer rows (T[0..]), lane by lane: each read of b serves every row of the
 * tile. The last columns of a row, fewer than LW, still go a lane an output (the C
 * compiler vectorises a loop of a variable count too; an output at a time, each folded
 * alone, is bound by the latency of its additions: a 1040 f32 product took 1.45x the
 * time per operation of a 1024 one so). */
static void tile_full(lower *L, const tile *T, int nrows, int jb, int LW, int nl) {
  const lacc_type *t = T->a->type;
  const lacc_node *f = T->a->kids[0];
  int nf = t->nleaves, with_z = T->a->kind == K_FOLD;
  int K = T->khi >= 0 ? T->khi : T->sx[T->r - 1];
  int k0 = T->klo >= 0 ? T->klo : lw_k_int(L, S_I64, 0);
  /* a fold1's lanes start from element k0, the loop after it; a fold's from z, the loop
   * at k0; a chunk of rows (T->split: FN_TCOMBINE adds z) from the identity, the loop at
   * k0: selected, so that the element code is not written twice */
  int id = T->split >= 0 ? lw_identity(L, (prim_op)fold_commutative(f, t), t->scalar) : -1;
  int kstart = k0;
  int NG = lane_groups(L, t, LW, nl), GW = LW / NG;
  int acc[TILE_GROUPS_MOST][TILE_ROWS_MOST][TUNE_TILE_FIELDS], cur[TUNE_TILE_FIELDS];
  int at[TILE_GROUPS_MOST];              /* each group's first output, jb + g GW */
  for (int g = 0; g < NG; g++) {
    at[g] = g == 0 ? jb : lw_k_prim(L, P_ADD, jb, lw_k_int(L, S_I64, g * GW));
    for (int r = 0; r < nrows; r++)
      for (int i = 0; i < nf; i++) acc[g][r][i] = lw_lane_array(L, type_leaf(t, i), GW);
  }
  if (with_z) {
    int *z = lw_copy(L, t, lw_lower_exp(L, T->a->kids[1], NULL, T->env));
    if (id >= 0) z[0] = lw_k_select(L, T->split, id, z[0]);   /* z: this function's copy */
    lanes_start(L, T, nrows, at, NG, GW, nl, acc, z, k0, -1);
  } else {
    lanes_start(L, T, nrows, at, NG, GW, nl, acc, NULL, k0, id);
    kstart = lw_k_prim(L, P_ADD, k0, lw_k_int(L, S_I64, 1));
    if (id >= 0) kstart = lw_k_select(L, T->split, k0, kstart);
  }
  int k = lw_var(L, S_I64);
  lw_k_for(L, k, kstart, K, 1);
  for (int g = 0; g < NG; g++) {
    /* the lanes of one step along the rows, unrolled whole on OpenCL: PoCL then keeps
     * them in vector registers, as gcc does unasked (measured: docs/design.md, Measurements) */
    int l = lane_loop(L, GW, nl, GW);
    if (g == 0) fn(L)->tile_lane = l;
    int from = fn(L)->body.n;
    int j = lw_k_prim(L, P_ADD, at[g], l);
    lw_fact(L, j, T->J, -1);
    for (int r = 0; r < nrows; r++) {
      for (int i = 0; i < nf; i++) cur[i] = lw_k_lget(L, acc[g][r][i], l);
      int *x = tile_elem(L, &T[r], j, k);
      int *v = lw_combine(L, f, t, cur, x, T->env);
      for (int i = 0; i < nf; i++) lw_k_lset(L, acc[g][r][i], l, v[i]);
    }
    /* the rows' element code computes b's index alike: once, so that the C compiler
     * builds less (a 1024 f32 product's kernels: 570 KB of C, from 690) */
    lw_cse_since(L, from);
    k_end(L);
  }
  k_end(L);
  for (int g = 0; g < NG; g++) {
    int l = lane_loop(L, GW, nl, 0);
    for (int r = 0; r < nrows; r++) {
      int o = lw_k_prim(L, P_ADD, T[r].base, lw_k_prim(L, P_ADD, at[g], l));
      for (int i = 0; i < nf; i++) cur[i] = lw_k_lget(L, acc[g][r][i], l);
      if (T->split >= 0) {
        k_if(L, T->split);
        lw_store_elem(L, L->P->steps[L->step].partial,
                      lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, T->chunk, T->outs), o), cur);
        k_else(L);
      }
      lw_store_elem(L, L->P->steps[L->step].out, o, cur);
      if (T->split >= 0) k_end(L);
    }
    k_end(L);
  }
}

/* Tile T's outer row q (its index in oix, its first output in base). */
static tile row_of(lower *L, const tile *T0, int q) {
  tile T = *T0;
  int *oix = ints(L, T.r);
  lw_unravel_in(L, T.r - 2, T.sx, q, oix);   /* every caller's q is below Q */
  T.oix = oix;
  T.base = lw_k_prim(L, P_MUL, q, T.J);
  return T;
}

/* The tiles of outer rows q .. last - 1 (at most R) at outputs jb ..: R rows at once
 * where there are R, else one row at a time. Where a tile's lanes go in groups of GW
 * (one vector: lane_groups) and the nl = J - jb >= 0 outputs left are fewer than LW, the
 * R rows take tiles of as many groups as fit, halving (the four groups of a 256-byte
 * tile: one tile of two, then one of one), then the rest a lane an output: a loop of a
 * variable count keeps its lanes on the stack (the last 48 outputs of a row as one such
 * loop ran a 512 x 512 x 48 f32 product 2.1x slower). The last rows, fewer than R, take
 * that one loop (a row block in each column: the halving there built 8% more code for
 * nothing measurable). */
static void tile_rows_at(lower *L, const tile *T0, int q, int last, int R, int jb, int LW,
                         int nl, int GW) {
  k_if(L, lw_k_prim(L, P_EQ, lw_k_prim(L, P_SUB, last, q), lw_k_int(L, S_I64, R)));
  tile T[TILE_ROWS_MOST];
  for (int i = 0; i < TILE_ROWS_MOST; i++) T[i] = *T0;
  for (int i = 0; i < R; i++) T[i] = row_of(L, T0, i == 0 ? q : lw_k_prim(L, P_ADD, q, lw_k_int(L, S_I64, i)));
  if (nl < 0 || GW >= LW) {
    tile_full(L, T, R, jb, LW, nl);
  } else {
    int at = lw_var(L, S_I64);               /* the first output not yet folded */
    lw_k_mov(L, at, jb);
    for (int w = LW / 2; w >= GW; w /= 2) {   /* nl < LW: each width fits at most once */
      int end = lw_k_prim(L, P_ADD, at, lw_k_int(L, S_I64, w));
      k_if(L, lw_k_prim(L, P_LE, end, T0->J));
      tile_full(L, T, R, at, w, -1);
      lw_k_mov(L, at, end);
      k_end(L);
    }
    int tail = lw_k_prim(L, P_SUB, T0->J, at);
    k_if(L, lw_k_prim(L, P_LT, lw_k_int(L, S_I64, 0), tail));
    tile_full(L, T, R, at, GW, tail);
    k_end(L);
  }
  k_else(L);                             /* the last rows, fewer than R: one at a time */
  int qi = lw_var(L, S_I64);
  lw_k_for(L, qi, q, last, 1);
  T[0] = row_of(L, T0, qi);
  tile_full(L, T, 1, jb, LW, nl);
  k_end(L);
  k_end(L);
}

/* The least lanes of a tile of a row's last outputs (tile_rows_at): a group's. Streaming
 * tiles (no groups) halve too, to a quarter: rows of fewer outputs than a tile's (a column
 * sum of a {1M, 64} f32 array, 64 outputs against 256 lanes) went to the plain loop, which
 * walks each column alone: 185 ms, 9 in tiles. */
static int group_width(lower *L, const lacc_type *t, int LW, int stream) {
  int GW = LW / lane_groups(L, t, LW, -1);
  return stream && GW == LW && LW >= 16 ? LW / 4 : GW;
}

/* FN_TILE of fold step st of a: tiles p0 <= t < p1 of the ceil(Q / R) * ceil(J / LW)
 * tiles, Q outer rows of J outputs each, R rows a tile, into the output. On a backend
 * that splits a tile's rows (kcaps.tile_parts) the rows' elements p2 <= k < p3, and
 * where split (a fold whose chunks may reassociate), p1 < 0 asks one chunk of a tile's
 * rows: tile p0, into partial chunk -p1 - 1 (FN_TCOMBINE), the same code. */
static int tile_fn(lower *L, const lacc_node *a, const aenv *env, int LW, int R, int stream,
                   int split) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1];
  const lacc_type *t = a->type;
  int r = xs->rank, fi = lw_new_fn(L, FN_TILE);
  tile T0 = { a, xs, env, NULL, NULL, r, 0, 0, -1, -1, -1, -1, -1 };
  int *sx = lw_shape_of(L, xs, env);
  T0.sx = sx;
  T0.J = sx[r - 2];
  int pro = L->pro;
  L->pro = 1;
  int one = lw_k_int(L, S_I64, 1), lw = lw_k_int(L, S_I64, LW), rows = lw_k_int(L, S_I64, R);
  int Q = lw_k_prim(L, P_MAX, lw_size_of(L, r - 2, sx), one);
  if (split) T0.outs = lw_k_prim(L, P_MUL, Q, T0.J);
  L->pro = pro;
  int hi = 1;
  if (L->P->caps.tile_parts) {   /* the executor's: p2 <= p3 <= the rows' length */
    lw_fact(L, 2, sx[r - 1], 0);
    lw_fact(L, 3, sx[r - 1], 0);
    T0.klo = 2;
    T0.khi = 3;
  }
  if (split) {
    int zero = lw_k_int(L, S_I64, 0);
    T0.split = lw_k_prim(L, P_LT, 1, zero);
    T0.chunk = lw_k_prim(L, P_SUB, lw_k_prim(L, P_SUB, zero, 1), one);
    hi = lw_k_select(L, T0.split, lw_k_prim(L, P_ADD, 0, one), 1);
  }
  int ti = lw_var(L, S_I64);
  lw_k_for(L, ti, 0, hi, 1);
  L->key = ti;
  /* tile ti: rows q .. q + R - 1 (block ti % QR of the QR = ceil(Q / R)), outputs from jb */
  int QR = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_ADD, Q, lw_k_int(L, S_I64, R - 1)), rows);
  int q = lw_k_prim(L, P_MUL, lw_k_prim(L, P_REM, ti, QR), rows);
  int jb = lw_k_prim(L, P_MUL, lw_k_prim(L, P_QUOT, ti, QR), lw);
  int last = lw_k_prim(L, P_MIN, lw_k_prim(L, P_ADD, q, rows), Q);   /* q < Q: R (ti % QR) <= Q - 1 */
  int spec = L->speculate;
  L->speculate = 1;                      /* no branch in a lane: matches compute every arm */
  int GW = group_width(L, t, LW, stream);
  k_if(L, lw_k_prim(L, P_LE, lw_k_prim(L, P_ADD, jb, lw), T0.J));
  tile_rows_at(L, &T0, q, last, R, jb, LW, -1, GW);
  k_else(L);                             /* the row's last outputs, fewer than LW */
  tile_rows_at(L, &T0, q, last, R, jb, LW, lw_k_prim(L, P_SUB, T0.J, jb), GW);
  k_end(L);
  L->speculate = spec;
  k_end(L);
  return fi;
}

/* FN_TCOMBINE: outputs p0 <= o < p1, each its chunks' partials 0 <= c < p2 (FN_TILE's,
 * `outs` apart) folded in order after the start value, as FN_COMBINE does a segment's. */
static int tile_combine_fn(lower *L, const lacc_node *a, const aenv *env) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1];
  const lacc_type *t = a->type;
  int with_z = a->kind == K_FOLD, r = xs->rank, fi = lw_new_fn(L, FN_TCOMBINE);
  int part = L->P->steps[L->step].partial, out = L->P->steps[L->step].out;
  int *sx = lw_shape_of(L, xs, env);
  int pro = L->pro;
  L->pro = 1;
  int outs = lw_size_of(L, r - 1, sx);
  L->pro = pro;
  int o = lw_var(L, S_I64);
  lw_k_for(L, o, 0, 1, 1);
  L->key = o;
  int *acc = lw_fresh(L, t);
  lw_assign(L, t, acc, with_z ? lw_lower_exp(L, a->kids[1], NULL, env) : lw_load_elem(L, part, o));
  int c = lw_var(L, S_I64);
  lw_k_for(L, c, lw_k_int(L, S_I64, with_z ? 0 : 1), 2, 1);
  int at = lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, c, outs), o);
  lw_accumulate(L, a->kids[0], t, acc, lw_load_elem(L, part, at), env);
  k_end(L);
  lw_store_elem(L, out, o, acc);
  k_end(L);
  return fi;
}

/* FN_TILE for fold step st of a (after its other functions); where the backend splits a
 * tile's rows (kcaps.tile_parts) and the function is a commutative primitive of scalars
 * (fold_commutative: its identity starts a chunk; + and * of any type, min, max and the
 * bitwise ones of integers), FN_TCOMBINE too: a vector-matrix product's few tiles (64
 * outputs of a sum over 1M rows, a logistic regression's gradient: one tile, one
 * thread) run on every thread. */
void lw_fold_tiles(lower *L, int st, const lacc_node *a, const aenv *env) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1];
  const lacc_type *t = a->type;
  int r = xs->rank;
  /* OpenCL: on CPU devices (opencl/launch.c), a work-item's tiles in order as a chunk */
  if (!L->P->caps.cpu_like || !tiles_on() || r < 2 || tile_fields(t) == 0) return;
  int stream = streaming(L, xs, env);
  int LW = tile_lanes(L, t, stream), R = tile_rows(L, t, stream);
  int split = L->P->caps.tile_parts && fold_commutative(a->kids[0], t) >= 0;
  int fi = tile_fn(L, a, env, LW, R, stream, split);
  int ci = split ? tile_combine_fn(L, a, env) : -1;
  pstep *s = &L->P->steps[st];
  s->fn[SF_TILE] = fi;
  s->fn[SF_TCOMBINE] = ci;
  s->tile_lanes = LW;
  /* in groups: any row, even of one output, is faster in tiles (a 2048 x 2048
   * matrix-vector product 2.7x) */
  s->tile_least = group_width(L, t, LW, stream) < LW ? 1 : LW;
  s->tile_rows = R;
}
