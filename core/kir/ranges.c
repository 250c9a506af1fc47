/* ranges.c: a range test 0 <= x < n made one comparison.
 *
 * Owns: after bounds.c and hoist.c, each check left of the form `0 <= x and x < n`
 * (both 64-bit integers, n proved non-negative) rewritten as one unsigned comparison of
 * their bits, x <u n: a negative x is above every such n as an unsigned number. A C
 * compiler does not find this itself once the two comparisons are values of their own,
 * and a check left in a loop of data-dependent indices (a histogram, a gather) then
 * costs one compare and one branch per element instead of two.
 * Must not: change any value: the rewrite happens only where n >= 0 is proved, and the
 * two comparisons stay for whatever else reads them (the C compiler drops them if
 * nothing does). Shape functions are left alone: OpenCL runs them on the host through
 * opencl/hostfn.c, which has no need of the speed.
 */
#include <stdlib.h>
#include <string.h>
#include "kir/analysis.h"
#include "kir/passes.h"
#include "base/vec.h"

/* The x of `x >= 0` (or `0 <= x`) defined once by c, usable at pos, else -1. */
static int nonneg_test(const bctx *B, int c, int pos, int *bound) {
  if (c < 0 || B->dk[c] != D_ONE || !bx_usable(B, c, pos)) return -1;
  const kinst *in = B->code[B->defpos[c]];
  int64_t k;
  *bound = -1;
  if (in->op != KO_PRIM) return -1;
  if (in->prim == P_GE && bx_int_const(B, in->b, &k) && k == 0) return in->a;
  if (in->prim == P_LE && bx_int_const(B, in->a, &k) && k == 0) return in->b;
  if (in->prim == P_LT) { *bound = in->b; return in->a; }
  if (in->prim == P_GT) { *bound = in->a; return in->b; }
  return -1;
}

/* Whether LAND at pos is `x >= 0 and x < n` (either order) with n >= 0: then *x, *n. */
static int range_test(bctx *B, int pos, int *x, int *n) {
  const kinst *in = B->code[pos];
  if (in->op != KO_PRIM || in->prim != P_LAND) return 0;
  int ba, bb;
  int xa = nonneg_test(B, in->a, pos, &ba), xb = nonneg_test(B, in->b, pos, &bb);
  if (xa < 0 || xb < 0 || xa != xb || (ba < 0) == (bb < 0)) return 0;
  *x = xa;
  *n = ba >= 0 ? ba : bb;
  if (B->F->vt[*x] != S_I64 || B->F->vt[*n] != S_I64) return 0;
  if (!bx_usable(B, *x, pos) || !bx_usable(B, *n, pos)) return 0;
  return bx_nonneg(B, *n, pos);
}

/* x = (i64)(a + K) - K with a of a narrower integer type and 0 < K < lim: the lowering's
 * 0-based index from a 1-based one (a user's `ys[i] + 1`). The narrow sum wraps for
 * a >= lim - K, where lim = 2^(bits-1) (signed) or 2^bits: x is then negative. So for
 * n >= 0, x <u n holds exactly when (i64)a <u min(n, lim - K), and then x == (i64)a:
 * the test and the code it guards need neither the sum nor its wrap. Returns a or -1. */
static int narrow_peel(const bctx *B, int x, int pos, int64_t *bound) {
  int64_t k, k2, lo, hi;
  const kinst *in = B->dk[x] == D_ONE ? B->code[B->defpos[x]] : NULL;
  if (in == NULL || in->op != KO_PRIM || in->prim != P_SUB || !bx_int_const(B, in->b, &k) || k <= 0)
    return -1;
  int c = in->a;
  if (c < 0 || B->dk[c] != D_ONE || !bx_usable(B, c, pos)) return -1;
  in = B->code[B->defpos[c]];
  if (in->op != KO_CAST) return -1;
  int s = in->a;
  scalar_kind t = s >= 0 ? B->F->vt[s] : S_I64;
  if (!scalar_is_int(t) || scalar_bits(t) >= 64 || B->dk[s] != D_ONE || !bx_usable(B, s, pos))
    return -1;
  in = B->code[B->defpos[s]];
  if (in->op != KO_PRIM || in->prim != P_ADD) return -1;
  int a = bx_int_const(B, in->b, &k2) ? in->a : bx_int_const(B, in->a, &k2) ? in->b : -1;
  hi = scalar_is_signed(t) ? (int64_t)1 << (scalar_bits(t) - 1) : (int64_t)1 << scalar_bits(t);
  lo = hi - k;
  if (a < 0 || k2 != k || lo <= 0 || !bx_usable(B, a, pos)) return -1;
  *bound = lo;
  return a;
}

/* The IF after pos in its block that tests v (v not set again before it): its
 * position, and the end of its then-side in *end; else -1. */
static int if_on(const bctx *B, int v, int pos, int *end) {
  for (int j = pos + 1; j < B->n; j++) {
    const kinst *in = B->code[j];
    if (B->blk[j] != B->blk[pos]) return -1;
    if (kinst_def(in) == v) return -1;
    if (in->op != KO_IF || in->a != v) continue;
    int depth = 0;
    for (int e = j + 1; e < B->n; e++) {
      kop op = B->code[e]->op;
      if (op == KO_IF || op == KO_FOR || op == KO_LOOP) depth++;
      else if ((op == KO_ELSE || op == KO_END) && depth-- == 0) { *end = e; return j; }
    }
    return -1;
  }
  return -1;
}

