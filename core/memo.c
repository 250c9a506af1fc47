/* memo.c: programs of one shape, found again.
 *
 * Owns: the key of a simplified AST (what lowering and the kernels' build depend on,
 * arrays by their place among the program's uses rather than by identity) and the
 * context's table of live programs by key, so that a program built anew over other
 * arrays (a loop of lacc.run over new results, each turn of a distributed loop) runs on
 * the plan and kernels of a live program of the same shape instead of lowering, emitting
 * and hashing its C again. The table holds its programs weakly: run.c removes a program
 * as it is freed, so the table never keeps arrays alive. Settings count through
 * lacc.config's generation: an environment variable a host changes with setenv while a
 * program of a shape lives is not seen by the programs of that shape built meanwhile.
 * The context also keeps the last TUNE_MEMO_KEEP programs freed by all that held them,
 * at most TUNE_MEMO_KEEP_BYTES of their ASTs and plans (run.c detaches them first: they
 * hold their plans and kernels, not their arrays), so that a program built after the
 * collector took the last one of its shape still finds it.
 * Must not: lower, or decide what a plan may share (run.c binds each program's arrays).
 */
#include <stdlib.h>
#include <string.h>
#include "memo.h"
#include "base/settings.h"
#include "base/text.h"
#include "base/tune.h"
#include "base/vec.h"
#include "kir/kir.h"

enum { MEMO_BUCKETS = 256 };

struct memo_entry {
  uint64_t hash;
  char *key;
  size_t len;
  void *value;
  struct { int k; lacc_val v; } *bound;   /* the constants the key left out whose values
                                             its plan read: each one's kindex and value */
  int nbound, bcap;
  memo_entry *next;
};

static void put(text *t, const void *p, size_t n) { text_append(t, p, n); }

static void put_int(text *t, int64_t v) { put(t, &v, sizeof v); }

static void put_ptr(text *t, const void *p) { put(t, &p, sizeof p); }

static void put_str(text *t, const char *s) {
  put_int(t, s != NULL ? (int64_t)strlen(s) : -1);
  if (s != NULL) put(t, s, strlen(s));
}

/* A constant's value, or where kc is given and lowering reads the value from the plan's
 * table, its place among kc's instead (the node's kindex; a node met again, its place
 * again): programs that differ there find one plan, run with a table of their own. */
static void const_key(text *t, lacc_node *n, memo_consts *kc) {
  if (kc == NULL || n->kind != K_CONST || !kir_const_lifted(n->type, n->cval)) {
    put_int(t, 0);   /* (a value's bytes may be those of a place) */
    put(t, &n->cval, sizeof n->cval);
    return;
  }
  if (n->kindex == 0) {
    if (vec_reserve(&kc->v, &kc->cap, kc->n + 1, 16, sizeof *kc->v) != 0) {
      t->oom = 1;
      return;
    }
    kc->v[kc->n++] = n->cval;
    n->kindex = kc->n;
  }
  put_int(t, 1);
  put_int(t, n->kindex);
}

/* 1: the node and its subtree written; 0: a node the key cannot stand for (a loop, an
 * array outside uses) */
static int node_key(text *t, lacc_node *n, const lacc_node *const *uses, int nuses,
                    memo_consts *kc) {
  if (n->kind == K_AWHILE || n->loop != NULL || n->sub != NULL) return 0;
  put_int(t, n->kind);
  put_ptr(t, n->type);   /* interned: one pointer a type */
  put_int(t, n->rank);
  put_int(t, n->prim);
  put_int(t, n->field);
  put_int(t, n->nparams);
  const_key(t, n, kc);
  put_int(t, n->merged);
  put_str(t, n->where);   /* the plan's messages name it */
  if (n->kind == K_USE) {
    int u = 0;
    while (u < nuses && uses[u]->array != n->array) u++;
    if (u == nuses) return 0;
    put_int(t, u);
    put_ptr(t, n->array->type);
    put_int(t, n->array->rank);
    put_int(t, n->array->plan->strategy);
  }
  put_int(t, n->nkids);
  for (int i = 0; i < n->nkids; i++)
    if (!node_key(t, n->kids[i], uses, nuses, kc)) return 0;
  return 1;
}

char *memo_key(const lacc_ctx *ctx, ast_arena *ast, int nparams, const lacc_node *const *uses,
               int nuses, int backend, const char *device, memo_consts *kc, size_t *len) {
  if (ast->nnested > 0) return NULL;
  text t = { 0 };
  put_int(&t, backend);
  put_str(&t, device);
  put_int(&t, ctx->layout);
  put_int(&t, ctx->fusion);
  put_int(&t, ctx->hfuse);
  put_int(&t, ctx->sharing);
  put_int(&t, (int64_t)setting_generation());   /* lacc.config's settings */
  put_int(&t, ast->nroots);
  put_int(&t, ast->lets);
  put_int(&t, nuses);
  put_int(&t, nparams);
  if (!node_key(&t, ast->root, uses, nuses, kc) || t.oom) {
    free(t.s);
    return NULL;
  }
  *len = t.n;
  return t.s;
}

/* FNV-1a */
static uint64_t hash_of(const char *key, size_t len) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
  return h;
}

