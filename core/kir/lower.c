/* lower.c: the fused AST into a plan of kernels in the kernel IR.
 *
 * Owns: the order of kernels, the slots of materialised arrays, and the imperative
 * code of each kernel: pulling elements of delayed producers through index
 * arithmetic, loads and stores through the element type's layout (combined tags and
 * bit-cast slots included), scalar code, checks, and the loop structure of each
 * consumer: folds and scans (rows, chunk partials, carries), permute (copy, scatter,
 * compare-and-swap), materialised push arrays (a loop per part), stencils (border and
 * interior loops), acond (a test, guarded branches, a select); on the cpu backend, strips
 * (a map's or fold's elements computed 256 at a time, matches and conds speculated, into
 * a loop the C compiler vectorises).
 * Must not: decide what fuses (fusion.c marks that), print a language or run
 * anything. Values are lists of variables, one per leaf of the flattened type.
 */
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kir/kir.h"
#include "base/settings.h"

/* ---- plan memory */

typedef struct kblock {
  struct kblock *next;
  size_t used, cap;
  max_align_t data[];
} kblock;

void *kplan_alloc(kplan *P, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  if (n == 0) n = sizeof(max_align_t);
  kblock *b = P->mem;
  if (b == NULL || b->used + n > b->cap) {
    size_t cap = n > 65536 ? n : 65536;
    b = malloc(sizeof *b + cap);
    if (b == NULL) return NULL;
    b->next = P->mem;
    b->used = 0;
    b->cap = cap;
    P->mem = b;
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

int kplan_init(kplan *P, lacc_ctx *ctx) {
  memset(P, 0, sizeof *P);
  P->ctx = ctx;
  return LACC_OK;
}

void kplan_free(kplan *P) {
  for (int i = 0; i < P->nfns; i++) {
    free(P->fns[i].pro.v);
    free(P->fns[i].body.v);
    free(P->fns[i].vt);
    free(P->fns[i].lanes);
  }
  free(P->fns);
  free(P->slots);
  for (int i = 0; i < P->nsteps; i++) {
    free(P->steps[i].desc);
    if (P->steps[i].kind == SK_WHILE)
      for (int j = 0; j < 2 && P->steps[i].loop[j] != NULL; j++) {
        kplan_free(P->steps[i].loop[j]);
        free(P->steps[i].loop[j]);
      }
  }
  free(P->steps);
  free(P->checks);
  free(P->results);
  free(P->guards);
  free(P->consts);
  while (P->mem != NULL) {
    kblock *n = P->mem->next;
    free(P->mem);
    P->mem = n;
  }
  memset(P, 0, sizeof *P);
}

/* ---- lowering state */

typedef struct aenv {
  const lacc_node *node;   /* delayed: the term */
  const struct aenv *env;  /* delayed: its environment */
  int slot;                /* materialised: >= 0 */
  const struct aenv *up;
} aenv;

typedef struct senv {
  const int *v;
  const struct senv *up;
} senv;

typedef struct {
  int lin;
  int ix[LACC_MAX_RANK];
} kindex;

typedef struct memo {
  const lacc_node *node;
  const aenv *env;
  int slot;
  int *ext;
  struct memo *next;
} memo;

typedef struct {
  lacc_ctx *ctx;
  kplan *P;
  int fi;                  /* the function being written */
  int pro;                 /* appending to its prologue */
  int key;                 /* variable holding the element index for checks */
  memo *memos;             /* extents and shapes computed in this function's prologue */
  int step;                /* the step being lowered (slot uses) */
  int describe;            /* recording what elem() pulls into the step's desc */
  size_t dlen, dcap;
  int guard;               /* the guard of steps being planned (acond branches), -1 */
  struct leaf_load *loads; /* this function's element leaves read from buffers */
  int nloads, lcap;
  int speculate;           /* matches and conds with cheap arms compute every arm */
  int speculated;          /* how many did */
  const layout_strategy *layouts;  /* the parameters' layouts (NULL: their nodes') */
  jmp_buf oom;
} lower;

/* How a leaf variable of a loaded element was read, so that a match arm can read its
 * alternative's fields again inside the arm: the element-wide reads before the tag test
 * are then dead wherever only arms use the fields, and the C compiler drops them (a
 * random mix of constructors reads only each element's own fields). */
typedef struct leaf_load {
  int var, slot, buf, idx, raw;
  scalar_kind kind;
} leaf_load;

static void oom(lower *L) { longjmp(L->oom, 1); }

static void *alloc(lower *L, size_t n) {
  void *p = kplan_alloc(L->P, n);
  if (p == NULL) oom(L);
  return p;
}

static int *ints(lower *L, int n) { return alloc(L, sizeof(int) * (size_t)(n > 0 ? n : 1)); }

static kfn *fn(lower *L) { return &L->P->fns[L->fi]; }

static int grow(lower *L, void **v, int *cap, int n, size_t size) {
  if (n < *cap) return 0;
  int c = *cap ? 2 * *cap : 16;
  void *p = realloc(*v, size * (size_t)c);
  if (p == NULL) oom(L);
  *v = p;
  *cap = c;
  return 0;
}

static int var(lower *L, scalar_kind k) {
  kfn *F = fn(L);
  grow(L, (void **)&F->vt, &F->vcap, F->nvars, sizeof *F->vt);
  F->vt[F->nvars] = k;
  return F->nvars++;
}

static scalar_kind vtype(lower *L, int v) { return fn(L)->vt[v]; }

static kinst *emit(lower *L, kop op) {
  kfn *F = fn(L);
  klist *l = L->pro ? &F->pro : &F->body;
  grow(L, (void **)&l->v, &l->cap, l->n, sizeof *l->v);
  kinst *in = &l->v[l->n++];
  memset(in, 0, sizeof *in);
  in->op = op;
  in->dst = in->a = in->b = -1;
  return in;
}

static int k_const(lower *L, scalar_kind k, lacc_val v) {
  int d = var(L, k);
  kinst *in = emit(L, KO_CONST);
  in->dst = d;
  in->imm = v;
  return d;
}

static int k_int(lower *L, scalar_kind k, int64_t i) {
  lacc_val v = { .i = i };
  return k_const(L, k, v);
}

/* A user constant read from the run-time table: programs that differ only in their
 * constants (sizes, coefficients) share one compiled kernel. 0, 1 and -1 stay inline. */
static int lifted(const lacc_type *t, lacc_val v) {
  scalar_kind k = t->scalar;
  if (k == S_BOOL) return 0;
  if (k == S_F32) return !(v.f == 0 && !signbit(v.f)) && v.f != 1;
  if (k == S_F64) return !(v.d == 0 && !signbit(v.d)) && v.d != 1;
  return !(v.i >= -1 && v.i <= 1);
}

static int k_user_const(lower *L, const lacc_type *t, lacc_val v) {
  if (!lifted(t, v)) return k_const(L, t->scalar, v);
  kplan *P = L->P;
  grow(L, (void **)&P->consts, &P->kcap, P->nconsts, sizeof *P->consts);
  P->consts[P->nconsts] = v;
  int pro = L->pro, d = var(L, t->scalar);
  L->pro = 1;
  kinst *in = emit(L, KO_KCONST);
  in->dst = d;
  in->imm.i = P->nconsts++;
  L->pro = pro;
  return d;
}

static void k_mov(lower *L, int dst, int src) {
  kinst *in = emit(L, KO_MOV);
  in->dst = dst;
  in->a = src;
}

static int prim_to_bool(prim_op p) {
  switch (p) {
  case P_EQ: case P_NE: case P_LT: case P_LE: case P_GT: case P_GE:
  case P_LAND: case P_LOR: case P_LNOT: case P_ISNAN: return 1;
  default: return 0;
  }
}

static int k_prim(lower *L, prim_op p, int a, int b) {
  int d = var(L, prim_to_bool(p) ? S_BOOL : vtype(L, a));
  kinst *in = emit(L, KO_PRIM);
  in->dst = d;
  in->prim = p;
  in->a = a;
  in->b = b;
  return d;
}

/* A one-operand instruction into a new variable of kind k. */
static int k_unary(lower *L, kop op, scalar_kind k, int a) {
  int d = var(L, k);
  kinst *in = emit(L, op);
  in->dst = d;
  in->a = a;
  return d;
}

static int k_cast(lower *L, scalar_kind to, int a) {
  if (vtype(L, a) == to) return a;
  return k_unary(L, KO_CAST, to, a);
}

static int k_select(lower *L, int c, int a, int b) {
  int d = var(L, vtype(L, a));
  kinst *in = emit(L, KO_IF);
  in->a = c;
  k_mov(L, d, a);
  emit(L, KO_ELSE);
  k_mov(L, d, b);
  emit(L, KO_END);
  return d;
}

static void k_if(lower *L, int c) { emit(L, KO_IF)->a = c; }
static void k_else(lower *L) { emit(L, KO_ELSE); }
static void k_end(lower *L) { emit(L, KO_END); }

static void k_for(lower *L, int i, int lo, int hi, int64_t step) {
  kinst *in = emit(L, KO_FOR);
  in->dst = i;
  in->a = lo;
  in->b = hi;
  in->imm.i = step;
}

static void use_slot(lower *L, int slot) {
  pslot *s = &L->P->slots[slot];
  if (s->last_use < L->step) s->last_use = L->step;
}

/* Append to the description of the current step (explain). */
static void describe(lower *L, const char *a, const char *b) {
  if (!L->describe) return;
  pstep *st = &L->P->steps[L->step];
  size_t need = strlen(a) + strlen(b) + 1;
  if (L->dlen + need > L->dcap) {
    size_t cap = (L->dcap + need) * 2;
    char *d = realloc(st->desc, cap);
    if (d == NULL) oom(L);
    st->desc = d;
    L->dcap = cap;
  }
  memcpy(st->desc + L->dlen, a, strlen(a));
  memcpy(st->desc + L->dlen + strlen(a), b, strlen(b) + 1);
  L->dlen += need - 1;
}

/* dst = buffer element idx, read plainly (KO_LOAD) or atomically (KO_ALOAD). */
static int k_read(lower *L, kop op, int slot, int buf, int idx) {
  use_slot(L, slot);
  int d = var(L, L->P->slots[slot].plan->buf_kind[buf]);
  kinst *in = emit(L, op);
  in->dst = d;
  in->slot = slot;
  in->buf = buf;
  in->a = idx;
  return d;
}

static int k_load(lower *L, int slot, int buf, int idx) { return k_read(L, KO_LOAD, slot, buf, idx); }

/* Whether the compare-and-swap of buffer element idx from `expect` to v succeeded. */
static int k_cas(lower *L, int slot, int buf, int idx, int expect, int v) {
  int c = k_cast(L, L->P->slots[slot].plan->buf_kind[buf], v);
  int d = var(L, S_BOOL);
  int *args = kplan_alloc(L->P, sizeof *args);
  if (args == NULL) oom(L);
  args[0] = expect;
  kinst *in = emit(L, KO_CAS);
  in->dst = d;
  in->slot = slot;
  in->buf = buf;
  in->a = idx;
  in->b = c;
  in->nargs = 1;
  in->args = args;
  return d;
}

static void k_store(lower *L, int slot, int buf, int idx, int v) {
  int c = k_cast(L, L->P->slots[slot].plan->buf_kind[buf], v);
  kinst *in = emit(L, KO_STORE);
  in->slot = slot;
  in->buf = buf;
  in->a = idx;
  in->b = c;
}

static int add_check(lower *L, check_kind k, const char *what, const char *where, int rank) {
  kplan *P = L->P;
  grow(L, (void **)&P->checks, &P->ccap, P->nchecks, sizeof *P->checks);
  P->checks[P->nchecks] = (pcheck){ k, where, what, rank };
  return P->nchecks++;
}

static void k_fail(lower *L, int check, int nargs, const int *args) {
  int *v = ints(L, nargs);
  for (int i = 0; i < nargs; i++) v[i] = k_cast(L, S_I64, args[i]);
  kinst *in = emit(L, KO_FAIL);
  in->check = check;
  in->a = L->key;
  in->nargs = nargs;
  in->args = v;
}

/* Functions of the plan; each starts with p0..p3 as variables 0..3. */
static int new_fn(lower *L, fn_role role) {
  kplan *P = L->P;
  grow(L, (void **)&P->fns, &P->fcap, P->nfns, sizeof *P->fns);
  kfn *F = &P->fns[P->nfns];
  memset(F, 0, sizeof *F);
  F->role = role;
  F->step = L->step;
  L->fi = P->nfns++;
  L->memos = NULL;
  L->nloads = 0;
  L->pro = 0;
  for (int i = 0; i < 4; i++) var(L, S_I64);
  L->key = k_int(L, S_I64, -1);
  L->pro = 0;
  return L->fi;
}

/* ---- slots */

static int new_slot(lower *L, slot_kind kind, const lacc_type *t, int rank,
                    const layout_plan *plan) {
  kplan *P = L->P;
  grow(L, (void **)&P->slots, &P->scap, P->nslots, sizeof *P->slots);
  pslot *s = &P->slots[P->nslots];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->type = t;
  s->rank = rank;
  s->plan = plan;
  s->last_use = -1;
  return P->nslots++;
}

static int input_slot(lower *L, lacc_array *a) {
  for (int i = 0; i < L->P->nslots; i++)
    if (L->P->slots[i].kind == SLOT_INPUT && L->P->slots[i].array == a) return i;
  int s = new_slot(L, SLOT_INPUT, a->type, a->rank, a->plan);
  L->P->slots[s].array = a;
  return s;
}

static int param_slot(lower *L, const lacc_node *t) {
  for (int i = 0; i < L->P->nslots; i++)
    if (L->P->slots[i].kind == SLOT_PARAM && L->P->slots[i].param == t->field) return i;
  layout_strategy st = L->layouts != NULL ? L->layouts[t->field] : (layout_strategy)t->cval.i;
  const layout_plan *plan = layout_plan_of(L->ctx, t->type, st);
  if (plan == NULL) oom(L);
  int s = new_slot(L, SLOT_PARAM, t->type, t->rank, plan);
  L->P->slots[s].param = t->field;
  return s;
}

static const layout_plan *out_plan(lower *L, const lacc_type *t) {
  const layout_plan *p = layout_plan_of(L->ctx, t, L->ctx->layout);
  if (p == NULL) oom(L);
  return p;
}

/* Extents of a slot, loaded once in the prologue. */
static int *slot_ext(lower *L, int slot) {
  for (memo *m = L->memos; m != NULL; m = m->next)
    if (m->node == NULL && m->slot == slot) return m->ext;
  int rank = L->P->slots[slot].rank;
  int *e = ints(L, rank), pro = L->pro;
  L->pro = 1;
  use_slot(L, slot);
  for (int d = 0; d < rank; d++) {
    e[d] = var(L, S_I64);
    kinst *in = emit(L, KO_EXTENT);
    in->dst = e[d];
    in->slot = slot;
    in->imm.i = d;
  }
  L->pro = pro;
  memo *m = alloc(L, sizeof *m);
  *m = (memo){ NULL, NULL, slot, e, L->memos };
  L->memos = m;
  return e;
}

/* ---- layouts: one element in and out of a slot (layout.c's store_rec/load_rec) */

static int u64c(lower *L, uint64_t v) {
  lacc_val x = { .u = v };
  return k_const(L, S_U64, x);
}

static int bits_of(lower *L, int v) { return k_unary(L, KO_TOBITS, S_U64, v); }

static int from_bits(lower *L, scalar_kind k, int bits) {
  return k_unary(L, KO_FROMBITS, k, bits);
}

/* A variable that is an array of n lanes of kind k. */
static int lane_array(lower *L, scalar_kind k, int n) {
  int v = var(L, k);
  kfn *F = fn(L);
  grow(L, (void **)&F->lanes, &F->lcap, F->nlanes + 1, sizeof *F->lanes);
  F->lanes[F->nlanes++] = v;
  F->lanes[F->nlanes++] = n;
  return v;
}

static int k_lget(lower *L, int arr, int lane) {
  int d = var(L, vtype(L, arr));
  kinst *in = emit(L, KO_LGET);
  in->dst = d;
  in->a = arr;
  in->b = lane;
  return d;
}

static void k_lset(lower *L, int arr, int lane, int v) {
  kinst *in = emit(L, KO_LSET);
  in->dst = arr;
  in->a = lane;
  in->b = v;
}

static void note_load(lower *L, int v, int slot, int buf, int idx, int raw, scalar_kind k) {
  grow(L, (void **)&L->loads, &L->lcap, L->nloads, sizeof *L->loads);
  L->loads[L->nloads++] = (leaf_load){ .var = v, .slot = slot, .buf = buf, .idx = idx, .raw = raw,
                                       .kind = k };
}

/* Leaf variable v read again here, if it was read from a buffer in this function. */
static int reload(lower *L, int v) {
  for (int i = L->nloads - 1; i >= 0; i--) {
    const leaf_load *r = &L->loads[i];
    if (r->var != v) continue;
    int x = k_load(L, r->slot, r->buf, r->idx);
    return r->raw ? from_bits(L, r->kind, k_cast(L, S_U64, x)) : k_cast(L, r->kind, x);
  }
  return v;
}

static void load_rec(lower *L, int slot, int idx, const lacc_type *t, int active, int tag,
                     int *pos, int *out) {
  const layout_plan *p = L->P->slots[slot].plan;
  if (t->kind == T_SCALAR) {
    int b = p->leaf_buf[*pos];
    lacc_val z = { .u = 0 };
    int v = b >= 0 ? from_bits(L, t->scalar, k_cast(L, S_U64, k_load(L, slot, b, idx)))
                   : k_const(L, t->scalar, z);
    if (b >= 0 && active >= 0) note_load(L, v, slot, b, idx, 1, t->scalar);
    /* a field of an alternative the element is not keeps whatever bits its slot holds:
     * only that alternative's arm of a match reads it (selecting zero here cost the
     * compact layout a select per leaf per element) */
    out[(*pos)++] = v;
    return;
  }
  if (t->kind == T_TUPLE) {
    int parts[LACC_MAX_ARGS * 4];
    int rest = tag;
    for (int f = t->n - 1; f >= 0; f--) {
      const lacc_type *ft = t->fields[f];
      if (ft->choices <= 1) {
        parts[f] = u64c(L, 0);
      } else if (p->packed) {
        int b = ft->packed_bits;
        parts[f] = b >= 64 ? rest : k_prim(L, P_BAND, rest, u64c(L, ((uint64_t)1 << b) - 1));
        rest = b >= 64 ? u64c(L, 0) : k_prim(L, P_SHR, rest, u64c(L, (uint64_t)b));
      } else {
        parts[f] = k_prim(L, P_REM, rest, u64c(L, ft->choices));
        rest = k_prim(L, P_QUOT, rest, u64c(L, ft->choices));
      }
    }
    for (int f = 0; f < t->n; f++) load_rec(L, slot, idx, t->fields[f], active, parts[f], pos, out);
    return;
  }
  int k, sub;
  if (p->packed) {
    int pb = layout_payload_bits(t);
    k = pb >= 64 ? u64c(L, 0) : k_prim(L, P_SHR, tag, u64c(L, (uint64_t)pb));
    sub = pb >= 64 ? tag : k_prim(L, P_BAND, tag, u64c(L, ((uint64_t)1 << pb) - 1));
  } else {   /* mixed radix: a range test per constructor ("Accelerating Sum Types", section 5.4) */
    k = var(L, S_U64);
    sub = var(L, S_U64);
    uint64_t lo = 0;
    for (int c = 0; c < t->n; c++) {
      uint64_t hi = lo + t->fields[c]->choices;
      if (c + 1 < t->n) k_if(L, k_prim(L, P_LT, tag, u64c(L, hi)));
      k_mov(L, k, u64c(L, (uint64_t)c));
      k_mov(L, sub, k_prim(L, P_SUB, tag, u64c(L, lo)));
      if (c + 1 < t->n) k_else(L);
      lo = hi;
    }
    for (int c = 0; c + 1 < t->n; c++) k_end(L);
  }
  int kk = k_cast(L, S_U32, k);
  lacc_val z = { .u = 0 };
  out[(*pos)++] = active >= 0 ? k_select(L, active, kk, k_const(L, S_U32, z)) : kk;
  for (int c = 0; c < t->n; c++) {
    int act = k_prim(L, P_EQ, k, u64c(L, (uint64_t)c));
    if (active >= 0) act = k_prim(L, P_LAND, act, active);
    load_rec(L, slot, idx, t->fields[c], act, sub, pos, out);
  }
}

static int *load_elem(lower *L, int slot, int idx) {
  const pslot *s = &L->P->slots[slot];
  char name[32];
  snprintf(name, sizeof name, " a%d", slot);
  describe(L, name, "");
  const lacc_type *t = s->type;
  const layout_plan *p = s->plan;
  int *out = ints(L, t->nleaves);
  if (!p->raw) {
    for (int k = 0; k < t->nleaves; k++) {
      int b = p->leaf_buf[k];
      lacc_val z = { .u = 0 };
      scalar_kind lk = type_leaf(t, k);
      out[k] = b >= 0 ? k_cast(L, lk, k_load(L, slot, b, idx)) : k_const(L, lk, z);
      if (b >= 0 && t->has_sum) note_load(L, out[k], slot, b, idx, 0, lk);
    }
    return out;
  }
  int tag = p->tag_buf >= 0 ? k_cast(L, S_U64, k_load(L, slot, p->tag_buf, idx)) : u64c(L, 0);
  int pos = 0;
  load_rec(L, slot, idx, t, -1, tag, &pos, out);
  return out;
}

/* Store the active leaves; return the combined tag (u64). */
static int store_rec(lower *L, int slot, int idx, const lacc_type *t, int active,
                     const int *v, int *pos) {
  const layout_plan *p = L->P->slots[slot].plan;
  if (t->kind == T_SCALAR) {
    int b = p->leaf_buf[*pos];
    if (b >= 0) {
      if (active >= 0) k_if(L, active);
      k_store(L, slot, b, idx, bits_of(L, v[*pos]));
      if (active >= 0) k_end(L);
    }
    (*pos)++;
    return u64c(L, 0);
  }
  if (t->kind == T_TUPLE) {
    int tag = u64c(L, 0);
    for (int f = 0; f < t->n; f++) {
      const lacc_type *ft = t->fields[f];
      int sub = store_rec(L, slot, idx, ft, active, v, pos);
      if (ft->choices <= 1) continue;
      if (p->packed)
        tag = k_prim(L, P_BOR, k_prim(L, P_SHL, tag, u64c(L, (uint64_t)ft->packed_bits)), sub);
      else
        tag = k_prim(L, P_ADD, k_prim(L, P_MUL, tag, u64c(L, ft->choices)), sub);
    }
    return tag;
  }
  int k = k_cast(L, S_U64, v[(*pos)++]);
  int tag = u64c(L, 0);
  int result = var(L, S_U64);
  k_mov(L, result, tag);
  uint64_t offset = 0;
  for (int c = 0; c < t->n; c++) {
    int act = k_prim(L, P_EQ, k, u64c(L, (uint64_t)c));
    if (active >= 0) act = k_prim(L, P_LAND, act, active);
    int sub = store_rec(L, slot, idx, t->fields[c], act, v, pos);
    int mine = p->packed
      ? k_prim(L, P_BOR, u64c(L, (uint64_t)c << layout_payload_bits(t)), sub)
      : k_prim(L, P_ADD, u64c(L, offset), sub);
    k_if(L, act);
    k_mov(L, result, mine);
    k_end(L);
    offset += t->fields[c]->choices;
  }
  return result;
}

static void store_elem(lower *L, int slot, int idx, const int *v) {
  const pslot *s = &L->P->slots[slot];
  const layout_plan *p = s->plan;
  use_slot(L, slot);
  if (!p->raw) {
    for (int k = 0; k < s->type->nleaves; k++)
      if (p->leaf_buf[k] >= 0) k_store(L, slot, p->leaf_buf[k], idx, v[k]);
    return;
  }
  int pos = 0;
  int tag = store_rec(L, slot, idx, s->type, -1, v, &pos);
  if (p->tag_buf >= 0) k_store(L, slot, p->tag_buf, idx, tag);
}

/* ---- index arithmetic */

static int ravel(lower *L, int rank, const int *ext, const int *ix) {
  if (rank == 0) return k_int(L, S_I64, 0);
  int lin = ix[0];
  for (int d = 1; d < rank; d++) lin = k_prim(L, P_ADD, k_prim(L, P_MUL, lin, ext[d]), ix[d]);
  return lin;
}

/* Multi-index of linear index lin in a shape; extents of 0 give 0 (no division). */
static void unravel(lower *L, int rank, const int *ext, int lin, int *ix) {
  if (rank == 1) {
    ix[0] = lin;
    return;
  }
  int zero = k_int(L, S_I64, 0);
  for (int d = rank - 1; d >= 0; d--) {
    if (d == 0) {
      ix[0] = lin;
      break;
    }
    int nz = k_prim(L, P_NE, ext[d], zero);
    int safe = k_select(L, nz, ext[d], k_int(L, S_I64, 1));
    ix[d] = k_prim(L, P_REM, lin, safe);
    lin = k_select(L, nz, k_prim(L, P_QUOT, lin, safe), zero);
  }
}

/* ---- scalar code */

static const aenv *a_lookup(const aenv *env, int k) {
  while (k-- > 0) env = env->up;
  return env;
}

static const aenv *a_push(lower *L, const aenv *env, const lacc_node *node, const aenv *nenv,
                          int slot) {
  aenv *e = alloc(L, sizeof *e);
  *e = (aenv){ node, nenv, slot, env };
  return e;
}

static int *elem(lower *L, const lacc_node *t, const aenv *env, const kindex *ix);
static int *shape_of(lower *L, const lacc_node *t, const aenv *env);
static int *lower_exp(lower *L, const lacc_node *e, const senv *se, const aenv *ae);

static const senv *s_push(lower *L, const senv *se, const int *v) {
  senv *n = alloc(L, sizeof *n);
  n->v = v;
  n->up = se;
  return n;
}

static int *apply(lower *L, const lacc_node *lam, const senv *se, const aenv *ae,
                  const lacc_type *const *ptypes, const int *args) {
  for (int p = 0; p < lam->nparams; p++) {
    se = s_push(L, se, args);
    args += ptypes[p]->nleaves;
  }
  return lower_exp(L, lam->kids[0], se, ae);
}

/* A fresh mutable copy of a value (results of branches and loops). */
static int *fresh(lower *L, const lacc_type *t) {
  int *v = ints(L, t->nleaves);
  for (int k = 0; k < t->nleaves; k++) v[k] = var(L, type_leaf(t, k));
  return v;
}

static void assign(lower *L, const lacc_type *t, const int *dst, const int *src) {
  for (int k = 0; k < t->nleaves; k++) k_mov(L, dst[k], src[k]);
}

static int *copy(lower *L, const lacc_type *t, const int *src) {
  int *d = fresh(L, t);
  assign(L, t, d, src);
  return d;
}

static int is_division(prim_op p) { return p == P_IDIV || p == P_MOD || p == P_QUOT || p == P_REM; }

static int *lower_prim(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  int a = lower_exp(L, e->kids[0], se, ae)[0];
  int b = e->nkids > 1 ? lower_exp(L, e->kids[1], se, ae)[0] : -1;
  int *out = ints(L, 1);
  if (is_division(e->prim) && scalar_is_int(vtype(L, a))) {
    lacc_val z = { .u = 0 };
    k_if(L, k_prim(L, P_EQ, b, k_const(L, vtype(L, b), z)));
    k_fail(L, add_check(L, CK_DIVZERO, prim_name(e->prim), e->where, 0), 0, NULL);
    k_end(L);
  }
  out[0] = k_prim(L, e->prim, a, b);
  return out;
}

static int *lower_index(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  const lacc_node *av = e->kids[0];
  int rank = av->rank;
  int *ix = lower_exp(L, e->kids[1], se, ae);
  int *ext = shape_of(L, av, ae);
  if (rank == 0) {
    kindex k = { .lin = k_int(L, S_I64, 0) };
    return elem(L, av, ae, &k);
  }
  int zero = k_int(L, S_I64, 0), ok = -1;
  for (int d = 0; d < rank; d++) {
    int in = k_prim(L, P_LAND, k_prim(L, P_GE, ix[d], zero), k_prim(L, P_LT, ix[d], ext[d]));
    ok = ok < 0 ? in : k_prim(L, P_LAND, ok, in);
  }
  k_if(L, k_prim(L, P_LNOT, ok, -1));
  int args[2 * LACC_MAX_RANK] = { 0 };
  for (int d = 0; d < rank; d++) {
    args[d] = ix[d];
    args[rank + d] = ext[d];
  }
  k_fail(L, add_check(L, CK_INDEX, "index", e->where, rank), 2 * rank, args);
  k_end(L);
  kindex k;
  for (int d = 0; d < rank; d++) k.ix[d] = k_select(L, ok, ix[d], zero);
  k.lin = ravel(L, rank, ext, k.ix);
  return elem(L, av, ae, &k);
}

static int *lower_loop(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  const lacc_type *t = e->type;
  int *cur = copy(L, t, lower_exp(L, e->kids[2], se, ae));
  const lacc_type *pt[1] = { t };
  if (e->kind == K_ITERATE) {
    int n = lower_exp(L, e->kids[0], se, ae)[0];
    int i = var(L, S_I64);
    k_for(L, i, k_int(L, S_I64, 0), n, 1);
  } else {
    emit(L, KO_LOOP);
    int c = apply(L, e->kids[0], se, ae, pt, cur)[0];
    emit(L, KO_BREAKIFNOT)->a = c;
  }
  int *next = copy(L, t, apply(L, e->kids[1], se, ae, pt, cur));
  assign(L, t, cur, next);
  k_end(L);
  return cur;
}

/* ---- speculation: every arm computed, the result selected
 *
 * A match on elements in random order mispredicts most of its tag tests. Inside a strip
 * loop (fold_strips) every arm of a cheap match or cond is computed and the result
 * selected, so the loop has no branch and the C compiler vectorises it. Only arms that
 * cannot fail or loop (no indexing, no integer division, no iterate/while): whatever
 * bits an inactive alternative's fields hold, the arithmetic on them is defined (float
 * operations, wrapping integers, clamped casts) and its result is dropped. */

enum { SPECULATE_NODES = 400 };   /* the arms' AST nodes, all together */

static int speculable(const lacc_node *e, int *budget) {
  if (--*budget < 0) return 0;
  switch (e->kind) {
  case K_CONST: case K_EVAR: return 1;
  case K_PRIM:
    if (is_division(e->prim) && scalar_is_int(e->kids[0]->type->scalar)) return 0;
    break;
  case K_TUPLE: case K_PRJ: case K_CAST: case K_COND: case K_CON: case K_CASE: case K_ELET:
  case K_LAM:
    break;
  default: return 0;
  }
  for (int i = e->kind == K_LAM ? e->nparams : 0; i < e->nkids; i++)
    if (!speculable(e->kids[i], budget)) return 0;
  return 1;
}

static int speculate_arms(lower *L, const lacc_node *const *arms, int n) {
  int budget = SPECULATE_NODES;
  if (!L->speculate) return 0;
  for (int i = 0; i < n; i++)
    if (!speculable(arms[i], &budget)) return 0;
  L->speculated++;
  return 1;
}

/* c ? a : b, leaf by leaf */
static int *select_value(lower *L, const lacc_type *t, int c, const int *a, const int *b) {
  int *o = ints(L, t->nleaves);
  for (int k = 0; k < t->nleaves; k++) o[k] = k_select(L, c, a[k], b[k]);
  return o;
}

static int *lower_case_speculative(lower *L, const lacc_node *e, const senv *se,
                                   const aenv *ae, const int *v) {
  const lacc_type *t = e->kids[0]->type;
  int **arm = alloc(L, sizeof *arm * (size_t)t->n);
  int off = 1;
  for (int c = 0; c < t->n; c++) {
    int n = t->fields[c]->nleaves, *args = ints(L, n);
    for (int i = 0; i < n; i++) args[i] = reload(L, v[off + i]);
    arm[c] = apply(L, e->kids[c + 1], se, ae, (const lacc_type *const *)t->fields[c]->fields,
                   args);
    off += n;
  }
  int *out = arm[t->n - 1];
  for (int c = t->n - 2; c >= 0; c--) {
    lacc_val cv = { .u = (uint64_t)c };
    out = select_value(L, e->type, k_prim(L, P_EQ, v[0], k_const(L, S_U32, cv)), arm[c], out);
  }
  return out;
}

/* Alternative c of case e, applied to its fields in v (at leaf off), assigned to out. */
static void lower_arm(lower *L, const lacc_node *e, const senv *se, const aenv *ae,
                      const int *v, int off, int c, int *out) {
  const lacc_type *t = e->kids[0]->type;
  int n = t->fields[c]->nleaves, *args = ints(L, n);
  for (int i = 0; i < n; i++) args[i] = reload(L, v[off + i]);
  assign(L, e->type, out,
         apply(L, e->kids[c + 1], se, ae, (const lacc_type *const *)t->fields[c]->fields, args));
}

/* Alternatives lo..hi-1 as a binary search on the tag: an element takes O(log n) tests,
 * and the code nests O(log n) deep (a chain of 4096 else-ifs would nest past what C and
 * OpenCL compilers accept, and indent the source quadratically). off[c]: alternative c's
 * first leaf in v. */
static void lower_arms(lower *L, const lacc_node *e, const senv *se, const aenv *ae,
                       const int *v, const int *off, int lo, int hi, int *out) {
  if (hi - lo == 1) {
    lower_arm(L, e, se, ae, v, off[lo], lo, out);
    return;
  }
  int mid = lo + (hi - lo) / 2;
  /* of two alternatives, tag < lo + 1 is tag == lo: the plain test of a two-way match */
  lacc_val cv = { .u = (uint64_t)(hi - lo == 2 ? lo : mid) };
  k_if(L, k_prim(L, hi - lo == 2 ? P_EQ : P_LT, v[0], k_const(L, S_U32, cv)));
  lower_arms(L, e, se, ae, v, off, lo, mid, out);
  k_else(L);
  lower_arms(L, e, se, ae, v, off, mid, hi, out);
  k_end(L);
}

static int *lower_case(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  const lacc_type *t = e->kids[0]->type;
  int *v = lower_exp(L, e->kids[0], se, ae);
  if (speculate_arms(L, (const lacc_node *const *)e->kids + 1, t->n))
    return lower_case_speculative(L, e, se, ae, v);
  int *out = fresh(L, e->type), *off = ints(L, t->n);
  for (int c = 0, o = 1; c < t->n; o += t->fields[c]->nleaves, c++) off[c] = o;
  lower_arms(L, e, se, ae, v, off, 0, t->n, out);
  return out;
}

static int *lower_exp(lower *L, const lacc_node *e, const senv *se, const aenv *ae) {
  switch (e->kind) {
  case K_CONST: {
    int *o = ints(L, 1);
    o[0] = k_user_const(L, e->type, e->cval);
    return o;
  }
  case K_EVAR: {
    const senv *s = se;
    for (int k = 0; k < e->field; k++) s = s->up;
    return (int *)s->v;
  }
  case K_PRIM: return lower_prim(L, e, se, ae);
  case K_TUPLE: {
    int *o = ints(L, e->type->nleaves), off = 0;
    for (int i = 0; i < e->nkids; i++) {
      int *v = lower_exp(L, e->kids[i], se, ae);
      memcpy(o + off, v, sizeof *o * (size_t)e->kids[i]->type->nleaves);
      off += e->kids[i]->type->nleaves;
    }
    return o;
  }
  case K_PRJ: {
    int *v = lower_exp(L, e->kids[0], se, ae);
    return v + type_leaf_offset(e->kids[0]->type, e->field);
  }
  case K_CAST: {
    int *o = ints(L, 1);
    o[0] = k_cast(L, e->type->scalar, lower_exp(L, e->kids[0], se, ae)[0]);
    return o;
  }
  case K_COND: {
    int c = lower_exp(L, e->kids[0], se, ae)[0];
    if (speculate_arms(L, (const lacc_node *const *)e->kids + 1, 2)) {
      int *a = lower_exp(L, e->kids[1], se, ae);
      return select_value(L, e->type, c, a, lower_exp(L, e->kids[2], se, ae));
    }
    int *o = fresh(L, e->type);
    k_if(L, c);
    assign(L, e->type, o, lower_exp(L, e->kids[1], se, ae));
    k_else(L);
    assign(L, e->type, o, lower_exp(L, e->kids[2], se, ae));
    k_end(L);
    return o;
  }
  case K_INDEX: return lower_index(L, e, se, ae);
  case K_SHAPE: return shape_of(L, e->kids[0], ae);
  case K_SIZE: {
    const lacc_node *a = e->kids[0];
    int *ext = shape_of(L, a, ae), *o = ints(L, 1);
    o[0] = k_int(L, S_I64, 1);
    for (int d = 0; d < a->rank; d++) o[0] = k_prim(L, P_MUL, o[0], ext[d]);
    return o;
  }
  case K_ITERATE: case K_WHILE: return lower_loop(L, e, se, ae);
  case K_CON: {
    const lacc_type *t = e->type;
    int *o = ints(L, t->nleaves);
    lacc_val z = { .u = 0 }, k = { .u = (uint64_t)e->field };
    for (int i = 0; i < t->nleaves; i++) o[i] = k_const(L, type_leaf(t, i), i == 0 ? k : z);
    int off = 1;
    for (int c = 0; c < e->field; c++) off += t->fields[c]->nleaves;
    for (int i = 0; i < e->nkids; i++) {
      int *v = lower_exp(L, e->kids[i], se, ae);
      memcpy(o + off, v, sizeof *o * (size_t)e->kids[i]->type->nleaves);
      off += e->kids[i]->type->nleaves;
    }
    return o;
  }
  case K_CASE: return lower_case(L, e, se, ae);
  case K_ELET: {
    int *v = lower_exp(L, e->kids[0], se, ae);
    return lower_exp(L, e->kids[1], s_push(L, se, v), ae);
  }
  default:
    ctx_error(L->ctx, LACC_ERR_ARG, "lower: unexpected %s node in scalar code", kind_name(e->kind));
    oom(L);
    return NULL;
  }
}

/* ---- delayed arrays: shapes and elements */

static int *memo_find(lower *L, const lacc_node *t, const aenv *env) {
  for (memo *m = L->memos; m != NULL; m = m->next)
    if (m->node == t && m->env == env) return m->ext;
  return NULL;
}

static void memo_add(lower *L, const lacc_node *t, const aenv *env, int *ext) {
  memo *m = alloc(L, sizeof *m);
  *m = (memo){ t, env, -1, ext, L->memos };
  L->memos = m;
}

static const aenv *bind_let(lower *L, const lacc_node *b, const aenv *env) {
  if (b->slot > 0) return a_push(L, env, NULL, NULL, b->slot - 1);
  if (b->kind == K_AVAR) {
    const aenv *e = a_lookup(env, b->field);
    return a_push(L, env, e->node, e->env, e->slot);
  }
  return a_push(L, env, b, env, -1);
}

/* The element count of a delayed array checked against LACC_MAX_ELEMS, as an allocation
 * checks it: a fused producer never allocates, so without this a count past 2^64 would
 * wrap unseen (and one past 2^40 would run for ever). The prefix products are compared
 * with MAX / extent rather than multiplied first, so nothing here overflows; past the
 * limit the extents become 0, so that no shape computed from them overflows either. */
static void size_check(lower *L, const lacc_node *t, int rank, int *ext) {
  int zero = k_int(L, S_I64, 0), one = k_int(L, S_I64, 1);
  int max = k_int(L, S_I64, LACC_MAX_ELEMS), n = one, over = zero;
  for (int d = 0; d < rank; d++) {
    int room = k_prim(L, P_QUOT, max, k_prim(L, P_MAX, ext[d], one));
    int o = k_prim(L, P_GT, n, room);
    over = k_select(L, o, one, over);
    n = k_select(L, o, zero, k_prim(L, P_MUL, n, ext[d]));
  }
  int bad = k_prim(L, P_NE, over, zero);
  k_if(L, bad);
  k_fail(L, add_check(L, CK_SIZE, kind_name(t->kind), t->where, 0), 0, NULL);
  k_end(L);
  for (int d = 0; d < rank; d++) ext[d] = k_select(L, bad, zero, ext[d]);
}

/* A shape expression's extents, each checked to be non-negative, and their count. */
static int *shape_exp(lower *L, const lacc_node *t, const aenv *env) {
  int *v = lower_exp(L, t->kids[0], NULL, env), *ext = ints(L, t->rank);
  int zero = k_int(L, S_I64, 0);
  for (int d = 0; d < t->rank; d++) {
    int neg = k_prim(L, P_LT, v[d], zero);
    k_if(L, neg);
    int args[2] = { v[d], k_int(L, S_I64, d + 1) };
    k_fail(L, add_check(L, CK_EXTENT, kind_name(t->kind), t->where, 0), 2, args);
    k_end(L);
    ext[d] = k_select(L, neg, zero, v[d]);
  }
  size_check(L, t, t->rank, ext);
  return ext;
}

static int size_of(lower *L, int rank, const int *ext) {
  int n = k_int(L, S_I64, 1);
  for (int d = 0; d < rank; d++) n = k_prim(L, P_MUL, n, ext[d]);
  return n;
}

static int *shape_of(lower *L, const lacc_node *t, const aenv *env) {
  if (t->slot > 0) return slot_ext(L, t->slot - 1);
  if (t->kind == K_AVAR) {
    const aenv *e = a_lookup(env, t->field);
    return e->slot >= 0 ? slot_ext(L, e->slot) : shape_of(L, e->node, e->env);
  }
  int *ext = memo_find(L, t, env);
  if (ext != NULL) return ext;
  int pro = L->pro, key = L->key;
  L->pro = 1;
  L->key = k_int(L, S_I64, -1);
  switch (t->kind) {
  case K_ALET: ext = shape_of(L, t->kids[1], bind_let(L, t->kids[0], env)); break;
  case K_UNIT: ext = ints(L, 0); break;
  case K_COMPUTE: ext = shape_of(L, t->kids[0], env); break;
  case K_APPEND: case K_INTERLEAVE: {
    int *e1 = shape_of(L, t->kids[0], env), *e2 = shape_of(L, t->kids[1], env), r = t->rank;
    ext = ints(L, r);
    for (int d = 0; d < r; d++) ext[d] = k_prim(L, P_MIN, e1[d], e2[d]);
    ext[r - 1] = t->kind == K_APPEND ? k_prim(L, P_ADD, e1[r - 1], e2[r - 1])
                                     : k_prim(L, P_MUL, ext[r - 1], k_int(L, S_I64, 2));
    size_check(L, t, r, ext);
    break;
  }
  case K_GENERATE: case K_BACKPERMUTE: ext = shape_exp(L, t, env); break;
  case K_RESHAPE: {
    ext = shape_exp(L, t, env);
    const lacc_node *src = t->kids[1];
    int n = size_of(L, t->rank, ext), m = size_of(L, src->rank, shape_of(L, src, env));
    k_if(L, k_prim(L, P_NE, n, m));
    int args[2] = { m, n };
    k_fail(L, add_check(L, CK_RESHAPE, "reshape", t->where, 0), 2, args);
    k_end(L);
    break;
  }
  case K_MAP: {
    ext = ints(L, t->rank);
    for (int i = 1; i < t->nkids; i++) {
      int *e = shape_of(L, t->kids[i], env);
      for (int d = 0; d < t->rank; d++) ext[d] = i == 1 ? e[d] : k_prim(L, P_MIN, ext[d], e[d]);
    }
    break;
  }
  default:
    ctx_error(L->ctx, LACC_ERR_ARG, "lower: no shape for %s", kind_name(t->kind));
    oom(L);
  }
  L->pro = pro;
  L->key = key;
  memo_add(L, t, env, ext);
  return ext;
}

static int *elem_term(lower *L, const lacc_node *t, const aenv *env, const kindex *ix);

/* Element ix of an array term: a load, or the term's code pulled into this kernel. */
static int *elem(lower *L, const lacc_node *t, const aenv *env, const kindex *ix) {
  if (t->slot > 0) return load_elem(L, t->slot - 1, ix->lin);
  if (t->kind == K_AVAR || t->kind == K_ALET) return elem_term(L, t, env, ix);
  describe(L, " ", kind_name(t->kind));
  describe(L, "(", "");
  int *v = elem_term(L, t, env, ix);
  describe(L, ")", "");
  return v;
}

/* Element ix of a part of a push array, with j in its innermost dimension. */
static int *part_elem(lower *L, const lacc_node *part, const aenv *env, const kindex *ix, int r,
                      int j) {
  kindex k = *ix;
  k.ix[r - 1] = j;
  k.lin = ravel(L, r, shape_of(L, part, env), k.ix);
  return elem(L, part, env, &k);
}

/* Pulling one element of an append or interleave: a test on the index picks the part. */
static int *push_pull(lower *L, const lacc_node *t, const aenv *env, const kindex *ix) {
  int r = t->rank, j = ix->ix[r - 1];
  int n1 = shape_of(L, t->kids[0], env)[r - 1];
  int first, jx, jy;
  if (t->kind == K_APPEND) {
    first = k_prim(L, P_LT, j, n1);
    jx = j;
    jy = k_prim(L, P_SUB, j, n1);
  } else {
    int two = k_int(L, S_I64, 2);
    first = k_prim(L, P_EQ, k_prim(L, P_MOD, j, two), k_int(L, S_I64, 0));
    jx = jy = k_prim(L, P_IDIV, j, two);
  }
  int *v = fresh(L, t->type);
  k_if(L, first);
  assign(L, t->type, v, part_elem(L, t->kids[0], env, ix, r, jx));
  k_else(L);
  assign(L, t->type, v, part_elem(L, t->kids[1], env, ix, r, jy));
  k_end(L);
  return v;
}

static int *elem_term(lower *L, const lacc_node *t, const aenv *env, const kindex *ix) {
  switch (t->kind) {
  case K_APPEND: case K_INTERLEAVE: return push_pull(L, t, env, ix);
  case K_AVAR: {
    const aenv *e = a_lookup(env, t->field);
    return e->slot >= 0 ? load_elem(L, e->slot, ix->lin) : elem(L, e->node, e->env, ix);
  }
  case K_ALET: return elem(L, t->kids[1], bind_let(L, t->kids[0], env), ix);
  case K_UNIT: return lower_exp(L, t->kids[0], NULL, env);
  case K_GENERATE: {
    const lacc_type *st = t->kids[0]->type;
    return apply(L, t->kids[1], NULL, env, &st, ix->ix);
  }
  case K_MAP: {
    int n = t->nkids - 1, total = 0;
    const lacc_type *pt[LACC_MAX_ARGS];
    for (int k = 0; k < n; k++) total += t->kids[k + 1]->type->nleaves;
    int *args = ints(L, total), off = 0;
    for (int k = 0; k < n; k++) {
      const lacc_node *in = t->kids[k + 1];
      kindex sub = *ix;
      if (n > 1 && t->rank > 1) sub.lin = ravel(L, t->rank, shape_of(L, in, env), ix->ix);
      int *v = elem(L, in, env, &sub);
      pt[k] = in->type;
      memcpy(args + off, v, sizeof *args * (size_t)in->type->nleaves);
      off += in->type->nleaves;
    }
    return apply(L, t->kids[0], NULL, env, pt, args);
  }
  case K_BACKPERMUTE: {
    const lacc_node *src = t->kids[2];
    const lacc_type *st = t->kids[0]->type;
    int *to = apply(L, t->kids[1], NULL, env, &st, ix->ix);
    int *ext = shape_of(L, src, env);
    kindex k;
    if (src->rank == 0) {
      k.lin = k_int(L, S_I64, 0);
      return elem(L, src, env, &k);
    }
    int zero = k_int(L, S_I64, 0), ok = -1;
    for (int d = 0; d < src->rank; d++) {
      int in = k_prim(L, P_LAND, k_prim(L, P_GE, to[d], zero), k_prim(L, P_LT, to[d], ext[d]));
      ok = ok < 0 ? in : k_prim(L, P_LAND, ok, in);
    }
    k_if(L, k_prim(L, P_LNOT, ok, -1));
    k_fail(L, add_check(L, CK_BACKPERMUTE, "backpermute", t->where, 0), 0, NULL);
    k_end(L);
    for (int d = 0; d < src->rank; d++) k.ix[d] = k_select(L, ok, to[d], zero);
    k.lin = ravel(L, src->rank, ext, k.ix);
    return elem(L, src, env, &k);
  }
  case K_COMPUTE: return elem(L, t->kids[0], env, ix);
  case K_RESHAPE: {
    const lacc_node *src = t->kids[1];
    kindex k;
    k.lin = ix->lin;
    unravel(L, src->rank, shape_of(L, src, env), ix->lin, k.ix);
    return elem(L, src, env, &k);
  }
  default:
    ctx_error(L->ctx, LACC_ERR_ARG, "lower: %s is not a delayed array", kind_name(t->kind));
    oom(L);
    return NULL;
  }
}

/* ---- steps */

static int new_step(lower *L, step_kind kind, const lacc_node *node, int rank) {
  kplan *P = L->P;
  grow(L, (void **)&P->steps, &P->stcap, P->nsteps, sizeof *P->steps);
  pstep *s = &P->steps[P->nsteps];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->node = node;
  s->rank = rank;
  s->fn_part = s->fn_combine = s->fn_chunk = s->fn_scatter = s->fn_ascatter = -1;
  s->fn_group = -1;
  s->guard = L->guard;
  L->step = P->nsteps;
  return P->nsteps++;
}

static void start_desc(lower *L) {
  L->describe = 1;
  L->dlen = L->dcap = 0;
  describe(L, "", "");
}

static int strips_on(void) {
  return setting_switch("LACC_STRIPS", 1);
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

enum { STRIP = 256 };

/* Strips: for s in [lo, hi) by STRIP, first for q in [0, STRIP) element s + q into lane
 * arrays, its matches and conds speculated (a loop with no branch and no store to an
 * array that might alias an input, which the C compiler vectorises), then for q again
 * with the element read back. */
typedef struct {
  mark m, inner;
  int *arr, nl, s, q, zero, len, before;
} strip;

/* Opens both loops; returns the element index s + q for the caller to lower. */
static int strip_open(lower *L, strip *S, const lacc_type *t, int lo, int hi) {
  S->nl = t->nleaves;
  S->arr = ints(L, S->nl);
  S->m = mark_here(L);
  for (int l = 0; l < S->nl; l++) S->arr[l] = lane_array(L, type_leaf(t, l), STRIP);
  S->s = var(L, S_I64);
  S->q = var(L, S_I64);
  S->zero = k_int(L, S_I64, 0);
  S->len = k_int(L, S_I64, STRIP);
  k_for(L, S->s, lo, hi, STRIP);
  k_for(L, S->q, S->zero, S->len, 1);
  S->inner = mark_here(L);
  S->before = L->speculated;
  L->speculate = 1;
  return k_prim(L, P_ADD, S->s, S->q);
}

/* Puts element x into the strip and opens the loop that reads it back: returns the
 * element read back, or NULL with everything since strip_open taken back when the
 * element's code is not straight-line (or, with need_spec, nothing was speculated). */
static int *strip_fill(lower *L, strip *S, const int *x, int need_spec) {
  L->speculate = 0;
  for (int l = 0; l < S->nl; l++) k_lset(L, S->arr[l], S->q, x[l]);
  if ((need_spec && L->speculated == S->before) || !straight_since(L, S->inner)) {
    back_to(L, S->m);
    return NULL;
  }
  k_end(L);
  k_for(L, S->q, S->zero, S->len, 1);
  int *y = ints(L, S->nl);
  for (int l = 0; l < S->nl; l++) y[l] = k_lget(L, S->arr[l], S->q);
  return y;
}

/* Closes both loops; returns the first element left after the strips. */
static int strip_close(lower *L, strip *S) {
  k_end(L);
  k_end(L);
  return S->s;
}

/* Elements [lo, hi) of a rank-1 map on the cpu backend in strips, then stored. Returns
 * the first element left: lo when there is nothing to speculate (the plain loop then
 * vectorises as well, without the copy) or the element's code is not straight-line even
 * so. Other ranks unravel the index with divisions, which no vector unit has. */
static int map_strips(lower *L, const lacc_node *t, const aenv *env, int out, int lo, int hi) {
  if (L->P->backend != B_CPU || t->rank != 1 || !strips_on()) return lo;
  strip S;
  kindex k;
  k.lin = k.ix[0] = strip_open(L, &S, t->type, lo, hi);
  L->key = k.lin;
  int *y = strip_fill(L, &S, elem(L, t, env, &k), 1);
  if (y == NULL) return lo;
  store_elem(L, out, k_prim(L, P_ADD, S.s, S.q), y);
  return strip_close(L, &S);
}

/* Materialise the delayed array (t, env): a map-like kernel. */
static int step_map(lower *L, const lacc_node *t, const aenv *env) {
  int st = new_step(L, SK_MAP, t, t->rank);
  int out = new_slot(L, SLOT_KERNEL, t->type, t->rank, out_plan(L, t->type));
  L->P->steps[st].out = out;
  L->P->steps[st].fn_shape = new_fn(L, FN_SHAPE);
  int *ext = shape_of(L, t, env);
  for (int d = 0; d < t->rank; d++) {
    kinst *in = emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  L->P->steps[st].fn_body = new_fn(L, FN_BODY);
  int *oext = slot_ext(L, out);
  start_desc(L);
  int lo = map_strips(L, t, env, out, 0, 1);
  if (lo != 0) L->describe = 0;   /* the strips described the elements */
  int i = var(L, S_I64);
  k_for(L, i, lo, 1, 1);
  L->key = i;
  kindex k;
  k.lin = i;
  unravel(L, t->rank, oext, i, k.ix);
  int *v = elem(L, t, env, &k);
  L->describe = 0;
  store_elem(L, out, i, v);
  k_end(L);
  return out;
}

/* Element j of segment o of the folded array (outer index oix). */
static int *fold_elem(lower *L, const lacc_node *xs, const aenv *env, const int *sx,
                      const int *oix, int o, int j) {
  int r = xs->rank;
  kindex k;
  for (int d = 0; d + 1 < r; d++) k.ix[d] = oix[d];
  k.ix[r - 1] = j;
  k.lin = k_prim(L, P_ADD, k_prim(L, P_MUL, o, sx[r - 1]), j);
  return elem(L, xs, env, &k);
}

static int *combine(lower *L, const lacc_node *f, const lacc_type *t, const int *acc,
                    const int *x, const aenv *env) {
  const lacc_type *pt[2] = { t, t };
  int *args = ints(L, 2 * t->nleaves);
  memcpy(args, acc, sizeof *args * (size_t)t->nleaves);
  memcpy(args + t->nleaves, x, sizeof *args * (size_t)t->nleaves);
  return apply(L, f, NULL, env, pt, args);
}

static void accumulate(lower *L, const lacc_node *f, const lacc_type *t, int *acc, const int *x,
                       const aenv *env) {
  int *r = copy(L, t, combine(L, f, t, acc, x, env));
  assign(L, t, acc, r);
}

/* Elements [lo, hi) of one segment folded in strips. Returns the first element left
 * (lo when the element's code is not straight-line even with speculation). */
static int fold_strips(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                       const int *oix, int o, int lo, int hi, int *acc) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1];
  strip S;
  int j = strip_open(L, &S, a->type, lo, hi);
  int *y = strip_fill(L, &S, fold_elem(L, xs, env, sx, oix, o, j), 0);
  if (y == NULL) return lo;
  accumulate(L, a->kids[0], a->type, acc, y, env);
  return strip_close(L, &S);
}

/* Sequential loop j in [lo, hi) over one segment into acc. */
static void fold_plain(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                       const int *oix, int o, int lo, int hi, int *acc) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1];
  int j = var(L, S_I64);
  k_for(L, j, lo, hi, 1);
  accumulate(L, a->kids[0], a->type, acc, fold_elem(L, xs, env, sx, oix, o, j), env);
  k_end(L);
}

