/* bounds.c: the checks of a kernel that can never fail, proved and removed.
 *
 * Owns: after the lowering, for every comparison of two 64-bit integers in a function,
 * a proof that it always has one value, found on demand as in "ABCD: Eliminating Array
 * Bounds Checks on Demand": a search over the inequalities x <= y + c that the
 * instructions and the lowering's facts (kfn.facts: 0 <= v < hi by construction, such as
 * a multi-index unravelled from an index inside its shape) establish. A comparison
 * proved becomes a constant, and the branches the constants decide are removed, so a
 * check that cannot fail has no code left. Per step it counts the checks its loops had
 * and keep (explain).
 * Must not: assume anything the code does not guarantee for every input: a check that
 * can fail stays, and fails with its message. Integer arithmetic wraps, so a step
 * through an addition is taken only where the operand is far from the ends of int64.
 */
#include <stdlib.h>
#include <string.h>
#include "kir/analysis.h"
#include "kir/passes.h"

enum {
  ZERO = -2,                 /* the node of the number 0 */
  ANY = -3,                  /* target of the wrap tests: any variable at all */
  DEPTH = 64,                /* how deep one proof may search */
  BUDGET = 40000             /* how many steps one comparison may take */
};
/* A proof steps through an addition only for operands within FAR of zero; the offsets it
 * carries stay within 2 FAR, so that adding two of them never overflows. */
static const int64_t FAR = (int64_t)1 << 60;

/* ---- what the code says about a variable */

static int is_ancestor(const bctx *B, int a, int b) {
  for (; b >= 0; b = B->up[b])
    if (b == a) return 1;
  return 0;
}

/* Whether v's value at instruction pos is the one its single definition gave it. */
int bx_usable(const bctx *B, int v, int pos) {
  if (v == ZERO) return 1;
  if (v < 0 || B->dk[v] == D_NONE || B->defpos[v] >= pos) return 0;
  return is_ancestor(B, B->scope[v], B->blk[pos]);
}

int bx_int_const(const bctx *B, int v, int64_t *k) {
  if (v < 0 || B->dk[v] != D_ONE) return 0;
  const kinst *in = B->code[B->defpos[v]];
  if (in->op != KO_CONST || !scalar_is_int(B->F->vt[v])) return 0;
  *k = in->imm.i;
  return *k > -FAR && *k < FAR;
}

/* The range of an integer type narrower than 64 bits converted to i64 without loss. */
static int narrow_range(scalar_kind k, int64_t *lo, int64_t *hi) {
  if (!scalar_is_int(k) || scalar_bits(k) >= 64) return 0;
  int bits = scalar_bits(k);
  if (scalar_is_signed(k)) {
    *lo = -((int64_t)1 << (bits - 1));
    *hi = ((int64_t)1 << (bits - 1)) - 1;
  } else {
    *lo = 0;
    *hi = ((int64_t)1 << bits) - 1;
  }
  return 1;
}

/* The value of bool v at pos when the code fixes it, else -1. */
int bx_known(const bctx *B, int v, int pos) {
  if (v < 0 || B->dk[v] != D_ONE || !bx_usable(B, v, pos)) return -1;
  int e = B->falseafter[v];   /* after IF v { ... RETURN } END, v is false */
  if (e >= 0 && pos > e && is_ancestor(B, B->blk[e], B->blk[pos])) return 0;
  const kinst *in = B->code[B->defpos[v]];
  if (in->op == KO_MOV) return bx_known(B, in->a, B->defpos[v]);
  return in->op == KO_CONST && B->F->vt[v] == S_BOOL ? (in->imm.i != 0) : -1;
}

static int le(bctx *B, int x, int y, int64_t c, int depth);
static int ge(bctx *B, int x, int y, int64_t c, int depth);

