/* hoist.c: the checks left in a loop tested once before it, where that decides them.
 *
 * Owns: loop versioning after bounds.c. A loop whose every remaining check compares an
 * index that moves by one with each loop variable (its own and those of loops inside it
 * whose bounds are set before it; at most two) against a bound set before it, gets a
 * test of each comparison at the first and the last values before it: when all hold, a
 * copy of the loop runs in which those comparisons are known true (bounds.c's folding
 * then removes its checks and their branches); else the loop as it was runs, and fails
 * as before. A matrix product written with `at` reads through checks that depend on the
 * inputs' shapes; after this they cost a few comparisons per tile or row. On the cpu
 * backend an index may also go through a select on a condition of one value all through
 * the loop (broadcasting's "this extent is 1, read index 1"): the copy takes it as false
 * and the test checks that it is, so arrays of one shape run without the selects.
 * Must not: change what runs when a test fails: the original loop, its checks and the
 * order of their reports stay. Its FAILs are marked (b = 1) so that explain can tell
 * checks hoisted from checks left.
 */
#include <stdlib.h>
#include <string.h>
#include "kir/analysis.h"
#include "kir/passes.h"
#include "base/vec.h"

/* MAXLEAVES: comparisons tested before one loop; a k-means assignment's 16 centres read
 * through `at` are 32 checks of 4 (docs/design.md, Measurements). */
enum { MAXV = 2, MAXLEAVES = 512, MAXASSUMED = 64 };
static const int64_t RANGE = (int64_t)1 << 61;

typedef struct {
  bctx *B;
  int lo, hi;                  /* the loop's FOR and END, in B's positions */
  const unsigned char *set;    /* set[v]: v is written inside the loop */
  int vars[MAXV], nvars;       /* loop variables of the side being read */
  const int *leaf;             /* the comparisons the checks are made of (loop_checks) */
  int nleaf;
  int assumed[MAXASSUMED];     /* bools the copy takes as false (a stretch not taken) */
  int nassumed;
  int stretch;                 /* such bools are looked for (the cpu backend) */
} loopview;

static int inside(const loopview *L, int pos) { return pos >= L->lo && pos <= L->hi; }

/* v not written inside the loop (or a constant anywhere): the same in every iteration,
 * and read just before the loop, the value it has all through it. */
static int invariant(const loopview *L, int v) {
  int64_t k;
  return (v >= 0 && !L->set[v]) || bx_int_const(L->B, v, &k);
}

/* Whether bool c is true wherever the versioned copy runs: one of the checks' comparisons
 * (which the copy takes as true), through moves and ands. */
static int leaf_true(const loopview *L, int c, int depth) {
  const bctx *B = L->B;
  for (int k = 0; k < L->nleaf; k++)
    if (L->leaf[k] == c) return 1;
  if (depth == 0 || c < 0 || B->dk[c] != D_ONE) return 0;
  const kinst *in = B->code[B->defpos[c]];
  if (in->op == KO_MOV) return leaf_true(L, in->a, depth - 1);
  return in->op == KO_PRIM && in->prim == P_LAND && leaf_true(L, in->a, depth - 1) &&
         leaf_true(L, in->b, depth - 1);
}

/* The index a checked read takes (the lowering's select of the index where its check
 * holds, else 0) where its check is one the copy takes as true: the read through a
 * backpermute of a transpose (`matmul(transpose(x), y)`) reads its source at the
 * selected index, whose own check then compares that; -1 for anything else. */
static int selected(const loopview *L, int v) {
  const bctx *B = L->B;
  if (v < 0 || B->dk[v] != D_SEL || !leaf_true(L, B->code[B->defpos[v]]->a, 16)) return -1;
  return B->code[B->defpos[v] + 1]->a;
}

/* Whether v, read at instruction `use`, has one value all through the loop: an invariant,
 * or computed in it from invariants by comparisons and arithmetic that cannot trap (the
 * test computes it again before the loop). */
