/* awhile.c: building an awhile node.
 *
 * Owns: what an awhile's condition and body read from outside the loop, found when the
 * node is built (every array that does not depend on the loop's arrays: the enclosing
 * program computes it once, before the loop, and passes it in); a loop of several arrays
 * as one node per array, sharing the loop (the first node's id names it).
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

static int is_var(const lacc_node *x, int m, lacc_node *const *var) {
  for (int i = 0; i < m; i++)
    if (x == var[i]) return 1;
  return 0;
}

/* Whether x depends on one of the m variables. Nested loops need no special case: what
 * an inner loop's condition and body read from outside it, the outer variables included,
 * are its kids. */
static int depends(lacc_node *x, int m, lacc_node *const *var, uint64_t gen) {
  touch(x, gen);
  if (x->tmp & DEP_KNOWN) return (x->tmp & DEP_YES) != 0;
  int d = is_var(x, m, var);
  for (int i = 0; !d && i < x->nkids; i++) d = depends(x->kids[i], m, var, gen);
  x->tmp |= DEP_KNOWN | (d ? DEP_YES : 0);
  return d;
}

typedef struct {
  lacc_ctx *ctx;
  int m;
  lacc_node *const *var;
  uint64_t gen;
  lacc_node **v;       /* the arrays read from outside, in order of discovery */
  int n, cap;
} outside;

/* The largest array terms under x that do not depend on the variable (scalar code is
 * walked through: it may index such arrays). */
static int collect(outside *o, lacc_node *x) {
  int d = depends(x, o->m, o->var, o->gen);
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

lacc_node *awhile_build(lacc_ctx *ctx, int m, lacc_node *const *init, lacc_node *const *var,
                        lacc_node *cond, lacc_node *const *body, const char *where) {
  /* The condition and body are not kids, so node_new cannot see their depth; every walk
   * of the loop (sharing recovery, the interpreter) recurses through them, so loops
   * nested in bodies count toward the same limit as any other chain. */
  int inner = cond->depth;
  for (int i = 0; i < m; i++)
    if (body[i]->depth > inner) inner = body[i]->depth;
  if (inner + 1 > LACC_MAX_DEPTH) {
    ctx_error(ctx, LACC_ERR_ARG, "awhile: expression deeper than %d levels (loops nested in "
              "loop bodies count) (at %s)", LACC_MAX_DEPTH, where != NULL ? where : "?");
    return NULL;
  }
  outside o = { .ctx = ctx, .m = m, .var = var, .gen = ++ctx->next_mark };
  lacc_node *n = NULL, **kids = NULL;
  int rc = collect(&o, cond);
  for (int i = 0; rc == LACC_OK && i < m; i++) rc = collect(&o, body[i]);
  if (rc != LACC_OK) goto done;
  int nsub = 1 + 2 * m + o.n;
  kids = ctx_alloc(ctx, sizeof *kids * (size_t)nsub);
  if (kids == NULL) goto done;
  for (int i = 0; i < m; i++) kids[i] = init[i];
  for (int i = 0; i < o.n; i++) kids[m + i] = o.v[i];
  n = node_new(ctx, K_AWHILE, init[0]->type, init[0]->rank, m + o.n, kids, where);
  if (n == NULL) goto done;
  if (n->depth < inner + 1) n->depth = inner + 1;
  /* sub: condition, the bodies, the variables, then the arrays read from outside: the
   * nodes that become the condition's and bodies' parameters 0.. are sub[1 + m ..] */
  n->sub = kids;
  kids = NULL;
  n->sub[0] = cond;
  for (int i = 0; i < m; i++) {
    n->sub[1 + i] = body[i];
    n->sub[1 + m + i] = var[i];
  }
  for (int i = 0; i < o.n; i++) n->sub[1 + 2 * m + i] = o.v[i];
  for (int i = 0; i < nsub; i++) lacc_node_retain(n->sub[i]);
  n->nparams = m;   /* the loop's arrays; this node is array field (0) of them */
  n->cval.u = n->id;
  /* parameters of no compiled program: if a variable escapes the loop, using it is an
   * error rather than a silent read of some program's argument */
  for (int i = 0; i < m; i++) var[i]->field = -1;
done:
  free(kids);
  free(o.v);
  return n;
}

lacc_node *awhile_array(lacc_ctx *ctx, lacc_node *loop, int i, const char *where) {
  int m = loop->nparams, nsub = loop->nkids + 1 + m;
  lacc_node **sub = ctx_alloc(ctx, sizeof *sub * (size_t)nsub);
  if (sub == NULL) return NULL;
  memcpy(sub, loop->sub, sizeof *sub * (size_t)nsub);
  lacc_node *n = node_new(ctx, K_AWHILE, loop->kids[i]->type, loop->kids[i]->rank,
                          loop->nkids, loop->kids, where);
  if (n == NULL) {
    free(sub);
    return NULL;
  }
  n->depth = loop->depth;
  n->sub = sub;
  for (int k = 0; k < nsub; k++) lacc_node_retain(sub[k]);
  n->nparams = m;
  n->field = i;
  n->cval = loop->cval;
  return n;
}
