/* lower_gtile.c: contractions in work-group tiles, their operands staged in local memory.
 *
 * Owns: FN_GTILE, the OpenCL backend's way to fold many rows whose reads split into a
 * part that varies with the output row and the contraction index (a matrix product's
 * a[i, k]) and a part that varies with the output column and that index (b[k, j]): a
 * work-group of LACC_GTILE x LACC_GTILE work-items computes as many neighbouring
 * outputs; for each block of LACC_GTILE values of k, each work-item reads one value of
 * each operand into local memory, and after a barrier each folds its output over the
 * block from there, in order (so any combining function gives the interpreter's result
 * exactly). The lowering writes the function with the element's code as it is, between
 * markers (lw_fold_gtiles); after bounds.c, pass_gtiles classifies the element's
 * reads by what their indices vary with, copies the code of each operand's index to the
 * staging point and turns the reads into local-memory reads, or drops the function where
 * the element's code is not straight-line (a check left, a branch) or a read varies with
 * both the row and the column (then tiles would not save a read).
 * Must not: change what a fold computes, or run on another backend; the executor decides
 * whether to launch it (GPUs, or LACC_CL_TILES=1).
 */
#include "kir/lower.h"
#include "kir/passes.h"
#include "base/vec.h"

/* ---- the function, as the lowering writes it */

static int marker(lower *L) {
  int v = lw_var(L, S_I64);
  lw_k_mov(L, v, lw_k_int(L, S_I64, 0));
  return v;
}

/* FN_GTILE for fold step st of a (a fold with a start value of rank >= 3 rows): the
 * outputs are batches (the outer dimensions, any number) of Q rows of J; work-group p0
 * takes, in batch b, the tile of rows qb.. and columns jb.. (tiles numbered row-major
 * within a batch), work-item p1 the output (qb + p1 / T, jb + p1 % T), if it exists; a
 * work-item whose output does not exist computes one that does (row or column 0) and
 * stores nothing: every item meets every barrier. A tile never spans two batches, so
 * what varies with the batch alone is the same for the whole work-group. */
void lw_fold_gtiles(lower *L, int st, const lacc_node *a, const aenv *env) {
  if (!L->P->caps.work_groups || a->kind != K_FOLD) return;   /* fold1 has no kids[2] */
  const lacc_node *xs = a->kids[2];
  const lacc_type *t = a->type;
  int r = xs->rank;
  if (r < 3 || t->kind != T_SCALAR) return;
  int fi = lw_new_fn(L, FN_GTILE);
  kgtile *G = lw_alloc(L, sizeof *G);
  fn(L)->gtile = G;
  int *sx = lw_shape_of(L, xs, env);
  int pro = L->pro;
  L->pro = 1;
  int zero = lw_k_int(L, S_I64, 0), T = lw_k_int(L, S_I64, LACC_GTILE);
  int Tm1 = lw_k_int(L, S_I64, LACC_GTILE - 1);
  int Q = sx[r - 3], J = sx[r - 2], K = sx[r - 1];
  int nJ = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_ADD, J, Tm1), T);
  int nQ = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_ADD, Q, Tm1), T);
  int per = lw_k_prim(L, P_MUL, nQ, nJ);   /* tiles per batch */
  int nK = lw_k_prim(L, P_QUOT, lw_k_prim(L, P_ADD, K, Tm1), T);
  L->pro = pro;
  G->K = K;
  G->ti = lw_k_prim(L, P_QUOT, 1, T);
  G->tj = lw_k_prim(L, P_REM, 1, T);
  int batch = lw_k_prim(L, P_QUOT, 0, per), in = lw_k_prim(L, P_REM, 0, per);
  int q = lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, lw_k_prim(L, P_QUOT, in, nJ), T), G->ti);
  int j = lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, lw_k_prim(L, P_REM, in, nJ), T), G->tj);
  G->inq = lw_k_prim(L, P_LT, q, Q);
  G->inj = lw_k_prim(L, P_LT, j, J);
  int qc = lw_k_select(L, G->inq, q, zero), jc = lw_k_select(L, G->inj, j, zero);
  /* launched only where no extent is 0, with batch < the batches' count */
  lw_fact(L, batch, lw_size_of(L, r - 3, sx), -1);
  lw_fact(L, qc, Q, -1);
  lw_fact(L, jc, J, -1);
  int oix[LACC_MAX_RANK];
  lw_unravel_in(L, r - 3, sx, batch, oix);
  oix[r - 3] = qc;
  oix[r - 2] = jc;
  int o = lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, lw_k_prim(L, P_ADD,
                    lw_k_prim(L, P_MUL, batch, Q), qc), J), jc);
  L->key = o;
  int *acc = lw_fresh(L, t);
  lw_assign(L, t, acc, lw_lower_exp(L, a->kids[1], NULL, env));
  int bi = lw_var(L, S_I64);
  lw_k_for(L, bi, zero, nK, 1);
  G->kb = lw_k_prim(L, P_MUL, bi, T);
  G->mark_stage = marker(L);
  lw_emit(L, KO_BARRIER);
  int kn = lw_k_prim(L, P_MIN, T, lw_k_prim(L, P_SUB, K, G->kb));
  G->kk = lw_var(L, S_I64);
  lw_k_for(L, G->kk, zero, kn, 1);
  G->k = lw_k_prim(L, P_ADD, G->kb, G->kk);
  lw_fact(L, G->k, K, -1);
  G->mark_from = marker(L);
  int spec = L->speculate;
  L->speculate = 1;          /* straight-line code: matches compute every cheap arm */
  int *x = lw_copy(L, t, lw_fold_elem(L, xs, env, sx, oix, o, G->k));
  L->speculate = spec;
  G->mark_to = marker(L);
  lw_accumulate(L, a->kids[0], t, acc, x, env);
  k_end(L);
  lw_emit(L, KO_BARRIER);
  k_end(L);
  k_if(L, lw_k_prim(L, P_LAND, G->inq, G->inj));
  lw_store_elem(L, L->P->steps[st].out, o, acc);
  k_end(L);
  L->P->steps[st].fn[SF_GTILE] = fi;
}

