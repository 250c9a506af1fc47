/* interp.c: the reference interpreter over the closed AST.
 *
 * Owns: the meaning of every node, evaluated as directly as possible: arrays are
 * materialised one combinator at a time, scalar code is walked per element. It is
 * the oracle the compiled backends are tested against, so it stays simple: no
 * fusion, no parallelism, no cleverness. A stop request (lacc_interrupt, SIGINT) is
 * looked for before each node and every few thousand function calls.
 * Must not: depend on fusion, layout or code generation; mutate the AST.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ast/ast.h"
#include "base/sort.h"
#include "base/vec.h"

#define STACK_VALUES (1 << 17)
#define ENV_ENTRIES (1 << 14)

typedef struct {
  lacc_ctx *ctx;
  lacc_array **aenv;          /* array variables, innermost last */
  int an, acap;
  lacc_array *const *params;  /* arguments of a compiled program */
  lacc_val *stack;            /* scalar values: environment entries and temporaries */
  size_t sp;
  size_t *env;                /* offsets of scalar variables in stack, innermost last */
  int en;
  unsigned calls;             /* of functions, to look for a stop request now and then */
  struct loop_done *loops;    /* the awhile loops run so far, for their other arrays */
  int nloops, loopcap;
} interp;

/* A loop of several arrays is one K_AWHILE node per array, all with one `loop`: the first
 * of them evaluated runs it, the others take their arrays from here. */
struct loop_done {
  const struct ast_arena *loop;
  int m;
  lacc_array **res;
};

static lacc_val *scratch(interp *I, int n) {
  if (I->sp + (size_t)n > STACK_VALUES) {
    ctx_error(I->ctx, LACC_ERR_MEMORY, "scalar evaluation stack exhausted");
    return NULL;
  }
  lacc_val *p = I->stack + I->sp;
  I->sp += (size_t)n;
  return p;
}

static int env_push(interp *I, lacc_val *v) {
  if (I->en == ENV_ENTRIES)
    return ctx_error(I->ctx, LACC_ERR_MEMORY, "too many nested scalar variables");
  I->env[I->en++] = (size_t)(v - I->stack);
  return LACC_OK;
}

static lacc_array *avar(interp *I, const lacc_node *v) { return I->aenv[I->an - 1 - v->field]; }

static int eval(interp *I, const lacc_node *e, lacc_val *out);

/* Every element, every turn of a loop applies a function: every so many calls, the run
 * stops if asked to (lacc_interrupt, SIGINT); the error unwinds like any other. */
#define STOP_EVERY 4096

/* Apply a function node to argument values laid out consecutively. */
static int apply_fn(interp *I, const lacc_node *lam, const lacc_type *const *ptypes,
                    lacc_val *args, lacc_val *out) {
  if (++I->calls % STOP_EVERY == 0 && run_stopped(I->ctx))
    return run_interrupted(I->ctx);
  int en = I->en;
  lacc_val *a = args;
  for (int p = 0; p < lam->nparams; p++) {
    if (env_push(I, a) != LACC_OK) return I->ctx->errcode;
    a += ptypes[p]->nleaves;
  }
  int rc = eval(I, lam->kids[0], out);
  I->en = en;
  return rc;
}

static int eval_index(interp *I, const lacc_node *e, lacc_val *out) {
  lacc_array *a = avar(I, e->kids[0]);
  size_t sp = I->sp;
  lacc_val *ix = scratch(I, a->rank ? a->rank : 1);
  if (ix == NULL) return I->ctx->errcode;
  int rc = eval(I, e->kids[1], ix);
  if (rc != LACC_OK) return rc;
  int64_t lin = 0;
  for (int d = 0; d < a->rank; d++) {
    if (ix[d].i < 0 || ix[d].i >= a->extent[d]) {
      int64_t at[LACC_MAX_RANK];
      for (int k = 0; k < a->rank; k++) at[k] = ix[k].i;
      return err_index(I->ctx, a->rank, at, a->extent, e->where);
    }
    lin = lin * a->extent[d] + ix[d].i;
  }
  I->sp = sp;
  array_load(a, lin, out);
  return LACC_OK;
}

