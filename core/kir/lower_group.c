/* lower_group.c: the index algebra of grouped producers.
 *
 * Owns: what the lowering knows of integer variables while a map's elements are lowered
 * at indices b + k (b a multiple of the group's width w, k a constant): which variables
 * are constants and which are b plus a constant, and the rewrites that knowledge allows:
 * (b + k) >> c is (b >> c) + (k >> c) and (b + k) & m is k & m when 2^c and m + 1 divide
 * w, so that the w elements of a group compute what they share (a Philox block for four
 * neighbouring words) from the same variables, which the C compiler then computes once;
 * constants folded, and a cond on a known condition lowered as its arm. While probing
 * (w = 1), it only records the largest such shift of the index (1 to 3), which is the
 * width a group would take.
 * Must not: rewrite anything whose value it does not know exactly: every rewrite gives the
 * same bits as the instruction it replaces, for every b the group's loop can take.
 */
#include "kir/lower.h"

enum { G_UNKNOWN, G_CONST, G_AFFINE };   /* a variable is unknown, a constant, or b + off */

enum { GROUP_SHIFT_MOST = 3 };           /* groups of 2, 4 or 8 elements */

static int known(lower *L, int v) {
  grp *g = L->grp;
  return g != NULL && L->fi == g->fi && v >= 0 && v < g->cap ? g->kind[v] : G_UNKNOWN;
}

static void set(lower *L, int v, int kind, lacc_val x) {
  grp *g = L->grp;
  if (g == NULL || L->fi != g->fi || v < 0) return;
  if (v >= g->cap) {
    int cap = g->cap ? g->cap : 64;
    while (cap <= v) cap *= 2;
    signed char *k = lw_alloc(L, (size_t)cap);
    lacc_val *val = lw_alloc(L, sizeof *val * (size_t)cap);
    memset(k, 0, (size_t)cap);
    if (g->cap > 0) {
      memcpy(k, g->kind, (size_t)g->cap);
      memcpy(val, g->val, sizeof *val * (size_t)g->cap);
    }
    g->kind = k, g->val = val, g->cap = cap;
  }
  g->kind[v] = (signed char)kind;
  g->val[v] = x;
}

/* Integers and truth values are folded; floats keep the instructions the backend's
 * compiler rounds as it does everywhere else. */
static int foldable(scalar_kind k) { return k == S_BOOL || scalar_is_int(k); }

void lw_group_const(lower *L, int v, lacc_val x) {
  if (L->grp != NULL && foldable(vtype(L, v))) set(L, v, G_CONST, x);
}

void lw_group_forget(lower *L, int v) {
  if (known(L, v) != G_UNKNOWN) L->grp->kind[v] = G_UNKNOWN;
}

int lw_group_known(lower *L, int v, lacc_val *x) {
  if (known(L, v) != G_CONST) return 0;
  *x = L->grp->val[v];
  return 1;
}

/* An integer constant's value as a signed 64-bit number (unsigned ones past 2^63 as
 * their two's complement, which shifts and masks below never take). */
static int64_t ival(lower *L, int v) { return L->grp->val[v].i; }

static int is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* b + off in kind k: off must not take the sum below 0 where k is unsigned (b may be 0). */
static int affine_ok(scalar_kind k, int64_t off) { return scalar_is_signed(k) || off >= 0; }

static int shift_rewrite(lower *L, int a, int b) {
  grp *g = L->grp;
  int64_t c = ival(L, b), off = g->val[a].i;
  scalar_kind k = vtype(L, a);
  if (c < 0 || c >= scalar_bits(k) || !affine_ok(k, off)) return -1;
  if (g->align == 1) {
    if (c >= 1 && c <= GROUP_SHIFT_MOST && c > g->shift) g->shift = (int)c;
    return -1;
  }
  if (((int64_t)1 << c) > g->align || g->align % ((int64_t)1 << c) != 0) return -1;
  grp *saved = L->grp;
  L->grp = NULL;   /* the instructions below are plain: nothing of them is known */
  int hi = lw_k_prim(L, P_SHR, lw_k_cast(L, k, g->base), b);
  int64_t rest = off >> c;   /* floor: b is a multiple of 2^c */
  if (rest != 0) hi = lw_k_prim(L, P_ADD, hi, lw_k_int(L, k, rest));
  L->grp = saved;
  return hi;
}

