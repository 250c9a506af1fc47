/* tier.h: which code a run of a cpu program uses (cpu/tier.c): the cpu backend's `run`
 * and `describe` (kir/backend.h). */
#ifndef LACC_TIER_H
#define LACC_TIER_H

#include "ast/ast.h"
#include "kir/backend.h"

/* What the runs of one program measured. */
typedef struct {
  double interp_s, interp_work;   /* seconds and elements the interpreter ran for it */
  double fast_s, fast_work;       /* the same on the fast tier's code */
  int last;                       /* the code of its last run: TIER_* or RUN_INTERP; -2: none */
  int overran;                    /* an interpreted run was stopped at its budget */
} tier_state;

enum { RUN_INTERP = -1, RUN_NONE = -2 };

/* Runs program (ast, P) on the code this run should use: the interpreter, the fast tier
 * or the optimised build (tier.c says when, from what P's earlier runs measured, kept
 * with its code); work: the elements of the arrays it reads (-1: none), span: their
 * longest extent. */
int tier_exec(lacc_ctx *ctx, const backend_ops *ops, kplan *P, const ast_arena *ast,
              int64_t work, int64_t span, lacc_array *const *args, lacc_array **out);

/* For explain on the cpu backend: the code P's runs would start on, as text (malloc'd;
 * empty under LACC_TIER=opt), or NULL with the error in ctx. device: unused. */
char *tier_describe(lacc_ctx *ctx, const char *device, const kplan *P);

#endif
