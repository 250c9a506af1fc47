/* hostfn.c: a plan's shape functions run on the host, for device backends (OpenCL).
 *
 * Owns: an evaluator of one kernel-IR function over lacc_val registers, with prim.c's
 * semantics (the reference the kernels are tested against), reading device elements one
 * at a time through a callback. Shape functions are small and run once per step, so
 * building them as kernels (a PoCL build costs per kernel) and launching one work-item
 * to get a few extents back would cost more than evaluating them here.
 * Must not: run element loops (the device does) or touch device memory itself.
 */
#include <stdlib.h>
#include <string.h>
#include "kir/hostfn.h"

/* Where control goes from each structured instruction: the matching END (IF, ELSE,
 * FOR, LOOP), the ELSE of an IF, the opening of an END, the loop a BREAKIFNOT leaves. */
typedef struct {
  const kinst **code;
  int n;
  int *match;
  int *els;
} prog;

static int link(lacc_ctx *ctx, prog *p) {
  int *stack = malloc(sizeof *stack * (size_t)(p->n + 1));
  p->match = malloc(sizeof *p->match * (size_t)(p->n + 1));
  p->els = malloc(sizeof *p->els * (size_t)(p->n + 1));
  if (stack == NULL || p->match == NULL || p->els == NULL) {
    free(stack);
    return err_oom(ctx);
  }
  int sp = 0, rc = LACC_OK;
  for (int i = 0; i < p->n && rc == LACC_OK; i++) {
    p->match[i] = p->els[i] = -1;
    switch (p->code[i]->op) {
    case KO_IF: case KO_FOR: case KO_LOOP: stack[sp++] = i; break;
    case KO_ELSE:
      if (sp == 0) rc = LACC_ERR_BACKEND;
      else p->els[stack[sp - 1]] = i;
      break;
    case KO_END:
      if (sp == 0) { rc = LACC_ERR_BACKEND; break; }
      sp--;
      p->match[stack[sp]] = i;
      p->match[i] = stack[sp];
      if (p->els[stack[sp]] >= 0) p->match[p->els[stack[sp]]] = i;
      break;
    case KO_BREAKIFNOT: {
      int j = sp - 1;
      while (j >= 0 && p->code[stack[j]]->op == KO_IF) j--;
      if (j < 0) rc = LACC_ERR_BACKEND;
      else p->els[i] = stack[j];   /* the loop; its END is known once it closes */
      break;
    }
    default: break;
    }
  }
  free(stack);
  if (rc == LACC_OK && sp != 0) rc = LACC_ERR_BACKEND;
  return rc == LACC_OK ? LACC_OK
                       : ctx_error(ctx, LACC_ERR_BACKEND, "opencl: malformed shape function");
}

static int truth(lacc_val v) { return v.u != 0; }

int hostfn_run(lacc_ctx *ctx, const kplan *P, int fn, const int64_t *E, hostfn_load load,
               void *arg, int64_t *out, hostfn_fail *fail) {
  const kfn *F = &P->fns[fn];
  prog p = { 0 };
  p.n = F->pro.n + F->body.n;
  p.code = malloc(sizeof *p.code * (size_t)(p.n + 1));
  lacc_val *r = calloc((size_t)(F->nvars + 1), sizeof *r);
  int rc = p.code == NULL || r == NULL ? err_oom(ctx)
                                       : LACC_OK;
  for (int i = 0; rc == LACC_OK && i < F->pro.n; i++) p.code[i] = &F->pro.v[i];
  for (int i = 0; rc == LACC_OK && i < F->body.n; i++) p.code[F->pro.n + i] = &F->body.v[i];
  if (rc == LACC_OK) rc = link(ctx, &p);
  fail->failed = 0;
  for (int pc = 0; rc == LACC_OK && pc < p.n; pc++) {
    const kinst *in = p.code[pc];
    scalar_kind dk = in->dst >= 0 ? F->vt[in->dst] : S_I64;
    switch (in->op) {
    case KO_CONST: r[in->dst] = in->imm; break;
    case KO_MOV: r[in->dst] = r[in->a]; break;
    case KO_PRIM: {
      lacc_val x[3] = { r[in->a], in->b >= 0 ? r[in->b] : r[in->a],
                        in->nargs > 0 ? r[in->args[0]] : r[in->a] };
      int n = in->nargs > 0 ? 3 : in->b >= 0 ? 2 : 1;
      /* the IR's integer division is total; the check is a KO_FAIL of its own */
      if (prim_eval(in->prim, F->vt[in->a], n, x, &r[in->dst]) != LACC_OK)
        r[in->dst].u = 0;
      break;
    }
    case KO_CAST: r[in->dst] = val_cast(dk, F->vt[in->a], r[in->a]); break;
    case KO_TOBITS: r[in->dst].u = val_bits(F->vt[in->a], r[in->a]); break;
    case KO_FROMBITS: r[in->dst] = val_of_bits(dk, r[in->a].u); break;
    case KO_LOAD: {
      uint64_t bits = 0;
      rc = load(arg, in->slot, in->buf, r[in->a].i, &bits);
      if (rc == LACC_OK) r[in->dst] = val_of_bits(dk, bits);
      break;
    }
    case KO_EXTENT: r[in->dst].i = E[in->slot * LACC_MAX_RANK + (int)in->imm.i]; break;
    case KO_OUT: out[in->imm.i] = r[in->a].i; break;
    case KO_KCONST: r[in->dst] = P->consts[in->imm.i]; break;
    case KO_IF:
      if (!truth(r[in->a])) pc = p.els[pc] >= 0 ? p.els[pc] : p.match[pc];
      break;
    case KO_ELSE: pc = p.match[pc]; break;   /* the true branch ends here */
    case KO_RETURN: pc = p.n; break;
    case KO_FOR:
      r[in->dst] = r[in->a];
      if (!(r[in->dst].i + in->imm.i <= r[in->b].i)) pc = p.match[pc];
      break;
    case KO_LOOP: break;
    case KO_END: {
      int open = p.match[pc];
      const kinst *o = p.code[open];
      if (o->op == KO_LOOP) {
        pc = open;
      } else if (o->op == KO_FOR) {
        r[o->dst].i += o->imm.i;
        if (r[o->dst].i + o->imm.i <= r[o->b].i) pc = open;
      }
      break;
    }
    case KO_BREAKIFNOT:
      if (!truth(r[in->a])) pc = p.match[p.els[pc]];
      break;
    case KO_FAIL:
      if (!fail->failed || r[in->a].i < fail->key) {
        fail->failed = 1;
        fail->key = r[in->a].i;
        fail->check = in->check;
        for (int i = 0; i < in->nargs && i < 16; i++) fail->vals[i] = r[in->args[i]].i;
      }
      break;
    default:
      rc = ctx_error(ctx, LACC_ERR_BACKEND, "opencl: a shape function uses an instruction "
                     "the host cannot run (%d)", (int)in->op);
    }
  }
  free(p.code);
  free(p.match);
  free(p.els);
  free(r);
  return rc;
}