/* The same, on the cpu backend in strips where the elements' code allows. */
static void fold_range(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                       const int *oix, int o, int lo, int hi, int *acc) {
  int described = L->describe;
  if (L->P->backend == B_CPU && strips_on()) {
    int rest = fold_strips(L, a, env, sx, oix, o, lo, hi, acc);
    if (rest != lo) L->describe = 0;   /* the strips described the elements */
    lo = rest;
  }
  fold_plain(L, a, env, sx, oix, o, lo, hi, acc);
  L->describe = described;
}

/* A combining function whose operands may be swapped as well as regrouped: one
 * primitive, commutative bit for bit (float min/max are not: which NaN wins depends on
 * the order), of the two parameters. Only such folds take per-lane accumulators, which
 * combine elements l, l + W, l + 2W, ... before their neighbours; any other associative
 * function is folded in order within a chunk. */
/* A combining function that is one float min or max of its two parameters: not
 * associative once NaNs appear (which one wins depends on the grouping), so such folds
 * and scans run each row in order, never in chunks. */
static int ordered_only(const lacc_node *f, const lacc_type *t) {
  if (t->kind != T_SCALAR || !scalar_is_float(t->scalar) || f->kind != K_LAM || f->nparams != 2)
    return 0;
  const lacc_node *e = f->kids[0];
  return e->kind == K_PRIM && (e->prim == P_MIN || e->prim == P_MAX);
}

