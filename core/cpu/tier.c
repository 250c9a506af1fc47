/* tier.c: which code a run of a program on the cpu backend uses (LACC_TIER).
 *
 * Owns: the choice, run by run, between the interpreter, the fast tier's kernels (a quick
 * compiler's build) and the optimised build (cc -O3, built in the background under
 * auto), waiting for that build only when waiting saves time; what the runs of a program
 * measured for the choice (tier_state); the reports of a program's switches
 * (LACC_VERBOSE) and the run counts of lacc_tiers.
 * Must not: build or run code itself (code.c, the interpreter and exec.c do).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "cpu/tier.h"
#include "cpu/code.h"
#include "cpu/pool.h"
#include "base/text.h"

/* The thresholds (TUNE_INTERP_WORK, TUNE_FAST_BUILD_S, the paces and the gain) are
 * base/tune.h's, with what each decides. */

/* Whether P (or a loop's plan in it) folds or scans rows of a result of rank 1 or more:
 * each element is then a loop over a row, whose length the run's work does not count. */
static int folds_rows(const kplan *P) {
  for (int k = 0; k < P->nsteps; k++) {
    const pstep *st = &P->steps[k];
    if ((st->kind == SK_FOLD || st->kind == SK_SCAN) && st->rank >= 1) return 1;
    for (int i = 0; st->kind == SK_WHILE && i < 2; i++)
      if (folds_rows(st->loop[i])) return 1;
  }
  return 0;
}

/* The code this run uses: RUN_INTERP or a TIER_*. work: the elements of its arrays
 * (-1: none), span: their longest extent. */
static int choose(lacc_ctx *ctx, const backend_ops *ops, kplan *P, const tier_state *ts,
                  int64_t work, int64_t span, int *how) {
  int tier;
  double left;
  int rc = exec_tier(ctx, ops, P, WANT_POLL, &tier, &left);
  *how = tier;
  if (rc != LACC_OK || tier == TIER_OPT) return rc;   /* the steady state: nothing more */
  int mode = cpu_tier_mode();
  if (mode == TIER_MODE_OPT) return exec_tier(ctx, ops, P, WANT_OPT, how, &left);
  double per = ts->interp_work > 0 ? ts->interp_s / ts->interp_work : TUNE_INTERP_PER;
  if (mode == TIER_MODE_AUTO && tier == TIER_NONE && work >= 0 && work <= TUNE_INTERP_WORK &&
      ts->interp_s < TUNE_FAST_BUILD_S && !ts->overran) {
    *how = RUN_INTERP;
    return LACC_OK;
  }
  if (tier == TIER_NONE) {
    rc = exec_tier(ctx, ops, P, WANT_FAST, &tier, &left);
    *how = tier;
    if (rc != LACC_OK) return rc;
  }
  if (tier == TIER_NONE) {   /* no fast tier: the interpreter, unless waiting is quicker */
    double interp = work >= 0 && !ts->overran ? per * (double)work : INFINITY;
    if (mode == TIER_MODE_FAST || interp < left) *how = RUN_INTERP;
    else rc = exec_tier(ctx, ops, P, WANT_OPT, how, &left);
    if (*how == TIER_NONE) *how = RUN_INTERP;   /* the optimised build failed (said once) */
    return rc;
  }
  if (mode == TIER_MODE_AUTO && work > 0) {   /* wait for cc where that is quicker */
    double fast = ts->fast_work > 0 ? ts->fast_s / ts->fast_work * (double)work
                                    : TUNE_FAST_PER * (double)work *
                                          (folds_rows(P) ? (double)span : 1);
    if (left + fast / TUNE_OPT_GAIN < fast) rc = exec_tier(ctx, ops, P, WANT_OPT, how, &left);
  }
  return rc;
}

/* A run on the fast tier's kernels while cc builds the optimised ones: it stops between
 * chunks as soon as they are ready and runs again on them (its work so far thrown away:
 * a run is pure). Its inputs said it was small enough not to wait for cc, but its work may
 * be far more than they say (a generate over a grid of shape tests: 20x the optimised
 * run): once the kernel under way has run a while, its pace so far says how long it has
 * left, and where waiting for cc and running again on its code is quicker, the run stops
 * to wait (and its thread helps build: the cores it held go to cc). The check is one
 * atomic load a chunk, the clock every TUNE_WATCH_S; the lock only once a build has
 * finished or the run's pace says to look. */