/* ---- after bounds.c: the operands staged, or the function dropped */

enum { VQ = 1, VJ = 2, VK = 4 };   /* what a value varies with in a work-group */
enum { MOST_OPERANDS = 8 };        /* local words per work-item (8 KiB x 2 at most) */

typedef struct {
  kplan *P;
  kfn *F;
  int nv;                          /* variables before the staging added its own */
  int from, to, stage;             /* positions of the markers */
  unsigned char *dep;              /* per variable: VQ | VJ | VK */
  unsigned char *late;             /* per variable: set after the staging point, before
                                      the element (k, the block's tests): a copy of a read
                                      at the staging point cannot use it */
  int *cls;                        /* per instruction of the element: 0, or the operand
                                      (1 + its index) a read of it stages */
  int nrow, ncol;
  klist out;                       /* the new body */
  int *map;                        /* a read's copy: the copy of each variable, or -1 */
} gt;

static int new_var(kfn *F, scalar_kind k) {
  if (vec_reserve(&F->vt, &F->vcap, F->nvars + 1, 16, sizeof *F->vt) != 0) return -1;
  F->vt[F->nvars] = k;
  return F->nvars++;
}

static kinst *put(klist *l, kop op) {
  if (vec_reserve(&l->v, &l->cap, l->n + 1, 32, sizeof *l->v) != 0) return NULL;
  kinst *in = &l->v[l->n++];
  memset(in, 0, sizeof *in);
  in->op = op;
  in->dst = in->a = in->b = -1;
  return in;
}

/* dst = a op b (a new variable of a's kind, or bool), or -1 out of memory */
static int put_prim(gt *X, klist *l, prim_op p, int a, int b) {
  int d = new_var(X->F, prim_has(p, PF_BOOL) ? S_BOOL : X->F->vt[a]);
  kinst *in = d >= 0 ? put(l, KO_PRIM) : NULL;
  if (in == NULL) return -1;
  in->dst = d;
  in->prim = p;
  in->a = a;
  in->b = b;
  return d;
}