static int same_throughout(const loopview *L, int v, int use, int depth) {
  const bctx *B = L->B;
  if (invariant(L, v)) return 1;
  if (depth == 0 || v < 0 || B->dk[v] != D_ONE || !bx_usable(B, v, use)) return 0;
  const kinst *in = B->code[B->defpos[v]];
  int at = B->defpos[v];
  if (in->op == KO_MOV) return same_throughout(L, in->a, at, depth - 1);
  if (in->op != KO_PRIM) return 0;
  switch (in->prim) {
  case P_ADD: case P_SUB: case P_MIN: case P_MAX: case P_LAND: case P_LOR: break;
  default:
    if (!prim_has(in->prim, PF_CMP)) return 0;
  }
  return same_throughout(L, in->a, at, depth - 1) && same_throughout(L, in->b, at, depth - 1);
}

/* A select whose condition has one value all through the loop (NumPy-style broadcasting
 * of extents known when the program runs reads an array at `cond(extent == 1, 1, i)`):
 * the copy takes the condition as false (the extent stretches not: arrays of one shape,
 * the case worth a fast loop) and the test checks that it is; the value the copy reads is
 * the ELSE side's, or -1. */
static int stretch_not_taken(loopview *L, int v) {
  const bctx *B = L->B;
  if (!L->stretch || v < 0 || B->dk[v] != D_SEL) return -1;
  int pos = B->defpos[v], c = B->code[pos]->a;
  if (!same_throughout(L, c, pos, 16)) return -1;
  int k = 0;
  while (k < L->nassumed && L->assumed[k] != c) k++;
  if (k == L->nassumed) {
    if (L->nassumed == MAXASSUMED) return -1;
    L->assumed[L->nassumed++] = c;
  }
  return B->code[pos + 3]->a;
}

/* Whether v, read at instruction `use`, is an invariant plus distinct loop variables of L
 * or of loops inside it whose bounds are invariant, each counted once (L->vars). What is
 * set inside the loop must be read where its one definition still holds (a loop's
 * variable inside that loop, not after it, where it is past its last value). */
static int affine(loopview *L, int v, int use, int depth) {
  const bctx *B = L->B;
  if (invariant(L, v)) return 1;
  if (depth == 0 || v < 0 || !inside(L, B->defpos[v]) || !bx_usable(B, v, use)) return 0;
  const kinst *in = B->code[B->defpos[v]];
  if (B->dk[v] == D_FOR) {
    if (!invariant(L, in->a) || !invariant(L, in->b) || L->nvars == MAXV) return 0;
    for (int i = 0; i < L->nvars; i++)
      if (L->vars[i] == v) return 0;
    L->vars[L->nvars++] = v;
    return 1;
  }
  int sel = selected(L, v);
  if (sel >= 0) return affine(L, sel, B->defpos[v], depth - 1);
  int side = stretch_not_taken(L, v);
  if (side >= 0) return affine(L, side, B->defpos[v] + 3, depth - 1);
  if (B->dk[v] != D_ONE || B->F->vt[v] != S_I64) return 0;
  int at = B->defpos[v];
  if (in->op == KO_MOV) return affine(L, in->a, at, depth - 1);
  if (in->op != KO_PRIM) return 0;
  if (in->prim == P_ADD) return affine(L, in->a, at, depth - 1) && affine(L, in->b, at, depth - 1);
  if (in->prim == P_SUB) return affine(L, in->a, at, depth - 1) && invariant(L, in->b);
  return 0;
}

/* ---- writing the tests */

typedef struct {
  kplan *P;
  kfn *F;
  klist out;                   /* the instructions being written */
  int oom;
} writer;

static kinst *put(writer *W, kop op) {
  if (vec_reserve((void **)&W->out.v, &W->out.cap, W->out.n + 1, 64, sizeof *W->out.v) != 0) {
    W->oom = 1;
    return NULL;
  }
  kinst *in = &W->out.v[W->out.n++];
  memset(in, 0, sizeof *in);
  in->op = op;
  in->dst = in->a = in->b = -1;
  return in;
}

static int new_var(writer *W, scalar_kind k) {
  kfn *F = W->F;
  if (vec_reserve((void **)&F->vt, &F->vcap, F->nvars + 1, 64, sizeof *F->vt) != 0) {
    W->oom = 1;
    return 0;
  }
  F->vt[F->nvars] = k;
  return F->nvars++;
}