static int commutative(const lacc_node *f, const lacc_type *t) {
  if (t->kind != T_SCALAR || f->kind != K_LAM || f->nparams != 2) return 0;
  const lacc_node *e = f->kids[0];
  if (e->kind != K_PRIM || e->nkids != 2) return 0;
  const lacc_node *x = e->kids[0], *y = e->kids[1];
  if (x->kind != K_EVAR || y->kind != K_EVAR || x->field + y->field != 1) return 0;
  switch (e->prim) {
  case P_ADD: case P_MUL: return 1;
  case P_MIN: case P_MAX: case P_BAND: case P_BOR: case P_BXOR: case P_LAND: case P_LOR:
    return !scalar_is_float(t->scalar);
  default: return 0;
  }
}

/* Lanes: two 512-bit vectors' worth, enough independent chains to hide the latency of
 * a vector add, and a multiple of every narrower vector width. */
static int lanes_for(scalar_kind k) {
  size_t size = scalar_size(k);
  return (int)(128 / (size ? size : 1));
}

/* Elements [lo, hi) of segment o into acc through W per-lane accumulators (hi - lo >= 2W):
 * lane l folds elements lo + l, lo + l + W, ...; then the lanes in order, then the rest. */
static void fold_lanes(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                       const int *oix, int o, int lo, int hi, int *acc) {
  const lacc_node *xs = a->kids[a->kind == K_FOLD ? 2 : 1], *f = a->kids[0];
  const lacc_type *t = a->type;
  int W = lanes_for(t->scalar);
  int arr = lane_array(L, t->scalar, W);
  int w = k_int(L, S_I64, W), l = var(L, S_I64);
  k_for(L, l, k_int(L, S_I64, 0), w, 1);
  k_lset(L, arr, l, fold_elem(L, xs, env, sx, oix, o, k_prim(L, P_ADD, lo, l))[0]);
  k_end(L);
  int j = var(L, S_I64);
  k_for(L, j, k_prim(L, P_ADD, lo, w), hi, W);
  k_for(L, l, k_int(L, S_I64, 0), w, 1);
  int cur = k_lget(L, arr, l);
  int *r = combine(L, f, t, &cur, fold_elem(L, xs, env, sx, oix, o, k_prim(L, P_ADD, j, l)), env);
  k_lset(L, arr, l, r[0]);
  k_end(L);
  k_end(L);
  k_mov(L, acc[0], k_lget(L, arr, k_int(L, S_I64, 0)));
  k_for(L, l, k_int(L, S_I64, 1), w, 1);
  int lane = k_lget(L, arr, l);
  accumulate(L, f, t, acc, &lane, env);
  k_end(L);
  fold_plain(L, a, env, sx, oix, o, j, hi, acc);
}


