/* hfuse.c: horizontal fusion: sibling folds that fold the same rows, computed in one loop.
 *
 * Owns: the groups (hlead, hnext on fold nodes) and the reasons a fold with a sibling
 * over the same rows stays alone (hwhy), and the fold classes both this pass and the
 * lowering go by (fold_commutative, fold_ordered_only). Folds join a group when they are
 * in one scope (no let or acond branch between them: lowering plans them with one
 * environment, under one guard), neither reads the other, their rows are those of one
 * array (maps and reshapes of it: the same extents at run time) and they fold them the
 * same way (start value or not, per-lane accumulators of one width or none, in order or in
 * chunks), so that the merged loop combines each fold's elements in exactly the order
 * its own loop would: every result stays bit for bit what it was. Rank-0 results only for
 * now (the executors choose a fold's path by the rows' sizes, which a group shares).
 * Must not: change what any node computes (lowering does the merging, fusion.c counts a
 * group's reads of a producer once).
 */
#include <stdlib.h>
#include "ast/ast.h"
#include "base/settings.h"

/* ---- fold classes */

int fold_ordered_only(const lacc_node *f, const lacc_type *t) {
  if (t->kind != T_SCALAR || !scalar_is_float(t->scalar) || f->kind != K_LAM || f->nparams != 2)
    return 0;
  const lacc_node *e = f->kids[0];
  return e->kind == K_PRIM && (e->prim == P_MIN || e->prim == P_MAX);
}

/* Only such folds take per-lane accumulators, which combine elements l, l + W, l + 2W,
 * ... before their neighbours; float min/max are not commutative bit for bit (which NaN
 * wins depends on the order). (A permute onto few targets also uses it: lower_push.c.) */
int fold_commutative(const lacc_node *f, const lacc_type *t) {
  if (t->kind != T_SCALAR || f->kind != K_LAM || f->nparams != 2) return -1;
  const lacc_node *e = f->kids[0];
  if (e->kind != K_PRIM || e->nkids != 2) return -1;
  const lacc_node *x = e->kids[0], *y = e->kids[1];
  if (x->kind != K_EVAR || y->kind != K_EVAR || x->field + y->field != 1) return -1;
  switch (e->prim) {
  case P_ADD: case P_MUL: return (int)e->prim;
  case P_MIN: case P_MAX: case P_BAND: case P_BOR: case P_BXOR: case P_LAND: case P_LOR:
    return scalar_is_float(t->scalar) ? -1 : (int)e->prim;
  default: return -1;
  }
}

/* ---- the rows a fold folds */

/* Whose extents a term's are, in its scope: an input or parameter (its node), a let-bound
 * variable (its index and the scope it is read in), through maps whose arrays all have the
 * same and reshapes (which keep the element count: the rows of a rank-0 fold). NULL where
 * the extents come from an expression. */
typedef struct {
  const lacc_node *node;   /* K_USE, K_PARAM, or K_AVAR */
  int field;
} rows_of;

static int same_rows(rows_of a, rows_of b) {
  if (a.node == NULL || b.node == NULL || a.node->kind != b.node->kind) return 0;
  switch (a.node->kind) {
  case K_USE: return a.node->array == b.node->array;
  case K_PARAM: return a.node->field == b.node->field;
  case K_AVAR: return a.field == b.field;
  default: return 0;
  }
}

static rows_of rows(const lacc_node *t) {
  rows_of none = { NULL, 0 };
  switch (t->kind) {
  case K_USE: case K_PARAM: return (rows_of){ t, 0 };
  case K_AVAR: return (rows_of){ t, t->field };
  case K_RESHAPE: return rows(t->kids[1]);
  case K_MAP: {
    rows_of r = rows(t->kids[1]);
    for (int i = 2; i < t->nkids; i++)
      if (!same_rows(r, rows(t->kids[i]))) return none;
    return r;
  }
  default: return none;
  }
}

/* ---- groups */

typedef struct {
  lacc_node **v;
  int n, cap;
  lacc_ctx *ctx;
  int on;          /* grouping (else the walk only clears an earlier marking) */
} scope;

