/* lower_ir.c: writing kernel IR, the lowering's instruction set.
 *
 * Owns: the lowering's state helpers (allocation, growth, the function being written),
 * typed variables, every instruction builder (constants, primitives, casts, selects,
 * loops, loads, stores, compare-and-swap, checks), new functions, and the plan's slots
 * (inputs, parameters, outputs, their extents).
 * Must not: decide what to compute: the other lower_*.c files call these.
 */
#include "kir/lower.h"
#include "base/vec.h"

void *lw_alloc(lower *L, size_t n) {
  void *p = kplan_alloc(L->P, n);
  if (p == NULL) oom(L);
  return p;
}

/* Room for element n of *v (the plan's and the lowering's arrays), or the jump out. */
void lw_grow(lower *L, void **v, int *cap, int n, size_t size) {
  if (vec_reserve(v, cap, n + 1, 16, size) != 0) oom(L);
}

int lw_var(lower *L, scalar_kind k) {
  kfn *F = fn(L);
  lw_grow(L, (void **)&F->vt, &F->vcap, F->nvars, sizeof *F->vt);
  F->vt[F->nvars] = k;
  return F->nvars++;
}

kinst *lw_emit(lower *L, kop op) {
  kfn *F = fn(L);
  klist *l = L->pro ? &F->pro : &F->body;
  lw_grow(L, (void **)&l->v, &l->cap, l->n, sizeof *l->v);
  kinst *in = &l->v[l->n++];
  memset(in, 0, sizeof *in);
  in->op = op;
  in->dst = in->a = in->b = -1;
  return in;
}

/* 0 <= v <= hi + off (off 0 or -1) holds by construction wherever v is defined, or for
 * a parameter, in the body (bounds.c uses it). */
void lw_fact(lower *L, int v, int hi, int off) {
  kfn *F = fn(L);
  lw_grow(L, (void **)&F->facts, &F->fcap, F->nfacts + 2, sizeof *F->facts);
  F->facts[F->nfacts++] = v;
  F->facts[F->nfacts++] = hi;
  F->facts[F->nfacts++] = off;
}

int lw_k_const(lower *L, scalar_kind k, lacc_val v) {
  int d = lw_var(L, k);
  kinst *in = lw_emit(L, KO_CONST);
  in->dst = d;
  in->imm = v;
  if (L->grp != NULL) lw_group_const(L, d, v);
  return d;
}

int lw_k_int(lower *L, scalar_kind k, int64_t i) {
  lacc_val v = { .i = i };
  return lw_k_const(L, k, v);
}

/* A user constant read from the run-time table: programs that differ only in their
 * constants (sizes, coefficients) share one compiled kernel, and on a backend that reads
 * the table at each run one plan (memo.c). 0, 1 and -1 stay inline. */
int kir_const_lifted(const lacc_type *t, lacc_val v) {
  scalar_kind k = t->scalar;
  if (k == S_BOOL) return 0;
  if (k == S_F32) return !(v.f == 0 && !signbit(v.f)) && v.f != 1;
  if (k == S_F64) return !(v.d == 0 && !signbit(v.d)) && v.d != 1;
  return !(v.i >= -1 && v.i <= 1);
}

/* src: the AST constant (NULL for a value lowering computed from constants it read). */
int lw_k_user_const(lower *L, const lacc_node *src, const lacc_type *t, lacc_val v) {
  if (!kir_const_lifted(t, v)) return lw_k_const(L, t->scalar, v);
  /* a grouped producer's elements inline theirs, so that their copies are alike */
  if (L->grp != NULL) {
    if (src != NULL) node_value_read(src);
    return lw_k_const(L, t->scalar, v);
  }
  kplan *P = L->P;
  lw_grow(L, (void **)&P->consts, &P->kcap, P->nconsts, sizeof *P->consts);
  lw_grow(L, (void **)&P->ksrc, &P->kscap, P->nconsts, sizeof *P->ksrc);
  P->consts[P->nconsts] = v;
  P->ksrc[P->nconsts].k = src != NULL ? src->kindex : 0;
  P->ksrc[P->nconsts].read = 0;
  int pro = L->pro, d = lw_var(L, t->scalar);
  L->pro = 1;
  kinst *in = lw_emit(L, KO_KCONST);
  in->dst = d;
  in->imm.i = P->nconsts++;
  L->pro = pro;
  return d;
}

void lw_k_mov(lower *L, int dst, int src) {
  kinst *in = lw_emit(L, KO_MOV);
  in->dst = dst;
  in->a = src;
  if (L->grp != NULL) lw_group_forget(L, dst);
}

int lw_k_prim(lower *L, prim_op p, int a, int b) {
  if (L->grp != NULL) {
    int known = lw_group_prim(L, p, a, b);
    if (known >= 0) return known;
  }
  int d = lw_var(L, prim_has(p, PF_BOOL) ? S_BOOL : vtype(L, a));
  kinst *in = lw_emit(L, KO_PRIM);
  in->dst = d;
  in->prim = p;
  in->a = a;
  in->b = b;
  if (L->grp != NULL) lw_group_note(L, d, p, a, b);
  return d;
}

