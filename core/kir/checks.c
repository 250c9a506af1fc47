/* checks.c: a failed run-time check of a kernel as a Lua-facing error message.
 *
 * Owns: the wording of index, backpermute, permute, division, reshape, extent and size
 * failures, shared by every backend that runs a plan, and of programs too large to compile.
 * Must not: decide which failure is reported (the backend keeps the one of the smallest
 * element).
 */
#include <stdio.h>
#include "kir/kir.h"

int plan_check_error(lacc_ctx *ctx, const kplan *P, int check, const int64_t *vals) {
  if (check < 0 || check >= P->nchecks)
    return ctx_error(ctx, LACC_ERR_BACKEND, "a kernel reported an unknown check (%d)", check);
  const pcheck *c = &P->checks[check];
  const char *at = c->where != NULL ? c->where : "?";
  char what[300];
  int len;
  switch (c->kind) {
  case CK_INDEX:
    len = snprintf(what, sizeof what, "index (");
    for (int k = 0; k < c->rank && len < 200; k++)
      len += snprintf(what + len, sizeof what - (size_t)len, "%s%lld", k ? ", " : "",
                      (long long)vals[k] + 1);
    len += snprintf(what + len, sizeof what - (size_t)len, ") out of bounds for shape (");
    for (int k = 0; k < c->rank && len < 240; k++)
      len += snprintf(what + len, sizeof what - (size_t)len, "%s%lld", k ? ", " : "",
                      (long long)vals[c->rank + k]);
    snprintf(what + len, sizeof what - (size_t)len, ")");
    return ctx_error(ctx, LACC_ERR_BOUNDS, "%s (at %s)", what, at);
  case CK_BACKPERMUTE:
    return ctx_error(ctx, LACC_ERR_BOUNDS,
                     "backpermute: index function result out of bounds (at %s)", at);
  case CK_PERMUTE:
    return ctx_error(ctx, LACC_ERR_BOUNDS, "permute: target index out of bounds (at %s)", at);
  case CK_DIVZERO:
    return ctx_error(ctx, LACC_ERR_DIVZERO, "%s: integer division by zero (at %s)", c->what, at);
  case CK_RESHAPE:
    return ctx_error(ctx, LACC_ERR_SHAPE,
                     "reshape: %lld elements cannot take a shape of %lld (at %s)",
                     (long long)vals[0], (long long)vals[1], at);
  case CK_SIZE:   /* worded as an allocation past the limit is (node_alloc_error) */
    return ctx_error(ctx, LACC_ERR_MEMORY, "%s: array too large (more than 2^40 elements) "
                     "(at %s)", c->what, at);
  default:
    return ctx_error(ctx, LACC_ERR_SHAPE, "%s: negative extent %lld in dimension %lld (at %s)",
                     c->what, (long long)vals[0], (long long)vals[1], at);
  }
}


int node_alloc_error(lacc_ctx *ctx, const lacc_node *node) {
  /* Shape and size failures are the user's: name the combinator and its place. */
  if (ctx->errcode == LACC_ERR_SHAPE || ctx->errcode == LACC_ERR_MEMORY) {
    char msg[LACC_ERRMAX];
    snprintf(msg, sizeof msg, "%s: %.900s", kind_name(node->kind), ctx->errmsg);
    ctx_error(ctx, ctx->errcode, "%s (at %s)", msg, node->where != NULL ? node->where : "?");
  }
  return ctx->errcode;
}

int source_size_check(lacc_ctx *ctx, const char *backend, const char *lang, size_t len) {
  if (len <= LACC_MAX_SOURCE) return LACC_OK;
  return ctx_error(ctx, LACC_ERR_BACKEND, "%s: the program's kernels come to %.1f MB of %s, "
                   "past the limit of %zu MB that a compiler handles in reasonable time: split "
                   "the program, or use element types with fewer fields", backend,
                   (double)len / 1048576.0, lang, LACC_MAX_SOURCE >> 20);
}
