/* lower_cse.c: what the code just written computes twice, computed once.
 *
 * Owns: common subexpressions of a stretch of a function's body (a grouped producer's
 * elements: lower_group.c gives the w elements of a group the same instructions for what
 * they share): a pure instruction (constant, primitive, cast, bit move) equal to one
 * before it that is in force there (written earlier at the stretch's outer level, its
 * operands and result written once in the whole function) is dropped, and its result's
 * uses read the earlier one's. The C compiler would merge them too, at a cost in build
 * time proportional to the copies (a Philox block four times over doubled its build).
 * Must not: drop anything else: loads, stores, checks and assignments stay as written.
 */
#include "kir/lower.h"

static int pure(kop op) {
  return op == KO_CONST || op == KO_PRIM || op == KO_CAST || op == KO_TOBITS || op == KO_FROMBITS;
}

static int same(const kfn *F, const kinst *x, const kinst *y) {
  if (x->op != y->op || F->vt[x->dst] != F->vt[y->dst]) return 0;
  if (x->op == KO_CONST) return x->imm.u == y->imm.u;
  if (x->a != y->a || x->b != y->b || x->nargs != y->nargs) return 0;
  if (x->op == KO_PRIM && x->prim != y->prim) return 0;
  for (int i = 0; i < x->nargs; i++)
    if (x->args[i] != y->args[i]) return 0;
  return 1;
}

static unsigned hash(const kfn *F, const kinst *in) {
  uint64_t h = (uint64_t)in->op * 0x9E3779B97F4A7C15u ^ (uint64_t)F->vt[in->dst];
  if (in->op == KO_CONST) {
    h = (h ^ in->imm.u) * 0xBF58476D1CE4E5B9u;
  } else {
    h = (h ^ (uint64_t)(uint32_t)in->a) * 0xBF58476D1CE4E5B9u;
    h = (h ^ (uint64_t)(uint32_t)in->b ^ ((uint64_t)in->prim << 32)) * 0x94D049BB133111EBu;
    for (int i = 0; i < in->nargs; i++) h = (h ^ (uint64_t)(uint32_t)in->args[i]) * 0x94D049BB133111EBu;
  }
  return (unsigned)(h ^ (h >> 31));
}

/* How many instructions of F write each variable (2: two or more). */
static unsigned char *def_counts(lower *L, const kfn *F) {
  unsigned char *defs = lw_alloc(L, (size_t)(F->nvars > 0 ? F->nvars : 1));
  memset(defs, 0, (size_t)(F->nvars > 0 ? F->nvars : 1));
  const klist *lists[2] = { &F->pro, &F->body };
  for (int li = 0; li < 2; li++)
    for (int i = 0; i < lists[li]->n; i++) {
      int d = kinst_def(&lists[li]->v[i]);
      if (d >= 0 && defs[d] < 2) defs[d]++;
    }
  return defs;
}

static void rename_uses(kinst *in, const int *rep) {
  unsigned f = kop_flags(in->op);
  if ((f & KF_A) && in->a >= 0) in->a = rep[in->a];
  if ((f & KF_B) && in->b >= 0) in->b = rep[in->b];
  if (f & KF_ARGS)
    for (int i = 0; i < in->nargs; i++)
      if (in->args[i] >= 0) in->args[i] = rep[in->args[i]];
  if (in->op != KO_PRIM) return;   /* a primitive's second and third operands are not flagged */
  if (in->b >= 0) in->b = rep[in->b];
  if (in->nargs > 0 && in->args[0] >= 0) in->args[0] = rep[in->args[0]];
}

/* Whether in's operands hold the same values wherever in's result is in force: each is
 * written once in F, or nowhere since the stretch began. */
static int operands_fixed(const kinst *in, const unsigned char *defs, const unsigned char *inside) {
  int ops[3] = { in->a, in->op == KO_CONST ? -1 : in->b, in->nargs > 0 ? in->args[0] : -1 };
  for (int i = 0; i < 3; i++)
    if (ops[i] >= 0 && defs[ops[i]] != 1 && inside[ops[i]]) return 0;
  return in->nargs <= 1;
}

void lw_cse_since(lower *L, int from) {
  kfn *F = fn(L);
  klist *l = &F->body;
  int n = l->n - from, nv = F->nvars > 0 ? F->nvars : 1;
  if (n <= 1) return;
  unsigned char *defs = def_counts(L, F), *inside = lw_alloc(L, (size_t)nv);
  int *rep = ints(L, nv);
  memset(inside, 0, (size_t)nv);
  for (int v = 0; v < nv; v++) rep[v] = v;
  for (int i = from; i < l->n; i++) {
    int d = kinst_def(&l->v[i]);
    if (d >= 0) inside[d] = 1;
  }
  unsigned cap = 16;
  while (cap < 2u * (unsigned)n) cap *= 2;
  int *table = ints(L, (int)cap);   /* instruction indices of results in force, -1 empty */
  for (unsigned i = 0; i < cap; i++) table[i] = -1;
  int depth = 0, out = from;
  for (int i = from; i < l->n; i++) {
    kinst in = l->v[i];
    rename_uses(&in, rep);
    if (in.op == KO_END) depth--;
    int keep = 1;
    if (pure(in.op) && defs[in.dst] == 1 && operands_fixed(&in, defs, inside)) {
      unsigned at = hash(F, &in) & (cap - 1);
      while (table[at] >= 0 && !same(F, &l->v[table[at]], &in)) at = (at + 1) & (cap - 1);
      if (table[at] >= 0) {
        rep[in.dst] = l->v[table[at]].dst;
        keep = 0;
      } else if (depth == 0) {
        table[at] = out;   /* where it lands once the dropped ones are gone */
      }
    }
    if (kop_flags(in.op) & KF_OPEN) depth++;
    if (keep) l->v[out++] = in;
  }
  l->n = out;
  for (int f = 0; f + 2 < F->nfacts; f += 3) {
    F->facts[f] = rep[F->facts[f]];
    if (F->facts[f + 1] >= 0) F->facts[f + 1] = rep[F->facts[f + 1]];
  }
  for (int i = 0; i < L->nloads; i++) {
    L->loads[i].var = rep[L->loads[i].var];
    L->loads[i].idx = rep[L->loads[i].idx];
  }
}