/* One rewrite: the LAND at pos becomes bits(x) <u bits(n); with a peel, x is (i64)a and
 * n is min(n, bound), and inside the IF's then-side (from, to) x reads as (i64)a. */
typedef struct {
  int pos, x, n;
  int a, wide;                 /* the peel: a, and the variable (i64)a (-1: none) */
  int64_t bound;
  int from, to;
} rtest;

typedef struct {
  kfn *F;
  klist out;
  int oom;
} writer;

static kinst *put(writer *W, const kinst *from) {
  if (vec_reserve((void **)&W->out.v, &W->out.cap, W->out.n + 1, 64, sizeof *W->out.v) != 0) {
    W->oom = 1;
    return NULL;
  }
  kinst *in = &W->out.v[W->out.n++];
  *in = *from;
  return in;
}

static int new_var(kfn *F, scalar_kind k) {
  if (vec_reserve((void **)&F->vt, &F->vcap, F->nvars + 1, 64, sizeof *F->vt) != 0) return -1;
  F->vt[F->nvars] = k;
  return F->nvars++;
}

static int put_new(writer *W, kop op, prim_op p, scalar_kind k, int a, int b, int64_t imm) {
  int d = new_var(W->F, k);
  if (d < 0) {
    W->oom = 1;
    return 0;
  }
  kinst in = { .op = op, .prim = p, .dst = d, .a = a, .b = b };
  in.imm.i = imm;
  put(W, &in);
  return d;
}

static void put_test(writer *W, const rtest *t, int dst) {
  int x = t->x, n = t->n;
  if (t->wide >= 0) {
    kinst w = { .op = KO_CAST, .dst = t->wide, .a = t->a, .b = -1 };
    put(W, &w);
    x = t->wide;
    int lim = put_new(W, KO_CONST, P_ADD, S_I64, -1, -1, t->bound);
    n = put_new(W, KO_PRIM, P_MIN, S_I64, n, lim, 0);
  }
  int ux = put_new(W, KO_TOBITS, P_ADD, S_U64, x, -1, 0);
  int un = put_new(W, KO_TOBITS, P_ADD, S_U64, n, -1, 0);
  kinst lt = { .op = KO_PRIM, .prim = P_LT, .dst = dst, .a = ux, .b = un };
  put(W, &lt);
}

static void subst(kinst *in, int from, int to) {
  if (in->op == KO_CONST || in->op == KO_KCONST || in->op == KO_EXTENT) return;
  if (in->a == from) in->a = to;
  if (in->b == from) in->b = to;
  for (int i = 0; i < in->nargs; i++)
    if (in->args[i] == from) in->args[i] = to;
}

/* One list (prologue: base 0, or body: base npro) written again with the tests. */
static int rewrite(kfn *F, klist *l, int base, const rtest *T, int nt) {
  writer W = { F, { NULL, 0, 0 }, 0 };
  for (int i = 0; i < l->n && !W.oom; i++) {
    int pos = base + i, done = 0;
    for (int k = 0; k < nt && !done; k++)
      if (T[k].pos == pos) {
        put_test(&W, &T[k], l->v[i].dst);
        done = 1;
      }
    if (done) continue;
    kinst *in = put(&W, &l->v[i]);
    for (int k = 0; in != NULL && k < nt; k++)
      if (T[k].wide >= 0 && pos > T[k].from && pos < T[k].to) subst(in, T[k].x, T[k].wide);
  }
  if (W.oom) {
    free(W.out.v);
    return LACC_ERR_MEMORY;
  }
  free(l->v);
  *l = W.out;
  return LACC_OK;
}

int pass_ranges(kplan *P, kfn *F) {
  (void)P;
  if (F->role == FN_SHAPE) return LACC_OK;
  bctx B;
  int rc = bx_build(&B, F), nt = 0;
  rtest *T = NULL;
  int cap = 0;
  for (int i = 0; rc == LACC_OK && i < B.n; i++) {
    rtest t = { .pos = i, .a = -1, .wide = -1, .from = -1, .to = -1 };
    if (!range_test(&B, i, &t.x, &t.n)) continue;
    t.a = narrow_peel(&B, t.x, i, &t.bound);
    if (t.a >= 0 && (t.wide = new_var(F, S_I64)) < 0) rc = LACC_ERR_MEMORY;
    if (t.wide >= 0) t.from = if_on(&B, B.code[i]->dst, i, &t.to);
    if (rc == LACC_OK && vec_reserve((void **)&T, &cap, nt + 1, 8, sizeof *T) != 0)
      rc = LACC_ERR_MEMORY;
    if (rc == LACC_OK) T[nt++] = t;
  }
  int npro = B.npro;
  bx_free(&B);
  if (rc == LACC_OK && nt > 0) rc = rewrite(F, &F->pro, 0, T, nt);
  if (rc == LACC_OK && nt > 0) rc = rewrite(F, &F->body, npro, T, nt);
  free(T);
  return rc;
}
