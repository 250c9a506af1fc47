/* errors.c: the wording of every error a program's run can raise, in one place.
 *
 * Owns: the messages of failed run-time checks (index, backpermute, permute, division
 * by zero, reshape, extents, sizes, an empty fold1, an awhile tape past grad_mb), of allocations a node's shape
 * made fail, and of programs too large to compile. The interpreter and every backend
 * raise them through these functions, so that all backends say the same words.
 * Must not: decide which failure is reported (the first in element order: the
 * interpreter by its order, the backends by keeping the smallest element).
 */
#include <stdio.h>
#include "base/internal.h"

static const char *at(const char *where) { return where != NULL ? where : "?"; }

int err_index(lacc_ctx *ctx, int rank, const int64_t *ix, const int64_t *shape,
              const char *where) {
  char what[300];
  int len = snprintf(what, sizeof what, "index (");
  /* ix is 0-based: the user's 1-based index minus 1, wrapped (index INT64_MIN is
   * INT64_MAX here), so adding the 1 back wraps too: the message names the user's index */
  for (int k = 0; k < rank && len < 200; k++)
    len += snprintf(what + len, sizeof what - (size_t)len, "%s%lld", k ? ", " : "",
                    (long long)(int64_t)((uint64_t)ix[k] + 1u));
  len += snprintf(what + len, sizeof what - (size_t)len, ") out of bounds for shape (");
  for (int k = 0; k < rank && len < 240; k++)
    len += snprintf(what + len, sizeof what - (size_t)len, "%s%lld", k ? ", " : "",
                    (long long)shape[k]);
  snprintf(what + len, sizeof what - (size_t)len, ")");
  return ctx_error(ctx, LACC_ERR_BOUNDS, "%s (at %s)", what, at(where));
}

int err_backpermute(lacc_ctx *ctx, const char *where) {
  return ctx_error(ctx, LACC_ERR_BOUNDS,
                   "backpermute: index function result out of bounds (at %s)", at(where));
}

int err_permute(lacc_ctx *ctx, const char *where) {
  return ctx_error(ctx, LACC_ERR_BOUNDS, "permute: target index out of bounds (at %s)",
                   at(where));
}

int err_divzero(lacc_ctx *ctx, const char *prim, const char *where) {
  return ctx_error(ctx, LACC_ERR_DIVZERO, "%s: integer division by zero (at %s)", prim,
                   at(where));
}

int err_reshape(lacc_ctx *ctx, int64_t have, int64_t want, const char *where) {
  return ctx_error(ctx, LACC_ERR_SHAPE, "reshape: %lld elements cannot take a shape of %lld "
                   "(at %s)", (long long)have, (long long)want, at(where));
}

int err_fold1_empty(lacc_ctx *ctx, const char *where) {
  return ctx_error(ctx, LACC_ERR_SHAPE, "fold1: the innermost dimension is empty (at %s)",
                   at(where));
}

/* A pullback through awhile keeps every turn's arrays (grad.lua's tape); past the
 * setting that bounds them (tape_limit in its counter), this, at the turn that passes it. */
int err_tape(lacc_ctx *ctx, int64_t have, int64_t limit, const char *where) {
  return ctx_error(ctx, LACC_ERR_MEMORY, "vjp: awhile's pullback keeps the loop's arrays of "
                   "every turn: %.1f MB, past grad_mb (%.1f MB); raise it (lacc.config{grad_mb = "
                   "...} or LACC_GRAD_MB) (at %s)", (double)have / 1048576.0,
                   (double)limit / 1048576.0, at(where));
}

/* A failed allocation, worded once for every part of lacc. */
int err_oom(lacc_ctx *ctx) { return ctx_error(ctx, LACC_ERR_MEMORY, "out of memory"); }

/* Worded as array.c words an allocation past the limit, then named as node_alloc_error
 * names it. */
int err_too_large(lacc_ctx *ctx, const char *what, const char *where) {
  return ctx_error(ctx, LACC_ERR_MEMORY, "%s: array too large (more than 2^%d elements) "
                   "(at %s)", what, LACC_MAX_ELEMS_LOG2, at(where));
}

/* A shape that no array may have (shape_size): a negative extent, or more than 2^40
 * elements; prefix (NULL: none) names what was asked. */
int err_shape_extent(lacc_ctx *ctx, const char *prefix, int64_t extent, int dim) {
  return ctx_error(ctx, LACC_ERR_SHAPE, "%s%snegative extent %lld in dimension %d",
                   prefix != NULL ? prefix : "", prefix != NULL ? ": " : "", (long long)extent, dim);
}

int err_shape_size(lacc_ctx *ctx, const char *prefix) {
  return ctx_error(ctx, LACC_ERR_MEMORY, "%s%sarray too large (more than 2^%d elements)",
                   prefix != NULL ? prefix : "", prefix != NULL ? ": " : "", LACC_MAX_ELEMS_LOG2);
}

int err_extent(lacc_ctx *ctx, const char *what, int64_t extent, int64_t dim,
               const char *where) {
  return ctx_error(ctx, LACC_ERR_SHAPE, "%s: negative extent %lld in dimension %lld (at %s)",
                   what, (long long)extent, (long long)dim, at(where));
}

int node_alloc_error(lacc_ctx *ctx, const lacc_node *node) {
  /* Shape and size failures are the user's: name the combinator and its place. */
  if (ctx->errcode == LACC_ERR_SHAPE || ctx->errcode == LACC_ERR_MEMORY) {
    char msg[LACC_ERRMAX];
    snprintf(msg, sizeof msg, "%s: %.900s", kind_name(node->kind), ctx->errmsg);
    ctx_error(ctx, ctx->errcode, "%s (at %s)", msg, at(node->where));
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