static int mask_rewrite(lower *L, int a, int b) {
  grp *g = L->grp;
  int64_t m = ival(L, b);
  scalar_kind k = vtype(L, a);
  if (g->align == 1 || !is_pow2(m + 1) || g->align % (m + 1) != 0) return -1;
  return lw_k_int(L, k, g->val[a].i & m);   /* b's low bits are 0: (b + off) & m = off & m */
}

int lw_group_prim(lower *L, prim_op p, int a, int b) {
  if (L->grp == NULL || L->fi != L->grp->fi || b < 0 || p == P_FMA) return -1;
  int ka = known(L, a), kb = known(L, b);
  scalar_kind k = vtype(L, a);
  if (!foldable(k)) return -1;
  if (ka == G_CONST && kb == G_CONST && prim_arity(p) == 2) {
    lacc_val x[2] = { L->grp->val[a], L->grp->val[b] }, r;
    if (prim_eval(p, k, 2, x, &r) != LACC_OK) return -1;
    scalar_kind rk = prim_has(p, PF_BOOL) ? S_BOOL : k;
    return lw_k_const(L, rk, r);
  }
  if (ka == G_AFFINE && kb == G_CONST && p == P_SHR) return shift_rewrite(L, a, b);
  if (ka == G_AFFINE && kb == G_CONST && p == P_BAND) return mask_rewrite(L, a, b);
  if (ka == G_CONST && kb == G_AFFINE && p == P_BAND) return mask_rewrite(L, b, a);
  return -1;
}

/* What d = a p b is, once emitted. */
void lw_group_note(lower *L, int d, prim_op p, int a, int b) {
  int ka = known(L, a), kb = known(L, b);
  scalar_kind k = vtype(L, d);
  if (ka == G_UNKNOWN && kb == G_UNKNOWN) return;
  lacc_val r = { .i = 0 };
  if (p == P_MUL && ((ka == G_CONST && ival(L, a) == 0) || (kb == G_CONST && ival(L, b) == 0))) {
    set(L, d, G_CONST, r);   /* 0 * x (the outer extents of a rank-1 position) */
    return;
  }
  int64_t off;
  if (p == P_ADD && ka == G_AFFINE && kb == G_CONST) off = L->grp->val[a].i + ival(L, b);
  else if (p == P_ADD && ka == G_CONST && kb == G_AFFINE) off = L->grp->val[b].i + ival(L, a);
  else if (p == P_SUB && ka == G_AFFINE && kb == G_CONST) off = L->grp->val[a].i - ival(L, b);
  else if (p == P_MUL && ka == G_AFFINE && kb == G_CONST && ival(L, b) == 1) off = L->grp->val[a].i;
  else return;
  if (scalar_bits(k) != 64 || !affine_ok(k, off)) return;
  r.i = off;
  set(L, d, G_AFFINE, r);
}

/* d = a converted to d's kind. */
void lw_group_cast(lower *L, int d, int a) {
  int ka = known(L, a);
  scalar_kind to = vtype(L, d), from = vtype(L, a);
  if (ka == G_CONST && foldable(to) && foldable(from)) {
    set(L, d, G_CONST, val_cast(to, from, L->grp->val[a]));
  } else if (ka == G_AFFINE && scalar_is_int(to) && scalar_bits(to) == 64 &&
             affine_ok(to, L->grp->val[a].i)) {
    set(L, d, G_AFFINE, L->grp->val[a]);   /* b + off < 2^63 in both 64-bit kinds */
  }
}

void lw_group_begin(lower *L, grp *g, int base, int align) {
  memset(g, 0, sizeof *g);
  g->fi = L->fi;
  g->base = base;
  g->align = align;
  L->grp = g;
}

/* The index b + k of a group's element: a new variable known as such. */
int lw_group_index(lower *L, int k) {
  grp *g = L->grp;
  L->grp = NULL;
  int v = lw_k_prim(L, P_ADD, g->base, lw_k_int(L, S_I64, k));   /* a variable of its own, as
                                                                      bounds.c's facts want */
  L->grp = g;
  lacc_val off = { .i = k };
  set(L, v, G_AFFINE, off);
  return v;
}
