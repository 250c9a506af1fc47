/* exec.c: the one executor: a plan's steps walked in order, for every backend.
 *
 * Owns: what running a plan means apart from its kernels: binding the arrays from
 * outside, the run's interruption and progress, acond's guards and select, awhile's
 * loop over its nested plans, releasing intermediates after their last use, handing out
 * the results; and compiling or releasing a plan's kernels with its nested plans'. A
 * backend's table (backend.h) does the rest: kernel steps and where arrays live.
 * Must not: lower, print or build kernels, or know how a backend stores its arrays.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "base/sort.h"
#include "kir/backend.h"
#include "base/settings.h"

int exec_compile(lacc_ctx *ctx, const backend_ops *ops, const char *device, kplan *P) {
  int rc = ops->compile(ctx, device, P);
  for (int k = 0; rc == LACC_OK && k < P->nsteps; k++)
    for (int i = 0; rc == LACC_OK && P->steps[k].kind == SK_WHILE && i < 2; i++)
      rc = exec_compile(ctx, ops, device, P->steps[k].loop[i]);
  return rc;
}

int exec_tier(lacc_ctx *ctx, const backend_ops *ops, kplan *P, int want, int *tier,
              double *left) {
  *tier = TIER_OPT;
  *left = 0;
  int rc = ops->tier != NULL ? ops->tier(ctx, P, want, tier, left) : LACC_OK;
  for (int k = 0; rc == LACC_OK && k < P->nsteps; k++)
    for (int i = 0; rc == LACC_OK && P->steps[k].kind == SK_WHILE && i < 2; i++) {
      int t;
      double l;
      rc = exec_tier(ctx, ops, P->steps[k].loop[i], want, &t, &l);
      if (t < *tier) *tier = t;
      if (l > *left) *left = l;
    }
  return rc;
}

void exec_release(const backend_ops *ops, kplan *P) {
  for (int k = 0; k < P->nsteps; k++)
    for (int i = 0; P->steps[k].kind == SK_WHILE && i < 2; i++)
      if (P->steps[k].loop[i] != NULL) exec_release(ops, P->steps[k].loop[i]);
  if (P->code != NULL) ops->release(P);
  P->code = NULL;
}

typedef struct {
  lacc_ctx *ctx;
  const backend_ops *ops;
  const kplan *P;
  void *R;                 /* the backend's state for this run */
} run;

/* Whether a step's guard chain holds (acond branches): each test slot read. */
static int guarded_in(run *X, int g, int *in) {
  *in = 1;
  for (; g >= 0 && *in; g = X->P->guards[g].parent) {
    int v, rc = X->ops->test(X->R, X->P->guards[g].slot, &v);
    if (rc != LACC_OK) return rc;
    *in = v == X->P->guards[g].want;
  }
  return LACC_OK;
}

static int select_step(run *X, const pstep *st) {
  int v, rc = X->ops->test(X->R, st->sel_test, &v);
  if (rc == LACC_OK) X->ops->alias(X->R, st->out, v == 1 ? st->sel_then : st->sel_else);
  return rc;
}

/* One go of a loop's condition (which 0) or body (1): its nested plan run on its own. */
typedef struct {
  run *X;
  const pstep *st;
} loop_part;

static int run_loop_part(void *ud, int which, lacc_array *const *args, lacc_array **out) {
  loop_part *lp = ud;
  kplan *L = lp->st->loop[which];
  if (lp->X->ops->tier != NULL) {   /* between turns, a loop takes up a build just done */
    int tier;
    double left;
    int rc = lp->X->ops->tier(lp->X->ctx, L, WANT_POLL, &tier, &left);
    if (rc != LACC_OK) return rc;
  }
  return exec_plan(lp->X->ctx, lp->X->ops, L, args, out);
}

/* awhile: the loop's arrays as host arrays (on a device they stay there: a host array
 * is only a handle on them), the loop run, its results back in the step's slots. */
static int while_step(run *X, const pstep *st) {
  int n = st->nloop_in, m = st->nloop_out, rc = LACC_OK;
  lacc_array **in = calloc((size_t)n, sizeof *in), **r = calloc((size_t)m, sizeof *r);
  const layout_plan **state = calloc((size_t)m, sizeof *state);
  if (in == NULL || r == NULL || state == NULL) rc = err_oom(X->ctx);
  for (int i = 0; rc == LACC_OK && i < n; i++) rc = X->ops->output(X->R, st->loop_in[i], &in[i]);
  for (int i = 0; rc == LACC_OK && i < m; i++) state[i] = X->P->slots[st->loop_out[i]].plan;
  loop_part lp = { X, st };
  if (rc == LACC_OK) rc = awhile_run(X->ctx, run_loop_part, &lp, m, state, n, in, r);
  for (int i = 0; rc == LACC_OK && i < m; i++) rc = X->ops->input(X->R, st->loop_out[i], r[i]);
  for (int i = 0; r != NULL && i < m; i++) lacc_array_release(r[i]);   /* NULL where none */
  for (int i = 0; in != NULL && i < n; i++) lacc_array_release(in[i]);
  free(in);
  free(r);
  free(state);
  return rc;
}

/* sortperm: by the backend where it sorts itself (OpenCL: on the device), else its keys
 * as a host array, the order of each row computed by base/sort.c on the backend's
 * threads, put in the step's slot. */
