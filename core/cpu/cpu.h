/* cpu.h: the CPU backend's entry points (cpu.c). */
#ifndef LACC_CPU_H
#define LACC_CPU_H

#include "kir/kir.h"

/* Whether a C compiler answers (probed once per process; warns once if not). */
int cpu_available(void);
/* The shared object for a translation unit: from memory, the disk cache, or built. */
int cpu_load(lacc_ctx *ctx, const char *src, void **dl);
/* Function pointers lacc_f0 .. lacc_f<nfns-1>. */
int cpu_resolve(lacc_ctx *ctx, void *dl, int nfns, void **fns);
/* Run a lowered plan; results into out[0..nresults-1]. */
int cpu_exec(lacc_ctx *ctx, const kplan *P, void *const *fns, lacc_array *const *params,
             lacc_array **out);

#endif
