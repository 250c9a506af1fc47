/* verify.c: the kernel IR's well-formedness, checked between passes (passes.c).
 *
 * Owns: the rules every plan keeps from lowering to the backends: each instruction's
 * variables, slots, checks and constants exist; its fields are those its operation has
 * (kir.h's KIR_OPS); blocks open and close in order, ELSE inside IF, BREAKIFNOT inside a
 * loop; a program constant read only in a prologue; each step's functions exist and
 * belong to it. A rule broken is a bug in the pass before, named with the place.
 * Must not: change the plan, or accept less than the backends assume.
 */
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include "kir/passes.h"

typedef struct {
  const kplan *P;
  const kfn *F;
  int fn, pos, pro;
  char *why;
  size_t cap;
} vctx;

__attribute__((format(printf, 2, 3)))
static int bad(vctx *V, const char *fmt, ...) {
  char what[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (V->pos >= 0)
    snprintf(V->why, V->cap, "function %d, %s instruction %d: %s", V->fn,
             V->pro ? "prologue" : "body", V->pos, what);
  else if (V->fn >= 0)
    snprintf(V->why, V->cap, "function %d: %s", V->fn, what);
  else
    snprintf(V->why, V->cap, "%s", what);
  return -1;
}

static int var_ok(const vctx *V, int v) { return v >= 0 && v < V->F->nvars; }

static int operands(vctx *V, const kinst *in) {
  unsigned f = kop_flags(in->op);
  const kplan *P = V->P;
  if ((f & KF_DST) && !var_ok(V, in->dst)) return bad(V, "writes v%d, not a variable", in->dst);
  if ((f & KF_A) && !var_ok(V, in->a)) return bad(V, "reads a = v%d, not a variable", in->a);
  int reads_b = (f & KF_B) || (in->op == KO_PRIM && prim_arity(in->prim) >= 2);
  if (reads_b && !var_ok(V, in->b)) return bad(V, "reads b = v%d, not a variable", in->b);
  if (in->op == KO_PRIM && (in->prim < 0 || in->prim >= P_NPRIMS))
    return bad(V, "primitive %d unknown", (int)in->prim);
  if (in->op == KO_PRIM && prim_arity(in->prim) == 3 && (in->nargs < 1 || in->args == NULL))
    return bad(V, "%s without its third operand", prim_name(in->prim));
  if ((f & KF_SLOT) && (in->slot < 0 || in->slot >= P->nslots))
    return bad(V, "slot %d of %d", in->slot, P->nslots);
  if ((f & KF_PRO) && !V->pro) return bad(V, "a program constant read outside the prologue");
  if (in->op == KO_KCONST && (in->imm.i < 0 || in->imm.i >= P->nconsts))
    return bad(V, "program constant %lld of %d", (long long)in->imm.i, P->nconsts);
  if (in->op == KO_FAIL && in->check != CHECK_UNTILED && (in->check < 0 || in->check >= P->nchecks))
    return bad(V, "check %d of %d", in->check, P->nchecks);
  if (in->op == KO_FAIL && in->a != -1 && !var_ok(V, in->a))
    return bad(V, "fails at v%d, not a variable", in->a);
  if (in->nargs < 0 || (in->nargs > 0 && in->args == NULL)) return bad(V, "%d arguments missing", in->nargs);
  for (int i = 0; (f & KF_ARGS) && i < in->nargs; i++)
    if (!var_ok(V, in->args[i])) return bad(V, "argument %d is v%d, not a variable", i, in->args[i]);
  return 0;
}

/* Blocks: IF, FOR and LOOP open one, END closes the innermost, ELSE splits an IF once. */
enum { B_IF, B_ELSE, B_LOOP };

static int walk(vctx *V, const klist *l, unsigned char *stack) {
  int depth = 0, loops = 0;
  for (V->pos = 0; V->pos < l->n; V->pos++) {
    const kinst *in = &l->v[V->pos];
    if ((int)in->op < 0 || (int)in->op >= KO_NOPS) return bad(V, "operation %d unknown", (int)in->op);
    if (operands(V, in) != 0) return -1;
    if (kop_flags(in->op) & KF_OPEN) {
      stack[depth++] = in->op == KO_IF ? B_IF : B_LOOP;
      loops += in->op != KO_IF;
    } else if (in->op == KO_ELSE) {
      if (depth == 0 || stack[depth - 1] != B_IF) return bad(V, "else outside an if");
      stack[depth - 1] = B_ELSE;
    } else if (in->op == KO_END) {
      if (depth == 0) return bad(V, "end without a block");
      loops -= stack[--depth] == B_LOOP;
    } else if (in->op == KO_BREAKIFNOT && loops == 0) {
      return bad(V, "break outside a loop");
    }
  }
  V->pos = -1;
  return depth == 0 ? 0 : bad(V, "%s: %d blocks left open", V->pro ? "prologue" : "body", depth);
}

static int blocks(vctx *V, const klist *l, int pro) {
  unsigned char *stack = malloc((size_t)l->n + 1);   /* the open blocks' kinds */
  if (stack == NULL) return bad(V, "out of memory");
  V->pro = pro;
  int rc = walk(V, l, stack);
  free(stack);
  return rc;
}

static int function(vctx *V) {
  const kfn *F = V->F;
  if (F->nvars < 0 || (F->nvars > 0 && F->vt == NULL)) return bad(V, "no variable types");
  for (int v = 0; v < F->nvars; v++)
    if (F->vt[v] < 0 || F->vt[v] >= S_NSCALAR) return bad(V, "v%d of type %d", v, (int)F->vt[v]);
  if (F->step >= V->P->nsteps) return bad(V, "of step %d of %d", F->step, V->P->nsteps);
  for (int i = 0; i + 1 < F->nlanes; i += 2)
    if (!var_ok(V, F->lanes[i]) || F->lanes[i + 1] < 1) return bad(V, "lane array %d", i / 2);
  return blocks(V, &F->pro, 1) != 0 || blocks(V, &F->body, 0) != 0 ? -1 : 0;
}

/* A step's functions exist, and each has the step's role for it. */
static int step_fns(vctx *V, const pstep *st, int s) {
  for (int i = 0; i < SF_COUNT; i++) {
    int f = st->fn[i];
    if (f < -1 || f >= V->P->nfns) return bad(V, "step %d names function %d of %d", s, f, V->P->nfns);
    if (f >= 0 && V->P->fns[f].step != s)
      return bad(V, "step %d names function %d, which is step %d's", s, f, V->P->fns[f].step);
  }
  return 0;
}

int kir_verify(const kplan *P, char *why, size_t cap) {
  vctx V = { .P = P, .fn = -1, .pos = -1, .why = why, .cap = cap };
  for (V.fn = 0; V.fn < P->nfns; V.fn++) {
    V.F = &P->fns[V.fn];
    if (function(&V) != 0) return -1;
  }
  V.fn = -1;
  for (int s = 0; s < P->nsteps; s++) {
    const pstep *st = &P->steps[s];
    if (step_fns(&V, st, s) != 0) return -1;
    if (st->out >= P->nslots || st->partial >= P->nslots)
      return bad(&V, "step %d writes slot %d or %d of %d", s, st->out, st->partial, P->nslots);
    if (st->wout >= P->nslots || (st->wout >= 0 && st->kind != SK_FOLD))
      return bad(&V, "step %d writes slot %d of %d", s, st->wout, P->nslots);
    if (st->wext < 0 || st->wext > LACC_MAX_RANK)
      return bad(&V, "step %d's written map's extents at %d", s, st->wext);
    for (int i = 0; i < st->nsib; i++)
      if ((st->kind != SK_FOLD && st->kind != SK_MAP && st->kind != SK_PERMUTE) ||
          st->sib_out[i] >= P->nslots ||
          (st->kind != SK_MAP && st->sib_partial[i] >= P->nslots))
        return bad(&V, "step %d's sibling %d writes slot %d or %d of %d", s, i, st->sib_out[i],
                   st->kind != SK_MAP ? st->sib_partial[i] : -1, P->nslots);
  }
  return 0;
}
