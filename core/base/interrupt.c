/* interrupt.c: stopping a run before it ends (lacc_interrupt, SIGINT).
 *
 * Owns: each context's stop request, and the process-wide SIGINT handler lacc installs
 * when a run starts (under a lock, across threads): it counts the signal, for every run in
 * progress to see, then calls the handler it replaced, so the host (lua5.4's
 * "interrupted!", a C program's own handler) still sees it. It leaves SIGINT alone when
 * it was ignored (a background job) or had its default action (the process is ended
 * anyway). Once installed it stays between runs (outside a run it only passes the signal
 * on): taking it out and putting it back cost four system calls a run, most of a small
 * run's time. A run asks which handler is in force (at most every 50 ms: the question is a
 * system call too) and installs lacc's again where the host has set another meanwhile
 * (lua5.4's REPL sets its own for each line it runs). The
 * library is pinned first, so the handler's code stays mapped after any Lua state closes.
 * Must not: decide where a run checks (the executors do, between chunks, launches or
 * nodes) or touch arrays.
 */
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "base/internal.h"

static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
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
  if (!lib_pin()) return;   /* the handler would outlive this library's mapping */
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = on_sigint;
  ours.sa_flags = SA_SIGINFO | (cur.sa_flags & SA_RESTART);
  ours.sa_mask = cur.sa_mask;
  /* sig_prev is read by the handler: written while ours is not installed */
  sig_prev = cur;
  sigaction(SIGINT, &ours, NULL);
}

void lacc_interrupt(lacc_ctx *ctx) {
  if (ctx != NULL) atomic_store(&ctx->run.stop, 1);
}

void run_begin(lacc_ctx *ctx) {
  if (ctx->run.depth++ > 0) return;
  atomic_store(&ctx->run.stop, 0);
  static struct timespec last;   /* the last look at SIGINT's handler (under sig_lock) */
  pthread_mutex_lock(&sig_lock);
  if (last.tv_sec == 0 || seconds_since(&last) > 0.05) {
    sig_install();
    clock_gettime(CLOCK_MONOTONIC, &last);
  }
  pthread_mutex_unlock(&sig_lock);
  ctx->run.sigints = atomic_load(&sigints);
}

void run_end(lacc_ctx *ctx) { ctx->run.depth--; }

int run_stopped(void *arg) {
  lacc_ctx *ctx = arg;
  if (atomic_load(&ctx->run.stop) || atomic_load(&sigints) != ctx->run.sigints) return 1;
  if (atomic_load(&ctx->run.yielded)) return 1;   /* for every thread, once one saw it */
  if (ctx->run.yield != NULL && ctx->run.yield(ctx->run.yield_arg)) {
    atomic_store(&ctx->run.yielded, 1);
    return 1;
  }
  return 0;
}

int run_interrupted(lacc_ctx *ctx) {
  return ctx_error(ctx, LACC_ERR_INTERRUPTED, "interrupted");
}
