/* dump.c: the kernel IR as text, for LACC_DUMP (passes.c).
 *
 * Owns: one line per instruction, printed from the operation table (kir.h's KIR_OPS):
 * the variable written and its type, the operation, then the fields it has; blocks
 * indented. For people reading what a pass did; nothing parses it.
 * Must not: change the plan, or print anything but what the plan holds.
 */
#include <inttypes.h>
#include "kir/passes.h"

static const char *op_name(kop op) {
  switch (op) {
#define KOP_NAME(e, name, fields) case KO_##e: return name;
  KIR_OPS(KOP_NAME)
#undef KOP_NAME
  default: return "?";
  }
}

static const char *role_name(fn_role r) {
  static const char *names[] = { "shape", "body", "seg", "part", "combine", "chunk",
                                 "scatter", "tile", "group", "gtile", "tcombine" };
  return r >= 0 && (size_t)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

static void inst(const kfn *F, const kinst *in, int depth, FILE *f) {
  unsigned fl = kop_flags(in->op);
  fprintf(f, "%*s", 4 + 2 * depth, "");
  if (fl & KF_DST) fprintf(f, "v%d:%s = ", in->dst, scalar_name(F->vt[in->dst]));
  fputs(op_name(in->op), f);
  if (in->op == KO_PRIM) fprintf(f, " %s", prim_name(in->prim));
  if (fl & KF_SLOT) fprintf(f, " S%d.%d", in->slot, in->buf);
  if ((fl & KF_A) || (in->op == KO_FAIL && in->a >= 0)) fprintf(f, " v%d", in->a);
  if ((fl & KF_B) || (in->op == KO_PRIM && prim_arity(in->prim) >= 2)) fprintf(f, " v%d", in->b);
  for (int i = 0; i < in->nargs; i++) fprintf(f, " v%d", in->args[i]);
  if (in->op == KO_CONST) fprintf(f, " %" PRId64, in->imm.i);
  if (in->op == KO_KCONST) fprintf(f, " K[%" PRId64 "]", in->imm.i);
  if (in->op == KO_EXTENT || in->op == KO_OUT) fprintf(f, " [%" PRId64 "]", in->imm.i);
  if (in->op == KO_FOR) fprintf(f, " step %" PRId64, in->imm.i);
  if (in->op == KO_FAIL) fprintf(f, " check %d%s", in->check, in->b == 1 ? " (hoisted)" : "");
  fputc('\n', f);
}

static void list(const kfn *F, const klist *l, const char *what, FILE *f) {
  fprintf(f, "  %s:\n", what);
  int depth = 0;
  for (int i = 0; i < l->n; i++) {
    const kinst *in = &l->v[i];
    if ((in->op == KO_END || in->op == KO_ELSE) && depth > 0) depth--;
    inst(F, in, depth, f);
    if ((kop_flags(in->op) & KF_OPEN) || in->op == KO_ELSE) depth++;
  }
}

void kir_dump(const kplan *P, const char *after, FILE *f) {
  fprintf(f, "-- kernel IR after %s: %d functions, %d steps, %d program constants\n", after,
          P->nfns, P->nsteps, P->nconsts);
  for (int k = 0; k < P->nfns; k++) {
    const kfn *F = &P->fns[k];
    if (F->pro.n == 0 && F->body.n == 0) continue;   /* dropped (tiles) */
    fprintf(f, "function %d: %s of step %d, %d variables\n", k, role_name(F->role), F->step,
            F->nvars);
    list(F, &F->pro, "prologue", f);
    list(F, &F->body, "body", f);
  }
}