static int eval_loop(interp *I, const lacc_node *e, lacc_val *out) {
  int nl = e->type->nleaves;
  size_t sp = I->sp;
  lacc_val *cur = scratch(I, nl), *next = scratch(I, nl), *c = scratch(I, 1);
  if (cur == NULL || next == NULL || c == NULL) return I->ctx->errcode;
  int rc = eval(I, e->kids[2], cur);
  const lacc_node *step = e->kids[1];
  const lacc_type *t = e->type;
  if (rc == LACC_OK && e->kind == K_ITERATE) {
    rc = eval(I, e->kids[0], c);
    for (int64_t k = 0; rc == LACC_OK && k < c->i; k++) {
      rc = apply_fn(I, step, &t, cur, next);
      memcpy(cur, next, sizeof *cur * (size_t)nl);
    }
  } else {
    while (rc == LACC_OK) {
      rc = apply_fn(I, e->kids[0], &t, cur, c);
      if (rc != LACC_OK || !c->u) break;
      rc = apply_fn(I, step, &t, cur, next);
      memcpy(cur, next, sizeof *cur * (size_t)nl);
    }
  }
  if (rc == LACC_OK) memcpy(out, cur, sizeof *cur * (size_t)nl);
  I->sp = sp;
  return rc;
}

static int eval(interp *I, const lacc_node *e, lacc_val *out) {
  size_t sp = I->sp;
  int rc = LACC_OK;
  switch (e->kind) {
  case K_CONST:
    out[0] = e->cval;
    return LACC_OK;
  case K_EVAR: {
    const lacc_val *v = I->stack + I->env[I->en - 1 - e->field];
    memcpy(out, v, sizeof *v * (size_t)e->type->nleaves);
    return LACC_OK;
  }
  case K_PRIM: {
    lacc_val a[3];
    if (e->prim == P_LAND || e->prim == P_LOR) {   /* the right side only when it decides */
      rc = eval(I, e->kids[0], &a[0]);
      if (rc != LACC_OK) return rc;
      a[1] = a[0];
      if ((a[0].u != 0) == (e->prim == P_LAND)) rc = eval(I, e->kids[1], &a[1]);
      return rc != LACC_OK ? rc : prim_eval(e->prim, e->kids[0]->type->scalar, 2, a, out);
    }
    for (int i = 0; i < e->nkids && rc == LACC_OK; i++) rc = eval(I, e->kids[i], &a[i]);
    if (rc != LACC_OK) return rc;
    rc = prim_eval(e->prim, e->kids[0]->type->scalar, e->nkids, a, out);
    if (rc == LACC_ERR_DIVZERO)
      return err_divzero(I->ctx, prim_name(e->prim), e->where);
    if (rc == LACC_ERR_MEMORY && e->prim == P_TAPE_LIMIT)
      return err_tape(I->ctx, a[1].i, a[2].i, e->where);
    return rc;
  }
  case K_TUPLE: {
    int off = 0;
    for (int i = 0; i < e->nkids && rc == LACC_OK; i++) {
      rc = eval(I, e->kids[i], out + off);
      off += e->kids[i]->type->nleaves;
    }
    return rc;
  }
  case K_PRJ: {
    const lacc_type *t = e->kids[0]->type;
    lacc_val *v = scratch(I, t->nleaves);
    if (v == NULL) return I->ctx->errcode;
    rc = eval(I, e->kids[0], v);
    if (rc == LACC_OK)
      memcpy(out, v + type_leaf_offset(t, e->field), sizeof *v * (size_t)e->type->nleaves);
    break;
  }
  case K_CAST: {
    lacc_val v;
    rc = eval(I, e->kids[0], &v);
    scalar_kind to = e->type->scalar, from = e->kids[0]->type->scalar;
    if (rc == LACC_OK)
      out[0] = e->field ? val_of_bits(to, val_bits(from, v)) : val_cast(to, from, v);
    return rc;
  }
  case K_COND: {
    lacc_val c;
    rc = eval(I, e->kids[0], &c);
    if (rc == LACC_OK) rc = eval(I, e->kids[c.u ? 1 : 2], out);
    return rc;
  }
  case K_INDEX: return eval_index(I, e, out);
  case K_SHAPE: {
    lacc_array *a = avar(I, e->kids[0]);
    for (int d = 0; d < a->rank; d++) out[d].i = a->extent[d];
    return LACC_OK;
  }
  case K_SIZE: out[0].i = avar(I, e->kids[0])->size; return LACC_OK;
  case K_ITERATE: case K_WHILE: return eval_loop(I, e, out);
  case K_CON: {
    const lacc_type *t = e->type;
    memset(out, 0, sizeof *out * (size_t)t->nleaves);
    out[0].u = (uint64_t)e->field;
    int off = 1;
    for (int c = 0; c < e->field; c++) off += t->fields[c]->nleaves;
    for (int i = 0; i < e->nkids && rc == LACC_OK; i++) {
      rc = eval(I, e->kids[i], out + off);
      off += e->kids[i]->type->nleaves;
    }
    return rc;
  }
  case K_CASE: {
    const lacc_type *t = e->kids[0]->type;
    lacc_val *v = scratch(I, t->nleaves);
    if (v == NULL) return I->ctx->errcode;
    rc = eval(I, e->kids[0], v);
    if (rc != LACC_OK) break;
    int k = (int)v[0].u, off = 1;
    for (int c = 0; c < k; c++) off += t->fields[c]->nleaves;
    rc = apply_fn(I, e->kids[k + 1], (const lacc_type *const *)t->fields[k]->fields, v + off, out);
    break;
  }
  case K_ELET: {
    lacc_val *v = scratch(I, e->kids[0]->type->nleaves);
    if (v == NULL) return I->ctx->errcode;
    rc = eval(I, e->kids[0], v);
    if (rc == LACC_OK) rc = env_push(I, v);
    if (rc == LACC_OK) {
      rc = eval(I, e->kids[1], out);
      I->en--;
    }
    break;
  }
  default:
    rc = ctx_error(I->ctx, LACC_ERR_ARG, "interp: unexpected %s node in scalar code",
                   kind_name(e->kind));
  }
  I->sp = sp;
  return rc;
}