static int put_op(writer *W, kop op, prim_op p, scalar_kind k, int a, int b, int64_t imm) {
  int d = new_var(W, k);
  kinst *in = put(W, op);
  if (in == NULL) return d;
  in->dst = d;
  in->prim = p;
  in->a = a;
  in->b = b;
  in->imm.i = imm;
  return d;
}

/* v with each loop variable at its first value (hi = 0) or past its last less one (a value
 * the same all through the loop, same_throughout: that value; a select: the side
 * affine took). */
static int at_corner(writer *W, const loopview *L, int v, int hi) {
  const bctx *B = L->B;
  int64_t k;
  if (v >= 0 && !L->set[v]) return v;
  if (bx_int_const(B, v, &k)) return put_op(W, KO_CONST, P_ADD, S_I64, -1, -1, k);
  int sel = selected(L, v);
  if (sel >= 0) return at_corner(W, L, sel, hi);
  if (B->dk[v] == D_SEL) return at_corner(W, L, B->code[B->defpos[v] + 3]->a, hi);
  const kinst *in = B->code[B->defpos[v]];
  if (in->op == KO_CONST) return put_op(W, KO_CONST, in->prim, W->F->vt[v], -1, -1, in->imm.i);
  if (B->dk[v] == D_FOR) {
    if (!hi) return at_corner(W, L, in->a, 0);
    int one = put_op(W, KO_CONST, P_ADD, S_I64, -1, -1, 1);
    return put_op(W, KO_PRIM, P_SUB, S_I64, at_corner(W, L, in->b, 0), one, 0);
  }
  if (in->op == KO_MOV) return at_corner(W, L, in->a, hi);
  return put_op(W, KO_PRIM, in->prim, W->F->vt[v], at_corner(W, L, in->a, hi),
                at_corner(W, L, in->b, hi), 0);
}

/* Each loop variable's bounds within 2^61 of zero, so that the moving side's range (at
 * most two variables) spans less than 2^63: it wraps at most once, which the test sees
 * as its last value below its first. */
static int ranges_test(writer *W, const loopview *L) {
  int t = -1;
  for (int i = 0; i < L->nvars; i++) {
    const kinst *f = L->B->code[L->B->defpos[L->vars[i]]];
    int lo = at_corner(W, L, f->a, 0), hi = at_corner(W, L, f->b, 0);
    int a = put_op(W, KO_PRIM, P_GE, S_BOOL, lo, put_op(W, KO_CONST, P_ADD, S_I64, -1, -1, -RANGE), 0);
    int b = put_op(W, KO_PRIM, P_LE, S_BOOL, hi, put_op(W, KO_CONST, P_ADD, S_I64, -1, -1, RANGE), 0);
    int both = put_op(W, KO_PRIM, P_LAND, S_BOOL, a, b, 0);
    t = t < 0 ? both : put_op(W, KO_PRIM, P_LAND, S_BOOL, t, both, 0);
  }
  return t;
}

/* The test that comparison c holds all through the loop: at both corners, with the
 * moving side not wrapped between them. -1 when c is not of that form. */
static int corner_test(writer *W, loopview *L, int c) {
  const kinst *in = L->B->code[L->B->defpos[c]];
  int at = L->B->defpos[c];
  L->nvars = 0;
  if (!affine(L, in->a, at, 16)) return -1;
  int na = L->nvars;
  if (!affine(L, in->b, at, 16) || (na > 0 && L->nvars > na)) return -1;
  int moving = na > 0 ? in->a : L->nvars > 0 ? in->b : -1;
  int lo[2], hi[2];
  for (int s = 0; s < 2; s++) {
    lo[s] = at_corner(W, L, s == 0 ? in->a : in->b, 0);
    hi[s] = at_corner(W, L, s == 0 ? in->a : in->b, 1);
  }
  int t = put_op(W, KO_PRIM, P_LAND, S_BOOL, put_op(W, KO_PRIM, in->prim, S_BOOL, lo[0], lo[1], 0),
                 put_op(W, KO_PRIM, in->prim, S_BOOL, hi[0], hi[1], 0), 0);
  if (moving < 0) return t;
  int m = moving == in->a ? 0 : 1;
  t = put_op(W, KO_PRIM, P_LAND, S_BOOL, t, put_op(W, KO_PRIM, P_LE, S_BOOL, lo[m], hi[m], 0), 0);
  return put_op(W, KO_PRIM, P_LAND, S_BOOL, t, ranges_test(W, L), 0);
}