/* The lowering's fact about x, if it may be used here: 0 <= x <= facthi + factoff. */
static int fact(const bctx *B, int x) {
  return B->facthi[x] >= 0 && (B->dk[x] != D_PARAM || B->body);
}

static int far(int64_t c) { return c < -2 * FAR || c > 2 * FAR; }

/* A constant upper (hi) or lower bound of v, found by structure alone. */
static int cbound(bctx *B, int v, int hi, int64_t *out, int depth) {
  if (v == ZERO) { *out = 0; return 1; }
  if (depth <= 0 || --B->budget < 0 || v < 0) return 0;
  int64_t a, b;
  if (fact(B, v)) {
    if (!hi) { *out = 0; return 1; }
    if (cbound(B, B->facthi[v], 1, &a, depth - 1)) { *out = a + B->factoff[v]; return 1; }
  }
  const kinst *in = B->code[B->defpos[v] < 0 ? 0 : B->defpos[v]];
  switch (B->dk[v]) {
  case D_FOR:
    if (hi) return in->imm.i >= 1 && cbound(B, in->b, 1, &a, depth - 1) && (*out = a - in->imm.i, 1);
    return cbound(B, in->a, 0, out, depth - 1);
  case D_SEL:
    if (!cbound(B, B->code[B->defpos[v] + 1]->a, hi, &a, depth - 1) ||
        !cbound(B, B->code[B->defpos[v] + 3]->a, hi, &b, depth - 1)) return 0;
    *out = hi ? (a > b ? a : b) : (a < b ? a : b);
    return 1;
  case D_ONE: break;
  default: return 0;
  }
  if (B->F->vt[v] != S_I64) return 0;
  switch (in->op) {
  case KO_CONST: return bx_int_const(B, v, out);
  case KO_MOV: return cbound(B, in->a, hi, out, depth - 1);
  case KO_EXTENT:
    if (hi) return 0;
    *out = 0;
    return 1;
  case KO_CAST: {
    int64_t lo, h;
    if (!narrow_range(B->F->vt[in->a], &lo, &h)) return 0;
    *out = hi ? h : lo;
    return 1;
  }
  case KO_PRIM: break;
  default: return 0;
  }
  int ka = cbound(B, in->a, hi, &a, depth - 1);
  switch (in->prim) {
  case P_ADD:
    if (!ka || !cbound(B, in->b, hi, &b, depth - 1) || far(a) || far(b)) return 0;
    *out = a + b;
    return 1;
  case P_SUB:
    if (!ka || !cbound(B, in->b, !hi, &b, depth - 1) || far(a) || far(b)) return 0;
    *out = a - b;
    return 1;
  case P_MIN: case P_MAX: {
    int kb = cbound(B, in->b, hi, &b, depth - 1);
    int pick_min = in->prim == P_MIN;
    if (pick_min == hi) {          /* min's upper, max's lower: either bound will do */
      if (!ka && !kb) return 0;
      *out = !ka ? b : !kb ? a : pick_min ? (a < b ? a : b) : (a > b ? a : b);
      return 1;
    }
    if (!ka || !kb) return 0;
    *out = pick_min ? (a < b ? a : b) : (a > b ? a : b);
    return 1;
  }
  case P_REM: case P_QUOT: {
    int64_t lo;
    if (!cbound(B, in->a, 0, &lo, depth - 1) || lo < 0) return 0;
    if (!hi) { *out = 0; return 1; }
    if (in->prim == P_QUOT) {
      int64_t m;
      if (!cbound(B, in->b, 0, &m, depth - 1) || m < 1 || !ka) return 0;
      *out = a;
      return 1;
    }
    return ka && (*out = a, 1);
  }
  default: return 0;
  }
}

/* Wrapping: x = a + k stays below INT64_MAX when a <= v - k for some variable v
 * (le(a, ANY, -k)), and above INT64_MIN when a >= v + k' (ge(a, ANY, k')). */