/* ---- array level */

static lacc_array *eval_acc(interp *I, const lacc_node *a);

static int shape_of_exp(interp *I, const lacc_node *sh, int rank, int64_t *ext) {
  size_t sp = I->sp;
  lacc_val *v = scratch(I, rank ? rank : 1);
  if (v == NULL) return I->ctx->errcode;
  int rc = eval(I, sh, v);
  for (int d = 0; rc == LACC_OK && d < rank; d++) ext[d] = v[d].i;
  I->sp = sp;
  return rc;
}

static lacc_array *new_array(interp *I, const lacc_node *a, const int64_t *ext) {
  lacc_array *r = array_alloc(I->ctx, a->type, a->rank, ext);
  if (r == NULL) node_alloc_error(I->ctx, a);
  return r;
}

static void store(lacc_array *r, int64_t i, const lacc_val *v) { array_store(r, i, v); }

static void load(const lacc_array *a, int64_t i, lacc_val *v) { array_load(a, i, v); }

static void unravel(int rank, const int64_t *ext, int64_t lin, lacc_val *ix) {
  for (int d = rank - 1; d >= 0; d--) {
    ix[d].i = ext[d] ? lin % ext[d] : 0;
    lin = ext[d] ? lin / ext[d] : 0;
  }
}

static int64_t ravel(int rank, const int64_t *ext, const lacc_val *ix) {
  int64_t lin = 0;
  for (int d = 0; d < rank; d++) lin = lin * ext[d] + ix[d].i;
  return lin;
}

/* Release an input; keep the result only if no error was raised while computing it. */
static lacc_array *finish(interp *I, lacc_array *in, lacc_array *r) {
  lacc_array_release(in);
  if (r != NULL && I->ctx->errcode != LACC_OK) {
    lacc_array_release(r);
    return NULL;
  }
  return r;
}

static lacc_array *eval_generate(interp *I, const lacc_node *a) {
  int64_t ext[LACC_MAX_RANK];
  if (shape_of_exp(I, a->kids[0], a->rank, ext) != LACC_OK) return NULL;
  lacc_array *r = new_array(I, a, ext);
  if (r == NULL) return NULL;
  size_t sp = I->sp;
  lacc_val *ix = scratch(I, a->rank ? a->rank : 1), *v = scratch(I, a->type->nleaves);
  const lacc_type *shape_t = a->kids[0]->type;
  for (int64_t i = 0; ix != NULL && v != NULL && i < r->size; i++) {
    unravel(a->rank, ext, i, ix);
    if (apply_fn(I, a->kids[1], &shape_t, ix, v) != LACC_OK) break;
    store(r, i, v);
  }
  I->sp = sp;
  if (I->ctx->errcode != LACC_OK) {
    lacc_array_release(r);
    return NULL;
  }
  return r;
}

