/* rebind.c: a program's graph over other arrays, or other programs, of the same types and
 * ranks.
 *
 * Owns: lacc_acc_rebind, a copy of a graph in which every use of some arrays reads others
 * instead and some programs (nodes) are replaced by others, all at once; the nodes that
 * lead to none of them are the original's, shared. lacc.mpi builds a distributed loop's
 * local programs so from its second turn on: last turn's program over this turn's arrays
 * and programs, without tracing its functions again.
 * Must not: check types again (each copy is of a node already checked, over an array or
 * a program of the same element type and rank), or copy a loop whose outside arrays
 * change (its condition and body read those very nodes: an error, and the caller builds
 * the program anew).
 */
#include <stdlib.h>
#include "front/front.h"
#include "base/vec.h"

typedef struct {
  lacc_ctx *ctx;
  int narrays, nnodes;
  lacc_array *const *from, *const *to;
  lacc_node *const *from_node, *const *to_node;
  char *seen_a, *seen_n;   /* which arrays and programs the walk met */
  uint64_t gen;        /* the walk's mark: x->tmp is 0 (unchanged) or 1 + an index in made */
  lacc_node **made;    /* the copies and replacements, one reference each until the walk ends */
  int n, cap;
} rebind;

static lacc_node *keep(rebind *r, lacc_node *x, lacc_node *copy) {
  if (copy == NULL) return NULL;
  if (vec_reserve(&r->made, &r->cap, r->n + 1, 16, sizeof *r->made) != 0) {
    lacc_node_release(copy);
    err_oom(r->ctx);
    return NULL;
  }
  r->made[r->n++] = copy;
  x->tmp = r->n;
  return copy;
}

static lacc_node *use_of(rebind *r, lacc_node *x) {
  for (int i = 0; i < r->narrays; i++) {
    if (x->array != r->from[i]) continue;
    r->seen_a[i] = 1;
    lacc_node *u = node_new(r->ctx, K_USE, x->type, x->rank, 0, NULL, x->where);
    if (u != NULL) {
      u->array = r->to[i];
      lacc_array_retain(r->to[i]);
    }
    return keep(r, x, u);
  }
  return x;
}

static lacc_node *copy_of(rebind *r, lacc_node *x, lacc_node **kids) {
  if (x->kind == K_AWHILE) {
    ctx_error(r->ctx, LACC_ERR_ARG, "rebind: a loop reading a rebound array (at %s)", x->where);
    return NULL;
  }
  lacc_node *c = node_new(r->ctx, x->kind, x->type, x->rank, x->nkids, kids, x->where);
  if (c != NULL) {
    c->prim = x->prim;
    c->field = x->field;
    c->nparams = x->nparams;
    c->cval = x->cval;
  }
  return keep(r, x, c);
}

/* x's copy where x leads to something rebound, x itself where it does not; NULL on an
 * error (in the context). */
static lacc_node *walk(rebind *r, lacc_node *x) {
  if (x->mark == r->gen) return x->tmp > 0 ? r->made[x->tmp - 1] : x;
  x->mark = r->gen;
  x->tmp = 0;
  for (int i = 0; i < r->nnodes; i++)
    if (x == r->from_node[i]) {
      r->seen_n[i] = 1;
      if (x == r->to_node[i]) return x;   /* kept as it is: not walked */
      lacc_node_retain(r->to_node[i]);
      return keep(r, x, r->to_node[i]);
    }
  if (x->kind == K_USE) return use_of(r, x);
  lacc_node *small[8], **kids = x->nkids <= 8 ? small : malloc(sizeof *kids * (size_t)x->nkids);
  if (kids == NULL) {
    err_oom(r->ctx);
    return NULL;
  }
  int changed = 0;
  lacc_node *res = x;
  for (int i = 0; i < x->nkids && res != NULL; i++) {
    kids[i] = walk(r, x->kids[i]);
    if (kids[i] == NULL) res = NULL;
    else changed |= kids[i] != x->kids[i];
  }
  if (res != NULL && changed) res = copy_of(r, x, kids);
  if (kids != small) free(kids);
  return res;
}

