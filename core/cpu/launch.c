/* launch.c: the CPU backend: a plan's C (built by kcache.c, chosen by code.c) run on the pool.
 *
 * Owns: a kernel step of a plan on the host: its shape, its output's allocation, its
 * parallel loops (fold partials, private permute copies), its run-time checks raised as
 * errors after the kernel that failed; the backend's table of operations. The walk over
 * the plan's steps, and the release of intermediates after their last use, are
 * kir/exec.c's.
 * Must not: compile or cache code (kcache.c, builds.c, code.c), lower or print code (lower.c, emit_c.c)
 * or decide what fuses.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cpu/code.h"
#include "kir/backend.h"
#include "cpu/pool.h"
#include "base/settings.h"

#include "kir/kabi.h"

LACC_KABI(LACC_KABI_DECLARE)
typedef lacc_kslot kslot;
typedef void (*kfn_ptr)(const kslot *, lacc_krt *, int64_t, int64_t, int64_t, int64_t, int64_t *);

/* A run's failure record: the kernels see its first member only. */
typedef struct {
  lacc_krt abi;
  pthread_mutex_t lock;
  int failed;
  int64_t key;
  int check;
  int64_t vals[2 * LACC_MAX_RANK];
  int nvals;
} krt;

/* ---- run-time checks */

static void rt_fail(lacc_krt *abi, int64_t key, int check, const int64_t *vals, int n) {
  krt *rt = (krt *)abi;
  pthread_mutex_lock(&rt->lock);
  if (!rt->failed || key < rt->key) {
    rt->failed = 1;
    rt->key = key;
    rt->check = check;
    rt->nvals = n > 2 * LACC_MAX_RANK ? 2 * LACC_MAX_RANK : n;
    for (int i = 0; i < rt->nvals; i++) rt->vals[i] = vals[i];
  }
  pthread_mutex_unlock(&rt->lock);
}

static int raise_check(lacc_ctx *ctx, const kplan *P, const krt *rt) {
  return plan_check_error(ctx, P, rt->check, rt->vals);
}

/* ---- running a plan */

typedef struct {
  const kslot *S;
  lacc_krt *rt;
  kfn_ptr fn;
  int64_t n, nchunks;
  int64_t seg;              /* FN_PART: the segment */
  int64_t mask;             /* a permute group's members to run (lower_push.c) */
} launch;

/* The first of n items in chunk c of m (balanced shares). */
static int64_t share_lo(int64_t n, int64_t c, int64_t m) { return (int64_t)((__int128)n * c / m); }

static int64_t chunk_lo(const launch *l, int64_t c) { return share_lo(l->n, c, l->nchunks); }

static void run_range(void *arg, int64_t c) {
  launch *l = arg;
  l->fn(l->S, l->rt, chunk_lo(l, c), chunk_lo(l, c + 1), 0, 0, NULL);
}

static void run_part(void *arg, int64_t c) {
  launch *l = arg;
  l->fn(l->S, l->rt, l->seg, chunk_lo(l, c), chunk_lo(l, c + 1), c, NULL);
}

/* Chunks for n elements: one below a grain (no thread hand-off for small work),
 * else several per thread so uneven elements balance, and none past TUNE_CPU_CHUNK_MOST. */
static int64_t chunks_for(int64_t n, int64_t grain) {
  if (n <= grain) return 1;
  int64_t c = (int64_t)pool_threads() * 8;
  if (c < n / TUNE_CPU_CHUNK_MOST) c = n / TUNE_CPU_CHUNK_MOST;
  return n / grain < c ? n / grain : c;
}

/* Partials of a row of n elements (n >= 2 * TUNE_PART_GRAIN): a few per thread, more for a
 * long row so that it reaches a chunk boundary often. */
static int64_t parts_for(int64_t n) {
  int64_t c = (int64_t)pool_threads() * 4;
  if (c < n / TUNE_CPU_CHUNK_MOST)
    c = n / TUNE_CPU_CHUNK_MOST < TUNE_PARTS_MOST ? n / TUNE_CPU_CHUNK_MOST : TUNE_PARTS_MOST;
  return n / TUNE_PART_GRAIN < c ? n / TUNE_PART_GRAIN : c;
}

static void parallel(const kslot *S, lacc_krt *rt, kfn_ptr fn, int64_t n) {
  launch l = { S, rt, fn, n, chunks_for(n, TUNE_CPU_GRAIN), 0, 0 };
  pool_run(l.nchunks, run_range, &l);
}