static int sort_step(run *X, const pstep *st) {
  if (X->ops->sort != NULL) return X->ops->sort(X->R, st);
  lacc_array *keys = NULL;
  int rc = X->ops->output(X->R, st->sort_in, &keys);
  if (rc != LACC_OK) return rc;
  lacc_array *r = sort_rows(X->ctx, keys, X->ops->parallel, st->sort_keys);
  lacc_array_release(keys);
  if (r == NULL) return X->ctx->errcode;
  if (run_stopped(X->ctx)) rc = run_interrupted(X->ctx);   /* the passes stopped early */
  if (rc == LACC_OK) rc = X->ops->input(X->R, st->out, r);
  lacc_array_release(r);
  return rc;
}

static int run_step(run *X, int k) {
  const pstep *st = &X->P->steps[k];
  int in, rc = guarded_in(X, st->guard, &in);
  if (rc != LACC_OK || !in) return rc;
  if (st->kind == SK_SELECT) return select_step(X, st);
  if (st->kind == SK_WHILE) return while_step(X, st);
  if (st->kind == SK_SORT) return sort_step(X, st);
  return X->ops->step(X->R, k);
}

/* Intermediates whose last use was step k. */
static void release_after(run *X, int k) {
  for (int s = 0; s < X->P->nslots; s++) {
    const pslot *ps = &X->P->slots[s];
    if (ps->kind == SLOT_KERNEL && !ps->result && ps->last_use <= k) X->ops->drop(X->R, s);
  }
}

/* The array from outside an input or parameter slot binds: a parameter, or an input the
 * driver placed among the run's arrays (param), else the one lowering met. */
static lacc_array *bound(const pslot *ps, lacc_array *const *params) {
  return ps->kind == SLOT_PARAM || ps->param >= 0 ? params[ps->param] : ps->array;
}

/* The results: an input or parameter comes back as that very array. */
static int results(run *X, lacc_array *const *params, lacc_array **out) {
  int rc = LACC_OK, got = 0;
  while (rc == LACC_OK && got < X->P->nresults) {
    const pslot *ps = &X->P->slots[X->P->results[got]];
    if (ps->kind == SLOT_INPUT || ps->kind == SLOT_PARAM) {
      out[got] = bound(ps, params);
      lacc_array_retain(out[got]);
    } else {
      rc = X->ops->output(X->R, X->P->results[got], &out[got]);
    }
    if (rc == LACC_OK) got++;
  }
  if (rc == LACC_OK) rc = X->ops->finish(X->R);
  if (rc != LACC_OK)
    for (int i = 0; i < got; i++) lacc_array_release(out[i]);
  return rc;
}

/* LACC_PROFILE=1: each step's wall time on stderr after the run, named as explain names
 * it (aN = kind), so a slow kernel of a large program (a gradient's) can be found. */
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* Read once a process (an atomic: several Lua states may run at once): reading the
 * setting at each run cost 0.15-0.2 us of a 2 us call. */
static int profiling(void) {
  static _Atomic int on = -1;
  int v = atomic_load(&on);
  if (v < 0) {
    v = setting_switch("LACC_PROFILE", 0);
    atomic_store(&on, v);
  }
  return v;
}

static void profile_print(const kplan *P, const double *ms) {
  double total = 0;
  for (int k = 0; k < P->nsteps; k++) total += ms[k];
  fprintf(stderr, "lacc profile: %d steps, %.3f ms\n", P->nsteps, total);
  for (int k = 0; k < P->nsteps; k++) {
    const pstep *st = &P->steps[k];
    const pslot *o = &P->slots[st->out];
    const lacc_node *nd = st->kind == SK_SELECT ? NULL : st->node;
    fprintf(stderr, "lacc profile: %9.3f ms  a%d = %s, rank %d %s (at %s)\n", ms[k], st->out,
            nd != NULL ? kind_name(nd->kind) : "select", o->rank, o->type->sig,
            nd != NULL && nd->where != NULL ? nd->where : "?");
  }
}

int exec_plan(lacc_ctx *ctx, const backend_ops *ops, const kplan *P, lacc_array *const *params,
              lacc_array **out) {
  run X = { ctx, ops, P, ops->begin(ctx, P) };
  if (X.R == NULL) return ctx->errcode;
  int rc = LACC_OK;
  for (int s = 0; rc == LACC_OK && s < P->nslots; s++)
    if (P->slots[s].kind == SLOT_INPUT || P->slots[s].kind == SLOT_PARAM)
      rc = ops->input(X.R, s, bound(&P->slots[s], params));
  run_begin(ctx);
  progress_begin(ctx, P->nsteps);
  if (ops->hooks != NULL) ops->hooks(ctx, 1);
  double *ms = profiling() ? calloc((size_t)P->nsteps + 1, sizeof *ms) : NULL;
  for (int k = 0; rc == LACC_OK && k < P->nsteps; k++) {
    progress_at(ctx, k);
    double t0 = ms != NULL ? now_ms() : 0;
    rc = run_stopped(ctx) ? run_interrupted(ctx) : run_step(&X, k);
    if (ms != NULL) ms[k] = now_ms() - t0;
    if (rc == LACC_OK) release_after(&X, k);
  }
  if (ms != NULL && rc == LACC_OK) profile_print(P, ms);
  free(ms);
  progress_end(ctx, rc == LACC_OK);
  if (ops->hooks != NULL) ops->hooks(ctx, 0);
  run_end(ctx);
  if (rc == LACC_OK) rc = results(&X, params, out);
  ops->end(X.R);
  return rc;
}
