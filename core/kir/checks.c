/* checks.c: a failed run-time check of a kernel as an error.
 *
 * Owns: mapping a plan's check (its kind, place, values) to the error every backend
 * raises for it; the words are base/errors.c's, the interpreter's too.
 * Must not: decide which failure is reported (the backend keeps the one of the smallest
 * element).
 */
#include "kir/kir.h"

int plan_check_error(lacc_ctx *ctx, const kplan *P, int check, const int64_t *vals) {
  if (check < 0 || check >= P->nchecks)
    return ctx_error(ctx, LACC_ERR_BACKEND, "a kernel reported an unknown check (%d)", check);
  const pcheck *c = &P->checks[check];
  switch (c->kind) {
  case CK_INDEX: return err_index(ctx, c->rank, vals, vals + c->rank, c->where);
  case CK_BACKPERMUTE: return err_backpermute(ctx, c->where);
  case CK_PERMUTE: return err_permute(ctx, c->where);
  case CK_DIVZERO: return err_divzero(ctx, c->what, c->where);
  case CK_RESHAPE: return err_reshape(ctx, vals[0], vals[1], c->where);
  case CK_SIZE: return err_too_large(ctx, c->what, c->where);
  case CK_EMPTY: return err_fold1_empty(ctx, c->where);
  case CK_TAPE: return err_tape(ctx, vals[0], vals[1], c->where);
  default: return err_extent(ctx, c->what, vals[0], vals[1], c->where);
  }
}