static lacc_array *eval_map(interp *I, const lacc_node *a) {
  int n = a->nkids - 1;
  lacc_array *in[LACC_MAX_ARGS] = { NULL };   /* a map has one array at least (graph.c) */
  const lacc_type *ptypes[LACC_MAX_ARGS];
  int64_t ext[LACC_MAX_RANK];
  int got = 0;
  lacc_array *r = NULL;
  for (; got < n; got++) {
    in[got] = eval_acc(I, a->kids[got + 1]);
    if (in[got] == NULL) goto done;
    ptypes[got] = in[got]->type;
  }
  for (int d = 0; d < a->rank; d++) {
    ext[d] = in[0]->extent[d];
    for (int k = 1; k < n; k++)
      if (in[k]->extent[d] < ext[d]) ext[d] = in[k]->extent[d];   /* shapes intersect */
  }
  r = new_array(I, a, ext);
  if (r == NULL) goto done;
  size_t sp = I->sp;
  int total = 0;
  for (int k = 0; k < n; k++) total += ptypes[k]->nleaves;
  lacc_val *ix = scratch(I, a->rank ? a->rank : 1), *args = scratch(I, total ? total : 1);
  lacc_val *v = scratch(I, a->type->nleaves);
  for (int64_t i = 0; ix != NULL && args != NULL && v != NULL && i < r->size; i++) {
    unravel(a->rank, ext, i, ix);
    lacc_val *p = args;
    for (int k = 0; k < n; k++) {
      load(in[k], ravel(a->rank, in[k]->extent, ix), p);
      p += ptypes[k]->nleaves;
    }
    if (apply_fn(I, a->kids[0], ptypes, args, v) != LACC_OK) break;
    store(r, i, v);
  }
  I->sp = sp;
  if (I->ctx->errcode != LACC_OK) {
    lacc_array_release(r);
    r = NULL;
  }
done:
  for (int k = 0; k < got; k++) lacc_array_release(in[k]);
  return r;
}

static lacc_array *eval_fold(interp *I, const lacc_node *a) {
  int with_z = a->kind == K_FOLD;
  lacc_array *xs = eval_acc(I, a->kids[with_z ? 2 : 1]);
  if (xs == NULL) return NULL;
  int64_t inner = xs->extent[xs->rank - 1];
  lacc_array *r = new_array(I, a, xs->extent);
  if (r == NULL) goto done;
  if (!with_z && inner == 0 && r->size > 0) {
    err_fold1_empty(I->ctx, a->where);
    goto done;
  }
  int nl = a->type->nleaves;
  size_t sp = I->sp;
  lacc_val *acc = scratch(I, 2 * nl), *next = scratch(I, nl);
  const lacc_type *pt[2] = { a->type, a->type };
  for (int64_t o = 0; acc != NULL && next != NULL && o < r->size; o++) {
    int64_t j = 0;
    if (with_z) {
      if (eval(I, a->kids[1], acc) != LACC_OK) break;
    } else {
      load(xs, o * inner, acc);
      j = 1;
    }
    for (; j < inner; j++) {
      load(xs, o * inner + j, acc + nl);
      if (apply_fn(I, a->kids[0], pt, acc, next) != LACC_OK) break;
      memcpy(acc, next, sizeof *acc * (size_t)nl);
    }
    if (I->ctx->errcode != LACC_OK) break;
    store(r, o, acc);
  }
  I->sp = sp;
done:
  return finish(I, xs, r);
}

/* Scans along the innermost dimension, each row in order. Left: acc = f(acc, x),
 * out[0] = z (scanl) or x[0] (scanl1). Right: the mirror image, acc = f(x, acc). */