static int fits_above(bctx *B, int a, int64_t k, int depth) {
  return k <= 0 || le(B, a, ANY, -k, depth - 1);
}

static int fits_below(bctx *B, int a, int64_t k, int depth) {
  return k <= 0 || ge(B, a, ANY, k, depth - 1);
}

/* x = a + b <= a + hi(b) <= y + c, where the sum cannot wrap below (b >= lo(b)). */
static int add_le(bctx *B, int a, int b, int y, int64_t c, int depth) {
  int64_t hb, lb;
  return cbound(B, b, 1, &hb, depth - 1) && !far(hb) && cbound(B, b, 0, &lb, depth - 1) &&
         !far(lb) && fits_below(B, a, -lb, depth) && le(B, a, y, c - hb, depth - 1);
}

/* x = a + b >= a + lo(b) >= y + c, where the sum cannot wrap above. */
static int add_ge(bctx *B, int a, int b, int y, int64_t c, int depth) {
  int64_t hb, lb;
  return cbound(B, b, 0, &lb, depth - 1) && !far(lb) && cbound(B, b, 1, &hb, depth - 1) &&
         !far(hb) && fits_above(B, a, hb, depth) && ge(B, a, y, c - lb, depth - 1);
}

/* When x says nothing more of itself (an extent, a load, a parameter), x <= y + c may
 * still follow from what y says of itself: y >= x - c. One turn per proof, so that the
 * two searches do not call each other for ever. */
static int flip_ge(bctx *B, int y, int x, int64_t c, int depth) {
  if (B->flipped || y < 0) return 0;
  B->flipped = 1;
  int r = ge(B, y, x, c, depth - 1);
  B->flipped = 0;
  return r;
}

static int flip_le(bctx *B, int y, int x, int64_t c, int depth) {
  if (B->flipped || y < 0) return 0;
  B->flipped = 1;
  int r = le(B, y, x, c, depth - 1);
  B->flipped = 0;
  return r;
}

