/* simplify.c: rewrites of the closed AST that keep its meaning.
 *
 * Owns: merging nested matches ("Accelerating Sum Types", section 6.2). When an alternative of a case
 * immediately matches one of its own fields, and uses that field for nothing else, the
 * inner case is marked as decided by the outer one: a backend tests the combined tag
 * once, as a range, and never rebuilds the inner tag. The interpreter's result is the
 * same either way; explain shows the merged cases as one.
 * Must not: change what a program computes, or touch the graph.
 */
#include "ast/ast.h"

/* Does e refer to the variable at de Bruijn index idx (counted from e's scope)? */
static int uses_var(const lacc_node *e, int idx) {
  if (e->kind == K_EVAR) return e->field == idx;
  if (e->kind == K_LAM) return uses_var(e->kids[0], idx + e->nparams);
  if (e->kind == K_ELET)
    return uses_var(e->kids[0], idx) || uses_var(e->kids[1], idx + 1);
  for (int i = 0; i < e->nkids; i++) {
    if ((e->kind == K_INDEX || e->kind == K_SHAPE || e->kind == K_SIZE) && i == 0) continue;
    if (uses_var(e->kids[i], idx)) return 1;
  }
  return 0;
}

static void merge_cases(lacc_node *e) {
  if (node_level_of(e->kind) == L_ACC && e->kind != K_AVAR) {
    for (int i = 0; i < e->nkids; i++) merge_cases(e->kids[i]);
    return;
  }
  for (int i = 0; i < e->nkids; i++) {
    if ((e->kind == K_INDEX || e->kind == K_SHAPE || e->kind == K_SIZE) && i == 0) continue;
    merge_cases(e->kids[i]);
  }
  if (e->kind != K_CASE) return;
  for (int k = 1; k < e->nkids; k++) {
    lacc_node *alt = e->kids[k], *inner = alt->kids[0];
    if (inner->kind != K_CASE || inner->kids[0]->kind != K_EVAR) continue;
    int idx = inner->kids[0]->field;
    if (idx >= alt->nparams) continue;   /* not one of this alternative's fields */
    int used = 0;
    for (int j = 1; j < inner->nkids && !used; j++) used = uses_var(inner->kids[j], idx);
    if (!used) inner->merged = 1;
  }
}

void simplify_ast(ast_arena *ast) {
  merge_cases(ast->root);
  for (int i = 0; i < ast->nnested; i++)
    for (int j = 0; j < 2; j++) simplify_ast(&ast->nested[i][j]);
}