/* A run's state: every slot's array (a reference each) and its view for the kernels. */
typedef struct {
  lacc_ctx *ctx;
  const kplan *P;
  kfn_ptr *fns;
  int atomics;              /* the code may update permute targets with atomics */
  kslot *S;
  lacc_array **arrays;
  krt rt;
  int hdefer;               /* a fold step left to the scan step after it (SF_HROWS), -1 */
} exec;

/* Slot s holds a (the reference passes to the slot). */
static int set_slot(exec *E, int s, lacc_array *a) {
  lacc_array_release(E->arrays[s]);
  E->arrays[s] = a;
  E->S[s].buf = a->buf;
  E->S[s].ext = a->extent;
  E->S[s].size = a->size;
  return LACC_OK;
}

static int alloc_out(exec *E, const pstep *st, int slot, const int64_t *ext) {
  const pslot *s = &E->P->slots[slot];
  lacc_array *a = array_alloc_out(E->ctx, s->type, s->rank, ext, s->plan);
  if (a == NULL) return node_alloc_error(E->ctx, st->node);
  return set_slot(E, slot, a);
}

/* After a kernel: its failed check, or the interruption that cut it short (its output
 * is then incomplete, and is never handed out). */
static int checked(exec *E) {
  if (E->rt.failed) return raise_check(E->ctx, E->P, &E->rt);
  return run_stopped(E->ctx) ? run_interrupted(E->ctx) : LACC_OK;
}

/* R rows (a fold's or scan's) of n elements each, in parallel chunks of rows, each row in
 * order by its function f (SF_BODY; SF_HROWS: a scan's and a fold's, twice the work). */
static int run_rows(exec *E, const pstep *st, int f, int64_t R, int64_t n) {
  launch l = { E->S, &E->rt.abi, E->fns[st->fn[f]], R,
               chunks_for(R * ((f == SF_HROWS ? 2 : 1) * n + 1), TUNE_CPU_GRAIN), 0, 0 };
  if (l.nchunks > R) l.nchunks = R;
  pool_run(l.nchunks, run_range, &l);
  return checked(E);
}

/* Whether a scan of R rows of n elements goes row by row (each row in order on a
 * thread), else in three passes over chunks of few long rows (run_scan). */
static int scan_by_rows(const pstep *st, int64_t R, int64_t n) {
  int threads = pool_threads();
  return R >= threads || n < 2 * TUNE_PART_GRAIN || threads == 1 || st->ordered;
}

/* The buffers of a tile's partials where its rows are whole (at most a tile's fields:
 * lower_tile.c), never read or written. */
static void *const no_buffers[TUNE_TILE_FIELDS];

/* Tiles lo <= t < hi of rows of l->seg elements (FN_TILE). */
static void run_tiles(void *arg, int64_t c) {
  launch *l = arg;
  l->fn(l->S, l->rt, chunk_lo(l, c), chunk_lo(l, c + 1), 0, l->seg, NULL);
}

/* Chunk c of the tiles' rows: tile c / seg, chunk c % seg of seg (FN_TILE's p1 < 0). */
static void run_tile_chunk(void *arg, int64_t c) {
  launch *l = arg;
  int64_t t = c / l->seg, k = c % l->seg;
  l->fn(l->S, l->rt, t, -k - 1, share_lo(l->n, k, l->seg), share_lo(l->n, k + 1, l->seg), NULL);
}

/* Few tiles (fewer than two a thread) of rows of n elements: each tile's rows in chunks on
 * every thread, into nch partials an output, then the outputs from them in order (the
 * reassociation a long segment's partials make; lower_tile.c). A vector-matrix product
 * of 1M x 64 f32 was one tile on one thread: 26 ms, against 11 for its transpose's. */
static int run_tile_parts(exec *E, const pstep *st, int64_t tiles, int64_t R, int64_t n) {
  int64_t nch = parts_for(n), size = nch * R;
  int rc = alloc_out(E, st, st->partial, &size);
  if (rc != LACC_OK) return rc;
  launch l = { E->S, &E->rt.abi, E->fns[st->fn[SF_TILE]], n, tiles * nch, nch, 0 };
  pool_run(tiles * nch, run_tile_chunk, &l);
  if (!E->rt.failed && !run_stopped(E->ctx))
    E->fns[st->fn[SF_TCOMBINE]](E->S, &E->rt.abi, 0, R, nch, 0, NULL);
  lacc_array_release(E->arrays[st->partial]);
  E->arrays[st->partial] = NULL;
  return LACC_OK;
}