static lacc_array *eval_scan(interp *I, const lacc_node *a) {
  int with_z = scan_with_z(a->kind), right = scan_right(a->kind);
  lacc_array *xs = eval_acc(I, a->kids[with_z ? 2 : 1]);
  if (xs == NULL) return NULL;
  int r0 = xs->rank - 1;
  int64_t n = xs->extent[r0], m = n + with_z, ext[LACC_MAX_RANK];
  for (int d = 0; d < xs->rank; d++) ext[d] = xs->extent[d];
  ext[r0] = m;
  lacc_array *r = new_array(I, a, ext);
  if (r == NULL) goto done;
  int64_t rows = n > 0 ? xs->size / n : r->size / (m > 0 ? m : 1);
  if (m == 0) rows = 0;
  int nl = a->type->nleaves;
  size_t sp = I->sp;
  lacc_val *buf = scratch(I, 3 * nl);
  const lacc_type *pt[2] = { a->type, a->type };
  for (int64_t o = 0; buf != NULL && o < rows; o++) {
    lacc_val *acc = right ? buf + nl : buf, *x = right ? buf : buf + nl, *next = buf + 2 * nl;
    int64_t step = right ? -1 : 1, first = right ? m - 1 : 0;
    if (with_z) {
      if (eval(I, a->kids[1], acc) != LACC_OK) break;
    } else {
      load(xs, o * n + (right ? n - 1 : 0), acc);
    }
    store(r, o * m + first, acc);
    /* output element first + step * j from input element src, j = 1 .. m - 1 */
    for (int64_t j = 1; j < m; j++) {
      int64_t src = right ? n - j - !with_z : j - with_z;
      load(xs, o * n + src, x);
      if (apply_fn(I, a->kids[0], pt, buf, next) != LACC_OK) break;
      memcpy(acc, next, sizeof *acc * (size_t)nl);
      store(r, o * m + first + step * j, acc);
    }
    if (I->ctx->errcode != LACC_OK) break;
  }
  I->sp = sp;
done:
  return finish(I, xs, r);
}

/* The defaults copied, then each source element in order combined into its target:
 * out[f(ix)] = combine(xs[ix], out[f(ix)]); a target of all -1 drops the element. */
static lacc_array *eval_permute(interp *I, const lacc_node *a) {
  lacc_array *def = eval_acc(I, a->kids[1]);
  if (def == NULL) return NULL;
  lacc_array *xs = eval_acc(I, a->kids[3]), *r = NULL;
  if (xs == NULL) goto done;
  r = new_array(I, a, def->extent);
  if (r == NULL) goto done;
  int nl = a->type->nleaves;
  size_t sp = I->sp;
  lacc_val *v = scratch(I, 3 * nl), *ix = scratch(I, xs->rank ? xs->rank : 1);
  lacc_val *to = scratch(I, r->rank ? r->rank : 1);
  for (int64_t i = 0; v != NULL && i < r->size; i++) {
    load(def, i, v);
    store(r, i, v);
  }
  const lacc_type *pt[2] = { a->type, a->type };
  const lacc_type *src_t = type_shape(I->ctx, xs->rank);
  for (int64_t i = 0; v != NULL && ix != NULL && to != NULL && src_t != NULL && i < xs->size; i++) {
    unravel(xs->rank, xs->extent, i, ix);
    if (apply_fn(I, a->kids[2], &src_t, ix, to) != LACC_OK) break;
    int ignore = r->rank > 0, inside = 1;
    for (int d = 0; d < r->rank; d++) {
      ignore = ignore && to[d].i == -1;
      inside = inside && to[d].i >= 0 && to[d].i < r->extent[d];
    }
    if (ignore) continue;
    if (!inside) {
      err_permute(I->ctx, a->where);
      break;
    }
    int64_t t = ravel(r->rank, r->extent, to);
    load(xs, i, v);
    load(r, t, v + nl);
    if (apply_fn(I, a->kids[0], pt, v, v + 2 * nl) != LACC_OK) break;
    store(r, t, v + 2 * nl);
  }
  I->sp = sp;
done:
  lacc_array_release(def);
  return finish(I, xs, r);
}