static int differ(lacc_ctx *ctx, const char *what, const lacc_type *a, int ra,
                  const lacc_type *b, int rb) {
  return ctx_error(ctx, LACC_ERR_ARG, "rebind: the %s differ in element type or rank (%s of "
                   "rank %d, %s of rank %d)", what, a->sig, ra, b->sig, rb);
}

static int check(lacc_ctx *ctx, lacc_node *n, int narrays, lacc_array *const *from,
                 lacc_array *const *to, int nnodes, lacc_node *const *from_node,
                 lacc_node *const *to_node) {
  if (narrays > LACC_MAX_ARGS || nnodes > LACC_MAX_ARGS)
    return ctx_error(ctx, LACC_ERR_ARG, "rebind: at most %d arrays and %d programs",
                     LACC_MAX_ARGS, LACC_MAX_ARGS);
  if (n == NULL || n->ctx != ctx || narrays < 0 || nnodes < 0)
    return ctx_error(ctx, LACC_ERR_ARG, "rebind: a missing node, or one of another context");
  for (int i = 0; i < narrays; i++) {
    if (from[i] == NULL || to[i] == NULL || to[i]->ctx != ctx)
      return ctx_error(ctx, LACC_ERR_ARG, "rebind: a missing array, or one of another context");
    if (from[i]->type != to[i]->type || from[i]->rank != to[i]->rank)
      return differ(ctx, "arrays", from[i]->type, from[i]->rank, to[i]->type, to[i]->rank);
  }
  for (int i = 0; i < nnodes; i++) {
    const lacc_node *a = from_node[i], *b = to_node[i];
    if (a == NULL || b == NULL || a->ctx != ctx || b->ctx != ctx)
      return ctx_error(ctx, LACC_ERR_ARG, "rebind: a missing program, or one of another context");
    if (node_level_of(a->kind) != L_ACC || node_level_of(b->kind) != L_ACC ||
        a->type != b->type || a->rank != b->rank)
      return differ(ctx, "programs", a->type, a->rank, b->type, b->rank);
  }
  return LACC_OK;
}

lacc_node *lacc_acc_rebind(lacc_ctx *ctx, lacc_node *n, int narrays, lacc_array *const *from,
                           lacc_array *const *to, int nnodes, lacc_node *const *from_node,
                           lacc_node *const *to_node) {
  ctx_clear(ctx);
  if (check(ctx, n, narrays, from, to, nnodes, from_node, to_node) != LACC_OK) return NULL;
  char seen_a[LACC_MAX_ARGS] = { 0 }, seen_n[LACC_MAX_ARGS] = { 0 };
  rebind r = { .ctx = ctx, .narrays = narrays, .nnodes = nnodes, .from = from, .to = to,
               .from_node = from_node, .to_node = to_node, .seen_a = seen_a, .seen_n = seen_n,
               .gen = ++ctx->next_mark };
  lacc_node *res = walk(&r, n);
  /* a value rebound that the graph does not read where it was walked was read some other
   * way when the program was built (its value, say, as a constant): not safe to rebind */
  for (int i = 0; res != NULL && i < narrays; i++)
    if (!seen_a[i]) res = NULL;
  for (int i = 0; res != NULL && i < nnodes; i++)
    if (!seen_n[i] && from_node[i] != to_node[i]) res = NULL;
  if (res == NULL && ctx->errcode == LACC_OK)
    ctx_error(ctx, LACC_ERR_ARG, "rebind: an array or program rebound is not read by the graph");
  if (res != NULL) lacc_node_retain(res);
  for (int i = 0; i < r.n; i++) lacc_node_release(r.made[i]);
  free(r.made);
  return res;
}