static int put_int(gt *X, klist *l, int64_t v) {
  int d = new_var(X->F, S_I64);
  kinst *in = d >= 0 ? put(l, KO_CONST) : NULL;
  if (in == NULL) return -1;
  in->dst = d;
  in->imm.i = v;
  return d;
}

static int is_marker(const kinst *in, int v) { return in->op == KO_MOV && in->dst == v; }

/* The markers, each exactly once (hoist.c may have copied the loop: then no tiles). */
static int find_markers(gt *X) {
  const kgtile *G = X->F->gtile;
  int n = 0;
  X->from = X->to = X->stage = -1;
  for (int i = 0; i < X->F->body.n; i++) {
    const kinst *in = &X->F->body.v[i];
    if (is_marker(in, G->mark_stage)) X->stage = i, n++;
    if (is_marker(in, G->mark_from)) X->from = i, n++;
    if (is_marker(in, G->mark_to)) X->to = i, n++;
  }
  return n == 3 && X->stage < X->from && X->from < X->to;
}

/* The operands an instruction reads. */
static int operands(const kinst *in, int *v) {
  int n = 0;
  if (in->a >= 0 && in->op != KO_CONST && in->op != KO_KCONST && in->op != KO_EXTENT) v[n++] = in->a;
  if (in->b >= 0) v[n++] = in->b;
  for (int i = 0; i < in->nargs && n < 4; i++) v[n++] = in->args[i];
  return n;
}

static int straight(kop op) {
  switch (op) {
  case KO_CONST: case KO_MOV: case KO_PRIM: case KO_CAST: case KO_TOBITS: case KO_FROMBITS:
  case KO_LOAD: case KO_EXTENT: case KO_KCONST:
    return 1;
  default: return 0;
  }
}

/* What each variable varies with, from the work-item's place and k, forwards over the
 * body up to the element's end (a variable defined twice gets both). */
static void variation(gt *X) {
  const kgtile *G = X->F->gtile;
  X->dep[1] = VQ | VJ;       /* the work-item */
  for (int i = 0; i < X->to; i++) {
    const kinst *in = &X->F->body.v[i];
    int d = kinst_def(in), v[4], n = operands(in, v);
    if (d < 0) continue;
    unsigned char m = 0;
    for (int u = 0; u < n; u++) m |= X->dep[v[u]];
    if (d == G->ti) m = VQ;
    else if (d == G->tj) m = VJ;
    else if (d == G->kb || d == G->kk || d == G->k) m = VK;
    X->dep[d] |= m;
  }
}

/* Each read of the element classified: a row operand (varies with the row, not the
 * column), a column operand, or neither (the same for the whole work-group). 0: a read
 * varies with both, or the code is not straight-line. */
static int classify(gt *X) {
  for (int i = X->from + 1; i < X->to; i++) {
    const kinst *in = &X->F->body.v[i];
    if (!straight(in->op)) return 0;
    if (in->op != KO_LOAD) continue;
    unsigned char m = X->dep[in->a];
    if ((m & VQ) && (m & VJ)) return 0;
    if (m & VQ) X->cls[i] = 1 + X->nrow++;
    else if (m & VJ) X->cls[i] = -(1 + X->ncol++);
  }
  return X->nrow + X->ncol > 0 && X->nrow + X->ncol <= MOST_OPERANDS;
}

/* The element's instructions read i needs (i included), marked in need[]. */
static void slice(gt *X, int i, unsigned char *need) {
  need[i] = 1;
  for (int p = i; p > X->from; p--) {
    if (!need[p]) continue;
    int v[4], n = operands(&X->F->body.v[p], v);
    for (int u = 0; u < n; u++)
      for (int q = p - 1; q > X->from; q--)
        if (kinst_def(&X->F->body.v[q]) == v[u]) {
          need[q] = 1;
          break;
        }
  }
}

/* Read i copied into l with k replaced by k2, and its value stored as local word
 * word (a variable): -1 out of memory, 0 the copy uses the block's own variables. */