static void k_lmstore(lower *L, int word, int bits) {
  kinst *in = emit(L, KO_LMSTORE);
  in->a = word;
  in->b = bits;
}

static int k_lmload(lower *L, int word) { return k_unary(L, KO_LMLOAD, S_U64, word); }

/* The local word of leaf l of work-item `item` (p3 items: variable 3). */
static int group_word(lower *L, int l, int item) {
  return k_prim(L, P_ADD, k_prim(L, P_MUL, k_int(L, S_I64, l), 3), item);
}

/* The work-group combine of a fold's partials (FN_GROUP): item p2 of p3 folds partials
 * [p1 p2 / p3, p1 (p2 + 1) / p3), never empty; then in rounds s = 1, 2, 4, ... item l, a
 * multiple of 2s, takes item l + s's value after its own (which keeps the order, so any
 * associative function will do), through local words leaf * p3 + item. Every item meets
 * every barrier: the rounds depend on p3 alone. Item 0 adds the start value and stores. */
static void fold_group(lower *L, int st, const lacc_node *a, const aenv *env) {
  const lacc_type *t = a->type;
  const lacc_node *f = a->kids[0];
  int part = L->P->steps[st].partial, out = L->P->steps[st].out, nl = t->nleaves;
  if (nl > L->P->group_words) L->P->group_words = nl;
  L->P->steps[st].fn_group = new_fn(L, FN_GROUP);
  int one = k_int(L, S_I64, 1), zero = k_int(L, S_I64, 0);
  int lo = k_prim(L, P_QUOT, k_prim(L, P_MUL, 1, 2), 3);
  int hi = k_prim(L, P_QUOT, k_prim(L, P_MUL, 1, k_prim(L, P_ADD, 2, one)), 3);
  int *acc = fresh(L, t);
  assign(L, t, acc, load_elem(L, part, lo));
  int c = var(L, S_I64);
  k_for(L, c, k_prim(L, P_ADD, lo, one), hi, 1);
  accumulate(L, f, t, acc, load_elem(L, part, c), env);
  k_end(L);
  int s = var(L, S_I64);
  k_mov(L, s, one);
  emit(L, KO_LOOP);
  int more = k_prim(L, P_LT, s, 3);
  emit(L, KO_BREAKIFNOT)->a = more;
  int twice = k_prim(L, P_ADD, s, s), m = k_prim(L, P_REM, 2, twice);
  int partner = k_prim(L, P_ADD, 2, s);
  k_if(L, k_prim(L, P_EQ, m, s));
  for (int l = 0; l < nl; l++) k_lmstore(L, group_word(L, l, 2), bits_of(L, acc[l]));
  k_end(L);
  emit(L, KO_BARRIER);
  k_if(L, k_prim(L, P_LAND, k_prim(L, P_EQ, m, zero), k_prim(L, P_LT, partner, 3)));
  int *other = ints(L, nl);
  for (int l = 0; l < nl; l++)
    other[l] = from_bits(L, type_leaf(t, l), k_lmload(L, group_word(L, l, partner)));
  accumulate(L, f, t, acc, other, env);
  k_end(L);
  emit(L, KO_BARRIER);
  k_mov(L, s, twice);
  k_end(L);
  k_if(L, k_prim(L, P_EQ, 2, zero));
  if (a->kind == K_FOLD) {
    int *z = copy(L, t, lower_exp(L, a->kids[1], NULL, env));
    acc = combine(L, f, t, z, acc, env);
  }
  store_elem(L, out, 0, acc);
  k_end(L);
}