static int run_fold(exec *E, const pstep *st, int64_t inner) {
  int64_t R = E->S[st->out].size, n = inner;
  if (!st->with_z && st->empty_later != 2 && n == 0 && R > 0)
    return err_fold1_empty(E->ctx, st->empty->where);
  int threads = pool_threads();
  if (R == 0) return LACC_OK;
  /* Partials split a segment over the threads; with per-lane accumulators (st->lanes)
   * they also pay on one thread, and for a few long segments. */
  int part = n >= 2 * TUNE_PART_GRAIN && !st->ordered &&
             ((R < threads && threads > 1) || (st->lanes && R <= 4 * threads));
  int64_t J = st->rank > 0 ? E->S[st->out].ext[st->rank - 1] : 0;
  /* a strided tile (lower_tile.c: pass_tiles) where rows are short, or the rows' plain
   * loop has no per-lane accumulators (it folds one element at a time) and an element
   * gathers little */
  int tiled = st->fn[SF_TILE] >= 0 && J >= st->tile_least &&
              (!st->tile_strided || n <= TUNE_TILE_STRIDED_ROW ||
               (!st->lanes && J >= st->tile_lanes && st->tile_gathers <= TILE_STRIDED_GATHERS));
  if (!part && tiled) {
    /* tiles of tile_lanes outputs, one per vector lane (lower_tile.c) */
    int64_t lw = st->tile_lanes, rows = st->tile_rows;
    int64_t tiles = (R / J + rows - 1) / rows * ((J + lw - 1) / lw);
    if (st->fn[SF_TCOMBINE] >= 0 && threads > 1 && tiles < 2 * threads && n >= 2 * TUNE_PART_GRAIN) {
      int rc = run_tile_parts(E, st, tiles, R, n);
      if (rc != LACC_OK) return rc;
    } else {
      /* whole rows never write the partials (a tile lowered to split them may be kept,
       * strided, without FN_TCOMBINE), but the C reads every slot's buffers */
      if (st->partial >= 0 && E->arrays[st->partial] == NULL)
        E->S[st->partial].buf = (void **)no_buffers;
      launch l = { E->S, &E->rt.abi, E->fns[st->fn[SF_TILE]], tiles,
                   chunks_for(R * (n + 1), TUNE_CPU_GRAIN), n, 0 };
      if (l.nchunks > tiles) l.nchunks = tiles;
      pool_run(l.nchunks, run_tiles, &l);
    }
    if (!E->rt.failed || E->rt.check != CHECK_UNTILED) return checked(E);
    E->rt.failed = 0;   /* a tile's hoisted test failed (hoist.c): the plain loop, below */
  }
  if (!part && st->hscan >= 0 && scan_by_rows(&E->P->steps[st->hscan], R, n)) {
    E->hdefer = (int)(st - E->P->steps);   /* the scan's row loop folds the rows too */
    return LACC_OK;
  }
  if (!part) return run_rows(E, st, SF_BODY, R, n);
  int64_t nch = parts_for(n);
  int64_t one = nch;
  int rc = alloc_out(E, st, st->partial, &one);
  for (int i = 0; i < st->nsib && rc == LACC_OK; i++) rc = alloc_out(E, st, st->sib_partial[i], &one);
  if (rc != LACC_OK) return rc;
  for (int64_t o = 0; o < R && rc == LACC_OK; o++) {
    launch l = { E->S, &E->rt.abi, E->fns[st->fn[SF_PART]], n, nch, o, 0 };
    pool_run(nch, run_part, &l);
    if (run_stopped(E->ctx)) break;   /* partials missing: nothing to combine */
    E->fns[st->fn[SF_COMBINE]](E->S, &E->rt.abi, o, nch, 0, 0, NULL);
    rc = checked(E);
  }
  if (rc == LACC_OK) rc = checked(E);
  for (int i = -1; i < st->nsib; i++) {
    int p = i < 0 ? st->partial : st->sib_partial[i];
    lacc_array_release(E->arrays[p]);
    E->arrays[p] = NULL;
  }
  return rc;
}

/* Scans: rows in parallel, each in order; a few long rows instead in three passes over
 * chunks (reduce each chunk, turn the partials into carries in order, scan each chunk
 * from its carry), which needs only associativity. */
