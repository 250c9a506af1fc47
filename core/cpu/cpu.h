/* cpu.h: the CPU backend (launch.c; builds: kcache.c, builds.c, code.c; tiers: tier.c): its operations are `cpu_backend` (kir/backend.h). */
#ifndef LACC_CPU_H
#define LACC_CPU_H

#include "kir/kir.h"

/* Whether a C compiler answers (probed once per process; warns once if not). */
int cpu_available(void);
/* The C compiler and its flags in force (LACC_CC, LACC_CFLAGS, lacc_config_set). */
void cpu_cc(char *out, size_t cap);
void cpu_cflags(char *out, size_t cap);

/* The most operations of one loop of P's functions (the choice of optimisation level). */
int64_t cpu_longest_loop(const kplan *P);
/* P's C in parts (code.h: cpu_build_parts) into srcs (malloc'd), part i holding
 * functions first[i]..first[i+1]-1: their number, or -1 with the error in ctx. */
int cpu_sources(lacc_ctx *ctx, const kplan *P, char **srcs, int *first);

#endif