/* append / interleave along the innermost dimension, outer dimensions intersected. */
static lacc_array *eval_push(interp *I, const lacc_node *a) {
  lacc_array *xs = eval_acc(I, a->kids[0]);
  if (xs == NULL) return NULL;
  lacc_array *ys = eval_acc(I, a->kids[1]), *r = NULL;
  if (ys == NULL) goto done;
  int r0 = a->rank - 1;
  int64_t n1 = xs->extent[r0], n2 = ys->extent[r0], ext[LACC_MAX_RANK];
  for (int d = 0; d < r0; d++) ext[d] = xs->extent[d] < ys->extent[d] ? xs->extent[d] : ys->extent[d];
  int append = a->kind == K_APPEND;
  ext[r0] = append ? n1 + n2 : 2 * (n1 < n2 ? n1 : n2);
  r = new_array(I, a, ext);
  if (r == NULL) goto done;
  size_t sp = I->sp;
  lacc_val *v = scratch(I, a->type->nleaves), *ix = scratch(I, a->rank);
  for (int64_t i = 0; v != NULL && ix != NULL && i < r->size; i++) {
    unravel(a->rank, ext, i, ix);
    int64_t j = ix[r0].i;
    int first = append ? j < n1 : j % 2 == 0;
    const lacc_array *src = first ? xs : ys;
    ix[r0].i = append ? (first ? j : j - n1) : j / 2;
    load(src, ravel(src->rank, src->extent, ix), v);
    store(r, i, v);
  }
  I->sp = sp;
done:
  lacc_array_release(ys);
  return finish(I, xs, r);
}

/* Index k of a dimension of n elements under a boundary; -1: outside (constant). */
static int64_t bound_index(boundary_kind b, int64_t k, int64_t n) {
  if (k >= 0 && k < n) return k;
  switch (b) {
  case B_CLAMP: return k < 0 ? 0 : n - 1;
  case B_WRAP: return ((k % n) + n) % n;
  case B_MIRROR: {
    int64_t m = k < 0 ? -k : 2 * n - 2 - k;
    return m < 0 ? 0 : m >= n ? n - 1 : m;
  }
  default: return -1;
  }
}

/* Each element's window (row-major, through the boundary) as one tuple to f. */
static lacc_array *eval_stencil(interp *I, const lacc_node *a) {
  lacc_array *xs = eval_acc(I, a->kids[1]), *r = NULL;
  if (xs == NULL) return NULL;
  r = new_array(I, a, xs->extent);
  if (r == NULL) goto done;
  int rank = a->rank, spec = a->field, w[3] = { 1, 1, 1 }, count = 1;
  for (int d = 0; d < rank; d++) count *= (w[d] = stencil_window(spec, d));
  boundary_kind b = stencil_boundary(spec);
  int nl = xs->type->nleaves;
  size_t sp = I->sp;
  lacc_val *win = scratch(I, count * nl), *out = scratch(I, a->type->nleaves);
  lacc_val *cv = scratch(I, nl), *ix = scratch(I, rank), *at = scratch(I, rank);
  if (win != NULL && cv != NULL && b == B_CONSTANT && eval(I, a->kids[2], cv) != LACC_OK) win = NULL;
  const lacc_type *pt = a->kids[0]->kids[0]->type;
  for (int64_t i = 0; win != NULL && out != NULL && ix != NULL && at != NULL && i < r->size; i++) {
    unravel(rank, xs->extent, i, ix);
    for (int c = 0; c < count; c++) {
      int rest = c, inside = 1;
      for (int d = rank - 1; d >= 0; d--) {
        int off = rest % w[d] - (w[d] - 1) / 2;
        rest /= w[d];
        int64_t k = bound_index(b, ix[d].i + off, xs->extent[d]);
        inside = inside && k >= 0;
        at[d].i = k;
      }
      if (inside) load(xs, ravel(rank, xs->extent, at), win + c * nl);
      else memcpy(win + c * nl, cv, sizeof *cv * (size_t)nl);
    }
    if (apply_fn(I, a->kids[0], &pt, win, out) != LACC_OK) break;
    store(r, i, out);
  }
  I->sp = sp;
done:
  return finish(I, xs, r);
}

static lacc_array *eval_backpermute(interp *I, const lacc_node *a) {
  lacc_array *xs = eval_acc(I, a->kids[2]);
  if (xs == NULL) return NULL;
  int64_t ext[LACC_MAX_RANK];
  lacc_array *r = NULL;
  if (shape_of_exp(I, a->kids[0], a->rank, ext) != LACC_OK) goto done;
  r = new_array(I, a, ext);
  if (r == NULL) goto done;
  size_t sp = I->sp;
  lacc_val *ix = scratch(I, a->rank ? a->rank : 1);
  lacc_val *src = scratch(I, xs->rank ? xs->rank : 1), *v = scratch(I, a->type->nleaves);
  const lacc_type *shape_t = a->kids[0]->type;
  for (int64_t i = 0; ix != NULL && src != NULL && v != NULL && i < r->size; i++) {
    unravel(a->rank, ext, i, ix);
    if (apply_fn(I, a->kids[1], &shape_t, ix, src) != LACC_OK) break;
    for (int d = 0; d < xs->rank; d++) {
      if (src[d].i < 0 || src[d].i >= xs->extent[d]) {
        err_backpermute(I->ctx, a->where);
        break;
      }
    }
    if (I->ctx->errcode != LACC_OK) break;
    load(xs, ravel(xs->rank, xs->extent, src), v);
    store(r, i, v);
  }
  I->sp = sp;
done:
  return finish(I, xs, r);
}

