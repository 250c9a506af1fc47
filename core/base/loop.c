/* loop.c: running an awhile loop, whatever runs its condition and body.
 *
 * Owns: the loop itself: the condition's one bool read on the host, the body's result
 * kept in the layout the loop's array lives in, the arrays released as the loop goes.
 * The interpreter (ast/interp.c) and the executor of plans (kir/exec.c) each pass a
 * runner for the condition and the body, which are nested programs of their own.
 * Must not: know how the condition and body are represented or run.
 */
#include <stdlib.h>
#include <string.h>
#include "base/internal.h"

/* The loop's array after one more step of the body. */
static int advance(lacc_ctx *ctx, loop_runner run, void *ud, const layout_plan *state,
                   lacc_array **args, lacc_array **result) {
  lacc_array *r = NULL;
  int rc = run(ud, 1, args, &r);
  if (rc != LACC_OK) return rc;
  *result = state != NULL ? array_relayout(ctx, r, state) : r;
  if (state != NULL) lacc_array_release(r);
  return *result != NULL ? LACC_OK : ctx->errcode;
}

int awhile_run(lacc_ctx *ctx, loop_runner run, void *ud, const layout_plan *state, int n,
               lacc_array *const *args, lacc_array **out) {
  lacc_array **in = malloc(sizeof *in * (size_t)n);
  if (in == NULL) return err_oom(ctx);
  memcpy(in, args, sizeof *in * (size_t)n);
  in[0] = state != NULL ? array_relayout(ctx, args[0], state) : args[0];
  if (state == NULL) lacc_array_retain(in[0]);
  int rc = in[0] != NULL ? LACC_OK : ctx->errcode;
  while (rc == LACC_OK) {
    lacc_array *c = NULL, *next = NULL;
    rc = run(ud, 0, in, &c);
    if (rc != LACC_OK) break;
    lacc_val go = { .u = 0 };
    rc = array_host(c);
    if (rc == LACC_OK) array_load(c, 0, &go);
    lacc_array_release(c);
    if (rc != LACC_OK || !go.u) break;
    rc = advance(ctx, run, ud, state, in, &next);
    if (rc != LACC_OK) break;
    lacc_array_release(in[0]);
    in[0] = next;
  }
  if (rc == LACC_OK) *out = in[0];
  else lacc_array_release(in[0]);
  free(in);
  return rc;
}