static int reads(const lacc_node *t, const lacc_node *x) {
  if (t == x) return 1;
  for (int i = 0; i < t->nkids; i++)
    if (node_level_of(t->kids[i]->kind) == L_ACC && reads(t->kids[i], x)) return 1;
  return 0;
}

static int lanes_of(const lacc_node *a) {
  return fold_commutative(a->kids[0], a->type) >= 0 ? (int)scalar_size(a->type->scalar) : 0;
}

/* Why b cannot join a's group (a, b fold the same rows), or NULL. */
static const char *differs(const lacc_node *a, const lacc_node *b) {
  if (a->kind != b->kind) return "one has a start value, the other not";
  if (fold_ordered_only(a->kids[0], a->type) != fold_ordered_only(b->kids[0], b->type))
    return "a float minimum or maximum folds its rows in order, the other in chunks";
  if (lanes_of(a) != lanes_of(b))
    return lanes_of(a) && lanes_of(b) ? "per-lane accumulators of other widths"
                                      : "one folds with per-lane accumulators, the other not";
  return NULL;
}

static void group(scope *S) {
  for (int i = 0; i < S->n; i++) {
    lacc_node *a = S->v[i];
    if (a->hlead != NULL) continue;
    rows_of ra = rows(fold_input(a));
    lacc_node *last = a;
    int size = 1;
    for (int j = i + 1; j < S->n && size < TUNE_HFUSE_MOST; j++) {
      lacc_node *b = S->v[j];
      if (b->hlead != NULL || !same_rows(ra, rows(fold_input(b)))) continue;
      const char *why = differs(a, b);
      for (lacc_node *m = a; why == NULL && m != NULL; m = m->hnext)
        if (reads(b, m) || reads(m, b)) why = "one reads the other's result";
      if (why != NULL) {
        if (b->hwhy == NULL) b->hwhy = why;
        continue;
      }
      a->hlead = a;
      b->hlead = a;
      last->hnext = b;
      last = b;
      size++;
    }
  }
}

static void add(scope *S, lacc_node *t) {
  if (S->n == S->cap) {
    int cap = S->cap ? 2 * S->cap : 16;
    lacc_node **v = realloc(S->v, sizeof *v * (size_t)cap);
    if (v == NULL) return;   /* out of memory: the fold stays alone, as without the pass */
    S->v = v;
    S->cap = cap;
  }
  S->v[S->n++] = t;
}

static void walk(lacc_node *t, scope *S);

static void in_new_scope(lacc_node *t, lacc_ctx *ctx, int on) {
  scope inner = { NULL, 0, 0, ctx, on };
  walk(t, &inner);
  if (on) group(&inner);
  free(inner.v);
}

/* In lowering's order: kids before the node, a let's bound term in the scope around it. */
static void walk(lacc_node *t, scope *S) {
  switch (t->kind) {
  case K_USE: case K_PARAM: case K_AVAR: return;
  case K_ALET:
    walk(t->kids[0], S);
    in_new_scope(t->kids[1], S->ctx, S->on);
    return;
  case K_ACOND:   /* each branch runs behind the test, planned on its own */
    walk(t->kids[0], S);
    in_new_scope(t->kids[1], S->ctx, S->on);
    in_new_scope(t->kids[2], S->ctx, S->on);
    return;
  default: break;
  }
  for (int i = 0; i < t->nkids; i++)
    if (node_level_of(t->kids[i]->kind) == L_ACC) walk(t->kids[i], S);
  if (t->kind != K_FOLD && t->kind != K_FOLD1) return;
  t->hlead = t->hnext = NULL;
  t->hwhy = NULL;
  if (t->rank == 0 && S->on) add(S, t);
}

void hfuse_mark(ast_arena *ast, int enabled) {
  in_new_scope(ast->root, ast->ctx, enabled && setting_switch("LACC_HFUSE", 1));
  for (int i = 0; i < ast->nnested; i++)
    for (int j = 0; j < 2; j++) hfuse_mark(&ast->nested[i][j], enabled);
}