typedef struct {
  const kplan *P;
  atomic_long seen;
  _Atomic double next_look;   /* the kernel's seconds at which its pace is looked at next */
  atomic_int wait;            /* it stopped to wait for cc */
} opt_watch;

/* Whether the fast run's kernel under way, at its pace so far, would take longer to
 * finish than cc's build and a run on its code (TUNE_OPT_GAIN faster, from the start). */
static int quicker_to_wait(opt_watch *w) {
  double share, s;
  if (!pool_progress(&share, &s) || s < atomic_load(&w->next_look)) return 0;
  atomic_store(&w->next_look, s + TUNE_WATCH_S);
  if (share <= 0) return 0;
  double left = s * (1 - share) / share, whole = s + left;
  return cpu_code_opt_left(w->P->code) + whole / TUNE_OPT_GAIN < left;
}

static int opt_ready(void *arg) {
  opt_watch *w = arg;
  long now = cpu_builds_done();
  if (atomic_load(&w->seen) != now) {
    atomic_store(&w->seen, now);
    if (cpu_code_opt_ready(w->P->code)) return 1;
  }
  if (!quicker_to_wait(w)) return 0;
  atomic_store(&w->wait, 1);
  return 1;
}

/* A run (on the interpreter or the plan's code) that stops for yield(arg), checked with
 * the stop requests (interrupt.c): *yielded set, no error left, when it stopped so. */
static int run_yielding(lacc_ctx *ctx, int how, const backend_ops *ops, kplan *P,
                        const ast_arena *ast, int (*yield)(void *), void *arg,
                        lacc_array *const *args, lacc_array **out, int *yielded) {
  ctx->run.yield = yield;
  ctx->run.yield_arg = arg;
  atomic_store(&ctx->run.yielded, 0);
  int rc = how == RUN_INTERP ? interp_run(ctx, ast, args, out) : exec_plan(ctx, ops, P, args, out);
  ctx->run.yield = NULL;
  *yielded = rc != LACC_OK && atomic_load(&ctx->run.yielded);
  atomic_store(&ctx->run.yielded, 0);
  if (*yielded) ctx_clear(ctx);
  return *yielded ? LACC_OK : rc;
}

/* The interpreter's time is up (TUNE_FAST_BUILD_S since arg, a start time). */
static int past_budget(void *arg) { return seconds_since(arg) > TUNE_FAST_BUILD_S; }

static const char *tier_name(int how) {
  return how == RUN_INTERP ? "the interpreter" : how == TIER_FAST ? "the fast tier's kernels"
                                                                  : "the optimised kernels";
}

void lacc_tier_counts(lacc_tiers *out) {
  int64_t n[NTIER_COUNTS];
  cpu_tier_counts(n);
  out->interp = n[TC_INTERP];
  out->fast = n[TC_FAST];
  out->opt = n[TC_OPT];
  out->fast_builds = n[TC_FAST_BUILT];
  out->builds = n[TC_BUILT];
  out->failed = n[TC_BUILD_FAILED];
}

char *tier_describe(lacc_ctx *ctx, const char *device, const kplan *P) {
  (void)device;
  int mode = cpu_tier_mode(), cached = 0;
  text b = { 0 };
  if (mode == TIER_MODE_FAST) {
    text_put(&b, "-- code: the fast tier's kernels (tcc); no optimised build (LACC_TIER=fast)\n");
    return text_finish(ctx, &b);
  }
  if (mode == TIER_MODE_OPT) {
    text_put(&b, "%s", "");
    return text_finish(ctx, &b);
  }
  char *srcs[CPU_MAX_PARTS];
  int first[CPU_MAX_PARTS + 1];
  int n = cpu_sources(ctx, P, srcs, first);
  if (n < 0) return NULL;
  int rc = cpu_code_cached(ctx, srcs, n, cpu_longest_loop(P), &cached);
  for (int i = 0; i < n; i++) free(srcs[i]);
  if (rc != LACC_OK) return NULL;
  if (cached) text_put(&b, "-- code: the optimised kernels (cc), in the cache\n");
  else text_put(&b, "-- code: not in the cache: runs of up to %d input elements start on the "
                "interpreter (for at most %.0f ms: past that on compiled code), larger ones on "
                "the fast tier's kernels (tcc), while cc builds the optimised kernels in the "
                "background (LACC_TIER=auto)\n", TUNE_INTERP_WORK, TUNE_FAST_BUILD_S * 1e3);
  return text_finish(ctx, &b);
}

