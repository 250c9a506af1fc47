/* awhile.c: building an awhile node.
 *
 * Owns: what an awhile's condition and body read from outside the loop, found when the
 * node is built (every array that does not depend on the loop's array: the enclosing
 * program computes it once, before the loop, and passes it in).
 * Must not: convert, plan or run the condition and body (sharing.c makes them nested
 * programs of the AST; base/loop.c runs the loop).
 */
#include <stdlib.h>
#include <string.h>
#include "front/front.h"
#include "base/vec.h"

/* Scratch bits in tmp while mark == gen. */
enum { DEP_KNOWN = 1, DEP_YES = 2, SEEN = 4 };

static void touch(lacc_node *x, uint64_t gen) {
  if (x->mark != gen) {
    x->mark = gen;
    x->tmp = 0;
  }
}

/* Whether x depends on var. Nested loops need no special case: what an inner loop's
 * condition and body read from outside it, the outer variable included, are its kids. */
static int depends(lacc_node *x, const lacc_node *var, uint64_t gen) {
  touch(x, gen);
  if (x->tmp & DEP_KNOWN) return (x->tmp & DEP_YES) != 0;
  int d = x == var;
  for (int i = 0; !d && i < x->nkids; i++) d = depends(x->kids[i], var, gen);
  x->tmp |= DEP_KNOWN | (d ? DEP_YES : 0);
  return d;
}

typedef struct {
  lacc_ctx *ctx;
  const lacc_node *var;
  uint64_t gen;
  lacc_node **v;       /* the arrays read from outside, in order of discovery */
  int n, cap;
} outside;

/* The largest array terms under x that do not depend on the variable (scalar code is
 * walked through: it may index such arrays). */
static int collect(outside *o, lacc_node *x) {
  int d = depends(x, o->var, o->gen);
  if (x->tmp & SEEN) return LACC_OK;
  x->tmp |= SEEN;
  if (!d && node_level_of(x->kind) == L_ACC) {
    if (vec_reserve(&o->v, &o->cap, o->n + 1, 8, sizeof *o->v) != 0)
      return err_oom(o->ctx);
    o->v[o->n++] = x;
    return LACC_OK;
  }
  for (int i = 0; i < x->nkids; i++)
    if (collect(o, x->kids[i]) != LACC_OK) return o->ctx->errcode;
  return LACC_OK;
}

lacc_node *awhile_build(lacc_ctx *ctx, lacc_node *init, lacc_node *var, lacc_node *cond,
                        lacc_node *body, const char *where) {
  /* The condition and body are not kids, so node_new cannot see their depth; every walk
   * of the loop (sharing recovery, the interpreter) recurses through them, so loops
   * nested in bodies count toward the same limit as any other chain. */
  int inner = cond->depth > body->depth ? cond->depth : body->depth;
  if (inner + 1 > LACC_MAX_DEPTH) {
    ctx_error(ctx, LACC_ERR_ARG, "awhile: expression deeper than %d levels (loops nested in "
              "loop bodies count) (at %s)", LACC_MAX_DEPTH, where != NULL ? where : "?");
    return NULL;
  }
  outside o = { .ctx = ctx, .var = var, .gen = ++ctx->next_mark };
  lacc_node *n = NULL, **kids = NULL;
  if (collect(&o, cond) != LACC_OK || collect(&o, body) != LACC_OK) goto done;
  kids = ctx_alloc(ctx, sizeof *kids * (size_t)(o.n + 3));
  if (kids == NULL) goto done;
  kids[0] = init;
  for (int i = 0; i < o.n; i++) kids[1 + i] = o.v[i];
  n = node_new(ctx, K_AWHILE, init->type, init->rank, o.n + 1, kids, where);
  if (n == NULL) goto done;
  if (n->depth < inner + 1) n->depth = inner + 1;
  /* sub: condition, body, then the nodes that become their parameters 0..n-1 */
  n->sub = kids;
  kids = NULL;
  n->sub[0] = cond;
  n->sub[1] = body;
  n->sub[2] = var;
  for (int i = 0; i < o.n; i++) n->sub[3 + i] = o.v[i];
  for (int i = 0; i < o.n + 3; i++) lacc_node_retain(n->sub[i]);
  /* a parameter of no compiled program: if the variable escapes the loop, using it is
   * an error rather than a silent read of some program's argument */
  var->field = -1;
done:
  free(kids);
  free(o.v);
  return n;
}