static int stage_read(gt *X, klist *l, int i, int k2, int word, unsigned char *need) {
  const kgtile *G = X->F->gtile;
  memset(need, 0, (size_t)X->F->body.n);
  slice(X, i, need);
  for (int v = 0; v < X->nv; v++) X->map[v] = -1;
  int last = -1;
  for (int p = X->from + 1; p <= i; p++) {
    if (!need[p]) continue;
    kinst c = X->F->body.v[p];
    int *ops[3] = { &c.a, &c.b, NULL };
    if (c.nargs > 0) {   /* fma's third operand: the instructions' args live in the plan */
      int *args = kplan_alloc(X->P, sizeof *args * (size_t)c.nargs);
      if (args == NULL) return -1;
      memcpy(args, c.args, sizeof *args * (size_t)c.nargs);
      c.args = args;
      ops[2] = &c.args[0];
    }
    int skip_a = c.op == KO_CONST || c.op == KO_KCONST || c.op == KO_EXTENT;
    for (int u = 0; u < 3; u++) {
      int *x = ops[u];
      if (x == NULL || *x < 0 || (u == 0 && skip_a)) continue;
      if (*x == G->k) *x = k2;
      else if (*x == G->kb || *x == G->kk || (*x < X->nv && X->late[*x] && X->map[*x] < 0)) return 0;
      else if (*x < X->nv && X->map[*x] >= 0) *x = X->map[*x];
    }
    int d = kinst_def(&c);
    if (d >= 0) {
      int nd = new_var(X->F, X->F->vt[d]);
      if (nd < 0) return -1;
      X->map[d] = nd;
      c.dst = nd;
      last = nd;
    }
    kinst *in = put(l, c.op);
    if (in == NULL) return -1;
    *in = c;
  }
  int bits = new_var(X->F, S_U64);
  kinst *tb = bits >= 0 ? put(l, KO_TOBITS) : NULL;
  if (tb == NULL) return -1;
  tb->dst = bits;
  tb->a = last;
  kinst *st = put(l, KO_LMSTORE);
  if (st == NULL) return -1;
  st->a = word;
  st->b = bits;
  return 1;
}

/* if (in && kb + t < K) { every operand of one kind read at k = kb + t, stored at word
 * (its number) * LACC_GROUP + the work-item } */
static int stage_kind(gt *X, klist *l, int in_var, int t, int row, unsigned char *need) {
  const kgtile *G = X->F->gtile;
  int k2 = put_prim(X, l, P_ADD, G->kb, t);
  int ok = k2 >= 0 ? put_prim(X, l, P_LT, k2, G->K) : -1;
  int c = ok >= 0 ? put_prim(X, l, P_LAND, in_var, ok) : -1;
  kinst *in = c >= 0 ? put(l, KO_IF) : NULL;
  if (in == NULL) return -1;
  in->a = c;
  for (int i = X->from + 1; i < X->to; i++) {
    int m = X->cls[i];
    if (m == 0 || (m > 0) != row) continue;
    int w = row ? m - 1 : X->nrow - m - 1;
    int base = put_int(X, l, (int64_t)w * LACC_GROUP);
    int word = base >= 0 ? put_prim(X, l, P_ADD, base, 1) : -1;
    int rc = word >= 0 ? stage_read(X, l, i, k2, word, need) : -1;
    if (rc <= 0) return rc;
  }
  return put(l, KO_END) != NULL ? 1 : -1;
}

/* Read i of the element replaced by its operand's local word: a row operand's at
 * word row * LACC_GROUP + ti * T + kk, a column operand's at col * LACC_GROUP + kk * T + tj. */
static int local_read(gt *X, klist *l, int i) {
  const kgtile *G = X->F->gtile;
  const kinst *ld = &X->F->body.v[i];
  int m = X->cls[i], row = m > 0, w = row ? m - 1 : X->nrow - m - 1;
  int T = put_int(X, l, LACC_GTILE), base = T >= 0 ? put_int(X, l, (int64_t)w * LACC_GROUP) : -1;
  int at = base >= 0 ? put_prim(X, l, P_MUL, row ? G->ti : G->kk, T) : -1;
  at = at >= 0 ? put_prim(X, l, P_ADD, at, row ? G->kk : G->tj) : -1;
  at = at >= 0 ? put_prim(X, l, P_ADD, at, base) : -1;
  int bits = at >= 0 ? new_var(X->F, S_U64) : -1;
  kinst *lm = bits >= 0 ? put(l, KO_LMLOAD) : NULL;
  if (lm == NULL) return -1;
  lm->dst = bits;
  lm->a = at;
  int dst = ld->dst;
  kinst *fb = put(l, KO_FROMBITS);
  if (fb == NULL) return -1;
  fb->dst = dst;
  fb->a = bits;
  return 1;
}