static lacc_array *eval_reshape(interp *I, const lacc_node *a) {
  lacc_array *xs = eval_acc(I, a->kids[1]);
  if (xs == NULL) return NULL;
  int64_t ext[LACC_MAX_RANK];
  lacc_array *r = NULL;
  if (shape_of_exp(I, a->kids[0], a->rank, ext) != LACC_OK) goto done;
  r = new_array(I, a, ext);
  if (r == NULL) goto done;
  if (r->size != xs->size) {
    err_reshape(I->ctx, xs->size, r->size, a->where);
    lacc_array_release(r);
    r = NULL;
    goto done;
  }
  size_t sp = I->sp;
  lacc_val *v = scratch(I, xs->type->nleaves ? xs->type->nleaves : 1);
  for (int64_t i = 0; v != NULL && i < xs->size; i++) {   /* the layouts may differ */
    array_load(xs, i, v);
    array_store(r, i, v);
  }
  I->sp = sp;
done:
  lacc_array_release(xs);
  return r;
}

/* Bind an array variable; on failure the array is released. */
static int aenv_push(interp *I, lacc_array *d) {
  if (vec_reserve(&I->aenv, &I->acap, I->an + 1, 16, sizeof *I->aenv) != 0) {
    lacc_array_release(d);
    return err_oom(I->ctx);
  }
  I->aenv[I->an++] = d;
  return LACC_OK;
}

/* The condition (which 0) or the body (1) of the loop `ud` (its K_AWHILE node). */
static int run_loop_part(void *ud, int which, lacc_array *const *args, lacc_array **out) {
  const lacc_node *a = ud;
  return interp_run(a->ctx, &a->loop[which], args, out);
}

/* awhile: its kids (the initial arrays, what the loop reads from outside) evaluated
 * once; the condition and body, closed ASTs nested in this one, evaluated here in turn;
 * the loop's array number a->field of its a->nparams. */
static lacc_array *eval_awhile(interp *I, const lacc_node *a) {
  for (int i = 0; i < I->nloops; i++)
    if (I->loops[i].loop == a->loop) {
      lacc_array_retain(I->loops[i].res[a->field]);
      return I->loops[i].res[a->field];
    }
  int n = a->nkids, m = a->nparams;
  if (vec_reserve(&I->loops, &I->loopcap, I->nloops + 1, 4, sizeof *I->loops) != 0) {
    err_oom(I->ctx);
    return NULL;
  }
  lacc_array **in = calloc((size_t)n, sizeof *in), **res = calloc((size_t)m, sizeof *res);
  int ok = in != NULL && res != NULL;
  if (!ok) err_oom(I->ctx);
  for (int i = 0; ok && i < n; i++) {
    in[i] = eval_acc(I, a->kids[i]);
    ok = in[i] != NULL;
  }
  if (ok && awhile_run(I->ctx, run_loop_part, (void *)a, m, NULL, n, in, res) != LACC_OK) ok = 0;
  for (int i = 0; in != NULL && i < n; i++) lacc_array_release(in[i]);
  free(in);
  if (!ok || m == 1) {   /* one array: its one node is let-bound, evaluated once */
    lacc_array *r = ok ? res[0] : NULL;
    free(res);
    return r;
  }
  I->loops[I->nloops++] = (struct loop_done){ a->loop, m, res };
  lacc_array_retain(res[a->field]);
  return res[a->field];
}

/* An array from outside the program, its values on the host, retained. */
static lacc_array *host_input(lacc_array *a) {
  if (array_host(a) != LACC_OK) return NULL;
  lacc_array_retain(a);
  return a;
}