/* x <= y + c, everywhere x and y are usable together. */
static int le(bctx *B, int x, int y, int64_t c, int depth) {
  if (x == y) return c >= 0;
  if (far(c) || depth <= 0 || --B->budget < 0) return 0;
  int64_t k0;
  if (y == ANY && (x == ZERO || (x >= 0 && c >= 0) || bx_int_const(B, x, &k0))) return 1;
  if (x == ZERO) return ge(B, y, ZERO, -c, depth - 1);
  if (x < 0) return 0;
  if (fact(B, x) && le(B, B->facthi[x], y, c - B->factoff[x], depth - 1)) return 1;
  int pos = B->defpos[x];
  switch (B->dk[x]) {
  case D_FOR: {
    const kinst *in = B->code[pos];
    return in->imm.i >= 1 && bx_usable(B, in->b, pos) && le(B, in->b, y, c + in->imm.i, depth - 1);
  }
  case D_SEL: {
    int a = B->code[pos + 1]->a, b = B->code[pos + 3]->a, k = bx_known(B, B->code[pos]->a, pos);
    return (k == 0 || (bx_usable(B, a, pos + 1) && le(B, a, y, c, depth - 1))) &&
           (k == 1 || (bx_usable(B, b, pos + 3) && le(B, b, y, c, depth - 1)));
  }
  case D_ONE: break;
  default: return flip_ge(B, y, x, -c, depth);
  }
  const kinst *in = B->code[pos];
  if (B->F->vt[x] != S_I64) return 0;
  if (in->op == KO_CONST) {
    int64_t k;
    return bx_int_const(B, x, &k) && ge(B, y, ZERO, k - c, depth - 1);
  }
  if (in->op == KO_CAST) {
    int64_t lo, hi;
    return narrow_range(B->F->vt[in->a], &lo, &hi) && ge(B, y, ZERO, hi - c, depth - 1);
  }
  if (in->op == KO_MOV) return bx_usable(B, in->a, pos) && le(B, in->a, y, c, depth - 1);
  if (in->op != KO_PRIM || !bx_usable(B, in->a, pos) || (in->b >= 0 && !bx_usable(B, in->b, pos)))
    return flip_ge(B, y, x, -c, depth);
  int a = in->a, b = in->b;
  int64_t k;
  switch (in->prim) {
  case P_ADD: return add_le(B, a, b, y, c, depth) || add_le(B, b, a, y, c, depth);
  case P_SUB: {  /* x = a - b <= a - lo(b) */
    int64_t hb;
    if (cbound(B, b, 0, &k, depth - 1) && !far(k) && cbound(B, b, 1, &hb, depth - 1) &&
        !far(hb) && fits_below(B, a, hb, depth) && le(B, a, y, c + k, depth - 1))
      return 1;
    /* a, b >= 0: a - b cannot wrap, and is at most a - lo(b) (lo(b) >= 0) */
    if (!ge(B, a, ZERO, 0, depth - 1) || !ge(B, b, ZERO, 0, depth - 1)) return 0;
    if (!cbound(B, b, 0, &k, depth - 1) || far(k) || k < 0) k = 0;
    return le(B, a, y, c + k, depth - 1);
  }
  case P_MIN: return le(B, a, y, c, depth - 1) || le(B, b, y, c, depth - 1);
  case P_MAX: return le(B, a, y, c, depth - 1) && le(B, b, y, c, depth - 1);
  case P_REM:   /* a >= 0: 0 <= x <= a, and x < b when b >= 1 */
    if (!ge(B, a, ZERO, 0, depth - 1)) return 0;
    return le(B, a, y, c, depth - 1) || (ge(B, b, ZERO, 1, depth - 1) && le(B, b, y, c + 1, depth - 1));
  case P_QUOT:  /* a >= 0, b >= 1: x <= a */
    return ge(B, a, ZERO, 0, depth - 1) && ge(B, b, ZERO, 1, depth - 1) && le(B, a, y, c, depth - 1);
  default: return 0;
  }
}

