/* kcache.h: the cpu backend's compilers and kernel caches (kcache.c). */
#ifndef LACC_KCACHE_H
#define LACC_KCACHE_H

#include "cpu/cpu.h"
#include "base/settings.h"

/* What one build needs, owned by it: a background build outlives the run that asked. */
typedef struct {
  char *src;                   /* the translation unit */
  char cc[SETTING_MAX], flags[SETTING_MAX];
  const char *level;           /* opt_level's choice, or NULL */
  int64_t longest;
  int fast;                    /* the fast tier: its compiler, no level, no disk cache */
  int contract;                /* LACC_CONTRACT: a * b + c may become one fma */
  unsigned char key[32];
  char id[48];
} request;

/* A request for src (copied) with the compiler and flags in force now (fast: the fast
 * tier's); NULL when out of memory. */
request *request_new(const char *src, int64_t longest, int fast);
void request_free(request *q);

enum { FIND_ONLY = 0, FIND_OR_BUILD = 1 };

/* q's kernels: from memory, from the disk cache, or (how: FIND_OR_BUILD) built and
 * cached, stop(arg) stopping the compiler. LACC_OK with *out; *out NULL when only
 * finding and nothing is there; else an error code with err. */
int obtain(const request *q, int how, int (*stop)(void *), void *arg, char *err, size_t cap,
           void **out);
/* obtain of src's optimised build for a run of ctx: a SIGINT stops the compiler; errors
 * go into ctx. */
int obtain_now(lacc_ctx *ctx, const char *src, int64_t longest, int how, void **dl);

/* Seconds an optimised build of `bytes` of C takes at this process's pace so far (at
 * first a guess fitted to gcc -O3 on the benchmarks' kernels: docs/design.md, Measurements). */
double kcache_build_seconds(size_t bytes);

/* fork(): the caches' locks held across it (builds.c's handlers call these). */
void kcache_fork_prepare(void);
void kcache_fork_after(void);

#endif
