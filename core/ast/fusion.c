/* fusion.c: which array terms get a kernel of their own ("Optimising Purely Functional GPU Programs" section 4).
 *
 * Owns: the `manifest` mark on array terms of the closed AST. Producers (generate,
 * map, backpermute, reshape, unit, append, interleave) are delayed: a consumer pulls
 * their elements through an index, inside its own kernel, with no intermediate array.
 * Consumers (folds, scans, permute, stencil, acond, compute, sortperm) always
 * materialise; a stencil's array, an acond's branches and a sort's keys are materialised
 * too (read once per neighbour; planned behind a guard; read pass after pass). A let-bound producer stays delayed when pulling
 * from it never repeats real work:
 *   - it is used once as an element-wise input, or indexed once from scalar code
 *     (not inside a loop body or a fold's combining function, which run many times);
 *     shape and size queries are free;
 *   - or it is cheap: backpermutes and reshapes of a materialised array (one load);
 *   - and, when scalar code over a space of higher rank indexes it, its elements cost
 *     few operations: such an index reads each element many times (a matrix product's
 *     generate reads each element of a row once per column, a bias added to a matrix
 *     each once per row), and pulling repeats the work each time.
 * Otherwise it is materialised once and read by every user.
 * Must not: change the AST's meaning or shape; lowering (lower.c) follows the marks.
 */
#include "ast/ast.h"

#define MANY 1000000

typedef struct fenv {
  int manifest;              /* the bound array is materialised (or an input) */
  const struct fenv *up;
} fenv;

static int is_producer(node_kind k) {
  return k == K_GENERATE || k == K_MAP || k == K_BACKPERMUTE || k == K_RESHAPE || k == K_UNIT ||
         k == K_APPEND || k == K_INTERLEAVE;
}

/* Scalar operations an element of a producer may cost before an index from scalar code
 * materialises it: a random draw (Philox's rounds) is some 300, a scaled index or a
 * bias add under 20. */
#define COSTLY 64

static int add_uses(int a, int b) { return a + b > MANY ? MANY : a + b; }

static int count_exp(const lacc_node *e, int idx, int weight);
static int sibling_read(const lacc_node *t, int idx);

/* Uses of array variable idx (de Bruijn, counted from t's scope) by an array term; with
 * above >= 0, only the indexes from the scalar code of terms of rank above it. */
static int count_uses(const lacc_node *t, int idx, int above) {
  switch (t->kind) {
  case K_AVAR: return above < 0 && t->field == idx;
  case K_USE: case K_PARAM: return 0;
  case K_ALET:
    return add_uses(count_uses(t->kids[0], idx, above), count_uses(t->kids[1], idx + 1, above));
  case K_RESULTS: {
    int n = 0;
    for (int i = 0; i < t->nkids; i++) n = add_uses(n, count_uses(t->kids[i], idx, above));
    return n;
  }
  default: break;
  }
  int n = 0;
  int repeated = t->kind == K_FOLD || t->kind == K_FOLD1 || is_scan(t->kind) ||
                 t->kind == K_PERMUTE;
  /* a stencil reads each element of its array several times */
  if (above < 0 && t->kind == K_STENCIL && count_uses(t->kids[1], idx, -1) > 0) return MANY;
  int shared = above < 0 && sibling_read(t, idx);
  for (int i = 0; i < t->nkids; i++) {
    const lacc_node *k = t->kids[i];
    if (shared && k == fold_input(t)) continue;
    if (node_level_of(k->kind) == L_ACC) n = add_uses(n, count_uses(k, idx, above));
    else if (above < 0 || t->rank > above) n = add_uses(n, count_exp(k, idx, repeated ? MANY : 1));
  }
  return n;
}

static int count_acc(const lacc_node *t, int idx) { return count_uses(t, idx, -1); }

/* A grouped fold (hfuse.c) after its group's first: its elements are pulled in the first's
 * loop at the same index, so a producer both fold element for element is one read. */
static int sibling_read(const lacc_node *t, int idx) {
  return (t->kind == K_FOLD || t->kind == K_FOLD1) && t->hlead != NULL && t->hlead != t &&
         reads_at_element(fold_input(t), idx) && reads_at_element(fold_input(t->hlead), idx);
}

/* Scalar operations in a producer's own code and that of the delayed producers it pulls,
 * up to limit (the arrays it reads, materialised, cost nothing here). Kids are marked. */
static int cost_of(const lacc_node *t, int limit) {
  int n = 0;
  for (int i = 0; i < t->nkids && n < limit; i++) {
    const lacc_node *k = t->kids[i];
    if (k->kind == K_SHAPE || k->kind == K_SIZE) n += 1;   /* free: not its array's work */
    else if (node_level_of(k->kind) != L_ACC) n += 1 + cost_of(k, limit - n - 1);
    else if (k->kind == K_ALET || (is_producer(k->kind) && !k->manifest)) n += cost_of(k, limit - n);
  }
  return n;
}