/* The comparisons (leaves) a check's condition v is made of; 0 if it has other parts. */
static int leaves(const bctx *B, int v, int pos, int *out, int *n) {
  if (bx_known(B, v, pos) >= 0) return 1;
  if (v < 0 || B->dk[v] != D_ONE) return 0;
  const kinst *in = B->code[B->defpos[v]];
  if (in->op == KO_MOV) return leaves(B, in->a, pos, out, n);
  if (in->op != KO_PRIM) return 0;
  if (in->prim == P_LNOT) return leaves(B, in->a, pos, out, n);
  if (in->prim == P_LAND || in->prim == P_LOR)
    return leaves(B, in->a, pos, out, n) && leaves(B, in->b, pos, out, n);
  if (!prim_has(in->prim, PF_CMP) || B->F->vt[in->a] != S_I64 || *n == MAXLEAVES) return 0;
  out[(*n)++] = v;
  return 1;
}

/* The end of the block the IF/FOR/LOOP at pos opens. */
static int end_of(const bctx *B, int pos) {
  int depth = 0;
  for (int i = pos; i < B->n; i++) {
    kop op = B->code[i]->op;
    if (op == KO_IF || op == KO_FOR || op == KO_LOOP) depth++;
    if (op == KO_END && --depth == 0) return i;
  }
  return B->n - 1;
}

/* The leaves of every check in the loop at L, or -1 if one is not made of comparisons. */
static int loop_checks(const loopview *L, int *leaf) {
  const bctx *B = L->B;
  int n = 0, checks = 0;
  for (int i = L->lo + 1; i < L->hi; i++) {
    if (B->code[i]->op != KO_IF) continue;
    int end = end_of(B, i), fails = 0;
    for (int j = i + 1; j < end; j++) fails |= B->code[j]->op == KO_FAIL;
    if (!fails) continue;
    if (!leaves(B, B->code[i]->a, i, leaf, &n)) return -1;
    checks++;
  }
  return checks > 0 ? n : -1;
}

/* ---- the copy */

/* An FN_GTILE's loop variables and markers (lower_gtile.c) name the copy's: the pass
 * after this one stages the reads of the copy that runs when the tests hold. */
static void follow_gtile(kgtile *G, const int *map, int nold) {
  int *v[] = { &G->kb, &G->kk, &G->k, &G->mark_stage, &G->mark_from, &G->mark_to };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (*v[i] >= 0 && *v[i] < nold && map[*v[i]] >= 0) *v[i] = map[*v[i]];
}

static int mapped(const int *map, int nold, int v) {
  return v >= 0 && v < nold && map[v] >= 0 ? map[v] : v;
}

static void mark_uses(const kinst *in, unsigned char *used, int nold) {
  int refs[3] = { in->a, in->b, in->op == KO_LSET ? in->dst : -1 };   /* LSET: in part */
  for (int k = 0; k < 3; k++)
    if (refs[k] >= 0 && refs[k] < nold) used[refs[k]] = 1;
  for (int k = 0; k < in->nargs; k++)
    if (in->args[k] >= 0 && in->args[k] < nold) used[in->args[k]] = 1;
}

/* What the copy takes the result of instruction src as: 1 (a check's comparison), 0 (a
 * stretch not taken), or -1 (what it computes). */
static int taken_as(const loopview *L, const int *leaf, int nleaf, const kinst *src) {
  for (int k = 0; k < nleaf; k++)
    if (src->dst == leaf[k] && src->op == KO_PRIM) return 1;
  for (int k = 0; k < L->nassumed; k++)
    if (src->dst == L->assumed[k] && (src->op == KO_PRIM || src->op == KO_MOV)) return 0;
  return -1;
}

