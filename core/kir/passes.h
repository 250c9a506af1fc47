/* passes.h: the passes that run after lowering, each a file of its own, and what the
 * pass list (passes.c) needs to run, check and print them.
 *
 * Owns: the pass functions' signatures: a pass of one kernel function at a time
 * (int f(kplan *, kfn *)) or of the whole plan (int f(kplan *)), LACC_OK or an error code.
 * Adding a pass is its file and one row of passes.c's table.
 * Must not: be included by the lowering's stages or the backends: they see finished plans.
 */
#ifndef LACC_PASSES_H
#define LACC_PASSES_H

#include <stdio.h>
#include "kir/kir.h"

/* bounds.c: the comparisons the bounds analysis proves made constants, and the branches
 * they decide removed */
int pass_fold(kplan *P, kfn *F);
/* hoist.c: loops whose remaining checks a test before them decides, versioned */
int pass_hoist(kplan *P, kfn *F);
/* ranges.c: range tests 0 <= x < n left made one unsigned comparison */
int pass_ranges(kplan *P, kfn *F);
/* lower_tile.c: each fold's FN_TILE kept where every lane reads alike, else dropped */
int pass_tiles(kplan *P);
/* lower_gtile.c: each contraction's FN_GTILE staged in local memory, else dropped */
int pass_gtiles(kplan *P);

/* bounds.c: each step's checks in loops, before the passes (after 0) or after them */
int plan_count_checks(kplan *P, int after);

/* verify.c: 0 when P's functions and steps are well formed, else -1 and why */
int kir_verify(const kplan *P, char *why, size_t cap);
/* dump.c: P's functions as text on f, headed by the name of the pass just run */
void kir_dump(const kplan *P, const char *after, FILE *f);

#endif
