/* analysis.h: the analysis the passes after lowering share (bounds.c builds it; hoist.c
 * and ranges.c ask it too): a kernel function's structure as the proofs see it.
 *
 * Owns: bctx (where each variable is defined, and whether its value at a place is the
 * one its single definition gave it) and the few questions the passes ask of it.
 * Must not: be included outside the passes of core/kir (passes.h lists them); the
 * lowering and the backends see only the finished plan.
 */
#ifndef LACC_ANALYSIS_H
#define LACC_ANALYSIS_H

#include "kir/kir.h"

/* How a variable is defined: not once (its value is not known), once, by a select the
 * lowering writes (IF c, MOV v a, ELSE, MOV v b, END), by a FOR, or on entry (p0..p3). */
typedef enum { D_NONE, D_ONE, D_SEL, D_FOR, D_PARAM } dkind;

typedef struct {
  kfn *F;
  kinst **code;              /* the prologue, then the body */
  int n, npro;
  int *blk, *up;             /* the block of each instruction; each block's parent */
  int *ndef, *defpos, *scope, *facthi, *factoff;
  int *falseafter;           /* v's IF v { ... RETURN } ends there: v is false after it */
  unsigned char *dk;
  int body;                  /* the instruction being decided is in the body */
  int budget;
  int flipped;               /* a proof turned from x's side to y's (flip_ge, flip_le) */
} bctx;

int bx_build(bctx *B, kfn *F);
void bx_free(bctx *B);
/* Whether v's value at instruction pos is the one its definition gave it. */
int bx_usable(const bctx *B, int v, int pos);
/* Whether v is defined once as an integer constant (*k), of a size proofs step through. */
int bx_int_const(const bctx *B, int v, int64_t *k);
/* The value of bool v at pos when the code fixes it, else -1. */
int bx_known(const bctx *B, int v, int pos);
/* Whether v >= 0 is proved at pos. */
int bx_nonneg(bctx *B, int v, int pos);

#endif
