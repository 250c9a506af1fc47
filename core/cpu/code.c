/* code.c: a plan's code on the cpu backend: the functions its runs use now.
 *
 * Owns: cpu_code, a plan's kernels in up to CPU_MAX_PARTS translation units; finding
 * their optimised build in the caches (LACC_TIER=opt: building it now, the parts at
 * once), else queueing it in the background (auto); the fast tier's build, tried once;
 * switching a plan's runs to the optimised build between runs once every part's is
 * loaded; a waiting run building the parts still queued itself; the estimate of a build's
 * remaining time.
 * Must not: run kernels (launch.c), choose a run's tier (tier.c), compile (kcache.c) or
 * print code (emit_c.c).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cpu/builds.h"
#include "base/settings.h"

/* A part of a plan's code: functions lacc_f<lo..hi-1> in a translation unit of their
 * own, so that the parts of a large program compile at once, each in a cc process. */
typedef struct {
  int lo, hi;
  char *src;
  job *job;                    /* its optimised build under way (a reference), or NULL */
  void *opt, *fast;            /* its builds, once loaded */
} part;

struct cpu_code {
  int nfns;
  void **fns;                  /* what runs use now (tier's), NULL: none yet */
  int tier;                    /* TIER_NONE, TIER_FAST or TIER_OPT */
  void **opt, **fast;          /* the resolved functions of each, once loaded */
  int fast_tried;
  int opt_code;                /* an optimised build failed: its error, for a run that waits */
  char *opt_err;
  int64_t longest;
  int nparts;
  part parts[CPU_MAX_PARTS];
  tier_state tiers;            /* what its runs measured (tier.c) */
};

tier_state *cpu_code_tiers(cpu_code *c) { return &c->tiers; }

int cpu_tier_mode(void) {
  char v[16];
  if (!setting_text("LACC_TIER", v, sizeof v)) return TIER_MODE_AUTO;
  if (strcmp(v, "opt") == 0) return TIER_MODE_OPT;
  if (strcmp(v, "fast") == 0) return TIER_MODE_FAST;
  if (strcmp(v, "auto") != 0)
    warn_once("setting LACC_TIER", "ignoring LACC_TIER=%.40s: expected auto, fast or opt; "
              "using auto", v);
  return TIER_MODE_AUTO;
}

int cpu_build_parts(size_t bytes, int nfns) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int n = bytes < CPU_PART_BYTES || cores < 2 ? 1 : cores < CPU_MAX_PARTS ? (int)cores : CPU_MAX_PARTS;
  /* more parts than cores where the whole would be past LACC_OPT_SOURCE in fewer: each
   * part is then optimised (kcache.c: opt_level), where one part past it is not (a
   * gradient with five products of 600 KB of C each: 3.3 MB in one of two parts, whose
   * -O0 code ran the gradient 170x slower) */
  while (n < CPU_MAX_PARTS && bytes / (size_t)n > (size_t)LACC_OPT_SOURCE * 3 / 4) n++;
  return n > nfns / 2 ? (nfns / 2 > 1 ? nfns / 2 : 1) : n;
}

/* The functions of every part, from each part's build (opt: the optimised ones). */
static int resolve(cpu_code *c, int opt, void ***out, char *err, size_t cap) {
  void **fns = calloc((size_t)(c->nfns ? c->nfns : 1), sizeof *fns);
  if (fns == NULL) {
    snprintf(err, cap, "out of memory");
    return LACC_ERR_MEMORY;
  }
  for (int i = 0; i < c->nparts; i++)
    for (int k = c->parts[i].lo; k < c->parts[i].hi; k++) {
      char name[32];
      snprintf(name, sizeof name, "lacc_f%d", k);
      fns[k] = dlsym(opt ? c->parts[i].opt : c->parts[i].fast, name);
      if (fns[k] == NULL) {
        snprintf(err, cap, "cpu: %s missing", name);
        free(fns);
        return LACC_ERR_BACKEND;
      }
    }
  *out = fns;
  return LACC_OK;
}

