/* sharing.c: sharing recovery ("Optimising Purely Functional GPU Programs", section 3).
 *
 * Owns: the conversion of the graph (sharing is node identity) into the closed AST:
 * a node used more than once is let-bound once, just above the lowest node that
 * dominates all its uses, with de Bruijn indices at the array level (K_AVAR) and the
 * scalar level (K_EVAR). Lambdas were traced once with fresh variable nodes; here
 * their parameters become binders. An array referenced from scalar code is always
 * let-bound at the array level, so scalar code only ever sees array variables.
 * Must not: change what a program computes (no simplification here) or touch the
 * graph beyond its scratch fields (tmp, mark).
 *
 * The three stages of the paper map onto: counting uses (prune), immediate
 * dominators on the DAG (float: the binding site is the idom), and conversion with
 * an environment of bound nodes (introduce binders).
 */
#include <stdlib.h>
#include <string.h>
#include "ast/ast.h"
#include "base/vec.h"

struct ast_block {
  struct ast_block *next;
  size_t used, cap;
  max_align_t data[];
};

void *ast_alloc(ast_arena *a, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  ast_block *b = a->blocks;
  if (b == NULL || b->used + n > b->cap) {
    size_t cap = n > 65536 ? n : 65536;
    b = malloc(sizeof *b + cap);
    if (b == NULL) {
      err_oom(a->ctx);
      return NULL;
    }
    b->cap = cap;
    b->used = 0;
    b->next = a->blocks;
    a->blocks = b;
    a->bytes += sizeof *b + cap;
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

void ast_free(ast_arena *a) {
  ast_block *b = a->blocks;
  while (b != NULL) {
    ast_block *next = b->next;
    free(b);
    b = next;
  }
  for (int i = 0; i < a->nretained; i++) lacc_node_release(a->retained[i]);
  free(a->retained);
  for (int i = 0; i < a->nnested; i++) {
    ast_free(&a->nested[i][0]);
    ast_free(&a->nested[i][1]);
    free(a->nested[i]);
  }
  free(a->nested);
  memset(a, 0, sizeof *a);
}

/* ---- growable vectors of nodes */

typedef struct {
  lacc_node **v;
  int n, cap;
} nodevec;

static int vec_push(lacc_ctx *ctx, nodevec *s, lacc_node *x) {
  if (vec_reserve(&s->v, &s->cap, s->n + 1, 16, sizeof *s->v) != 0)
    return err_oom(ctx);
  s->v[s->n++] = x;
  return LACC_OK;
}

/* ---- the analysis shared by both levels: a DAG below one root */

typedef struct {
  lacc_node *node;
  nodevec succ;        /* edges to nodes of this level, with multiplicity */
  int post;            /* postorder number; the virtual root has the largest */
  int idom;            /* index into the table; -1 until known */
  int uses;
  int forced;          /* array referenced from scalar code: always bound */
  nodevec binds;       /* shared nodes bound just above this one, outermost first */
} entry;

typedef struct {
  lacc_ctx *ctx;
  node_level level;
  entry *e;            /* e[0..n-1] graph nodes in postorder, e[n] the virtual root */
  int n, cap;
  uint64_t gen;
  lacc_node *const *bound;   /* array nodes that are a sub-program's parameters: leaves */
  int nbound;
} dag;

static int bound_index(const dag *g, const lacc_node *x) {
  for (int i = 0; i < g->nbound; i++)
    if (g->bound[i] == x) return i;
  return -1;
}

static int is_level(const dag *g, const lacc_node *x) {
  node_level l = node_level_of(x->kind);
  if (g->level == L_ACC) return l == L_ACC;
  return (l == L_EXP || l == L_LAM) && x->kind != K_VAR;
}

static entry *entry_of(dag *g, const lacc_node *x) { return &g->e[x->tmp]; }

/* Arrays referenced from the scalar code of one array node, found by a walk that
 * visits each scalar node once. */
static int find_array_refs(dag *g, lacc_node *x, uint64_t gen, nodevec *out) {
  if (x->mark == gen) return LACC_OK;
  x->mark = gen;
  if (x->kind == K_INDEX || x->kind == K_SHAPE || x->kind == K_SIZE) {
    if (vec_push(g->ctx, out, x->kids[0]) != LACC_OK) return g->ctx->errcode;
    for (int i = 1; i < x->nkids; i++)
      if (find_array_refs(g, x->kids[i], gen, out) != LACC_OK) return g->ctx->errcode;
    return LACC_OK;
  }
  for (int i = 0; i < x->nkids; i++)
    if (find_array_refs(g, x->kids[i], gen, out) != LACC_OK) return g->ctx->errcode;
  return LACC_OK;
}

static int successors(dag *g, lacc_node *x, nodevec *succ, nodevec *refs) {
  if (g->level == L_ACC && bound_index(g, x) >= 0) return LACC_OK;
  if (g->level == L_EXP && x->kind == K_LAM) {
    lacc_node *body = x->kids[x->nkids - 1];
    return is_level(g, body) ? vec_push(g->ctx, succ, body) : LACC_OK;
  }
  if (g->level == L_EXP && (x->kind == K_INDEX || x->kind == K_SHAPE || x->kind == K_SIZE)) {
    for (int i = 1; i < x->nkids; i++)
      if (vec_push(g->ctx, succ, x->kids[i]) != LACC_OK) return g->ctx->errcode;
    return LACC_OK;
  }
  for (int i = 0; i < x->nkids; i++) {
    lacc_node *k = x->kids[i];
    if (is_level(g, k)) {
      if (vec_push(g->ctx, succ, k) != LACC_OK) return g->ctx->errcode;
    } else if (g->level == L_ACC && k->kind != K_VAR) {
      uint64_t gen = ++g->ctx->next_mark;
      if (find_array_refs(g, k, gen, refs) != LACC_OK) return g->ctx->errcode;
    }
  }
  return LACC_OK;
}

static int dag_visit(dag *g, lacc_node *x) {
  if (x->mark == g->gen) return LACC_OK;
  x->mark = g->gen;
  nodevec succ = { 0 }, refs = { 0 };
  if (successors(g, x, &succ, &refs) != LACC_OK) goto fail;
  for (int i = 0; i < refs.n; i++)
    if (vec_push(g->ctx, &succ, refs.v[i]) != LACC_OK) goto fail;
  /* the walks above used fresh generations on scalar nodes only; ours is intact */
  for (int i = 0; i < succ.n; i++)
    if (dag_visit(g, succ.v[i]) != LACC_OK) goto fail;
  for (int i = 0; i < refs.n; i++) g->e[refs.v[i]->tmp].forced = 1;
  if (vec_reserve(&g->e, &g->cap, g->n + 2, 64, sizeof *g->e) != 0) {
    err_oom(g->ctx);
    goto fail;
  }
  entry *en = &g->e[g->n];
  memset(en, 0, sizeof *en);
  en->node = x;
  en->succ = succ;
  en->post = g->n;
  en->idom = -1;
  x->tmp = g->n++;
  free(refs.v);
  return LACC_OK;
fail:
  free(succ.v);
  free(refs.v);
  return g->ctx->errcode ? g->ctx->errcode : LACC_ERR_MEMORY;
}

static int intersect(const dag *g, int a, int b) {
  while (a != b) {
    while (g->e[a].post < g->e[b].post) a = g->e[a].idom;
    while (g->e[b].post < g->e[a].post) b = g->e[b].idom;
  }
  return a;
}

static void add_edge(dag *g, int from, int to) {
  entry *t = &g->e[to];
  t->uses++;
  t->idom = t->idom < 0 ? from : intersect(g, t->idom, from);
}

/* A node shared by several parents gets a let; with sharing off (an ablation switch)
 * it is copied into each parent instead, except arrays that scalar code refers to,
 * which are always bound. */
static int binds(const dag *g, const entry *en) {
  return ((en->uses > 1 && g->ctx->sharing) || en->forced) && en->node->kind != K_LAM;
}

/* Build the table for the DAG under roots; decide what is bound where. */
static int dag_analyse(dag *g, int nroots, lacc_node *const *roots) {
  g->gen = ++g->ctx->next_mark;
  for (int i = 0; i < nroots; i++)
    if (dag_visit(g, roots[i]) != LACC_OK) return g->ctx->errcode;
  int root = g->n;   /* the virtual root */
  memset(&g->e[root], 0, sizeof g->e[root]);
  g->e[root].post = root;
  g->e[root].idom = root;
  for (int i = 0; i < nroots; i++) add_edge(g, root, roots[i]->tmp);
  /* reverse postorder: every predecessor of a node comes before it in a DAG */
  for (int i = root - 1; i >= 0; i--) {
    entry *en = &g->e[i];
    for (int j = 0; j < en->succ.n; j++) add_edge(g, i, en->succ.v[j]->tmp);
  }
  /* ascending postorder, so a shared node is bound inside-out after what it uses */
  for (int i = 0; i < root; i++) {
    entry *en = &g->e[i];
    if (binds(g, en))
      if (vec_push(g->ctx, &g->e[en->idom].binds, en->node) != LACC_OK) return g->ctx->errcode;
  }
  return LACC_OK;
}

static void dag_free(dag *g) {
  for (int i = 0; i < g->cap; i++) {
    free(g->e[i].succ.v);
    free(g->e[i].binds.v);
  }
  free(g->e);
}

static int is_bound(dag *g, const lacc_node *x) { return binds(g, entry_of(g, x)); }

/* ---- conversion */

typedef struct {
  lacc_ctx *ctx;
  ast_arena *out;
  nodevec aenv;        /* bound array nodes, innermost last */
} conv;

static lacc_node *ast_node(conv *c, const lacc_node *src, node_kind k, int nkids) {
  lacc_node *n = ast_alloc(c->out, sizeof *n);
  if (n == NULL) return NULL;
  n->kids = ast_alloc(c->out, sizeof *n->kids * (size_t)(nkids ? nkids : 1));
  if (n->kids == NULL) return NULL;
  n->kind = k;
  n->ctx = c->ctx;
  n->nkids = nkids;
  if (src != NULL) {
    n->type = src->type;
    n->rank = src->rank;
    n->prim = src->prim;
    n->field = src->field;
    n->nparams = src->nparams;
    n->cval = src->cval;
    n->array = src->array;
    n->where = src->where;
    n->id = src->id;
    n->sub = src->sub;
  }
  return n;
}

static lacc_node *var_ref(conv *c, const nodevec *env, const lacc_node *x, node_kind k) {
  for (int i = env->n - 1; i >= 0; i--) {
    if (env->v[i] == x) {
      lacc_node *v = ast_node(c, x, k, 0);
      if (v != NULL) v->field = env->n - 1 - i;
      return v;
    }
  }
  ctx_error(c->ctx, LACC_ERR_SCOPE,
            "a scalar value built at %s is used outside the function it belongs to "
            "(values traced inside one lacc function cannot escape into another; an array "
            "combinator inside another's function is nested parallelism, which lacc does not "
            "have: generate the rank-2 array of (element, other) pairs and fold its inner "
            "dimension instead)",
            x->where);
  return NULL;
}

/* Wrap body in the lets of binds[0..n-1] (defs already converted). */
static lacc_node *wrap_lets(conv *c, node_kind let, lacc_node **defs, int n, lacc_node *body) {
  for (int i = n - 1; i >= 0 && body != NULL; i--) {
    lacc_node *l = ast_node(c, NULL, let, 2);
    if (l == NULL) return NULL;
    l->type = body->type;
    l->rank = body->rank;
    l->kids[0] = defs[i];
    l->kids[1] = body;
    c->out->lets++;
    body = l;
  }
  return body;
}

/* scalar level: one analysis per scalar root (a function or an expression argument) */

typedef struct {
  conv *c;
  dag g;
  nodevec env;         /* lambda parameters and bound scalar nodes, innermost last */
} econv;

static lacc_node *exp_ref(econv *ec, lacc_node *x);

static lacc_node *exp_core(econv *ec, lacc_node *x) {
  conv *c = ec->c;
  if (x->kind == K_LAM) {
    lacc_node *n = ast_node(c, x, K_LAM, 1);
    if (n == NULL) return NULL;
    for (int i = 0; i < x->nparams; i++)
      if (vec_push(c->ctx, &ec->env, x->kids[i]) != LACC_OK) return NULL;
    n->kids[0] = exp_ref(ec, x->kids[x->nkids - 1]);
    ec->env.n -= x->nparams;
    return n->kids[0] != NULL ? n : NULL;
  }
  lacc_node *n = ast_node(c, x, x->kind, x->nkids);
  if (n == NULL) return NULL;
  int first = 0;
  if (x->kind == K_INDEX || x->kind == K_SHAPE || x->kind == K_SIZE) {
    n->kids[0] = var_ref(c, &c->aenv, x->kids[0], K_AVAR);
    if (n->kids[0] == NULL) return NULL;
    first = 1;
  }
  for (int i = first; i < x->nkids; i++) {
    n->kids[i] = exp_ref(ec, x->kids[i]);
    if (n->kids[i] == NULL) return NULL;
  }
  return n;
}

/* The definition of x: the lets floated to x, then x itself. Nothing floats to a
 * function node itself (its body dominates everything below it), so a function's
 * lets always sit inside its body, in the scope of its parameters. */
static lacc_node *exp_def(econv *ec, lacc_node *x) {
  entry *en = entry_of(&ec->g, x);
  if (x->kind == K_LAM || en->binds.n == 0) return exp_core(ec, x);
  int nb = en->binds.n;
  lacc_node **defs = ast_alloc(ec->c->out, sizeof *defs * (size_t)nb);
  if (defs == NULL) return NULL;
  for (int i = 0; i < nb; i++) {
    defs[i] = exp_def(ec, en->binds.v[i]);
    if (defs[i] == NULL || vec_push(ec->c->ctx, &ec->env, en->binds.v[i]) != LACC_OK)
      return NULL;
  }
  lacc_node *body = exp_core(ec, x);
  ec->env.n -= nb;
  return body != NULL ? wrap_lets(ec->c, K_ELET, defs, nb, body) : NULL;
}

static lacc_node *exp_ref(econv *ec, lacc_node *x) {
  if (x->kind == K_VAR || is_bound(&ec->g, x)) return var_ref(ec->c, &ec->env, x, K_EVAR);
  return exp_def(ec, x);
}

static lacc_node *exp_root(conv *c, lacc_node *x) {
  econv ec = { .c = c, .g = { .ctx = c->ctx, .level = L_EXP } };
  lacc_node *r = NULL;
  if (x->kind == K_VAR) {
    var_ref(c, &ec.env, x, K_EVAR);   /* a bare variable at the top is always out of scope */
    return NULL;
  }
  if (dag_analyse(&ec.g, 1, &x) == LACC_OK) {
    /* the virtual root binds what the whole expression shares */
    entry *top = &ec.g.e[ec.g.n];
    int nb = top->binds.n;
    lacc_node **defs = ast_alloc(c->out, sizeof *defs * (size_t)(nb ? nb : 1));
    int ok = defs != NULL;
    for (int i = 0; ok && i < nb; i++) {
      defs[i] = exp_def(&ec, top->binds.v[i]);
      ok = defs[i] != NULL && vec_push(c->ctx, &ec.env, top->binds.v[i]) == LACC_OK;
    }
    lacc_node *body = ok ? exp_ref(&ec, x) : NULL;
    r = body != NULL ? wrap_lets(c, K_ELET, defs, nb, body) : NULL;
  }
  dag_free(&ec.g);
  free(ec.env.v);
  return r;
}

/* array level */

typedef struct {
  conv *c;
  dag g;
} aconv;

static lacc_node *acc_ref(aconv *ac, lacc_node *x);

/* A bound node as the sub-program's parameter i. */
static lacc_node *param_node(aconv *ac, const lacc_node *x, int i) {
  lacc_node *n = ast_node(ac->c, NULL, K_PARAM, 0);
  if (n == NULL) return NULL;
  n->type = x->type;
  n->rank = x->rank;
  n->where = x->where;
  n->id = x->id;
  n->field = i;   /* its layout is the loop's to choose (lower_plan's `layouts`) */
  return n;
}

static lacc_node *acc_core(aconv *ac, lacc_node *x) {
  int b = bound_index(&ac->g, x);
  if (b >= 0) return param_node(ac, x, b);
  lacc_node *n = ast_node(ac->c, x, x->kind, x->nkids);
  if (n == NULL) return NULL;
  for (int i = 0; i < x->nkids; i++) {
    lacc_node *k = x->kids[i];
    n->kids[i] = node_level_of(k->kind) == L_ACC ? acc_ref(ac, k) : exp_root(ac->c, k);
    if (n->kids[i] == NULL) return NULL;
  }
  return n;
}

static lacc_node *acc_def_with(aconv *ac, entry *en, lacc_node *x) {
  int nb = en->binds.n;
  lacc_node **defs = ast_alloc(ac->c->out, sizeof *defs * (size_t)(nb ? nb : 1));
  if (defs == NULL) return NULL;
  for (int i = 0; i < nb; i++) {
    lacc_node *b = en->binds.v[i];
    defs[i] = acc_def_with(ac, entry_of(&ac->g, b), b);
    if (defs[i] == NULL || vec_push(ac->c->ctx, &ac->c->aenv, b) != LACC_OK) return NULL;
  }
  lacc_node *body = x != NULL ? acc_core(ac, x) : NULL;
  if (x == NULL) {   /* the virtual root: the tuple of results */
    body = ast_node(ac->c, NULL, K_RESULTS, ac->c->out->nroots);
    for (int i = 0; body != NULL && i < ac->c->out->nroots; i++) {
      body->kids[i] = acc_ref(ac, ac->c->out->retained[i]);
      if (body->kids[i] == NULL) body = NULL;
    }
  }
  ac->c->aenv.n -= nb;
  return body != NULL ? wrap_lets(ac->c, K_ALET, defs, nb, body) : NULL;
}

static lacc_node *acc_ref(aconv *ac, lacc_node *x) {
  if (is_bound(&ac->g, x)) return var_ref(ac->c, &ac->c->aenv, x, K_AVAR);
  return acc_def_with(ac, entry_of(&ac->g, x), x);
}

static int recover_loops(lacc_ctx *ctx, ast_arena *out, lacc_node *root, lacc_node *t);

static int recover(lacc_ctx *ctx, int nroots, lacc_node *const *roots, int nbound,
                   lacc_node *const *bound, ast_arena *out) {
  ctx_clear(ctx);
  memset(out, 0, sizeof *out);
  out->ctx = ctx;
  if (nroots < 1)
    return ctx_error(ctx, LACC_ERR_ARG, "run: expected at least one array program");
  for (int i = 0; i < nroots; i++) {
    if (roots[i] == NULL || roots[i]->ctx != ctx)
      return ctx_error(ctx, LACC_ERR_ARG, "run: result %d is not an array of this context", i + 1);
    if (node_level_of(roots[i]->kind) != L_ACC)
      return ctx_error(ctx, LACC_ERR_TYPE, "run: result %d: expected an array, got %s", i + 1,
                       roots[i]->kind == K_LAM ? "a function" : "a scalar expression");
  }
  out->retained = malloc(sizeof *out->retained * (size_t)nroots);
  if (out->retained == NULL) return err_oom(ctx);
  for (int i = 0; i < nroots; i++) {
    out->retained[i] = roots[i];
    lacc_node_retain(roots[i]);
  }
  out->nretained = out->nroots = nroots;
  conv c = { .ctx = ctx, .out = out };
  aconv ac = { .c = &c, .g = { .ctx = ctx, .level = L_ACC, .bound = bound, .nbound = nbound } };
  int rc = dag_analyse(&ac.g, nroots, roots);
  if (rc == LACC_OK) {
    out->root = acc_def_with(&ac, &ac.g.e[ac.g.n], NULL);
    if (out->root == NULL) rc = ctx->errcode ? ctx->errcode : LACC_ERR_MEMORY;
  }
  dag_free(&ac.g);
  free(c.aenv.v);
  out->nparams = nbound;
  /* after the conversion: the loops' graphs share nodes with this one, whose scratch
   * fields the conversion used */
  if (rc == LACC_OK) rc = recover_loops(ctx, out, out->root, out->root);
  if (rc != LACC_OK) ast_free(out);
  return rc;
}

/* Each awhile's condition and body as closed ASTs of their own, nested in out: their
 * parameters are the loop's variables and what the loop reads from outside (sub[1 + m..]).
 * The nodes of one loop of several arrays (one name in cval) share theirs. */
static const lacc_node *loop_named(const lacc_node *t, const lacc_node *name) {
  if (t->kind == K_AWHILE && t != name && t->loop != NULL && t->nparams > 1 &&
      t->cval.u == name->cval.u)
    return t;
  for (int i = 0; i < t->nkids; i++) {
    const lacc_node *f = loop_named(t->kids[i], name);
    if (f != NULL) return f;
  }
  return NULL;
}

static int recover_loops(lacc_ctx *ctx, ast_arena *out, lacc_node *root, lacc_node *t) {
  for (int i = 0; i < t->nkids; i++)
    if (recover_loops(ctx, out, root, t->kids[i]) != LACC_OK) return ctx->errcode;
  if (t->kind != K_AWHILE || t->loop != NULL) return LACC_OK;
  const lacc_node *same = t->nparams > 1 ? loop_named(root, t) : NULL;
  if (same != NULL) {
    t->loop = same->loop;
    return LACC_OK;
  }
  ast_arena **v = realloc(out->nested, sizeof *v * (size_t)(out->nnested + 1));
  if (v == NULL) return err_oom(ctx);
  out->nested = v;
  ast_arena *pair = calloc(2, sizeof *pair);
  if (pair == NULL) return err_oom(ctx);
  out->nested[out->nnested++] = pair;
  int m = t->nparams;
  lacc_node *const *bound = t->sub + 1 + m;
  int rc = recover(ctx, 1, &t->sub[0], t->nkids, bound, &pair[0]);
  if (rc == LACC_OK) rc = recover(ctx, m, &t->sub[1], t->nkids, bound, &pair[1]);
  if (rc != LACC_OK) return rc;
  t->loop = pair;
  return LACC_OK;
}

int sharing_recover(lacc_ctx *ctx, int nroots, lacc_node *const *roots, ast_arena *out) {
  return recover(ctx, nroots, roots, 0, NULL, out);
}