static int step_fold(lower *L, const lacc_node *a, const aenv *env) {
  int with_z = a->kind == K_FOLD;
  const lacc_node *xs = a->kids[with_z ? 2 : 1], *f = a->kids[0];
  const lacc_type *t = a->type;
  int r = xs->rank;
  int st = new_step(L, SK_FOLD, a, a->rank);
  int out = new_slot(L, SLOT_KERNEL, t, a->rank, out_plan(L, t));
  int part = new_slot(L, SLOT_PARTIAL, t, 1, out_plan(L, t));
  pstep *s = &L->P->steps[st];
  s->out = out;
  s->partial = part;
  s->with_z = with_z;
  s->lanes = commutative(f, t);
  s->ordered = ordered_only(f, t);

  s->fn_shape = new_fn(L, FN_SHAPE);
  int *sx = shape_of(L, xs, env);
  for (int d = 0; d < r; d++) {
    kinst *in = emit(L, KO_OUT);
    in->a = sx[d];
    in->imm.i = d;
  }

  /* segments in order, each sequential: the interpreter's order exactly */
  L->P->steps[st].fn_body = new_fn(L, FN_SEG);
  sx = shape_of(L, xs, env);
  int o = var(L, S_I64);
  k_for(L, o, 0, 1, 1);
  L->key = o;
  int oix[LACC_MAX_RANK];
  unravel(L, r - 1, sx, o, oix);
  int *acc = fresh(L, t), j0;
  if (with_z) {
    assign(L, t, acc, lower_exp(L, a->kids[1], NULL, env));
    j0 = k_int(L, S_I64, 0);
  } else {
    assign(L, t, acc, fold_elem(L, xs, env, sx, oix, o, k_int(L, S_I64, 0)));
    j0 = k_int(L, S_I64, 1);
  }
  start_desc(L);
  fold_range(L, a, env, sx, oix, o, j0, sx[r - 1], acc);
  L->describe = 0;
  store_elem(L, out, o, acc);
  k_end(L);

  /* one chunk of one segment into a partial; lanes reassociate commutative functions */
  L->P->steps[st].fn_part = new_fn(L, FN_PART);
  sx = shape_of(L, xs, env);
  o = 0;
  unravel(L, r - 1, sx, o, oix);
  L->key = 1;
  acc = fresh(L, t);
  int lanes = L->P->steps[st].lanes;
  if (lanes) {
    int len = k_prim(L, P_SUB, 2, 1);
    k_if(L, k_prim(L, P_GE, len, k_int(L, S_I64, 2 * lanes_for(t->scalar))));
    fold_lanes(L, a, env, sx, oix, o, 1, 2, acc);
    k_else(L);
  }
  assign(L, t, acc, fold_elem(L, xs, env, sx, oix, o, 1));
  fold_range(L, a, env, sx, oix, o, k_prim(L, P_ADD, 1, k_int(L, S_I64, 1)), 2, acc);
  if (lanes) k_end(L);
  store_elem(L, part, 3, acc);

  /* the partials of a segment, in order */
  L->P->steps[st].fn_combine = new_fn(L, FN_COMBINE);
  acc = fresh(L, t);
  int c0;
  if (with_z) {
    assign(L, t, acc, lower_exp(L, a->kids[1], NULL, env));
    c0 = k_int(L, S_I64, 0);
  } else {
    assign(L, t, acc, load_elem(L, part, k_int(L, S_I64, 0)));
    c0 = k_int(L, S_I64, 1);
  }
  int c = var(L, S_I64);
  k_for(L, c, c0, 1, 1);
  accumulate(L, f, t, acc, load_elem(L, part, c), env);
  k_end(L);
  store_elem(L, out, 0, acc);
  if (L->P->backend == B_OPENCL) fold_group(L, st, a, env);
  return out;
}