/* Whether the constants the key left out have, where e's plan read them, the values it
 * was made for. */
static int bound_match(const memo_entry *e, const memo_consts *kc) {
  for (int i = 0; i < e->nbound; i++) {
    int k = e->bound[i].k;
    if (kc == NULL || k > kc->n || kc->v[k - 1].u != e->bound[i].v.u) return 0;
  }
  return 1;
}

void *memo_find(const lacc_ctx *ctx, const char *key, size_t len, const memo_consts *kc) {
  if (ctx->memo == NULL) return NULL;
  uint64_t h = hash_of(key, len);
  for (memo_entry *e = ctx->memo[h % MEMO_BUCKETS]; e != NULL; e = e->next)
    if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0 && bound_match(e, kc))
      return e->value;
  return NULL;
}

/* Adds constant k (its value v) to e's bound ones, once. 0: out of memory. */
static int bind(memo_entry *e, int k, lacc_val v) {
  for (int i = 0; i < e->nbound; i++)
    if (e->bound[i].k == k) return 1;
  if (vec_reserve(&e->bound, &e->bcap, e->nbound + 1, 4, sizeof *e->bound) != 0) return 0;
  e->bound[e->nbound].k = k;
  e->bound[e->nbound++].v = v;
  return 1;
}

/* The AST's constants left out of the key whose values a stage read (value_read). */
static int bind_read(memo_entry *e, const lacc_node *n) {
  if (n->kind == K_CONST && n->kindex > 0 && n->value_read && !bind(e, n->kindex, n->cval))
    return 0;
  for (int i = 0; i < n->nkids; i++)
    if (!bind_read(e, n->kids[i])) return 0;
  return 1;
}

memo_entry *memo_add(lacc_ctx *ctx, char *key, size_t len, void *value, const ast_arena *ast,
                     const kplan *P) {
  if (ctx->memo == NULL) ctx->memo = calloc(MEMO_BUCKETS, sizeof *ctx->memo);
  memo_entry *e = ctx->memo != NULL ? calloc(1, sizeof *e) : NULL;
  int ok = e != NULL && bind_read(e, ast->root);
  for (int s = 0; ok && s < P->nconsts; s++)   /* those the C printed holds */
    if (P->ksrc[s].k > 0 && P->ksrc[s].read) ok = bind(e, P->ksrc[s].k, P->consts[s]);
  if (!ok) {
    if (e != NULL) free(e->bound);
    free(e);
    free(key);
    return NULL;
  }
  e->hash = hash_of(key, len);
  e->key = key;
  e->len = len;
  e->value = value;
  memo_entry **b = &ctx->memo[e->hash % MEMO_BUCKETS];
  e->next = *b;
  *b = e;
  return e;
}

void memo_remove(lacc_ctx *ctx, memo_entry *e) {
  for (memo_entry **p = &ctx->memo[e->hash % MEMO_BUCKETS]; *p != NULL; p = &(*p)->next) {
    if (*p == e) {
      *p = e->next;
      break;
    }
  }
  free(e->key);
  free(e->bound);
  free(e);
}

/* ---- values kept past their holders */

int memo_keep(lacc_ctx *ctx, void *value, size_t bytes) {
  if (ctx->kept.e == NULL) {
    ctx->kept.e = malloc(sizeof *ctx->kept.e * (TUNE_MEMO_KEEP + 1));
    if (ctx->kept.e == NULL) return LACC_ERR_MEMORY;
  }
  /* (room for one past the bound: memo_evict takes the oldest out at once) */
  ctx->kept.e[ctx->kept.n].value = value;
  ctx->kept.e[ctx->kept.n++].bytes = bytes;
  ctx->kept.total += bytes;
  return LACC_OK;
}

/* The kept entry i taken out, the later ones moved up. */
static void take_out(lacc_ctx *ctx, int i) {
  ctx->kept.total -= ctx->kept.e[i].bytes;
  ctx->kept.n--;
  memmove(ctx->kept.e + i, ctx->kept.e + i + 1, sizeof *ctx->kept.e * (size_t)(ctx->kept.n - i));
}

void *memo_evict(lacc_ctx *ctx) {
  if (ctx->kept.n < 2 ||
      (ctx->kept.n <= TUNE_MEMO_KEEP && ctx->kept.total <= (size_t)TUNE_MEMO_KEEP_BYTES))
    return NULL;
  void *old = ctx->kept.e[0].value;
  take_out(ctx, 0);
  return old;
}

void memo_touch(lacc_ctx *ctx, void *value) {
  for (int i = 0; i < ctx->kept.n; i++) {
    if (ctx->kept.e[i].value != value) continue;
    size_t bytes = ctx->kept.e[i].bytes;
    take_out(ctx, i);
    memo_keep(ctx, value, bytes);   /* (the room is there: no allocation) */
    return;
  }
}

int memo_take_kept(lacc_ctx *ctx, void **out) {
  int n = ctx->kept.n;
  for (int i = 0; i < n; i++) out[i] = ctx->kept.e[i].value;
  ctx->kept.n = 0;
  ctx->kept.total = 0;
  return n;
}