/* Runs use the optimised builds (every part has its own). */
static int use_opt(lacc_ctx *ctx, cpu_code *c) {
  char err[LACC_ERRMAX];
  int rc = resolve(c, 1, &c->opt, err, sizeof err);
  if (rc != LACC_OK) return ctx_error(ctx, rc, "%s", err);
  c->fns = c->opt;
  c->tier = TIER_OPT;
  return LACC_OK;
}

void cpu_code_free(cpu_code *c) {
  if (c == NULL) return;
  for (int i = 0; i < c->nparts; i++) {
    job_release(c->parts[i].job);
    free(c->parts[i].src);
  }
  free(c->opt);
  free(c->fast);
  free(c->opt_err);
  free(c);
}

/* Part i's optimised build queued (or joined: the same kernels may be under way). */
static int queue_part(lacc_ctx *ctx, cpu_code *c, int i) {
  request *q = request_new(c->parts[i].src, c->longest, 0);
  if (q == NULL || (c->parts[i].job = enqueue(q)) == NULL)
    return err_oom(ctx);
  return LACC_OK;
}

static int wait_opt(lacc_ctx *ctx, cpu_code *c);

/* The parts' optimised builds from the caches; those missing, under opt built now (the
 * last by this thread, the others by the workers at the same time), under auto queued. */
static int find_or_build(lacc_ctx *ctx, cpu_code *c, int mode) {
  int missing = 0, last = -1, rc = LACC_OK;
  for (int i = 0; i < c->nparts && rc == LACC_OK; i++) {
    rc = obtain_now(ctx, c->parts[i].src, c->longest, FIND_ONLY, &c->parts[i].opt);
    if (rc == LACC_OK && c->parts[i].opt == NULL) {
      missing++;
      last = i;
    }
  }
  if (rc != LACC_OK || missing == 0) return rc != LACC_OK ? rc : use_opt(ctx, c);
  for (int i = 0; i < c->nparts && rc == LACC_OK; i++)
    if (c->parts[i].opt == NULL && (mode == TIER_MODE_AUTO || i != last)) rc = queue_part(ctx, c, i);
  if (rc != LACC_OK || mode == TIER_MODE_AUTO) return rc;
  rc = obtain_now(ctx, c->parts[last].src, c->longest, FIND_OR_BUILD, &c->parts[last].opt);
  return rc != LACC_OK ? rc : wait_opt(ctx, c);
}

int cpu_code_new(lacc_ctx *ctx, char **srcs, const int *first, int nparts, int64_t longest,
                 cpu_code **out) {
  *out = NULL;
  size_t bytes = 0;
  for (int i = 0; i < nparts; i++) bytes += strlen(srcs[i]);
  if (source_size_check(ctx, "cpu", "C", bytes) != LACC_OK) return ctx->errcode;
  cpu_code *c = calloc(1, sizeof *c);
  if (c == NULL) return err_oom(ctx);
  c->nfns = first[nparts];
  c->longest = longest;
  c->tiers.last = RUN_NONE;
  c->nparts = nparts;
  for (int i = 0; i < nparts; i++) {   /* the sources are the code's now */
    c->parts[i].lo = first[i];
    c->parts[i].hi = first[i + 1];
    c->parts[i].src = srcs[i];
    srcs[i] = NULL;
  }
  int mode = cpu_tier_mode();
  int rc = mode == TIER_MODE_FAST ? LACC_OK : find_or_build(ctx, c, mode);   /* fast: tcc's only */
  if (rc != LACC_OK) {
    cpu_code_free(c);
    return rc;
  }
  *out = c;
  return LACC_OK;
}

void **cpu_code_fns(const cpu_code *c, int *atomics) {
  *atomics = c->tier == TIER_OPT;   /* tcc's code has no atomics (emit_c.c) */
  return c->fns;
}

