/* loop.c: running an awhile loop, whatever runs its condition and body.
 *
 * Owns: the loop itself: the condition's one bool read on the host, the body's results
 * kept in the layouts the loop's arrays live in (a loop's state is one array or several,
 * of any types and ranks), the arrays released as the loop goes.
 * The interpreter (ast/interp.c) and the executor of plans (kir/exec.c) each pass a
 * runner for the condition and the body, which are nested programs of their own.
 * Must not: know how the condition and body are represented or run.
 */
#include <stdlib.h>
#include <string.h>
#include "base/internal.h"

/* The loop's arrays after one more step of the body: in[0..m-1] replaced, each kept in
 * its layout (state[i], NULL: as it comes). */
static int advance(lacc_ctx *ctx, loop_runner run, void *ud, int m,
                   const layout_plan *const *state, lacc_array **in) {
  lacc_array **r = calloc((size_t)m, sizeof *r);
  if (r == NULL) return err_oom(ctx);
  int rc = run(ud, 1, in, r);   /* on failure the runner has released what it made */
  for (int i = 0; rc == LACC_OK && i < m; i++) {
    lacc_array *next = r[i];
    if (state != NULL && state[i] != NULL) {
      next = array_relayout(ctx, r[i], state[i]);
      lacc_array_release(r[i]);
      if (next == NULL) rc = ctx->errcode;
    }
    if (rc != LACC_OK) {   /* the rest, not yet relaid out, are dropped */
      for (int j = i + 1; j < m; j++) lacc_array_release(r[j]);
      break;
    }
    lacc_array_release(in[i]);
    in[i] = next;
  }
  free(r);
  return rc;
}

int awhile_run(lacc_ctx *ctx, loop_runner run, void *ud, int m, const layout_plan *const *state,
               int n, lacc_array *const *args, lacc_array **out) {
  lacc_array **in = malloc(sizeof *in * (size_t)n);
  if (in == NULL) return err_oom(ctx);
  memcpy(in, args, sizeof *in * (size_t)n);
  int rc = LACC_OK, held = 0;   /* in[0..held-1]: the loop's own references */
  while (rc == LACC_OK && held < m) {
    const layout_plan *p = state != NULL ? state[held] : NULL;
    lacc_array *x = p != NULL ? array_relayout(ctx, args[held], p) : args[held];
    if (x == NULL) {
      rc = ctx->errcode;
    } else {
      if (p == NULL) lacc_array_retain(x);
      in[held++] = x;
    }
  }
  while (rc == LACC_OK) {
    lacc_array *c = NULL;
    rc = run(ud, 0, in, &c);
    if (rc != LACC_OK) break;
    lacc_val go = { .u = 0 };
    rc = array_host(c);
    if (rc == LACC_OK) array_load(c, 0, &go);
    lacc_array_release(c);
    if (rc != LACC_OK || !go.u) break;
    rc = advance(ctx, run, ud, m, state, in);
  }
  for (int i = 0; i < held; i++) {
    if (rc == LACC_OK) out[i] = in[i];
    else lacc_array_release(in[i]);
  }
  free(in);
  return rc;
}
