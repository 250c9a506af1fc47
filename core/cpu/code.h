/* code.h: the cpu backend's builds as its runs see them (code.c, builds.c): a plan's code, its
 * tiers, the counts. */
#ifndef LACC_CODE_H
#define LACC_CODE_H

#include "cpu/cpu.h"
#include "kir/backend.h"
#include "cpu/tier.h"

/* The code a plan's runs use (code.c owns it). */
typedef struct cpu_code cpu_code;

/* A program's code in up to CPU_MAX_PARTS translation units, compiled at once: the
 * parts of a program of at least CPU_PART_BYTES of C (cpu_build_parts: how many for
 * `bytes` of C in nfns functions; gcc's time grows with a unit's size: docs/design.md, Measurements). */
enum { CPU_MAX_PARTS = 4, CPU_PART_BYTES = 65536 };
int cpu_build_parts(size_t bytes, int nfns);
/* A plan's code from nparts sources (taken: srcs[i] set to NULL), part i holding the
 * functions lacc_f<first[i] .. first[i+1]-1>, whose longest loop has `longest`
 * operations. LACC_TIER=opt: the optimised build (the caches, else cc now, the parts at
 * once); otherwise the caches only, and under auto background builds queued where they
 * miss. *out NULL with the error in ctx. */
int cpu_code_new(lacc_ctx *ctx, char **srcs, const int *first, int nparts, int64_t longest,
                 cpu_code **out);
void cpu_code_free(cpu_code *c);
/* The functions runs use now (NULL: none yet); *atomics: whether they may update
 * targets with atomics (the fast tier's code may not). */
void **cpu_code_fns(const cpu_code *c, int *atomics);
/* Takes up a finished background build, then per want: WANT_FAST builds the fast tier if
 * no code is there (tried once), WANT_OPT waits for the optimised build (queued if none
 * is under way; its failure is the error when no code is there). *tier: the code's tier
 * now; *left: the seconds its optimised build will likely still take (0: none). */
int cpu_code_advance(lacc_ctx *ctx, cpu_code *c, int want, int *tier, double *left);
/* Background builds finished so far, process-wide (lock-free: polled between chunks). */
long cpu_builds_done(void);
/* What c's runs measured, for tier.c's choice of code. */
tier_state *cpu_code_tiers(cpu_code *c);
/* Whether every part of c's optimised build is finished and loaded or ready to be. */
int cpu_code_opt_ready(const cpu_code *c);
/* The seconds c's optimised builds under way will likely still take (0: none). */
double cpu_code_opt_left(const cpu_code *c);
/* Whether the optimised builds of the nparts sources are in the caches (memory or disk). */
int cpu_code_cached(lacc_ctx *ctx, char **srcs, int nparts, int64_t longest, int *cached);

/* LACC_TIER in force: TIER_MODE_AUTO (default), _FAST or _OPT (kir/backend.h). */
int cpu_tier_mode(void);

/* Process-wide counts for lacc_tiers: runs per tier, builds. */
enum { TC_INTERP, TC_FAST, TC_OPT, TC_FAST_BUILT, TC_BUILT, TC_BUILD_FAILED, NTIER_COUNTS };
void cpu_tier_count(int which);
void cpu_tier_counts(int64_t *out);

#endif