static int run_scan(exec *E, const pstep *st, int64_t n) {
  int64_t m = E->S[st->out].ext[st->rank - 1];
  int64_t R = m > 0 ? E->S[st->out].size / m : 0;
  if (st->hfold >= 0 && E->hdefer == st->hfold) {   /* the fold's rows and the scan's (a
                                                        scan1's rows may be empty, not the
                                                        fold's: its count of rows) */
    E->hdefer = -1;
    return run_rows(E, st, SF_HROWS, E->S[E->P->steps[st->hfold].out].size, n);
  }
  if (R == 0) return LACC_OK;
  if (scan_by_rows(st, R, n)) return run_rows(E, st, SF_BODY, R, n);
  int64_t nch = parts_for(n);
  int rc = alloc_out(E, st, st->partial, &nch);
  if (rc != LACC_OK) return rc;
  for (int64_t o = 0; o < R && rc == LACC_OK; o++) {
    launch l = { E->S, &E->rt.abi, E->fns[st->fn[SF_PART]], n, nch, o, 0 };
    pool_run(nch, run_part, &l);
    rc = checked(E);
    if (rc != LACC_OK) break;
    E->fns[st->fn[SF_COMBINE]](E->S, &E->rt.abi, o, nch, 0, 0, NULL);
    l.fn = E->fns[st->fn[SF_CHUNK]];
    pool_run(nch, run_part, &l);
    rc = checked(E);
  }
  lacc_array_release(E->arrays[st->partial]);
  E->arrays[st->partial] = NULL;
  return rc;
}

static int private_off(void) {
  return !setting_switch("LACC_PRIVATE", 1);
}

static void run_private(void *arg, int64_t c) {   /* private copy c of a permute */
  launch *l = arg;
  l->fn(l->S, l->rt, chunk_lo(l, c), chunk_lo(l, c + 1), l->mask, c, NULL);
}

static void run_merge(void *arg, int64_t c) {     /* targets, from seg copies */
  launch *l = arg;
  l->fn(l->S, l->rt, chunk_lo(l, c), chunk_lo(l, c + 1), l->seg, l->mask, NULL);
}

static void run_masked(void *arg, int64_t c) {    /* a permute's defaults, or its scatter */
  launch *l = arg;
  l->fn(l->S, l->rt, chunk_lo(l, c), chunk_lo(l, c + 1), l->mask, 0, NULL);
}

static void masked(const kslot *S, lacc_krt *rt, kfn_ptr fn, int64_t n, int64_t mask) {
  launch l = { S, rt, fn, n, chunks_for(n, TUNE_CPU_GRAIN), 0, mask };
  pool_run(l.nchunks, run_masked, &l);
}

/* A permute group's member m's partial (m < 0: the step's own). */
static int member_partial(const pstep *st, int m) { return m <= 0 ? st->partial : st->sib_partial[m - 1]; }

/* A permute with one commutative primitive onto few targets: each thread scatters its
 * share of the source into a private copy of the targets (no contention, no atomics),
 * then the copies are combined into the defaults in parallel over the targets. */
static int permute_private(exec *E, const pstep *st, int64_t n, int64_t nsrc, int64_t mask, int m) {
  int64_t copies = pool_threads();
  if (copies > nsrc / TUNE_CPU_GRAIN)
    copies = nsrc / TUNE_CPU_GRAIN > 1 ? nsrc / TUNE_CPU_GRAIN : 1;
  int rc = LACC_OK;
  for (int i = 0; i <= st->nsib && rc == LACC_OK; i++) {   /* every member's: the kernel
                                                              finds each member's buffers */
    int64_t ext = copies * (E->S[step_member_slot(st, i)].size + LACC_PRIVATE_GAP);
    if (m >= 0 && i != m) ext = 1;
    rc = alloc_out(E, st, member_partial(st, i), &ext);
  }
  if (rc == LACC_OK) {
    launch l = { E->S, &E->rt.abi, E->fns[st->fn[SF_PSCATTER]], nsrc, copies, 0, mask };
    pool_run(copies, run_private, &l);
    rc = checked(E);
  }
  if (rc == LACC_OK) {
    launch g = { E->S, &E->rt.abi, E->fns[st->fn[SF_PMERGE]], n,
                 chunks_for(n * copies, TUNE_CPU_GRAIN), copies, mask };
    pool_run(g.nchunks, run_merge, &g);
    rc = checked(E);
  }
  for (int i = 0; i <= st->nsib; i++) {
    int p = member_partial(st, i);
    lacc_array_release(E->arrays[p]);
    E->arrays[p] = NULL;
  }
  return rc;
}