/* Finished background builds taken up: once every part's is there, runs use them; a
 * failure is kept and said once. */
static int poll_jobs(lacc_ctx *ctx, cpu_code *c) {
  int pending = 0, rc = LACC_OK;
  for (int i = 0; i < c->nparts; i++) {
    job *j = c->parts[i].job;
    if (j == NULL) continue;
    pthread_mutex_lock(&jobs_lock);
    kick_locked();
    int state = j->state;
    pthread_mutex_unlock(&jobs_lock);
    if (state == J_QUEUED || state == J_RUNNING) {
      pending++;
      continue;
    }
    c->parts[i].job = NULL;
    if (state == J_DONE) {
      c->parts[i].opt = j->dl;
    } else if (c->opt_err == NULL) {
      c->opt_code = j->code;
      c->opt_err = strdup(j->err);
      warn_once(j->q->id, "the optimised build of a program's kernels failed; it runs on %s:\n%s",
                c->tier == TIER_FAST ? "the fast tier" : "the interpreter", j->err);
    }
    job_release(j);
  }
  for (int i = 0; i < c->nparts; i++) pending += c->parts[i].opt == NULL;
  if (pending > 0 || c->opt_err != NULL || c->tier == TIER_OPT) return LACC_OK;
  rc = use_opt(ctx, c);
  if (rc == LACC_OK && verbose() && cpu_tier_mode() != TIER_MODE_OPT)
    fprintf(stderr, "lacc: a program's optimised kernels are loaded (%d part%s): runs switch "
            "to them\n", c->nparts, c->nparts == 1 ? "" : "s");
  return rc;
}

/* The fast tier's code: tcc's build of each part, tried once; a failure (no tcc, code it
 * does not take) only leaves the plan without it. */
static int try_fast(lacc_ctx *ctx, cpu_code *c) {
  c->fast_tried = 1;
  char err[LACC_ERRMAX];
  int rc = LACC_OK;
  for (int i = 0; i < c->nparts && rc == LACC_OK; i++) {
    request *q = request_new(c->parts[i].src, c->longest, 1);
    if (q == NULL) return err_oom(ctx);
    run_begin(ctx);
    rc = obtain(q, FIND_OR_BUILD, run_stopped, ctx, err, sizeof err, &c->parts[i].fast);
    run_end(ctx);
    request_free(q);
  }
  if (rc == LACC_ERR_INTERRUPTED) return run_interrupted(ctx);
  if (rc == LACC_OK) rc = resolve(c, 0, &c->fast, err, sizeof err);
  if (rc != LACC_OK) {
    if (verbose()) fprintf(stderr, "lacc: no fast tier for a program: %s\n", err);
    return LACC_OK;
  }
  cpu_tier_count(TC_FAST_BUILT);
  c->fns = c->fast;
  c->tier = TIER_FAST;
  return LACC_OK;
}

int cpu_code_opt_ready(const cpu_code *c) {
  if (c == NULL) return 0;
  if (c->tier == TIER_OPT) return 1;
  int ready = 1;
  pthread_mutex_lock(&jobs_lock);
  for (int i = 0; i < c->nparts && ready; i++)
    ready = c->parts[i].opt != NULL || (c->parts[i].job != NULL && c->parts[i].job->state == J_DONE);
  pthread_mutex_unlock(&jobs_lock);
  return ready;
}

static int pending(const cpu_code *c) {
  int n = 0;
  pthread_mutex_lock(&jobs_lock);
  kick_locked();
  for (int i = 0; i < c->nparts; i++)
    n += c->parts[i].job != NULL &&
         (c->parts[i].job->state == J_QUEUED || c->parts[i].job->state == J_RUNNING);
  pthread_mutex_unlock(&jobs_lock);
  return n;
}

/* Under jobs_lock: a build of c's still queued (the background builders are busy with
 * others), or NULL. */
