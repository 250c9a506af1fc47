/* detach.c: an AST made to stand without the graph it was converted from.
 *
 * Owns: copying the places (`where`) its nodes borrow from graph nodes into its own
 * arena, then letting go of the graph's roots and of the arrays its lacc_acc_use nodes
 * name. A program of one shape that others share (memo.c) lives on for them once its
 * host has freed it: their runs need its plan and its AST's places (error messages), not
 * the arrays it was built over, which would otherwise stay alive as long as any program
 * of its shape does.
 * Must not: change a node's meaning; run on an AST with loops (their arenas borrow the
 * graph's nodes as `sub`) or one whose plan still reads an array by identity.
 */
#include <stdlib.h>
#include <string.h>
#include "ast/ast.h"
#include "base/vec.h"

typedef struct {
  const char **v;
  int n, cap;
  uint64_t gen;
  int oom;
} places;

static void collect(places *s, lacc_node *t) {
  if (t->mark == s->gen) return;
  t->mark = s->gen;
  if (t->where != NULL) {
    if (vec_reserve(&s->v, &s->cap, s->n + 1, 64, sizeof *s->v) != 0) s->oom = 1;
    else s->v[s->n++] = t->where;
  }
  for (int i = 0; i < t->nkids; i++) collect(s, t->kids[i]);
}

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)*(const char *const *)a, y = (uintptr_t)*(const char *const *)b;
  return x < y ? -1 : x > y;
}

const char *ast_place_of(const ast_places *m, const char *from) {
  int lo = 0, hi = m->n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    uintptr_t k = (uintptr_t)m->from[mid], x = (uintptr_t)from;
    if (k == x) return m->to[mid];
    if (k < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return from;   /* a place of the arena's own already, or a static string */
}

static void repoint(ast_places *m, uint64_t gen, lacc_node *t) {
  if (t->mark == gen) return;
  t->mark = gen;
  if (t->where != NULL) t->where = (char *)ast_place_of(m, t->where);
  if (t->kind == K_USE) t->array = NULL;
  for (int i = 0; i < t->nkids; i++) repoint(m, gen, t->kids[i]);
}

/* Each distinct place, sorted by address, and its copy in the arena (one copy of a place
 * many nodes share: lowering tells checks apart by their place's address). */
static int copy_places(ast_arena *a, places *s, ast_places *m) {
  qsort(s->v, (size_t)s->n, sizeof *s->v, by_address);
  m->from = ast_alloc(a, sizeof *m->from * (size_t)(s->n + 1));
  m->to = ast_alloc(a, sizeof *m->to * (size_t)(s->n + 1));
  if (m->from == NULL || m->to == NULL) return LACC_ERR_MEMORY;
  m->n = 0;
  for (int i = 0; i < s->n; i++) {
    if (m->n > 0 && m->from[m->n - 1] == s->v[i]) continue;
    size_t len = strlen(s->v[i]) + 1;
    char *c = ast_alloc(a, len);
    if (c == NULL) return LACC_ERR_MEMORY;
    memcpy(c, s->v[i], len);
    m->from[m->n] = s->v[i];
    m->to[m->n++] = c;
  }
  return LACC_OK;
}

int ast_detach(ast_arena *a, ast_places *m) {
  memset(m, 0, sizeof *m);
  if (a->nnested > 0 || a->root == NULL) return LACC_ERR_ARG;
  places s = { .gen = ++a->ctx->next_mark };
  collect(&s, a->root);
  int rc = s.oom ? err_oom(a->ctx) : copy_places(a, &s, m);
  free(s.v);
  if (rc != LACC_OK) return rc;
  repoint(m, ++a->ctx->next_mark, a->root);
  for (int i = 0; i < a->nretained; i++) lacc_node_release(a->retained[i]);
  a->nretained = 0;
  return LACC_OK;
}