static lacc_array *eval_acc(interp *I, const lacc_node *a) {
  if (run_stopped(I->ctx)) {
    run_interrupted(I->ctx);
    return NULL;
  }
  switch (a->kind) {
  case K_USE: return host_input(a->array);
  case K_PARAM: return host_input(I->params[a->field]);
  case K_AVAR: {
    lacc_array *r = avar(I, a);
    lacc_array_retain(r);
    return r;
  }
  case K_ALET: {
    lacc_array *d = eval_acc(I, a->kids[0]);
    if (d == NULL) return NULL;
    if (aenv_push(I, d) != LACC_OK) return NULL;
    lacc_array *r = eval_acc(I, a->kids[1]);
    I->an--;
    lacc_array_release(d);
    return r;
  }
  case K_UNIT: {
    lacc_array *r = new_array(I, a, NULL);
    size_t sp = I->sp;
    lacc_val *v = r != NULL ? scratch(I, a->type->nleaves) : NULL;
    if (v != NULL && eval(I, a->kids[0], v) == LACC_OK) store(r, 0, v);
    I->sp = sp;
    if (r != NULL && I->ctx->errcode != LACC_OK) {
      lacc_array_release(r);
      r = NULL;
    }
    return r;
  }
  case K_GENERATE: return eval_generate(I, a);
  case K_MAP: return eval_map(I, a);
  case K_FOLD: case K_FOLD1: return eval_fold(I, a);
  case K_SCANL: case K_SCANL1: case K_SCANR: case K_SCANR1: return eval_scan(I, a);
  case K_COMPUTE: return eval_acc(I, a->kids[0]);
  case K_PERMUTE: return eval_permute(I, a);
  case K_APPEND: case K_INTERLEAVE: return eval_push(I, a);
  case K_STENCIL: return eval_stencil(I, a);
  case K_ACOND: {
    lacc_val c;
    if (eval(I, a->kids[0], &c) != LACC_OK) return NULL;
    return eval_acc(I, a->kids[c.u ? 1 : 2]);
  }
  case K_AWHILE: return eval_awhile(I, a);
  case K_SORTPERM: case K_SORTKEYS: {
    lacc_array *keys = eval_acc(I, a->kids[0]);
    lacc_array *r = keys != NULL ? sort_rows(I->ctx, keys, NULL, a->kind == K_SORTKEYS) : NULL;
    lacc_array_release(keys);
    return r;
  }
  case K_BACKPERMUTE: return eval_backpermute(I, a);
  case K_RESHAPE: return eval_reshape(I, a);
  default:
    ctx_error(I->ctx, LACC_ERR_ARG, "interp: unexpected %s node at the array level",
              kind_name(a->kind));
    return NULL;
  }
}

/* The root is K_RESULTS under array lets. */
static int eval_results(interp *I, const lacc_node *a, lacc_array **out) {
  if (a->kind == K_ALET) {
    lacc_array *d = eval_acc(I, a->kids[0]);
    if (d == NULL) return I->ctx->errcode;
    if (aenv_push(I, d) != LACC_OK) return I->ctx->errcode;
    int rc = eval_results(I, a->kids[1], out);
    I->an--;
    lacc_array_release(d);
    return rc;
  }
  for (int i = 0; i < a->nkids; i++) {
    out[i] = eval_acc(I, a->kids[i]);
    if (out[i] == NULL) {
      for (int j = 0; j < i; j++) lacc_array_release(out[j]);
      return I->ctx->errcode ? I->ctx->errcode : LACC_ERR_MEMORY;
    }
  }
  return LACC_OK;
}

int interp_run(lacc_ctx *ctx, const ast_arena *ast, lacc_array *const *params,
               lacc_array **out) {
  interp I = { .ctx = ctx, .params = params };
  I.stack = malloc(sizeof *I.stack * STACK_VALUES);
  I.env = malloc(sizeof *I.env * ENV_ENTRIES);
  int rc;
  if (I.stack == NULL || I.env == NULL) rc = err_oom(ctx);
  else {
    run_begin(ctx);
    rc = eval_results(&I, ast->root, out);
    run_end(ctx);
  }
  free(I.stack);
  free(I.env);
  free(I.aenv);
  for (int i = 0; i < I.nloops; i++) {
    for (int j = 0; j < I.loops[i].m; j++) lacc_array_release(I.loops[i].res[j]);
    free(I.loops[i].res);
  }
  free(I.loops);
  return rc;
}