static job *queued_part_locked(const cpu_code *c) {
  for (int i = 0; i < c->nparts; i++)
    if (c->parts[i].job != NULL && c->parts[i].job->state == J_QUEUED) return c->parts[i].job;
  return NULL;
}

/* A build a waiting run does itself stops for the run's SIGINT or the process's exit. */
static int help_stop(void *ctx) { return builds_exiting() || run_stopped(ctx); }

/* Waits for c's optimised builds (queued now where none is under way; those still
 * queued built by this thread meanwhile), a SIGINT stopping the wait; their failure is
 * the error where there is no code to run. */
static int wait_opt(lacc_ctx *ctx, cpu_code *c) {
  for (int i = 0; i < c->nparts && c->opt_err == NULL; i++)
    if (c->parts[i].opt == NULL && c->parts[i].job == NULL && queue_part(ctx, c, i) != LACC_OK)
      return ctx->errcode;
  run_begin(ctx);
  while (pending(c) > 0 && !run_stopped(ctx)) {
    pthread_mutex_lock(&jobs_lock);
    job *mine = queued_part_locked(c);
    if (mine != NULL) {   /* this thread would only wait: it builds one itself */
      take_locked(mine);
      build_locked(mine, help_stop, ctx);
    } else {
      struct timespec until = in_ms(20);   /* a SIGINT is seen within 20 ms */
      pthread_cond_timedwait(&jobs_cond, &jobs_lock, &until);
    }
    pthread_mutex_unlock(&jobs_lock);
  }
  int stopped = run_stopped(ctx);
  run_end(ctx);
  if (stopped) return run_interrupted(ctx);
  int rc = poll_jobs(ctx, c);
  if (rc != LACC_OK) return rc;
  /* under opt the build's failure is the run's error; else the interpreter runs it */
  if (c->tier == TIER_NONE && c->opt_err != NULL && cpu_tier_mode() == TIER_MODE_OPT)
    return ctx_error(ctx, c->opt_code, "%s", c->opt_err);
  return LACC_OK;
}

/* Seconds c's optimised builds will likely still take: the longest part's source at the
 * pace of this process's builds so far (kcache_build_seconds). */
static double remaining(const cpu_code *c) {
  double most = 0;
  pthread_mutex_lock(&jobs_lock);
  for (int i = 0; i < c->nparts; i++) {
    const job *j = c->parts[i].job;
    if (j == NULL) continue;
    double left = kcache_build_seconds(strlen(j->q->src)) - seconds_since(&j->queued);
    if (left < 0.01) left = 0.01;
    if (left > most) most = left;
  }
  pthread_mutex_unlock(&jobs_lock);
  return most;
}

double cpu_code_opt_left(const cpu_code *c) { return c == NULL ? 0 : remaining(c); }

int cpu_code_advance(lacc_ctx *ctx, cpu_code *c, int want, int *tier, double *left) {
  if (c->tier == TIER_OPT) {   /* the steady state: no lock taken */
    *tier = TIER_OPT;
    *left = 0;
    return LACC_OK;
  }
  int rc = poll_jobs(ctx, c);
  if (rc == LACC_OK && want == WANT_FAST && c->tier == TIER_NONE && !c->fast_tried)
    rc = try_fast(ctx, c);
  if (rc == LACC_OK && want == WANT_OPT && c->tier != TIER_OPT) rc = wait_opt(ctx, c);
  *tier = c->tier;
  *left = remaining(c);
  return rc;
}

int cpu_code_cached(lacc_ctx *ctx, char **srcs, int nparts, int64_t longest, int *cached) {
  *cached = 1;
  for (int i = 0; i < nparts && *cached; i++) {
    void *dl = NULL;
    int rc = obtain_now(ctx, srcs[i], longest, FIND_ONLY, &dl);
    if (rc != LACC_OK) return rc;
    *cached = dl != NULL;
  }
  return LACC_OK;
}