/* Permute: the defaults copied in parallel, then the source scattered: in parallel when
 * each element is one scalar and the targets are many (the kernel updates them with
 * compare-and-swap loops), else in order on one thread, which is safe for tuples and
 * sums and, on few targets, faster than threads contending for them. Member m of a group
 * alone (mask 1 << m), or with m < 0 all of them (their extents agree). */
static int permute_run(exec *E, const pstep *st, int64_t nsrc, int64_t mask, int m) {
  int64_t n = E->S[step_member_slot(st, m)].size;
  masked(E->S, &E->rt.abi, E->fns[st->fn[SF_BODY]], n, mask);
  int rc = checked(E);
  if (rc != LACC_OK || nsrc == 0) return rc;
  if (st->fn[SF_PSCATTER] >= 0 && n < TUNE_PERMUTE_SPREAD && nsrc >= 2 * n &&
      nsrc >= 2 * TUNE_CPU_GRAIN &&
      pool_threads() > 1 && !private_off())
    return permute_private(E, st, n, nsrc, mask, m);
  if (st->atomic && E->atomics && n >= TUNE_PERMUTE_SPREAD && pool_threads() > 1) {
    masked(E->S, &E->rt.abi, E->fns[st->fn[SF_ASCATTER]], nsrc, mask);
    return checked(E);
  }
  /* in order, a chunk at a time (a stop request is seen between them) */
  for (int64_t lo = 0; lo < nsrc && rc == LACC_OK; lo += TUNE_CPU_CHUNK_MOST) {
    int64_t hi = nsrc - lo > TUNE_CPU_CHUNK_MOST ? lo + TUNE_CPU_CHUNK_MOST : nsrc;
    E->fns[st->fn[SF_SCATTER]](E->S, &E->rt.abi, lo, hi, mask, 0, NULL);
    rc = checked(E);
  }
  return rc;
}

/* A permute step: its members together where their extents (ext: each member's, then
 * its source's size) agree, else one after another, as each would run alone. */
static int run_permute(exec *E, const pstep *st, const int64_t *ext) {
  if (step_members_agree(st, ext)) return permute_run(E, st, ext[st->rank], -1, -1);
  int rc = LACC_OK;
  for (int m = 0; m <= st->nsib && rc == LACC_OK; m++)
    rc = permute_run(E, st, ext[m * (st->rank + 1) + st->rank], (int64_t)1 << m, m);
  return rc;
}

/* A kernel step: its shape, its output, its kernels. */
static int cpu_step(void *R, int k) {
  exec *E = R;
  const pstep *st = &E->P->steps[k];
  int64_t ext[(LACC_MAX_RANK + 1) * TUNE_HFUSE_MOST] = { 0 };
  E->fns[st->fn[SF_SHAPE]](E->S, &E->rt.abi, 0, 0, 0, 0, ext);
  int rc = checked(E);
  if (rc == LACC_OK) rc = alloc_out(E, st, st->out, ext);
  for (int i = 0; i < st->nsib && rc == LACC_OK; i++)
    rc = alloc_out(E, st, st->sib_out[i], step_sib_ext(st, ext, i));
  if (rc == LACC_OK && st->wout >= 0) rc = alloc_out(E, st, st->wout, ext + st->wext);
  if (rc != LACC_OK) return rc;
  if (st->kind == SK_FOLD) return run_fold(E, st, ext[st->rank]);
  if (st->kind == SK_SCAN) return run_scan(E, st, ext[st->rank]);
  if (st->kind == SK_PERMUTE) return run_permute(E, st, ext);
  parallel(E->S, &E->rt.abi, E->fns[st->fn[SF_BODY]], E->S[st->out].size);
  return checked(E);
}