/* Instructions [lo, hi] of B copied, what taken_as knows written as constants. What the
 * copy defines gets a name of its own where it is defined once, inside the loop, and read
 * only there; anything else (accumulators and lane arrays among them) both copies share:
 * only one of them runs. */
static void copy_loop(writer *W, const loopview *L, const int *leaf, int nleaf, int nold,
                      int *map) {
  const bctx *B = L->B;
  unsigned char *used = calloc((size_t)nold + 1, 1);
  if (used == NULL) {
    W->oom = 1;
    return;
  }
  for (int i = 0; i < B->n; i++)
    if (!inside(L, i)) mark_uses(B->code[i], used, nold);
  for (int i = 0; i < W->F->nlanes; i += 2)   /* lane arrays: shared */
    if (W->F->lanes[i] < nold) used[W->F->lanes[i]] = 1;
  for (int v = 0; v < nold && !W->oom; v++)
    if ((B->dk[v] == D_ONE || B->dk[v] == D_FOR) && inside(L, B->defpos[v]) && !used[v])
      map[v] = new_var(W, W->F->vt[v]);
  free(used);
  for (int k = 0; k < L->nassumed && !W->oom; k++) {   /* set before the loop: false in it */
    int c = L->assumed[k];
    if (L->set[c]) continue;
    map[c] = new_var(W, S_BOOL);
    kinst *z = put(W, KO_CONST);
    if (z != NULL) z->dst = map[c];
  }
  for (int i = L->lo; i <= L->hi && !W->oom; i++) {
    const kinst *src = B->code[i];
    kinst *in = put(W, src->op);
    if (in == NULL) return;
    *in = *src;
    in->dst = mapped(map, nold, src->dst);
    in->a = mapped(map, nold, src->a);
    in->b = mapped(map, nold, src->b);
    if (src->nargs > 0) {
      in->args = kplan_alloc(W->P, sizeof *in->args * (size_t)src->nargs);
      if (in->args == NULL) { W->oom = 1; return; }
      for (int k = 0; k < src->nargs; k++) in->args[k] = mapped(map, nold, src->args[k]);
    }
    int known = taken_as(L, leaf, nleaf, src);
    if (known >= 0) {
      int dst = in->dst;
      memset(in, 0, sizeof *in);
      in->op = KO_CONST;
      in->dst = dst;
      in->a = in->b = -1;
      in->imm.i = known;
    }
  }
}

static int version_loop(kplan *P, kfn *F, bctx *B, loopview *Lp);

/* A cpu tile's loop where its test fails: not a second copy of the tiles with their
 * checks (the copy doubled a contraction's C, and a gradient's product of a transpose
 * came to 2 MB, which is compiled at -O0), but word to the executor, which then folds
 * the rows in the plain loop (launch.c), with the checks and reports of any fold. */
static void untiled(writer *W) {
  int key = put_op(W, KO_CONST, P_ADD, S_I64, -1, -1, INT64_MAX);
  kinst *in = put(W, KO_FAIL);
  if (in == NULL) return;
  in->a = key;
  in->check = CHECK_UNTILED;
  in->b = 1;
}

/* The loop at body position `at` versioned: returns the body position after it, or -1
 * (nothing done: it does not qualify), or -2 out of memory. */
static int version(kplan *P, kfn *F, bctx *B, int at) {
  loopview L = { B, B->npro + at, end_of(B, B->npro + at), NULL, { 0 }, 0, NULL, 0, { 0 },
                 0, 0 };
  unsigned char *set = calloc((size_t)F->nvars + 1, 1);
  if (set == NULL) return -2;
  for (int i = L.lo; i <= L.hi; i++)
    if (kinst_def(B->code[i]) >= 0 && kinst_def(B->code[i]) < F->nvars) set[kinst_def(B->code[i])] = 1;
  L.set = set;
  int rc = version_loop(P, F, B, &L);
  free(set);
  return rc;
}