/* ---- scans */

typedef struct {
  const lacc_node *a, *xs, *f;
  const aenv *env;
  const lacc_type *t;
  int right, with_z;
  int out, part;             /* slots */
  int *sx, oix[LACC_MAX_RANK], o, n, m;
} scanner;

/* Element j of the input row. */
static int *scan_in(lower *L, scanner *S, int j) {
  return fold_elem(L, S->xs, S->env, S->sx, S->oix, S->o, j);
}

/* out[o, k] = v, where k is an index of the output row (m elements). */
static void scan_out(lower *L, scanner *S, int k, const int *v) {
  store_elem(L, S->out, k_prim(L, P_ADD, k_prim(L, P_MUL, S->o, S->m), k), v);
}

/* One step: acc = f(acc, x) from the left, f(x, acc) from the right. */
static void scan_step(lower *L, scanner *S, int *acc, const int *x) {
  const lacc_type *pt[2] = { S->t, S->t };
  int nl = S->t->nleaves;
  int *args = ints(L, 2 * nl);
  memcpy(args + (S->right ? nl : 0), acc, sizeof *args * (size_t)nl);
  memcpy(args + (S->right ? 0 : nl), x, sizeof *args * (size_t)nl);
  assign(L, S->t, acc, copy(L, S->t, apply(L, S->f, NULL, S->env, pt, args)));
}

/* Input elements lo <= j < hi in scan order (right: from hi - 1 down), each folded into
 * acc and, with out, stored at its output index (one further for scanl). */
static void scan_loop(lower *L, scanner *S, int lo, int hi, int *acc, int store) {
  int t = var(L, S_I64);
  k_for(L, t, lo, hi, 1);
  int j = S->right ? k_prim(L, P_SUB, k_prim(L, P_ADD, lo, k_prim(L, P_SUB, hi, k_int(L, S_I64, 1))), t)
                   : t;
  scan_step(L, S, acc, scan_in(L, S, j));
  if (store)
    scan_out(L, S, S->with_z && !S->right ? k_prim(L, P_ADD, j, k_int(L, S_I64, 1)) : j, acc);
  k_end(L);
}

/* The carry-less start of a scan1 row: acc = its first element in scan order, stored. */
static int scan1_start(lower *L, scanner *S, int *acc) {
  int one = k_int(L, S_I64, 1);
  int j = S->right ? k_prim(L, P_SUB, S->n, one) : k_int(L, S_I64, 0);
  assign(L, S->t, acc, scan_in(L, S, j));
  scan_out(L, S, j, acc);
  return j;
}

/* Output index of the start value: 0 from the left, n from the right. */
static int scan_z_index(lower *L, scanner *S) {
  return S->right ? S->n : k_int(L, S_I64, 0);
}

static void scan_row(lower *L, scanner *S, int *acc) {
  int zero = k_int(L, S_I64, 0), one = k_int(L, S_I64, 1);
  if (S->with_z) {
    assign(L, S->t, acc, lower_exp(L, S->a->kids[1], NULL, S->env));
    scan_out(L, S, scan_z_index(L, S), acc);
    scan_loop(L, S, zero, S->n, acc, 1);
  } else if (S->right) {
    scan1_start(L, S, acc);
    scan_loop(L, S, zero, k_prim(L, P_SUB, S->n, one), acc, 1);
  } else {
    scan1_start(L, S, acc);
    scan_loop(L, S, one, S->n, acc, 1);
  }
}

static void scan_begin(lower *L, scanner *S, int o) {
  int r = S->xs->rank;
  S->sx = shape_of(L, S->xs, S->env);
  S->n = S->sx[r - 1];
  S->m = S->with_z ? k_prim(L, P_ADD, S->n, k_int(L, S_I64, 1)) : S->n;
  S->o = o;
  unravel(L, r - 1, S->sx, o, S->oix);
}

/* The chunk [lo, hi) of row o in order into acc: the partial of a chunk. */
static void scan_reduce(lower *L, scanner *S, int lo, int hi, int *acc) {
  int one = k_int(L, S_I64, 1);
  if (S->right) {
    int last = k_prim(L, P_SUB, hi, one);
    assign(L, S->t, acc, scan_in(L, S, last));
    scan_loop(L, S, lo, last, acc, 0);
  } else {
    assign(L, S->t, acc, scan_in(L, S, lo));
    scan_loop(L, S, k_prim(L, P_ADD, lo, one), hi, acc, 0);
  }
}

static int step_scan(lower *L, const lacc_node *a, const aenv *env) {
  scanner S0 = { 0 }, *S = &S0;
  S->a = a;
  S->env = env;
  S->t = a->type;
  S->f = a->kids[0];
  S->with_z = scan_with_z(a->kind);
  S->right = scan_right(a->kind);
  S->xs = a->kids[S->with_z ? 2 : 1];
  int r = S->xs->rank;
  int st = new_step(L, SK_SCAN, a, a->rank);
  S->out = new_slot(L, SLOT_KERNEL, S->t, a->rank, out_plan(L, S->t));
  S->part = new_slot(L, SLOT_PARTIAL, S->t, 1, out_plan(L, S->t));
  L->P->steps[st].out = S->out;
  L->P->steps[st].partial = S->part;
  L->P->steps[st].with_z = S->with_z;
  L->P->steps[st].ordered = ordered_only(S->f, S->t);

  /* shape: the input's, one more inner element with a start value; then the inner n */
  L->P->steps[st].fn_shape = new_fn(L, FN_SHAPE);
  scan_begin(L, S, k_int(L, S_I64, 0));
  for (int d = 0; d <= r; d++) {
    kinst *in = emit(L, KO_OUT);
    in->a = d < r - 1 ? S->sx[d] : d == r - 1 ? S->m : S->n;
    in->imm.i = d;
  }

  /* rows p0 <= o < p1, each in order */
  L->P->steps[st].fn_body = new_fn(L, FN_SEG);
  int o = var(L, S_I64);
  k_for(L, o, 0, 1, 1);
  L->key = o;
  scan_begin(L, S, o);
  start_desc(L);
  scan_row(L, S, fresh(L, S->t));
  L->describe = 0;
  k_end(L);

  /* a chunk of row p0 reduced in order into partial p3 */
  L->P->steps[st].fn_part = new_fn(L, FN_PART);
  L->key = 1;
  scan_begin(L, S, 0);
  int *acc = fresh(L, S->t);
  scan_reduce(L, S, 1, 2, acc);
  store_elem(L, S->part, 3, acc);

  /* partials 0 <= c < p1 of row p0 become carries: each chunk's start value */
  L->P->steps[st].fn_combine = new_fn(L, FN_COMBINE);
  L->key = k_int(L, S_I64, -1);
  scan_begin(L, S, 0);
  acc = fresh(L, S->t);
  int zero = k_int(L, S_I64, 0), one = k_int(L, S_I64, 1);
  int c = var(L, S_I64), ci;
  int *tmp;
  if (S->with_z) {
    assign(L, S->t, acc, lower_exp(L, a->kids[1], NULL, env));
    k_for(L, c, zero, 1, 1);
  } else {
    /* the first chunk in scan order starts itself */
    assign(L, S->t, acc, load_elem(L, S->part, S->right ? k_prim(L, P_SUB, 1, one) : zero));
    k_for(L, c, one, 1, 1);
  }
  ci = S->right ? k_prim(L, P_SUB, k_prim(L, P_SUB, 1, one), c) : c;
  tmp = copy(L, S->t, load_elem(L, S->part, ci));
  store_elem(L, S->part, ci, acc);
  scan_step(L, S, acc, tmp);
  k_end(L);

  /* chunk p3 = [p1, p2) of row p0 from its carry */
  L->P->steps[st].fn_chunk = new_fn(L, FN_CHUNK);
  L->key = 1;
  scan_begin(L, S, 0);
  acc = fresh(L, S->t);
  int first = S->right ? k_prim(L, P_EQ, 2, S->n) : k_prim(L, P_EQ, 1, k_int(L, S_I64, 0));
  if (S->with_z) {
    assign(L, S->t, acc, load_elem(L, S->part, 3));
    k_if(L, first);
    scan_out(L, S, scan_z_index(L, S), acc);
    k_end(L);
    scan_loop(L, S, 1, 2, acc, 1);
  } else {
    k_if(L, first);
    int j = scan1_start(L, S, acc);
    if (S->right) scan_loop(L, S, 1, j, acc, 1);
    else scan_loop(L, S, k_prim(L, P_ADD, j, k_int(L, S_I64, 1)), 2, acc, 1);
    k_else(L);
    assign(L, S->t, acc, load_elem(L, S->part, 3));
    scan_loop(L, S, 1, 2, acc, 1);
    k_end(L);
  }
  return S->out;
}