/* The new body: up to the staging point, the staging, on to the element, the element
 * with its operands' reads from local memory, the rest. 1 done, 0 no tiles, -1 out of
 * memory. */
static int rebuild(gt *X) {
  kfn *F = X->F;
  const kgtile *G = F->gtile;
  unsigned char *need = malloc((size_t)F->body.n);
  X->map = malloc(sizeof *X->map * (size_t)X->nv);
  if (need == NULL || X->map == NULL) {
    free(need);
    return -1;
  }
  klist *l = &X->out;
  int rc = 1;
  for (int i = 0; i < F->body.n && rc > 0; i++) {
    const kinst *in = &F->body.v[i];
    if (i == X->stage) {
      rc = stage_kind(X, l, G->inq, G->tj, 1, need);
      if (rc > 0) rc = stage_kind(X, l, G->inj, G->ti, 0, need);
      continue;
    }
    if (i > X->from && i < X->to && X->cls[i] != 0) {
      rc = local_read(X, l, i);
      continue;
    }
    kinst *c = put(l, in->op);
    if (c == NULL) rc = -1;
    else *c = *in;
  }
  free(need);
  free(X->map);
  return rc;
}

/* The prologue's shape checks left out: the step's shape function made them on the host
 * before any launch, and a return before a barrier is one PoCL's barrier passes get
 * wrong (without optimisations, some work-items of a group stored nothing). */
static void drop_shape_checks(kfn *F) {
  int n = 0;
  for (int i = 0; i < F->pro.n; i++)
    if (F->pro.v[i].op != KO_FAIL && F->pro.v[i].op != KO_RETURN) F->pro.v[n++] = F->pro.v[i];
  F->pro.n = n;
}

/* F's operands staged: 1, or 0 where it cannot be (then it is dropped), -1 out of memory. */
static int gtile_fn(kplan *P, kfn *F) {
  gt X = { .P = P, .F = F, .nv = F->nvars };
  drop_shape_checks(F);
  if (!find_markers(&X)) return 0;
  X.dep = calloc((size_t)X.nv, 1);
  X.late = calloc((size_t)X.nv, 1);
  X.cls = calloc((size_t)F->body.n, sizeof *X.cls);
  if (X.dep == NULL || X.late == NULL || X.cls == NULL) {
    free(X.dep);
    free(X.late);
    free(X.cls);
    return -1;
  }
  for (int i = X.stage + 1; i <= X.from; i++) {
    int d = kinst_def(&F->body.v[i]);
    if (d >= 0) X.late[d] = 1;
  }
  variation(&X);
  int rc = classify(&X);
  free(X.dep);
  if (rc > 0) rc = rebuild(&X);
  free(X.late);
  free(X.cls);
  if (rc <= 0) {
    free(X.out.v);
    return rc;
  }
  free(F->body.v);
  F->body = X.out;
  if (X.nrow + X.ncol > P->group_words) P->group_words = X.nrow + X.ncol;
  return 1;
}

static void drop(kplan *P, pstep *st) {
  kfn *F = &P->fns[st->fn[SF_GTILE]];
  F->pro.n = F->body.n = 0;
  st->fn[SF_GTILE] = -1;
}

int pass_gtiles(kplan *P) {
  for (int s = 0; s < P->nsteps; s++) {
    pstep *st = &P->steps[s];
    if (st->kind != SK_FOLD || st->fn[SF_GTILE] < 0) continue;
    int rc = gtile_fn(P, &P->fns[st->fn[SF_GTILE]]);
    if (rc < 0) return LACC_ERR_MEMORY;
    if (rc == 0) drop(P, st);
  }
  return LACC_OK;
}
