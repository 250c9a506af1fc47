/* backend.h: what a backend gives the executor (exec.c): one table of operations.
 *
 * Owns: the interface between the one walk over a plan (exec.c) and a backend's own
 * work: building a plan's kernels, holding a run's arrays (on the host or a device),
 * running one kernel step. The cpu backend (cpu/launch.c) and the OpenCL backend
 * (opencl/launch.c, or opencl/none.c in a build without OpenCL) each define a table;
 * the core names them here and never includes their headers.
 * Must not: hold the walk itself (guards, select, loops, release, progress, results:
 * exec.c does these once for every backend).
 */
#ifndef LACC_BACKEND_H
#define LACC_BACKEND_H

#include "kir/kir.h"

/* The code a plan's runs use (the cpu backend's tiers): none yet, the fast tier's
 * (a quick compiler's build), the optimised build. */
enum { TIER_NONE, TIER_FAST, TIER_OPT };
/* What a run asks of a plan's code (backend_ops.tier). */
enum { WANT_POLL, WANT_FAST, WANT_OPT };
/* LACC_TIER: the first tier while cc builds (auto), only the first tier, only cc. */
enum { TIER_MODE_AUTO, TIER_MODE_FAST, TIER_MODE_OPT };

typedef struct backend_ops {
  const char *name;
  /* Whether it can build kernels here (the cpu backend: a C compiler answers); NULL:
   * compile says why not. */
  int (*available)(void);
  /* The value in force of a lacc.config setting it owns (the cpu backend: threads, cc,
   * cflags, tier) as text: 1, or 0 where name is not its; *fixed: the value can no
   * longer change (the thread pool has started). May be NULL. */
  int (*setting)(const char *name, char *out, size_t cap, int *fixed);
  /* What its kernels can run (lowering asks this); cpu_like is also set for a device
   * that device_is_cpu says is a CPU. */
  kcaps caps;
  /* 1: its runs read P->consts as they are at each run (the cpu backend's kernels take
   * the table as an argument), so a plan may run with another program's constants
   * (memo.c); 0: compile takes them in (an OpenCL buffer). */
  int consts_at_run;
  /* Build P's kernels (P->code) for the device named by `device` (NULL: the default). */
  int (*compile)(lacc_ctx *ctx, const char *device, kplan *P);
  /* Let go of P->code. */
  void (*release)(kplan *P);
  /* A run of P: the backend's state for it, or NULL with the error in ctx. */
  void *(*begin)(lacc_ctx *ctx, const kplan *P);
  /* Around the run's steps, once the run and its progress have begun (on: 1), and once
   * its progress has ended (on: 0); may be NULL. */
  void (*hooks)(lacc_ctx *ctx, int on);
  /* Slot s holds a, an array from outside the run (retained by the backend as it needs). */
  int (*input)(void *R, int s, lacc_array *a);
  /* A kernel step k (map, fold, scan, permute, test): its shape, its output, its
   * kernels, their checks. */
  int (*step)(void *R, int k);
  /* The value of the rank-0 bool array in slot s: 0 or 1, -1 when the slot is empty. */
  int (*test)(void *R, int s, int *v);
  /* Slot dst holds the array slot src holds (an acond's select). */
  void (*alias)(void *R, int dst, int src);
  /* Slot s's array is not needed any more. */
  void (*drop)(void *R, int s);
  /* Slot s's array as a host array (a new reference): a result, or the input of a loop. */
  int (*output)(void *R, int s, lacc_array **out);
  /* The run's work is done (a device's queue drained) before its results are handed out. */
  int (*finish)(void *R);
  /* Frees the run's state. */
  void (*end)(void *R);
  /* A parallel for on the backend's threads for the work exec.c does itself (a sort's
   * passes): fn(arg, c) for 0 <= c < n; NULL: in turn, on the calling thread. */
  void (*parallel)(int64_t n, void (*fn)(void *arg, int64_t c), void *arg);
  /* A sort step (SK_SORT) done by the backend itself, its keys and result staying where
   * its arrays are; NULL: exec.c sorts on the host (base/sort.c, with `parallel`). */
  int (*sort)(void *R, const pstep *st);
  /* For explain: how the device named by `device` (NULL: the default) runs each step of
   * P, as text (malloc'd), or NULL with the error in ctx; may be NULL. */
  char *(*describe)(lacc_ctx *ctx, const char *device, const kplan *P);
  /* Whether the device named by `device` (NULL: the default) is a CPU (0 where it is not,
   * or there is no such device: compile says why); may be NULL. */
  int (*device_is_cpu)(lacc_ctx *ctx, const char *device);
  /* P's code brought forward for a run (see WANT_*): a finished build taken up, the fast
   * tier built, or the optimised build waited for; *tier: P's code now, *left: seconds
   * its optimised build will likely still take. NULL: compile's code is final. */
  int (*tier)(lacc_ctx *ctx, kplan *P, int want, int *tier, double *left);
  /* A run of program (ast, P) from the driver, choosing its code itself (the cpu
   * backend's tiers: the interpreter over ast, the fast tier or the optimised build);
   * work: the elements of the arrays it reads (-1: none), span: their longest extent.
   * NULL: exec_plan runs P's code. */
  int (*run)(lacc_ctx *ctx, const struct backend_ops *ops, kplan *P, const ast_arena *ast,
             int64_t work, int64_t span, lacc_array *const *args, lacc_array **out);
} backend_ops;

extern const backend_ops cpu_backend;
extern const backend_ops opencl_backend;

/* P's kernels and those of the plans nested in it (awhile), for one backend. */
int exec_compile(lacc_ctx *ctx, const backend_ops *ops, const char *device, kplan *P);
/* ops->tier over P and the plans nested in it: *tier the lowest of theirs, *left the
 * longest wait. */
int exec_tier(lacc_ctx *ctx, const backend_ops *ops, kplan *P, int want, int *tier,
              double *left);
/* Let go of what exec_compile built (P's memory stays: kplan_free). */
void exec_release(const backend_ops *ops, kplan *P);
/* Run P (compiled for ops): params are its arguments, results into out[0..nresults-1]. */
int exec_plan(lacc_ctx *ctx, const backend_ops *ops, const kplan *P, lacc_array *const *params,
              lacc_array **out);

#endif