int lw_k_in_range(lower *L, int x, int zero, int n) {
  return lw_k_prim(L, P_LAND, lw_k_prim(L, P_GE, x, zero), lw_k_prim(L, P_LT, x, n));
}

int lw_k_and(lower *L, int acc, int x) {
  return acc < 0 ? x : lw_k_prim(L, P_LAND, acc, x);
}

/* A primitive of three operands (fma): the third in args[0]. */
int lw_k_prim3(lower *L, prim_op p, int a, int b, int c) {
  int *args = ints(L, 1);
  int d = lw_k_prim(L, p, a, b);
  klist *l = L->pro ? &fn(L)->pro : &fn(L)->body;
  args[0] = c;
  l->v[l->n - 1].args = args;
  l->v[l->n - 1].nargs = 1;
  return d;
}

/* A one-operand instruction into a new variable of kind k. */
int lw_k_unary(lower *L, kop op, scalar_kind k, int a) {
  int d = lw_var(L, k);
  kinst *in = lw_emit(L, op);
  in->dst = d;
  in->a = a;
  return d;
}

int lw_k_cast(lower *L, scalar_kind to, int a) {
  if (vtype(L, a) == to) return a;
  int d = lw_k_unary(L, KO_CAST, to, a);
  if (L->grp != NULL) lw_group_cast(L, d, a);
  return d;
}

int lw_k_select(lower *L, int c, int a, int b) {
  lacc_val known;
  if (L->grp != NULL && lw_group_known(L, c, &known)) return known.u != 0 ? a : b;
  int d = lw_var(L, vtype(L, a));
  kinst *in = lw_emit(L, KO_IF);
  in->a = c;
  lw_k_mov(L, d, a);
  lw_emit(L, KO_ELSE);
  lw_k_mov(L, d, b);
  lw_emit(L, KO_END);
  return d;
}

kinst *lw_k_for(lower *L, int i, int lo, int hi, int64_t step) {
  kinst *in = lw_emit(L, KO_FOR);
  in->dst = i;
  in->a = lo;
  in->b = hi;
  in->imm.i = step;
  return in;
}

void lw_use_slot(lower *L, int slot) {
  pslot *s = &L->P->slots[slot];
  if (s->last_use < L->step) s->last_use = L->step;
}