static void *cpu_begin(lacc_ctx *ctx, const kplan *P) {
  exec *E = calloc(1, sizeof *E);
  size_t n = (size_t)(P->nslots ? P->nslots : 1);
  if (E != NULL) {
    E->S = calloc(n, sizeof *E->S);
    E->arrays = calloc(n, sizeof *E->arrays);
  }
  if (E == NULL || E->S == NULL || E->arrays == NULL) {
    if (E != NULL) {
      free(E->S);
      free(E->arrays);
    }
    free(E);
    err_oom(ctx);
    return NULL;
  }
  E->ctx = ctx;
  E->P = P;
  E->hdefer = -1;
  E->fns = (kfn_ptr *)cpu_code_fns(P->code, &E->atomics);
  E->rt.abi.fail = rt_fail;
  E->rt.abi.K = (const lacc_kval *)P->consts;
  pthread_mutex_init(&E->rt.lock, NULL);
  return E;
}

/* The pool reports progress and stops between chunks during the outermost run only
 * (no call per chunk otherwise). */
static void cpu_hooks(lacc_ctx *ctx, int on) {
  if (on) {
    if (ctx->progress.fn != NULL) pool_on_tick(progress_tick, ctx);
    pool_on_stop(run_stopped, ctx);
    return;
  }
  if (ctx->progress.depth == 0) pool_on_tick(NULL, NULL);
  if (ctx->run.depth == 1) pool_on_stop(NULL, NULL);
}

/* An array from outside: its values on the host first. */
static int cpu_input(void *R, int s, lacc_array *a) {
  int rc = array_host(a);
  if (rc != LACC_OK) return rc;
  lacc_array_retain(a);
  return set_slot(R, s, a);
}

static int cpu_test(void *R, int s, int *v) {
  const lacc_array *t = ((exec *)R)->arrays[s];
  *v = t == NULL ? -1 : *(const uint8_t *)t->buf[0] != 0;
  return LACC_OK;
}

static void cpu_alias(void *R, int dst, int src) {
  exec *E = R;
  lacc_array_retain(E->arrays[src]);
  set_slot(E, dst, E->arrays[src]);
}

static void cpu_drop(void *R, int s) {
  exec *E = R;
  lacc_array_release(E->arrays[s]);
  E->arrays[s] = NULL;
}

static int cpu_output(void *R, int s, lacc_array **out) {
  *out = ((exec *)R)->arrays[s];
  lacc_array_retain(*out);
  return LACC_OK;
}

static int cpu_finish(void *R) {
  (void)R;
  return LACC_OK;
}

static void cpu_end(void *R) {
  exec *E = R;
  for (int s = 0; s < E->P->nslots; s++) lacc_array_release(E->arrays[s]);
  pthread_mutex_destroy(&E->rt.lock);
  free(E->S);
  free(E->arrays);
  free(E);
}

/* The plan's C, built (or found in the caches) and its functions resolved. */
/* The most operations of one loop of a function (those of loops inside it not counted;
 * the body's code outside loops is one more): gcc's vectorisers at -O3 take time that grows
 * faster than the loop, while a function of many modest loops (a stencil's border
 * regions) compiles fast (docs/design.md, Measurements). Not counted: constants and
 * copies (the lowering writes many, an index's constant parts and a select's two moves,
 * and the C compiler folds them away first), and a loop that can report a failure (the
 * checked copy of a loop whose checks did not all pass before it): the vectorisers give
 * it up at its first branch to the failure. */
enum { MAX_NEST = 64 };
typedef struct {
  int64_t count[MAX_NEST];
  int is_loop[MAX_NEST], fails[MAX_NEST], depth;
} loop_count;

static int64_t loop_ops(const klist *l, loop_count *c) {
  int64_t most = 0;
  for (int i = 0; i < l->n; i++) {
    kop op = l->v[i].op;
    int d = c->depth, loop = d;
    while (loop > 0 && !c->is_loop[loop]) loop--;
    if (op == KO_FOR || op == KO_LOOP || op == KO_IF) {
      if (d + 1 < MAX_NEST) {
        c->depth++;
        c->is_loop[c->depth] = op != KO_IF;
        c->count[c->depth] = 0;
        c->fails[c->depth] = 0;
      }
      c->count[loop]++;
    } else if (op == KO_END) {
      if (d > 0) {
        if (c->is_loop[d] && !c->fails[d] && c->count[d] > most) most = c->count[d];
        c->depth--;
      }
    } else if (op == KO_FAIL) {
      c->fails[loop] = 1;
    } else if (op != KO_CONST && op != KO_KCONST && op != KO_MOV) {
      c->count[loop]++;
    }
  }
  return most;
}