/* x >= y + c. */
static int ge(bctx *B, int x, int y, int64_t c, int depth) {
  if (x == y) return c <= 0;
  if (far(c) || depth <= 0 || --B->budget < 0) return 0;
  int64_t k0;
  if (y == ANY && (x == ZERO || (x >= 0 && c <= 0) || bx_int_const(B, x, &k0))) return 1;
  if (y == ANY) return ge(B, x, ZERO, 0, depth - 1);   /* x >= 0 > INT64_MIN + c */
  if (x == ZERO) return le(B, y, ZERO, -c, depth - 1);
  if (x < 0) return 0;
  if (fact(B, x) && le(B, y, ZERO, -c, depth - 1)) return 1;   /* x >= 0 */
  int pos = B->defpos[x];
  switch (B->dk[x]) {
  case D_FOR: {
    const kinst *in = B->code[pos];
    return bx_usable(B, in->a, pos) && ge(B, in->a, y, c, depth - 1);
  }
  case D_SEL: {
    int a = B->code[pos + 1]->a, b = B->code[pos + 3]->a, k = bx_known(B, B->code[pos]->a, pos);
    return (k == 0 || (bx_usable(B, a, pos + 1) && ge(B, a, y, c, depth - 1))) &&
           (k == 1 || (bx_usable(B, b, pos + 3) && ge(B, b, y, c, depth - 1)));
  }
  case D_ONE: break;
  default: return flip_le(B, y, x, -c, depth);
  }
  const kinst *in = B->code[pos];
  if (B->F->vt[x] != S_I64) return 0;
  if (in->op == KO_CONST) {
    int64_t k;
    return bx_int_const(B, x, &k) && le(B, y, ZERO, k - c, depth - 1);
  }
  if (in->op == KO_EXTENT) return le(B, y, ZERO, -c, depth - 1) || flip_le(B, y, x, -c, depth);
  if (in->op == KO_CAST) {
    int64_t lo, hi;
    return narrow_range(B->F->vt[in->a], &lo, &hi) && le(B, y, ZERO, lo - c, depth - 1);
  }
  if (in->op == KO_MOV) return bx_usable(B, in->a, pos) && ge(B, in->a, y, c, depth - 1);
  if (in->op != KO_PRIM || !bx_usable(B, in->a, pos) || (in->b >= 0 && !bx_usable(B, in->b, pos)))
    return flip_le(B, y, x, -c, depth);
  int a = in->a, b = in->b;
  int64_t k;
  switch (in->prim) {
  case P_ADD: return add_ge(B, a, b, y, c, depth) || add_ge(B, b, a, y, c, depth);
  case P_SUB: {  /* x = a - b >= a - hi(b) */
    int64_t lb;
    if (cbound(B, b, 1, &k, depth - 1) && !far(k) && cbound(B, b, 0, &lb, depth - 1) &&
        !far(lb) && fits_above(B, a, -lb, depth) && ge(B, a, y, c + k, depth - 1))
      return 1;
    /* a, b >= 0: a - b cannot wrap; x >= c when b <= a - c (n - i - 1 >= 0) */
    if (y != ZERO && y != ANY) return 0;
    if (!ge(B, a, ZERO, 0, depth - 1) || !ge(B, b, ZERO, 0, depth - 1)) return 0;
    return y == ANY || le(B, b, a, -c, depth - 1);
  }
  case P_MIN: return ge(B, a, y, c, depth - 1) && ge(B, b, y, c, depth - 1);
  case P_MAX: return ge(B, a, y, c, depth - 1) || ge(B, b, y, c, depth - 1);
  case P_REM:   /* C's remainder has the dividend's sign */
    return ge(B, a, ZERO, 0, depth - 1) && le(B, y, ZERO, -c, depth - 1);
  case P_QUOT:
    return ge(B, a, ZERO, 0, depth - 1) && ge(B, b, ZERO, 0, depth - 1) &&
           le(B, y, ZERO, -c, depth - 1);
  default: return 0;
  }
}

/* ---- the function's structure */

/* A select the lowering writes: IF c, MOV v a, ELSE, MOV v b, END (lw_k_select). */
static int is_select(const bctx *B, int v, int p) {
  if (p < 1 || p + 3 >= B->n || B->ndef[v] != 2) return 0;
  const kinst *const *c = (const kinst *const *)B->code;
  return c[p - 1]->op == KO_IF && c[p]->op == KO_MOV && c[p]->dst == v &&
         c[p + 1]->op == KO_ELSE && c[p + 2]->op == KO_MOV && c[p + 2]->dst == v &&
         c[p + 3]->op == KO_END && (p - 1 < B->npro) == (p + 3 < B->npro);
}