/* Append to the description of the current step (explain). */
void lw_describe(lower *L, const char *a, const char *b) {
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
int lw_k_read(lower *L, kop op, int slot, int buf, int idx) {
  lw_use_slot(L, slot);
  int d = lw_var(L, L->P->slots[slot].plan->buf_kind[buf]);
  kinst *in = lw_emit(L, op);
  in->dst = d;
  in->slot = slot;
  in->buf = buf;
  in->a = idx;
  return d;
}

/* Whether the compare-and-swap of buffer element idx from `expect` to v succeeded. */
int lw_k_cas(lower *L, int slot, int buf, int idx, int expect, int v) {
  int c = lw_k_cast(L, L->P->slots[slot].plan->buf_kind[buf], v);
  int d = lw_var(L, S_BOOL);
  int *args = kplan_alloc(L->P, sizeof *args);
  if (args == NULL) oom(L);
  args[0] = expect;
  kinst *in = lw_emit(L, KO_CAS);
  in->dst = d;
  in->slot = slot;
  in->buf = buf;
  in->a = idx;
  in->b = c;
  in->nargs = 1;
  in->args = args;
  return d;
}

void lw_k_store(lower *L, int slot, int buf, int idx, int v) {
  int c = lw_k_cast(L, L->P->slots[slot].plan->buf_kind[buf], v);
  kinst *in = lw_emit(L, KO_STORE);
  in->slot = slot;
  in->buf = buf;
  in->a = idx;
  in->b = c;
}

/* One record per check of the program: the element code of a step is written into
 * several functions, which share their checks' records (explain counts them). */
int lw_add_check(lower *L, check_kind k, const char *what, const char *where, int rank) {
  kplan *P = L->P;
  for (int c = 0; c < P->nchecks; c++)
    if (P->checks[c].kind == k && P->checks[c].where == where && P->checks[c].what == what &&
        P->checks[c].rank == rank)
      return c;
  lw_grow(L, (void **)&P->checks, &P->ccap, P->nchecks, sizeof *P->checks);
  P->checks[P->nchecks] = (pcheck){ k, where, what, rank };
  return P->nchecks++;
}

void lw_k_fail(lower *L, int check, int nargs, const int *args) {
  int *v = ints(L, nargs);
  for (int i = 0; i < nargs; i++) v[i] = lw_k_cast(L, S_I64, args[i]);
  kinst *in = lw_emit(L, KO_FAIL);
  in->check = check;
  in->a = L->key;
  in->nargs = nargs;
  in->args = v;
  if (L->pro) lw_emit(L, KO_RETURN);   /* a shape check: what follows needs the shape */
}

/* Functions of the plan; each starts with p0..p3 as variables 0..3. */
int lw_new_fn(lower *L, fn_role role) {
  kplan *P = L->P;
  lw_grow(L, (void **)&P->fns, &P->fcap, P->nfns, sizeof *P->fns);
  kfn *F = &P->fns[P->nfns];
  memset(F, 0, sizeof *F);
  F->role = role;
  F->step = L->step;
  F->tile_lane = -1;
  L->fi = P->nfns++;
  L->memos = NULL;
  L->nloads = 0;
  L->pro = 0;
  for (int i = 0; i < 4; i++) lw_var(L, S_I64);
  L->key = lw_k_int(L, S_I64, -1);
  L->pro = 0;
  return L->fi;
}

/* ---- slots */

int lw_new_slot(lower *L, slot_kind kind, const lacc_type *t, int rank,
                const layout_plan *plan) {
  kplan *P = L->P;
  lw_grow(L, (void **)&P->slots, &P->scap, P->nslots, sizeof *P->slots);
  pslot *s = &P->slots[P->nslots];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->type = t;
  s->rank = rank;
  s->plan = plan;
  s->last_use = -1;
  return P->nslots++;
}

int lw_input_slot(lower *L, lacc_array *a) {
  for (int i = 0; i < L->P->nslots; i++)
    if (L->P->slots[i].kind == SLOT_INPUT && L->P->slots[i].array == a) return i;
  int s = lw_new_slot(L, SLOT_INPUT, a->type, a->rank, a->plan);
  L->P->slots[s].array = a;
  L->P->slots[s].param = -1;
  return s;
}

int lw_param_slot(lower *L, const lacc_node *t) {
  for (int i = 0; i < L->P->nslots; i++)
    if (L->P->slots[i].kind == SLOT_PARAM && L->P->slots[i].param == t->field) return i;
  layout_strategy st = L->layouts != NULL ? L->layouts[t->field] : (layout_strategy)t->cval.i;
  const layout_plan *plan = layout_plan_of(L->ctx, t->type, st);
  if (plan == NULL) oom(L);
  int s = lw_new_slot(L, SLOT_PARAM, t->type, t->rank, plan);
  L->P->slots[s].param = t->field;
  return s;
}

const layout_plan *lw_out_plan(lower *L, const lacc_type *t) {
  const layout_plan *p = layout_plan_of(L->ctx, t, L->ctx->layout);
  if (p == NULL) oom(L);
  return p;
}

/* Extents of a slot, loaded once in the prologue. */
int *lw_slot_ext(lower *L, int slot) {
  for (memo *m = L->memos; m != NULL; m = m->next)
    if (m->node == NULL && m->slot == slot) return m->ext;
  int rank = L->P->slots[slot].rank;
  int *e = ints(L, rank), pro = L->pro;
  L->pro = 1;
  lw_use_slot(L, slot);
  for (int d = 0; d < rank; d++) {
    e[d] = lw_var(L, S_I64);
    kinst *in = lw_emit(L, KO_EXTENT);
    in->dst = e[d];
    in->slot = slot;
    in->imm.i = d;
  }
  L->pro = pro;
  memo *m = lw_alloc(L, sizeof *m);
  *m = (memo){ NULL, NULL, slot, e, L->memos };
  L->memos = m;
  return e;
}

/* ---- where materialised terms went: open addressing on the node's address */

static size_t place_hash(const lacc_node *t, int cap) {
  uint64_t h = (uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 32) & (size_t)(cap - 1);
}

static struct placed *place_find(lower *L, const lacc_node *t) {
  size_t i = place_hash(t, L->pcap);
  while (L->placed[i].node != NULL && L->placed[i].node != t) i = (i + 1) & (size_t)(L->pcap - 1);
  return &L->placed[i];
}

int lw_slot_of(lower *L, const lacc_node *t) {
  if (L->pcap == 0) return -1;
  const struct placed *p = place_find(L, t);
  return p->node != NULL ? p->slot : -1;
}

void lw_set_slot(lower *L, const lacc_node *t, int slot) {
  if (2 * (L->nplaced + 1) > L->pcap) {   /* at most half full */
    struct placed *old = L->placed;
    int oldcap = L->pcap;
    L->pcap = oldcap ? 2 * oldcap : 64;
    L->placed = calloc((size_t)L->pcap, sizeof *L->placed);
    if (L->placed == NULL) {
      L->placed = old;
      L->pcap = oldcap;
      oom(L);
    }
    for (int i = 0; i < oldcap; i++)
      if (old[i].node != NULL) *place_find(L, old[i].node) = old[i];
    free(old);
  }
  struct placed *p = place_find(L, t);
  if (p->node == NULL) L->nplaced++;
  p->node = t;
  p->slot = slot;
}
