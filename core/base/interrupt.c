/* interrupt.c: stopping a run before it ends (lacc_interrupt, SIGINT).
 *
 * Owns: each context's stop request, and the process-wide SIGINT handler lacc installs
 * while at least one run is in progress (counted across threads under a lock): it counts
 * the signal, for every run in progress to see, then calls the handler it replaced, so
 * the host (lua5.4's "interrupted!", a C program's own handler) still sees it. It leaves
 * SIGINT alone when it was ignored (a background job) or had its default action (the
 * process is ended anyway), and gives the old handler back when the last run ends unless
 * someone changed SIGINT meanwhile (lua5.4's handler resets it to the default action).
 * Must not: decide where a run checks (the executors do, between chunks, launches or
 * nodes) or touch arrays.
 */
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "base/internal.h"

static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static int sig_runs;                 /* runs in progress, all contexts (under sig_lock) */
static int sig_installed;            /* our handler is SIGINT's (under sig_lock) */
static struct sigaction sig_prev;    /* what it replaced; written only while not installed */
static atomic_ulong sigints;         /* SIGINTs seen by our handler */

static void on_sigint(int sig, siginfo_t *info, void *uc) {
  atomic_fetch_add(&sigints, 1);
  struct sigaction prev = sig_prev;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction != NULL) prev.sa_sigaction(sig, info, uc);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  }
}

static int is_ours(const struct sigaction *sa) {
  return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_sigint;
}

static void sig_install(void) {
  struct sigaction cur, ours;
  if (sigaction(SIGINT, NULL, &cur) != 0 || is_ours(&cur)) return;
  if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_IGN || cur.sa_handler == SIG_DFL))
    return;
  sig_prev = cur;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = on_sigint;
  ours.sa_flags = SA_SIGINFO | (cur.sa_flags & SA_RESTART);
  ours.sa_mask = cur.sa_mask;
  if (sigaction(SIGINT, &ours, NULL) == 0) sig_installed = 1;
}

static void sig_uninstall(void) {
  struct sigaction cur;
  if (sigaction(SIGINT, NULL, &cur) == 0 && is_ours(&cur)) sigaction(SIGINT, &sig_prev, NULL);
  sig_installed = 0;
}

void lacc_interrupt(lacc_ctx *ctx) {
  if (ctx != NULL) atomic_store(&ctx->run.stop, 1);
}

void run_begin(lacc_ctx *ctx) {
  if (ctx->run.depth++ > 0) return;
  atomic_store(&ctx->run.stop, 0);
  pthread_mutex_lock(&sig_lock);
  if (sig_runs++ == 0 || !sig_installed) sig_install();
  pthread_mutex_unlock(&sig_lock);
  ctx->run.sigints = atomic_load(&sigints);
}

void run_end(lacc_ctx *ctx) {
  if (--ctx->run.depth > 0) return;
  pthread_mutex_lock(&sig_lock);
  if (--sig_runs == 0 && sig_installed) sig_uninstall();
  pthread_mutex_unlock(&sig_lock);
}

int run_stopped(void *arg) {
  lacc_ctx *ctx = arg;
  return atomic_load(&ctx->run.stop) || atomic_load(&sigints) != ctx->run.sigints;
}

int run_interrupted(lacc_ctx *ctx) {
  return ctx_error(ctx, LACC_ERR_INTERRUPTED, "interrupted");
}