/* ---- push arrays materialised: one loop per part, no per-element test ("Defunctionalizing Push Arrays") */

typedef struct {
  int out, o, m;             /* output slot, row, row length */
  int lo, hi;                /* the part of the row this call writes */
  kindex row;                /* outer indices of the row */
  int r;
} pusher;

/* ceil(x / s) for s > 0, with the floor division of idiv. */
static int ceil_div(lower *L, int x, int s) {
  int zero = k_int(L, S_I64, 0);
  return k_prim(L, P_SUB, zero, k_prim(L, P_IDIV, k_prim(L, P_SUB, zero, x), s));
}

/* Writes the elements j < limit of term t at row positions base + stride j that fall in
 * [lo, hi): pushing through nested appends and interleaves, pulling anything else. */
static void push_apply(lower *L, const pusher *P, const lacc_node *t, const aenv *env, int base,
                       int stride, int limit) {
  int r = P->r;
  if ((t->kind == K_APPEND || t->kind == K_INTERLEAVE) && t->slot == 0) {
    const lacc_node *xs = t->kids[0], *ys = t->kids[1];
    int n1 = shape_of(L, xs, env)[r - 1], n2 = shape_of(L, ys, env)[r - 1];
    if (t->kind == K_APPEND) {
      /* an append within limit: the first part, then what of the second fits */
      push_apply(L, P, xs, env, base, stride, k_prim(L, P_MIN, n1, limit));
      int rest = k_prim(L, P_MAX, k_prim(L, P_SUB, limit, n1), k_int(L, S_I64, 0));
      push_apply(L, P, ys, env, k_prim(L, P_ADD, base, k_prim(L, P_MUL, stride, n1)), stride,
                 k_prim(L, P_MIN, n2, rest));
    } else {
      int two = k_int(L, S_I64, 2);
      int pairs = k_prim(L, P_MIN, n1, n2);
      int wide = k_prim(L, P_MUL, stride, two);
      push_apply(L, P, xs, env, base, wide, k_prim(L, P_MIN, pairs, ceil_div(L, limit, two)));
      push_apply(L, P, ys, env, k_prim(L, P_ADD, base, stride), wide,
                 k_prim(L, P_MIN, pairs, k_prim(L, P_IDIV, limit, two)));
    }
    return;
  }
  int n = k_prim(L, P_MIN, shape_of(L, t, env)[r - 1], limit);
  int zero = k_int(L, S_I64, 0);
  int jlo = k_prim(L, P_MAX, ceil_div(L, k_prim(L, P_SUB, P->lo, base), stride), zero);
  int jhi = k_prim(L, P_MIN, ceil_div(L, k_prim(L, P_SUB, P->hi, base), stride), n);
  int j = var(L, S_I64);
  k_for(L, j, jlo, jhi, 1);
  int pos = k_prim(L, P_ADD, base, k_prim(L, P_MUL, stride, j));
  int *v = part_elem(L, t, env, &P->row, r, j);
  store_elem(L, P->out, k_prim(L, P_ADD, k_prim(L, P_MUL, P->o, P->m), pos), v);
  k_end(L);
}

static int step_push(lower *L, const lacc_node *t, const aenv *env) {
  int r = t->rank;
  int st = new_step(L, SK_MAP, t, r);
  int out = new_slot(L, SLOT_KERNEL, t->type, r, out_plan(L, t->type));
  L->P->steps[st].out = out;
  L->P->steps[st].fn_shape = new_fn(L, FN_SHAPE);
  int *ext = shape_of(L, t, env);
  for (int d = 0; d < r; d++) {
    kinst *in = emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  /* elements p0 <= i < p1 of the output: the rows they touch, each clipped */
  L->P->steps[st].fn_body = new_fn(L, FN_BODY);
  int *oext = slot_ext(L, out);
  pusher P = { .out = out, .r = r, .m = oext[r - 1] };
  int zero = k_int(L, S_I64, 0);
  k_if(L, k_prim(L, P_GT, P.m, zero));
  int o = var(L, S_I64);
  k_for(L, o, k_prim(L, P_IDIV, 0, P.m), ceil_div(L, 1, P.m), 1);
  L->key = k_prim(L, P_MUL, o, P.m);
  P.o = o;
  int start = k_prim(L, P_MUL, o, P.m);
  P.lo = k_prim(L, P_MAX, k_prim(L, P_SUB, 0, start), zero);
  P.hi = k_prim(L, P_MIN, k_prim(L, P_SUB, 1, start), P.m);
  unravel(L, r - 1, oext, o, P.row.ix);
  start_desc(L);
  push_apply(L, &P, t, env, zero, k_int(L, S_I64, 1), P.m);
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
  int zero = k_int(L, S_I64, 0), one = k_int(L, S_I64, 1), n = S->ext[d];
  int last = k_prim(L, P_SUB, n, one);
  switch (S->b) {
  case B_WRAP: return k_prim(L, P_MOD, k, k_prim(L, P_MAX, n, one));
  case B_MIRROR:
    k = k_select(L, k_prim(L, P_LT, k, zero), k_prim(L, P_SUB, zero, k),
                 k_select(L, k_prim(L, P_GT, k, last),
                          k_prim(L, P_SUB, k_prim(L, P_SUB, k_prim(L, P_ADD, n, n), k_int(L, S_I64, 2)), k), k));
    break;
  case B_CONSTANT: {
    int in = k_prim(L, P_LAND, k_prim(L, P_GE, k, zero), k_prim(L, P_LE, k, last));
    *inside = *inside < 0 ? in : k_prim(L, P_LAND, *inside, in);
    break;
  }
  default: break;
  }
  return k_prim(L, P_MIN, k_prim(L, P_MAX, k, zero), last);
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
        delta = d == 0 ? k_int(L, S_I64, off[0])
                       : k_prim(L, P_ADD, k_prim(L, P_MUL, delta, S->ext[d]), k_int(L, S_I64, off[d]));
        k.ix[d] = k_prim(L, P_ADD, ix[d], k_int(L, S_I64, off[d]));
      }
      k.lin = k_prim(L, P_ADD, lin, delta);
    } else {
      for (int d = 0; d < r; d++)
        k.ix[d] = st_bound(L, S, d, k_prim(L, P_ADD, ix[d], k_int(L, S_I64, off[d])), &inside);
      k.lin = ravel(L, r, S->ext, k.ix);
    }
    int *v = elem(L, S->xs, S->env, &k);
    for (int l = 0; l < nl; l++)
      args[c * nl + l] = inside >= 0 ? k_select(L, inside, v[l], S->cval[l]) : v[l];
  }
  const lacc_type *pt = S->a->kids[0]->kids[0]->type;
  store_elem(L, S->out, lin, apply(L, S->a->kids[0], NULL, S->env, &pt, args));
}

/* Columns lo <= j < hi of row o (outer indices oix). */
static void st_columns(lower *L, const stenciler *S, int o, const int *oix, int lo, int hi, int fast) {
  int r = S->rank, m = S->ext[r - 1];
  int j = var(L, S_I64);
  k_for(L, j, lo, hi, 1);
  int ix[3];
  for (int d = 0; d + 1 < r; d++) ix[d] = oix[d];
  ix[r - 1] = j;
  st_element(L, S, ix, k_prim(L, P_ADD, k_prim(L, P_MUL, o, m), j), fast);
  k_end(L);
}

