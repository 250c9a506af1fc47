/* run.c: the entry points that take a program through the stages.
 *
 * Owns: lacc_run and lacc_explain: sharing recovery, then a backend. Today the
 * backends are the reference interpreter ("interp") and "cpu", which runs the
 * interpreter until the compiled CPU backend lands (issue 4).
 * Must not: implement a stage itself.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static int pick_backend(lacc_ctx *ctx, const char *backend) {
  if (backend == NULL || strcmp(backend, "cpu") == 0 || strcmp(backend, "interp") == 0)
    return LACC_OK;
  return ctx_error(ctx, LACC_ERR_BACKEND,
                   "run: unknown backend '%s' (expected \"cpu\" or \"interp\")", backend);
}

int lacc_run(lacc_ctx *ctx, const char *backend, int nroots, lacc_node *const *roots,
             lacc_array **out) {
  ctx_clear(ctx);
  if (pick_backend(ctx, backend) != LACC_OK) return ctx->errcode;
  ast_arena ast;
  int rc = sharing_recover(ctx, nroots, roots, &ast);
  if (rc != LACC_OK) return rc;
  simplify_ast(&ast);
  rc = interp_run(ctx, &ast, out);
  ast_free(&ast);
  return rc;
}

/* Without fusion every computing array node is a kernel of its own. */
static void count(const lacc_node *a, lacc_stats *s) {
  switch (a->kind) {
  case K_ALET: count(a->kids[0], s); count(a->kids[1], s); return;
  case K_RESULTS:
    for (int i = 0; i < a->nkids; i++) count(a->kids[i], s);
    return;
  case K_USE: case K_AVAR: return;
  default: break;
  }
  s->kernels++;
  for (int i = 0; i < a->nkids; i++)
    if (node_level_of(a->kids[i]->kind) == L_ACC) count(a->kids[i], s);
}

static int computed_results(const lacc_node *a) {
  while (a->kind == K_ALET) a = a->kids[1];
  int n = 0;
  for (int i = 0; i < a->nkids; i++)
    n += a->kids[i]->kind != K_USE && a->kids[i]->kind != K_AVAR;
  return n;
}

char *lacc_explain(lacc_ctx *ctx, int nroots, lacc_node *const *roots, lacc_stats *stats) {
  ctx_clear(ctx);
  ast_arena ast;
  if (sharing_recover(ctx, nroots, roots, &ast) != LACC_OK) return NULL;
  simplify_ast(&ast);
  char *s = explain_ast(ctx, &ast);
  if (stats != NULL) {
    memset(stats, 0, sizeof *stats);
    count(ast.root, stats);
    stats->lets = ast.lets;
    stats->intermediates = stats->kernels - computed_results(ast.root);
  }
  ast_free(&ast);
  return s;
}

void lacc_string_free(char *s) { free(s); }