int tier_exec(lacc_ctx *ctx, const backend_ops *ops, kplan *P, const ast_arena *ast,
              int64_t work, int64_t span, lacc_array *const *args, lacc_array **out) {
  tier_state *ts = cpu_code_tiers(P->code);
  int how;
  int rc = choose(ctx, ops, P, ts, work, span, &how);
  if (rc != LACC_OK) return rc;
  if (how == RUN_INTERP && cpu_tier_mode() == TIER_MODE_AUTO && !ts->overran) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int over;
    rc = run_yielding(ctx, RUN_INTERP, ops, P, ast, past_budget, &t0, args, out, &over);
    ts->interp_s += seconds_since(&t0);
    if (!over) {
      ts->interp_work += work > 0 ? (double)work : 1;
      ts->last = how;
      cpu_tier_count(TC_INTERP);
      return rc;
    }
    ts->overran = 1;   /* its runs go to compiled code from now on */
    if (verbose())
      fprintf(stderr, "lacc: a program's run took the interpreter over %.0f ms: it runs on "
              "compiled code instead\n", TUNE_FAST_BUILD_S * 1e3);
    rc = choose(ctx, ops, P, ts, work, span, &how);
    if (rc != LACC_OK) return rc;
  }
  if (how != ts->last && !(how == TIER_OPT && ts->last == RUN_NONE) && verbose())
    fprintf(stderr, "lacc: a program (%d kernel functions) runs on %s%s\n", P->nfns,
            tier_name(how), ts->last != RUN_NONE ? " from now on"
                            : cpu_tier_mode() == TIER_MODE_AUTO ? " while cc builds its kernels" : "");
  ts->last = how;
  cpu_tier_count(how == RUN_INTERP ? TC_INTERP : how == TIER_FAST ? TC_FAST : TC_OPT);
  if (how == TIER_OPT) return exec_plan(ctx, ops, P, args, out);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (how == TIER_FAST && cpu_tier_mode() == TIER_MODE_AUTO && ctx->run.depth == 0) {
    opt_watch w = { .P = P };
    atomic_init(&w.seen, cpu_builds_done());
    atomic_init(&w.next_look, TUNE_WATCH_S);
    atomic_init(&w.wait, 0);
    int yielded;
    rc = run_yielding(ctx, TIER_FAST, ops, P, ast, opt_ready, &w, args, out, &yielded);
    if (yielded) {
      double t;
      int wait = atomic_load(&w.wait);
      if (verbose())
        fprintf(stderr, "lacc: %s during its run on the fast tier: it runs again on them\n",
                wait ? "a program's optimised kernels are quicker to wait for"
                     : "a program's optimised kernels are ready");
      rc = exec_tier(ctx, ops, P, wait ? WANT_OPT : WANT_POLL, &how, &t);
      if (rc == LACC_OK) rc = exec_plan(ctx, ops, P, args, out);
      ts->last = how;
      return rc;
    }
  } else {
    rc = how == RUN_INTERP ? interp_run(ctx, ast, args, out) : exec_plan(ctx, ops, P, args, out);
  }
  double s = seconds_since(&t0), w = work > 0 ? (double)work : 1;
  if (how == RUN_INTERP) {
    ts->interp_s += s;
    ts->interp_work += w;
  } else if (how == TIER_FAST) {
    ts->fast_s += s;
    ts->fast_work += w;
  }
  return rc;
}