static int step_stencil(lower *L, const lacc_node *a, const aenv *env) {
  stenciler S0 = { .a = a, .xs = a->kids[1], .env = env, .rank = a->rank }, *S = &S0;
  int r = a->rank;
  S->b = stencil_boundary(a->field);
  S->count = 1;
  for (int d = 0; d < r; d++) S->count *= (S->w[d] = stencil_window(a->field, d));
  int st = new_step(L, SK_MAP, a, r);
  S->out = new_slot(L, SLOT_KERNEL, a->type, r, out_plan(L, a->type));
  L->P->steps[st].out = S->out;
  L->P->steps[st].fn_shape = new_fn(L, FN_SHAPE);
  int *ext = shape_of(L, S->xs, env);
  for (int d = 0; d < r; d++) {
    kinst *in = emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  L->P->steps[st].fn_body = new_fn(L, FN_BODY);
  S->ext = shape_of(L, S->xs, env);
  if (S->b == B_CONSTANT) S->cval = copy(L, S->xs->type, lower_exp(L, a->kids[2], NULL, env));
  int zero = k_int(L, S_I64, 0), m = S->ext[r - 1];
  k_if(L, k_prim(L, P_GT, m, zero));
  int o = var(L, S_I64);
  k_for(L, o, k_prim(L, P_IDIV, 0, m), ceil_div(L, 1, m), 1);
  int start = k_prim(L, P_MUL, o, m);
  L->key = start;
  int lo = k_prim(L, P_MAX, k_prim(L, P_SUB, 0, start), zero);
  int hi = k_prim(L, P_MIN, k_prim(L, P_SUB, 1, start), m);
  int oix[3];
  unravel(L, r - 1, S->ext, o, oix);
  /* interior rows: every outer index at least half a window from the edges */
  int inner = k_prim(L, P_EQ, zero, zero);
  for (int d = 0; d + 1 < r; d++) {
    int h = k_int(L, S_I64, (S->w[d] - 1) / 2);
    int ok = k_prim(L, P_LAND, k_prim(L, P_GE, oix[d], h),
                    k_prim(L, P_LT, oix[d], k_prim(L, P_SUB, S->ext[d], h)));
    inner = k_prim(L, P_LAND, inner, ok);
  }
  int h = k_int(L, S_I64, (S->w[r - 1] - 1) / 2);
  int b1 = k_prim(L, P_MIN, h, m), b2 = k_prim(L, P_MAX, k_prim(L, P_SUB, m, h), b1);
  start_desc(L);
  k_if(L, inner);
  st_columns(L, S, o, oix, lo, k_prim(L, P_MIN, hi, b1), 0);
  st_columns(L, S, o, oix, k_prim(L, P_MAX, lo, b1), k_prim(L, P_MIN, hi, b2), 1);
  st_columns(L, S, o, oix, k_prim(L, P_MAX, lo, b2), hi, 0);
  k_else(L);
  st_columns(L, S, o, oix, lo, hi, 0);
  k_end(L);
  L->describe = 0;
  k_end(L);
  k_end(L);
  return S->out;
}

/* ---- permute: the defaults copied (in parallel), then the source scattered into them */

/* Source elements p0 <= i < p1 combined into their targets: plainly (one thread), or
 * with compare-and-swap loops on a one-scalar element (any number of threads). */
static void scatter(lower *L, const lacc_node *a, const aenv *env, int out, int atomic) {
  const lacc_node *ixf = a->kids[2], *xs = a->kids[3];
  int *oext = slot_ext(L, out);
  int *sx = shape_of(L, xs, env);
  int i = var(L, S_I64);
  k_for(L, i, 0, 1, 1);
  L->key = i;
  kindex k;
  k.lin = i;
  unravel(L, xs->rank, sx, i, k.ix);
  const lacc_type *shape_t = type_shape(L->ctx, xs->rank);
  if (shape_t == NULL) oom(L);
  int *to = apply(L, ixf, NULL, env, &shape_t, k.ix);
  int zero = k_int(L, S_I64, 0), minus1 = k_int(L, S_I64, -1);
  int ignore = -1, ok = -1;
  for (int d = 0; d < a->rank; d++) {
    int ig = k_prim(L, P_EQ, to[d], minus1);
    int in_d = k_prim(L, P_LAND, k_prim(L, P_GE, to[d], zero), k_prim(L, P_LT, to[d], oext[d]));
    ignore = ignore < 0 ? ig : k_prim(L, P_LAND, ignore, ig);
    ok = ok < 0 ? in_d : k_prim(L, P_LAND, ok, in_d);
  }
  if (ok >= 0) {
    k_if(L, k_prim(L, P_LAND, k_prim(L, P_LNOT, ok, -1), k_prim(L, P_LNOT, ignore, -1)));
    k_fail(L, add_check(L, CK_PERMUTE, "permute", a->where, 0), 0, NULL);
    k_end(L);
    k_if(L, ok);
  }
  int t = ravel(L, a->rank, oext, to);
  if (!atomic) start_desc(L);
  int *x = elem(L, xs, env, &k);
  L->describe = 0;
  const lacc_type *pt[2] = { a->type, a->type };
  int nl = a->type->nleaves;
  int *args = ints(L, 2 * nl);
  memcpy(args, x, sizeof *args * (size_t)nl);
  if (atomic) {
    int b0 = L->P->slots[out].plan->leaf_buf[0];
    emit(L, KO_LOOP);
    int old = k_read(L, KO_ALOAD, out, b0, t);
    args[nl] = k_cast(L, a->type->scalar, old);
    int *nv = apply(L, a->kids[0], NULL, env, pt, args);
    int done = k_cas(L, out, b0, t, old, nv[0]);
    int again = k_prim(L, P_LNOT, done, -1);
    emit(L, KO_BREAKIFNOT)->a = again;
    k_end(L);
  } else {
    int *old = load_elem(L, out, t);
    memcpy(args + nl, old, sizeof *args * (size_t)nl);
    store_elem(L, out, t, apply(L, a->kids[0], NULL, env, pt, args));
  }
  if (ok >= 0) k_end(L);
  k_end(L);
}

static int step_permute(lower *L, const lacc_node *a, const aenv *env) {
  const lacc_node *def = a->kids[1], *xs = a->kids[3];
  int st = new_step(L, SK_PERMUTE, a, a->rank);
  int out = new_slot(L, SLOT_KERNEL, a->type, a->rank, out_plan(L, a->type));
  L->P->steps[st].out = out;
  const layout_plan *op = L->P->slots[out].plan;
  L->P->steps[st].atomic = a->type->kind == T_SCALAR && !op->raw && op->leaf_buf[0] >= 0;

  /* shape: the defaults'; then the number of source elements */
  L->P->steps[st].fn_shape = new_fn(L, FN_SHAPE);
  int *ext = shape_of(L, def, env);
  for (int d = 0; d < a->rank; d++) {
    kinst *in = emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  int nsrc = size_of(L, xs->rank, shape_of(L, xs, env));
  kinst *in = emit(L, KO_OUT);
  in->a = nsrc;
  in->imm.i = a->rank;

  L->P->steps[st].fn_body = new_fn(L, FN_BODY);
  int *oext = slot_ext(L, out);
  int i = var(L, S_I64);
  k_for(L, i, 0, 1, 1);
  L->key = i;
  kindex k;
  k.lin = i;
  unravel(L, a->rank, oext, i, k.ix);
  store_elem(L, out, i, elem(L, def, env, &k));
  k_end(L);

  L->P->steps[st].fn_scatter = new_fn(L, FN_SCATTER);
  scatter(L, a, env, out, 0);
  if (L->P->steps[st].atomic) {
    L->P->steps[st].fn_ascatter = new_fn(L, FN_SCATTER);
    scatter(L, a, env, out, 1);
  }
  return out;
}

/* ---- acond: a test step, each branch's steps behind a guard, a select */

static int step_test(lower *L, const lacc_node *t, const aenv *env) {
  const lacc_type *b = type_parse(L->ctx, "bool");
  if (b == NULL) oom(L);
  int st = new_step(L, SK_TEST, t, 0);
  int out = new_slot(L, SLOT_KERNEL, b, 0, out_plan(L, b));
  L->P->steps[st].out = out;
  L->P->steps[st].fn_shape = new_fn(L, FN_SHAPE);
  L->P->steps[st].fn_body = new_fn(L, FN_BODY);
  int i = var(L, S_I64);
  k_for(L, i, 0, 1, 1);
  L->key = i;
  store_elem(L, out, i, lower_exp(L, t->kids[0], NULL, env));
  k_end(L);
  return out;
}

static int new_guard(lower *L, int slot, int want) {
  kplan *P = L->P;
  grow(L, (void **)&P->guards, &P->gcap, P->nguards, sizeof *P->guards);
  P->guards[P->nguards] = (pguard){ slot, want, L->guard };
  return P->nguards++;
}

static int plan_acc(lower *L, lacc_node *t, const aenv *env, const aenv **delayed);

/* A copy of slot src in the layout results are made in. */
static int step_copy(lower *L, const lacc_node *t, int src) {
  const pslot *ps = &L->P->slots[src];
  int r = ps->rank, st = new_step(L, SK_MAP, t, r);
  int out = new_slot(L, SLOT_KERNEL, ps->type, r, out_plan(L, ps->type));
  L->P->steps[st].out = out;
  L->P->steps[st].fn_shape = new_fn(L, FN_SHAPE);
  int *ext = slot_ext(L, src);
  for (int d = 0; d < r; d++) {
    kinst *in = emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  L->P->steps[st].fn_body = new_fn(L, FN_BODY);
  int i = var(L, S_I64);
  k_for(L, i, 0, 1, 1);
  L->key = i;
  store_elem(L, out, i, load_elem(L, src, i));
  k_end(L);
  return out;
}

/* A branch materialised behind its guard, in the results' layout (both branches of an
 * acond must share one, as their consumers read either). */
static int plan_branch(lower *L, lacc_node *t, const aenv *env, int guard) {
  int saved = L->guard;
  L->guard = guard;
  const aenv *d;
  int s = plan_acc(L, t, env, &d);
  if (s < 0) s = step_map(L, d->node, d->env);
  if (L->P->slots[s].plan != out_plan(L, L->P->slots[s].type)) s = step_copy(L, t, s);
  L->guard = saved;
  return s;
}

static int step_acond(lower *L, lacc_node *t, const aenv *env) {
  int test = step_test(L, t, env);
  int a = plan_branch(L, t->kids[1], env, new_guard(L, test, 1));
  int b = plan_branch(L, t->kids[2], env, new_guard(L, test, 0));
  int st = new_step(L, SK_SELECT, t, t->rank);
  int out = new_slot(L, SLOT_KERNEL, t->type, t->rank, out_plan(L, t->type));
  pstep *s = &L->P->steps[st];
  s->out = out;
  s->sel_test = test;
  s->sel_then = a;
  s->sel_else = b;
  use_slot(L, test);
  use_slot(L, a);
  use_slot(L, b);
  return out;
}

/* ---- awhile: its inputs materialised, then one step that runs the condition and the
 * body (plans nested in this one, of the loop's array and the arrays read from outside) */

static int step_while(lower *L, lacc_node *t, const aenv *env) {
  int n = t->nkids;
  int *in = ints(L, n);
  layout_strategy *st = alloc(L, sizeof *st * (size_t)n);
  for (int i = 0; i < n; i++) {
    const aenv *d;
    in[i] = plan_acc(L, t->kids[i], env, &d);
    if (in[i] < 0) in[i] = step_map(L, d->node, d->env);
    st[i] = L->P->slots[in[i]].plan->strategy;
  }
  st[0] = L->ctx->layout;   /* the loop's array stays in the layout results are made in */
  int k = new_step(L, SK_WHILE, t, t->rank);
  pstep *s = &L->P->steps[k];
  s->loop_in = in;
  s->nloop_in = n;
  for (int i = 0; i < 2; i++) {
    /* the condition's and the body's ASTs, nested in this one, planned in turn */
    s->loop[i] = calloc(1, sizeof *s->loop[i]);
    if (s->loop[i] == NULL) oom(L);
    if (lower_plan(L->ctx, &t->loop[i], L->P->backend, st, s->loop[i]) != LACC_OK) oom(L);
    s = &L->P->steps[k];
  }
  s->out = new_slot(L, SLOT_KERNEL, t->type, t->rank, out_plan(L, t->type));
  for (int i = 0; i < n; i++) use_slot(L, in[i]);
  return L->P->steps[k].out;
}

/* ---- planning: walk the AST, materialise what fusion marked */

static int plan_acc(lower *L, lacc_node *t, const aenv *env, const aenv **delayed);

static void plan_kids(lower *L, lacc_node *t, const aenv *env) {
  for (int i = 0; i < t->nkids; i++) {
    lacc_node *k = t->kids[i];
    if (node_level_of(k->kind) != L_ACC) continue;
    const aenv *d;
    plan_acc(L, k, env, &d);
  }
}

/* Returns the slot of a materialised term, or -1 with *delayed set to its closure. */
static int plan_acc(lower *L, lacc_node *t, const aenv *env, const aenv **delayed) {
  *delayed = NULL;
  switch (t->kind) {
  case K_USE:
    t->slot = input_slot(L, t->array) + 1;
    return t->slot - 1;
  case K_PARAM:
    t->slot = param_slot(L, t) + 1;
    return t->slot - 1;
  case K_AVAR: {
    const aenv *e = a_lookup(env, t->field);
    if (e->slot < 0) *delayed = e;
    return e->slot;
  }
  case K_ALET: {
    lacc_node *b = t->kids[0];
    const aenv *bd;
    int s = plan_acc(L, b, env, &bd);
    const aenv *in = s >= 0 ? a_push(L, env, NULL, NULL, s)
                   : a_push(L, env, bd->node, bd->env, -1);
    return plan_acc(L, t->kids[1], in, delayed);
  }
  case K_ACOND:
    t->slot = step_acond(L, t, env) + 1;
    return t->slot - 1;
  case K_AWHILE:
    t->slot = step_while(L, t, env) + 1;
    return t->slot - 1;
  default: break;
  }
  plan_kids(L, t, env);
  if (!t->manifest) {
    *delayed = a_push(L, NULL, t, env, -1);
    return -1;
  }
  int s = t->kind == K_FOLD || t->kind == K_FOLD1 ? step_fold(L, t, env)
        : is_scan(t->kind)                         ? step_scan(L, t, env)
        : t->kind == K_PERMUTE                     ? step_permute(L, t, env)
        : t->kind == K_APPEND || t->kind == K_INTERLEAVE ? step_push(L, t, env)
        : t->kind == K_STENCIL                     ? step_stencil(L, t, env)
                                                   : step_map(L, t, env);
  t->slot = s + 1;
  return s;
}

static int plan_results(lower *L, lacc_node *t, const aenv *env) {
  if (t->kind == K_ALET) {
    lacc_node *b = t->kids[0];
    const aenv *bd;
    int s = plan_acc(L, b, env, &bd);
    const aenv *in = s >= 0 ? a_push(L, env, NULL, NULL, s)
                   : a_push(L, env, bd->node, bd->env, -1);
    return plan_results(L, t->kids[1], in);
  }
  kplan *P = L->P;
  P->nresults = t->nkids;
  P->results = malloc(sizeof *P->results * (size_t)(t->nkids ? t->nkids : 1));
  if (P->results == NULL) oom(L);
  for (int i = 0; i < t->nkids; i++) {
    const aenv *d;
    int s = plan_acc(L, t->kids[i], env, &d);
    if (s < 0) s = step_map(L, d->node, d->env);
    P->results[i] = s;
    P->slots[s].result = 1;
  }
  return LACC_OK;
}

int lower_plan(lacc_ctx *ctx, const ast_arena *ast, backend_kind backend,
               const layout_strategy *layouts, kplan *P) {
  kplan_init(P, ctx);
  P->backend = backend;
  lower *L = calloc(1, sizeof *L);
  if (L == NULL) return ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
  L->ctx = ctx;
  L->layouts = layouts;
  L->P = P;
  L->guard = -1;
  int rc = LACC_OK;
  if (setjmp(L->oom) == 0) {
    plan_results(L, ast->root, NULL);
  } else {
    rc = ctx->errcode ? ctx->errcode : ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
  }
  free(L->loads);
  free(L);
  return rc;
}