int bx_build(bctx *B, kfn *F) {
  memset(B, 0, sizeof *B);
  B->F = F;
  int nv = F->nvars;
  B->npro = F->pro.n;
  B->n = F->pro.n + F->body.n;
  B->code = malloc(sizeof *B->code * (size_t)(B->n + 1));
  B->blk = malloc(sizeof *B->blk * (size_t)(B->n + 1));
  B->up = malloc(sizeof *B->up * (size_t)(B->n + 2));
  B->ndef = calloc((size_t)nv + 1, sizeof *B->ndef);
  B->defpos = malloc(sizeof *B->defpos * ((size_t)nv + 1));
  B->scope = calloc((size_t)nv + 1, sizeof *B->scope);
  B->facthi = malloc(sizeof *B->facthi * ((size_t)nv + 1));
  B->factoff = calloc((size_t)nv + 1, sizeof *B->factoff);
  B->dk = calloc((size_t)nv + 1, 1);
  B->falseafter = malloc(sizeof *B->falseafter * ((size_t)nv + 1));
  if (!B->falseafter || !B->code || !B->blk || !B->up || !B->ndef || !B->defpos || !B->scope || !B->facthi ||
      !B->factoff || !B->dk)
    return LACC_ERR_MEMORY;
  for (int i = 0; i < F->pro.n; i++) B->code[i] = &F->pro.v[i];
  for (int i = 0; i < F->body.n; i++) B->code[F->pro.n + i] = &F->body.v[i];
  int cur = 0, nblk = 1;
  B->up[0] = -1;
  for (int v = 0; v < nv; v++) B->facthi[v] = B->falseafter[v] = -1;
  for (int v = 0; v < 4 && v < nv; v++) {   /* p0..p3, set on entry */
    B->ndef[v] = 1;
    B->defpos[v] = -1;
  }
  for (int i = 0; i < B->n; i++) {
    const kinst *in = B->code[i];
    if (in->op == KO_ELSE || in->op == KO_END) {
      if (cur == 0) return LACC_ERR_BACKEND;
      cur = B->up[cur];
    }
    B->blk[i] = cur;
    if (in->op == KO_IF || in->op == KO_ELSE || in->op == KO_FOR || in->op == KO_LOOP) {
      B->up[nblk] = cur;
      cur = nblk++;
    }
    int d = kinst_def(in);
    if (d >= 0 && d < nv) {
      B->ndef[d]++;
      B->defpos[d] = i;
      B->scope[d] = in->op == KO_FOR ? cur : B->blk[i];
    }
  }
  for (int v = 0; v < nv; v++) {
    if (B->ndef[v] == 1) {
      B->dk[v] = v < 4 && B->defpos[v] < 0 ? D_PARAM
               : B->code[B->defpos[v]]->op == KO_FOR ? D_FOR : D_ONE;
    } else if (B->ndef[v] == 2 && is_select(B, v, B->defpos[v] - 2)) {
      B->dk[v] = D_SEL;
      B->defpos[v] -= 3;   /* the IF */
      B->scope[v] = B->blk[B->defpos[v]];
    }
  }
  for (int i = 0; i + 2 < B->n; i++) {   /* IF v, ..., RETURN, END: v is false after */
    const kinst *in = B->code[i];
    if (in->op != KO_IF || in->a < 0 || in->a >= nv || B->dk[in->a] != D_ONE) continue;
    int depth = 0, ret = 0, j = i + 1;
    for (; j < B->n; j++) {
      kop op = B->code[j]->op;
      if (op == KO_IF || op == KO_FOR || op == KO_LOOP) depth++;
      else if (op == KO_ELSE && depth == 0) break;
      else if (op == KO_END && depth-- == 0) break;
      else if (op == KO_RETURN && depth == 0) ret = 1;
    }
    if (ret && j < B->n && B->code[j]->op == KO_END && B->falseafter[in->a] < 0)
      B->falseafter[in->a] = j;
  }
  for (int i = 0; i + 2 < F->nfacts; i += 3) {
    int v = F->facts[i], hi = F->facts[i + 1];
    if (v >= nv || B->dk[v] == D_NONE) continue;
    /* a parameter's bound is computed in the prologue: it holds in the body */
    if (bx_usable(B, hi, B->dk[v] == D_PARAM ? B->npro : B->defpos[v])) {
      B->facthi[v] = hi;
      B->factoff[v] = F->facts[i + 2];
    }
  }
  return LACC_OK;
}

void bx_free(bctx *B) {
  free(B->code);
  free(B->blk);
  free(B->up);
  free(B->ndef);
  free(B->defpos);
  free(B->scope);
  free(B->facthi);
  free(B->falseafter);
  free(B->factoff);
  free(B->dk);
}

/* ---- proving comparisons, then removing what they decide */