static int count_exp(const lacc_node *e, int idx, int weight) {
  if (e->kind == K_INDEX) {
    int n = e->kids[0]->field == idx ? weight : 0;
    return add_uses(n, count_exp(e->kids[1], idx, weight));
  }
  if (e->kind == K_SHAPE || e->kind == K_SIZE) return 0;
  int inner = weight;
  if (e->kind == K_ITERATE || e->kind == K_WHILE) inner = MANY;
  int n = 0;
  for (int i = 0; i < e->nkids; i++) {
    int w = (e->kind == K_ITERATE || e->kind == K_WHILE) && i == 2 ? weight : inner;
    if (e->kind == K_ITERATE && i == 0) w = weight;
    n = add_uses(n, count_exp(e->kids[i], idx, w));
  }
  return n;
}

static int is_manifest_ref(const lacc_node *t, const fenv *env) {
  if (t->kind == K_USE || t->kind == K_PARAM) return 1;
  if (t->kind != K_AVAR) return 0;
  for (int k = 0; k < t->field && env != NULL; k++) env = env->up;
  return env != NULL && env->manifest;
}

/* Let chains: `let a = (let b = .. in t)`: what matters is the term t they end in,
 * judged in its own environment. */
static int end_manifest(const lacc_node *t, const fenv *env) {
  if (t->kind == K_ALET) {
    fenv inner = { end_manifest(t->kids[0], env), env };
    return end_manifest(t->kids[1], &inner);
  }
  if (t->kind == K_AVAR) return is_manifest_ref(t, env);
  if (t->kind == K_USE || t->kind == K_PARAM) return 1;
  return t->manifest;
}

/* Backpermutes and reshapes (any chain of them) of a materialised array, named or
 * written in place (a compute, a fold: consumers are materialised): one load an element.
 * (A gradient's cotangent of a sum, a scalar spread over the summed array's shape and
 * reshaped back to it, was 128 MB written and read twice in an N-body step's.) */
static int cheap(const lacc_node *t, const fenv *env) {
  const lacc_node *x;
  if (t->kind == K_BACKPERMUTE) x = t->kids[2];
  else if (t->kind == K_RESHAPE) x = t->kids[1];
  else return 0;
  return end_manifest(x, env) || (x->kind != K_ALET && cheap(x, env));
}

static int end_cheap(const lacc_node *t, const fenv *env) {
  if (t->kind != K_ALET) return cheap(t, env);
  fenv inner = { end_manifest(t->kids[0], env), env };
  return end_cheap(t->kids[1], &inner);
}

static lacc_node *end_of(lacc_node *t) {
  while (t->kind == K_ALET) t = t->kids[1];
  return t;
}

static void mark(lacc_node *t, const fenv *env, int fuse, int top);

static void mark_kids(lacc_node *t, const fenv *env, int fuse) {
  for (int i = 0; i < t->nkids; i++)
    if (node_level_of(t->kids[i]->kind) == L_ACC) mark(t->kids[i], env, fuse, 0);
}

/* top: the term is a program result or a let's bound term decided by the caller. */
static void mark(lacc_node *t, const fenv *env, int fuse, int top) {
  switch (t->kind) {
  case K_USE: case K_PARAM: case K_AVAR: t->manifest = 1; return;
  case K_RESULTS:
    for (int i = 0; i < t->nkids; i++) mark(t->kids[i], env, fuse, 1);
    return;
  case K_ALET: {
    lacc_node *b = t->kids[0];
    int uses = count_acc(t->kids[1], 0);
    mark(b, env, fuse, 0);
    lacc_node *e = end_of(b);
    if (is_producer(e->kind))
      e->manifest = !fuse || (uses > 1 && !end_cheap(b, env)) ||
                    (cost_of(e, COSTLY) >= COSTLY && count_uses(t->kids[1], 0, e->rank) > 0);
    fenv inner = { end_manifest(b, env), env };
    mark(t->kids[1], &inner, fuse, top);
    return;
  }
  case K_ACOND: {
    /* each branch is planned on its own, behind the test: both end materialised */
    mark_kids(t, env, fuse);
    for (int i = 1; i <= 2; i++) {
      lacc_node *x = end_of(t->kids[i]);
      if (is_producer(x->kind)) x->manifest = 1;
    }
    t->manifest = 1;
    return;
  }
  case K_SORTPERM:   /* a sort reads its keys on the host, pass after pass */
  case K_SORTKEYS:
  case K_AWHILE:
    /* the loop's sub-programs read its initial array and what it reads from outside */
    mark_kids(t, env, fuse);
    for (int i = 0; i < t->nkids; i++) {
      lacc_node *x = end_of(t->kids[i]);
      if (is_producer(x->kind)) x->manifest = 1;
    }
    t->manifest = 1;
    return;
  case K_STENCIL: {
    /* its array is read once per neighbour: materialised unless a cheap index transform */
    mark_kids(t, env, fuse);
    lacc_node *x = end_of(t->kids[1]);
    if (is_producer(x->kind) && !end_cheap(t->kids[1], env)) x->manifest = 1;
    t->manifest = 1;
    return;
  }
  default: break;
  }
  mark_kids(t, env, fuse);
  t->manifest = !is_producer(t->kind) || !fuse || top;
}

void fusion_mark(ast_arena *ast, int enabled) {
  mark(ast->root, NULL, enabled, 1);
  for (int i = 0; i < ast->nnested; i++)
    for (int j = 0; j < 2; j++) fusion_mark(&ast->nested[i][j], enabled);
}
