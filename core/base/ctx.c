/* ctx.c: contexts and their error state.
 *
 * Owns: lacc_ctx lifetime, the last error, the memory counter, progress reports, and
 * keeping the library mapped while process-wide state lives in it (lib_pin). A
 * context is used by one thread at a time (lacc_interrupt, interrupt.c, excepted); there
 * is no global mutable state here but lib_pin's, set once (pthread_once).
 * Must not: know about nodes, arrays or stages beyond freeing interned types.
 */
#define _GNU_SOURCE   /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/internal.h"
#include "base/settings.h"

int lacc_abi_version(void) { return LACC_ABI_VERSION; }

lacc_ctx *lacc_ctx_new(void) {
  lacc_ctx *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return NULL;
  ctx->refs = 1;
  ctx->next_id = 1;
  ctx->layout = LAYOUT_COMPACT;
  ctx->fusion = 1;
  ctx->hfuse = 1;
  ctx->sharing = 1;
  return ctx;
}

void ctx_retain(lacc_ctx *ctx) { ctx->refs++; }

void lacc_ctx_release(lacc_ctx *ctx) {
  if (ctx == NULL) return;
  if (--ctx->refs > 0) {
    /* only the programs kept for their shapes hold it: nothing can find them again */
    if (ctx->refs == ctx->kept.n && ctx->kept.drop != NULL && !ctx->kept.dropping) {
      ctx->kept.dropping = 1;
      ctx->kept.drop(ctx);   /* the last one's release frees the context */
    }
    return;
  }
  free(ctx->kept.e);
  free(ctx->memo);   /* empty by now: each program left it as it was freed (memo.c) */
  types_free(ctx);
  free(ctx);
}

const char *lacc_errmsg(const lacc_ctx *ctx) { return ctx->errmsg; }
int lacc_errcode(const lacc_ctx *ctx) { return ctx->errcode; }
int64_t lacc_ctx_bytes(const lacc_ctx *ctx) { return ctx->bytes; }

void lacc_ctx_transfers(const lacc_ctx *ctx, lacc_transfers *out) { *out = ctx->moved; }

int ctx_error(lacc_ctx *ctx, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
  va_end(ap);
  ctx->errcode = code;
  return code;
}

void ctx_clear(lacc_ctx *ctx) {
  ctx->errcode = LACC_OK;
  ctx->errmsg[0] = '\0';
}

void *ctx_alloc(lacc_ctx *ctx, size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (p == NULL) ctx_error(ctx, LACC_ERR_MEMORY, "out of memory (%zu bytes)", n);
  return p;
}

int verbose(void) {
  return setting_switch("LACC_VERBOSE", 0);
}

double seconds_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

void lacc_set_progress(lacc_ctx *ctx, lacc_progress_fn fn, void *ud, double after) {
  ctx->progress.fn = fn;
  ctx->progress.ud = ud;
  ctx->progress.after = after > 0 ? after : 0;
}

/* Only the outermost run reports: awhile's condition and body run as programs too. */
void progress_begin(lacc_ctx *ctx, int nsteps) {
  if (ctx->progress.depth++ > 0) return;
  ctx->progress.nsteps = nsteps > 0 ? nsteps : 1;
  ctx->progress.step = 0;
  ctx->progress.reported = 0;
  clock_gettime(CLOCK_MONOTONIC, &ctx->progress.start);
}

void progress_at(lacc_ctx *ctx, int step) {
  if (ctx->progress.depth == 1) ctx->progress.step = step;
  progress_tick(ctx, 0);
}

#define PROGRESS_EVERY 0.2

void progress_tick(void *arg, double step_done) {
  lacc_ctx *ctx = arg;
  if (ctx->progress.fn == NULL || ctx->progress.depth != 1) return;
  if (seconds_since(&ctx->progress.start) < ctx->progress.after) return;
  if (ctx->progress.reported && seconds_since(&ctx->progress.last) < PROGRESS_EVERY) return;
  clock_gettime(CLOCK_MONOTONIC, &ctx->progress.last);
  ctx->progress.reported = 1;
  double f = (ctx->progress.step + (step_done < 0 ? 0 : step_done > 1 ? 1 : step_done)) /
             ctx->progress.nsteps;
  ctx->progress.fn(ctx->progress.ud, f);
}

/* The last call (1: only for a run that ended well) is made while the run still counts
 * as under way, so that a run the callback starts is nested: it reports nothing, to this
 * callback or any other. */
void progress_end(lacc_ctx *ctx, int done) {
  if (done && ctx->progress.depth == 1 && ctx->progress.fn != NULL && ctx->progress.reported)
    ctx->progress.fn(ctx->progress.ud, 1.0);
  ctx->progress.depth--;
}

static pthread_once_t pin_once = PTHREAD_ONCE_INIT;
static int pinned;

static void pin(void) {
  Dl_info info;
  if (dladdr((void *)&lib_pin, &info) == 0 || info.dli_fname == NULL) return;
  pinned = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}

int lib_pin(void) {
  pthread_once(&pin_once, pin);
  return pinned;
}