/* 1 or 0 when the comparison at pos always has that value, -1 when it may have either. */
static int decide(bctx *B, int pos) {
  const kinst *in = B->code[pos];
  if (in->op != KO_PRIM || !prim_has(in->prim, PF_CMP)) return -1;
  int a = in->a, b = in->b;
  if (B->F->vt[a] != S_I64 || B->F->vt[b] != S_I64) return -1;
  if (a != b && (!bx_usable(B, a, pos) || !bx_usable(B, b, pos))) return -1;
  B->budget = BUDGET;
  B->body = pos >= B->npro;
  switch (in->prim) {
  case P_LT: return le(B, a, b, -1, DEPTH) ? 1 : ge(B, a, b, 0, DEPTH) ? 0 : -1;
  case P_LE: return le(B, a, b, 0, DEPTH) ? 1 : ge(B, a, b, 1, DEPTH) ? 0 : -1;
  case P_GT: return ge(B, a, b, 1, DEPTH) ? 1 : le(B, a, b, 0, DEPTH) ? 0 : -1;
  case P_GE: return ge(B, a, b, 0, DEPTH) ? 1 : le(B, a, b, -1, DEPTH) ? 0 : -1;
  case P_EQ: return le(B, a, b, -1, DEPTH) || ge(B, a, b, 1, DEPTH) ? 0 : -1;
  case P_NE: return le(B, a, b, -1, DEPTH) || ge(B, a, b, 1, DEPTH) ? 1 : -1;
  default: return -1;
  }
}

int bx_nonneg(bctx *B, int v, int pos) {
  if (!bx_usable(B, v, pos)) return 0;
  B->budget = BUDGET;
  B->body = pos >= B->npro;
  return ge(B, v, ZERO, 0, DEPTH);
}

static void to_const(kinst *in, int v) {
  int dst = in->dst;
  memset(in, 0, sizeof *in);
  in->op = KO_CONST;
  in->dst = dst;
  in->a = in->b = -1;
  in->imm.i = v;
}

/* In order: comparisons proved replaced by their value, logical operations of known
 * operands folded, and the branches known conditions decide removed (dead marks what
 * goes); a proof later on sees the values found before it. */
static void fold(bctx *B, unsigned char *dead, int *match, int *els) {
  for (int i = 0; i < B->n; i++) {
    if (dead[i]) continue;
    kinst *in = B->code[i];
    int v = decide(B, i);
    if (v >= 0) {
      to_const(in, v);
    } else if (in->op == KO_PRIM && (in->prim == P_LAND || in->prim == P_LOR || in->prim == P_LNOT)) {
      int x = bx_known(B, in->a, i), y = in->prim == P_LNOT ? -1 : bx_known(B, in->b, i);
      int zero = in->prim == P_LAND ? 0 : 1;   /* the value that decides alone */
      if (in->prim == P_LNOT) {
        if (x >= 0) to_const(in, !x);
      } else if (x == zero || y == zero) {
        to_const(in, zero);
      } else if (x >= 0 && y >= 0) {
        to_const(in, !zero);
      } else if (x >= 0 || y >= 0) {
        int other = x >= 0 ? in->b : in->a, dst = in->dst;
        memset(in, 0, sizeof *in);
        in->op = KO_MOV;
        in->dst = dst;
        in->a = other;
        in->b = -1;
      }
    } else if (in->op == KO_IF) {
      int c = bx_known(B, in->a, i);
      if (c < 0) continue;
      int e = els[i], end = match[i];
      int from = c ? (e >= 0 ? e : end) : i, to = c ? end : (e >= 0 ? e : end);
      for (int j = from; j <= to; j++) dead[j] = 1;
      dead[i] = dead[end] = 1;
    }
  }
}