int64_t cpu_longest_loop(const kplan *P) {
  int64_t most = 0;
  for (int k = 0; k < P->nfns; k++) {
    /* the prologue's straight code (extents, and the checks of the shapes a fused
     * term builds: 1,400 operations in a logistic regression's gradient, whose tiles
     * then built at -O2 and ran 2.8x slower) is not a loop's */
    loop_count p = { .is_loop = { 1 } }, c = { .is_loop = { 1 } };
    int64_t a = loop_ops(&P->fns[k].pro, &p);
    int64_t b = loop_ops(&P->fns[k].body, &c);
    if (a > most) most = a;
    if (b > most) most = b;
    if (c.count[0] > most) most = c.count[0];
  }
  return most;
}

/* A function's share of a program's C, by its instructions. */
static int64_t fn_weight(const kfn *F) { return 1 + F->pro.n + F->body.n; }

int cpu_sources(lacc_ctx *ctx, const kplan *P, char **srcs, int *first) {
  char *whole = emit_c(P);
  if (whole == NULL) return err_oom(ctx);
  int n = cpu_build_parts(strlen(whole), P->nfns);
  first[0] = 0;
  first[1] = P->nfns;
  srcs[0] = whole;
  if (n == 1) return 1;
  free(whole);
  /* parts of about as much code, by the functions' instructions (a contraction's tiles
   * are a hundred times a map's) */
  int64_t total = 0, sum = 0;
  for (int k = 0; k < P->nfns; k++) total += fn_weight(&P->fns[k]);
  for (int i = 0, k = 0; i < n; i++) {
    while (k < P->nfns - (n - 1 - i) && (k <= first[i] || sum < total * (i + 1) / n))
      sum += fn_weight(&P->fns[k++]);
    first[i + 1] = i == n - 1 ? P->nfns : k;
  }
  for (int i = 0; i < n; i++) {
    srcs[i] = emit_c_part(P, first[i], first[i + 1]);
    if (srcs[i] == NULL) {
      for (int j = 0; j < i; j++) free(srcs[j]);
      err_oom(ctx);
      return -1;
    }
  }
  return n;
}

static int cpu_compile(lacc_ctx *ctx, const char *device, kplan *P) {
  (void)device;
  char *srcs[CPU_MAX_PARTS];
  int first[CPU_MAX_PARTS + 1];
  int n = cpu_sources(ctx, P, srcs, first);
  if (n < 0) return ctx->errcode;
  cpu_code *c = NULL;
  int rc = cpu_code_new(ctx, srcs, first, n, cpu_longest_loop(P), &c);
  for (int i = 0; i < n; i++) free(srcs[i]);   /* NULL where the code took them */
  P->code = c;
  return rc;
}

static void cpu_release(kplan *P) { cpu_code_free(P->code); }

static int cpu_tier(lacc_ctx *ctx, kplan *P, int want, int *tier, double *left) {
  return cpu_code_advance(ctx, P->code, want, tier, left);
}

/* lacc.config's settings this backend owns, in force (backend.h: setting). */
static int cpu_setting(const char *name, char *out, size_t cap, int *fixed) {
  static const char *const modes[] = { "auto", "fast", "opt" };
  *fixed = 0;
  if (strcmp(name, "threads") == 0) snprintf(out, cap, "%d", pool_threads_planned(fixed));
  else if (strcmp(name, "cc") == 0) cpu_cc(out, cap);
  else if (strcmp(name, "cflags") == 0) cpu_cflags(out, cap);
  else if (strcmp(name, "tier") == 0) snprintf(out, cap, "%s", modes[cpu_tier_mode()]);
  else return 0;
  return 1;
}

const backend_ops cpu_backend = {
  .name = "cpu",
  .available = cpu_available,
  .setting = cpu_setting,
  .caps = { .cpu_like = 1, .lane_segments = 1, .private_scatter = 1, .wide_tile_most = 8,
            .tile_group_bytes = 64, .tile_parts = 1,
            .sort_where = "on the host in parallel chunks on the cpu backend's threads" },
  .consts_at_run = 1,
  .compile = cpu_compile,
  .release = cpu_release,
  .begin = cpu_begin,
  .hooks = cpu_hooks,
  .input = cpu_input,
  .step = cpu_step,
  .test = cpu_test,
  .alias = cpu_alias,
  .drop = cpu_drop,
  .output = cpu_output,
  .finish = cpu_finish,
  .end = cpu_end,
  .parallel = pool_run,
  .describe = tier_describe,
  .tier = cpu_tier,
  .run = tier_exec,
};