static int version_loop(kplan *P, kfn *F, bctx *B, loopview *Lp) {
  loopview L = *Lp;
  int leaf[MAXLEAVES];
  int n = loop_checks(&L, leaf);
  if (n <= 0) return -1;
  /* through a checked index's select on the cpu backend only, where a failed tile test
   * costs no second copy of the tiles (untiled below): on an OpenCL CPU device the copies
   * kept lane tiles that had been dropped, too big for PoCL: a small MLP's first call
   * there went 5.3 -> 28 s */
  L.leaf = leaf;
  L.nleaf = P->caps.lane_segments ? n : 0;
  /* (as through a select, for the same reason; not in a tile, whose loop where the test
   * fails is not the same loop but the plain one of its rows: a condition true there, one
   * that is no stretch, sent a GMM gradient's tiles there, 6x slower) */
  L.stretch = P->caps.lane_segments && F->role != FN_TILE;
  writer W = { P, F, { NULL, 0, 0 }, 0 };
  int nold = F->nvars, test = -1;
  for (int k = 0; k < n; k++) {
    int t = corner_test(&W, &L, leaf[k]);
    if (t < 0) {                       /* not testable: the loop stays as it is */
      free(W.out.v);
      F->nvars = nold;
      return -1;
    }
    test = test < 0 ? t : put_op(&W, KO_PRIM, P_LAND, S_BOOL, test, t, 0);
  }
  for (int k = 0; k < L.nassumed; k++) {   /* and the stretches the copy leaves out */
    int c = put_op(&W, KO_PRIM, P_LNOT, S_BOOL, at_corner(&W, &L, L.assumed[k], 0), -1, 0);
    test = put_op(&W, KO_PRIM, P_LAND, S_BOOL, test, c, 0);
  }
  kinst *in = put(&W, KO_IF);
  if (in != NULL) in->a = test;
  int *map = malloc(sizeof *map * (size_t)(nold + 1));
  if (map == NULL) W.oom = 1;
  else {
    for (int v = 0; v < nold; v++) map[v] = -1;
    copy_loop(&W, &L, leaf, n, nold, map);
    if (F->tile_lane >= 0 && map[F->tile_lane] >= 0) F->tile_lane = map[F->tile_lane];
    if (F->gtile != NULL) follow_gtile(F->gtile, map, nold);
  }
  free(map);
  put(&W, KO_ELSE);
  if (F->role == FN_TILE && P->caps.lane_segments) untiled(&W);
  else
    for (int i = L.lo; i <= L.hi && !W.oom; i++) {
      kinst *c = put(&W, B->code[i]->op);
      if (c == NULL) break;
      *c = *B->code[i];
      if (c->op == KO_FAIL) c->b = 1;    /* reached only when the test before failed */
    }
  put(&W, KO_END);
  if (W.oom) {
    free(W.out.v);
    return -2;
  }
  /* the body: before the loop, the test and both loops, after it */
  klist *body = &F->body;
  int a = L.lo - B->npro, b = L.hi - B->npro, tail = body->n - b - 1;
  int len = a + W.out.n + tail;
  if (vec_reserve((void **)&body->v, &body->cap, len, 64, sizeof *body->v) != 0) {
    free(W.out.v);
    return -2;
  }
  memmove(&body->v[a + W.out.n], &body->v[b + 1], sizeof *body->v * (size_t)tail);
  memcpy(&body->v[a], W.out.v, sizeof *body->v * (size_t)W.out.n);
  body->n = len;
  free(W.out.v);
  return a + W.out.n;
}

/* The facts (bx_build) are built again only after a loop was versioned: a loop left as
 * it was changes nothing they say (version restores the variables it made), and
 * building them for every loop of a large kernel (a contraction's tiles) was an eighth
 * of its program's build. */
int pass_hoist(kplan *P, kfn *F) {
  bctx B;
  int rc = bx_build(&B, F);
  for (int at = 0; rc == LACC_OK && at < F->body.n;) {
    while (at < F->body.n && F->body.v[at].op != KO_FOR) at++;
    if (at >= F->body.n) break;
    int next = version(P, F, &B, at);
    if (next == -2) rc = LACC_ERR_MEMORY;
    else if (next >= 0) {
      bx_free(&B);
      rc = bx_build(&B, F);
    }
    at = next >= 0 ? next : at + 1;
  }
  bx_free(&B);
  return rc;
}