static int link(const bctx *B, int *match, int *els) {
  int *stack = malloc(sizeof *stack * (size_t)(B->n + 1)), sp = 0;
  if (stack == NULL) return LACC_ERR_MEMORY;
  for (int i = 0; i < B->n; i++) {
    match[i] = els[i] = -1;
    switch (B->code[i]->op) {
    case KO_IF: case KO_FOR: case KO_LOOP: stack[sp++] = i; break;
    case KO_ELSE: els[stack[sp - 1]] = i; break;
    case KO_END: match[stack[--sp]] = i; break;
    default: break;
    }
  }
  free(stack);
  return LACC_OK;
}

static void compact(klist *l, const unsigned char *dead) {
  int k = 0;
  for (int i = 0; i < l->n; i++)
    if (!dead[i]) l->v[k++] = l->v[i];
  l->n = k;
}

int pass_fold(kplan *P, kfn *F) {
  (void)P;
  bctx B;
  int rc = bx_build(&B, F);
  unsigned char *dead = calloc((size_t)B.n + 1, 1);
  int *match = malloc(sizeof *match * (size_t)(B.n + 1));
  int *els = malloc(sizeof *els * (size_t)(B.n + 1));
  if (rc == LACC_OK && (dead == NULL || match == NULL || els == NULL))
    rc = LACC_ERR_MEMORY;
  if (rc == LACC_OK) rc = link(&B, match, els);
  if (rc == LACC_OK) {
    fold(&B, dead, match, els);
    compact(&F->pro, dead);
    compact(&F->body, dead + B.npro);
  }
  free(dead);
  free(match);
  free(els);
  bx_free(&B);
  return rc;
}

/* Per check, whether a FAIL of it stands inside a loop of a function of a step, other
 * than its shape function: 2 if in code that always runs, 1 if only in a loop hoist.c
 * runs when its test failed (b = 1). One pass over every function; the counts per step
 * (once per element, not once per call) follow. */
static int mark_checks(const kplan *P, unsigned char *seen) {
  for (int f = 0; f < P->nfns; f++) {
    const kfn *F = &P->fns[f];
    if (F->role == FN_SHAPE || F->step < 0 || F->step >= P->nsteps) continue;
    unsigned char *open = malloc((size_t)F->body.n + 1);
    if (open == NULL) return LACC_ERR_MEMORY;
    int loops = 0, depth = 0;
    for (int i = 0; i < F->body.n; i++) {
      const kinst *in = &F->body.v[i];
      if (in->op == KO_IF || in->op == KO_FOR || in->op == KO_LOOP) {
        open[depth++] = in->op != KO_IF;
        loops += in->op != KO_IF;
      } else if (in->op == KO_END && depth > 0) {
        loops -= open[--depth];
      } else if (in->op == KO_FAIL && loops > 0 && in->check >= 0 && in->check < P->nchecks) {
        unsigned char *m = &seen[(size_t)F->step * (size_t)P->nchecks + (size_t)in->check];
        int v = in->b == 1 ? 1 : 2;
        if (v > *m) *m = (unsigned char)v;
      }
    }
    free(open);
  }
  return LACC_OK;
}

/* Steps' check counts: before the passes (checks) or after (left, hoisted). */
int plan_count_checks(kplan *P, int after) {
  size_t n = (size_t)P->nsteps * (size_t)P->nchecks;
  unsigned char *seen = calloc(n + 1, 1);
  if (seen == NULL || mark_checks(P, seen) != LACC_OK) {
    free(seen);
    return LACC_ERR_MEMORY;
  }
  for (int s = 0; s < P->nsteps; s++) {
    int left = 0, hoisted = 0;
    for (int c = 0; c < P->nchecks; c++) {
      left += seen[(size_t)s * (size_t)P->nchecks + (size_t)c] == 2;
      hoisted += seen[(size_t)s * (size_t)P->nchecks + (size_t)c] == 1;
    }
    if (after) {
      P->steps[s].checks_left = left;
      P->steps[s].checks_hoisted = hoisted;
    } else {
      P->steps[s].checks = left + hoisted;
    }
  }
  free(seen);
  return LACC_OK;
}
