/* lower_pull.c: delayed arrays: their shapes and elements pulled into consumers.
 *
 * Owns: what fusion left delayed: the extents of any array term (computed once per
 * function, memoised), size checks, and an element of a term at an index, through maps,
 * generates, backpermutes, reshapes, replicates and push arrays read as pull arrays.
 * Must not: materialise anything: it reads slots the planning made.
 */
#include "kir/lower.h"

/* ---- delayed arrays: shapes and elements */

/* A node's memos: its shape (SHAPE_MEMO), or for a map whether its operands' rows are its
 * own (ROWS_MEMO) */
enum { SHAPE_MEMO = -1, ROWS_MEMO = -2 };

static int *memo_find(lower *L, const lacc_node *t, const aenv *env, int what) {
  for (memo *m = L->memos; m != NULL; m = m->next)
    if (m->node == t && m->env == env && m->slot == what) return m->ext;
  return NULL;
}

static void memo_add(lower *L, const lacc_node *t, const aenv *env, int what, int *ext) {
  memo *m = lw_alloc(L, sizeof *m);
  *m = (memo){ t, env, what, ext, L->memos };
  L->memos = m;
}

const aenv *lw_bind_let(lower *L, const lacc_node *b, const aenv *env) {
  int s = lw_slot_of(L, b);
  if (s >= 0) return lw_a_push(L, env, NULL, NULL, s);
  if (b->kind == K_AVAR) {
    const aenv *e = lw_a_lookup(env, b->field);
    return lw_a_push(L, env, e->node, e->env, e->slot);
  }
  return lw_a_push(L, env, b, env, -1);
}

/* The element count of a delayed array checked against LACC_MAX_ELEMS, as an allocation
 * checks it: a fused producer never allocates, so without this a count past 2^64 would
 * wrap unseen (and one past 2^40 would run for ever). The prefix products are compared
 * with MAX / extent rather than multiplied first, so nothing here overflows; past the
 * limit the extents become 0, so that no shape computed from them overflows either. */
static void size_check(lower *L, const lacc_node *t, int rank, int *ext) {
  int zero = lw_k_int(L, S_I64, 0), one = lw_k_int(L, S_I64, 1);
  int max = lw_k_int(L, S_I64, LACC_MAX_ELEMS), n = one, over = zero;
  /* A fold's input is read row by row and never stored: its rows (the fold's result)
   * are an array and a row is at most as long as one, but the whole is an iteration
   * space, bounded only so that no index wraps (a matmul of 10400 x 10400 arrays). */
  int space = t == L->fold_input && rank > 0;
  for (int d = 0; d < rank; d++) {
    int row = space && d == rank - 1;
    int lim = row ? lw_k_int(L, S_I64, LACC_MAX_SPACE) : max;
    int room = lw_k_prim(L, P_QUOT, lim, lw_k_prim(L, P_MAX, ext[d], one));
    int o = lw_k_prim(L, P_GT, n, room);
    if (row) o = lw_k_prim(L, P_LOR, o, lw_k_prim(L, P_GT, ext[d], max));
    over = lw_k_select(L, o, one, over);
    n = lw_k_select(L, o, zero, lw_k_prim(L, P_MUL, n, ext[d]));
  }
  int bad = lw_k_prim(L, P_NE, over, zero);
  k_if(L, bad);
  lw_k_fail(L, lw_add_check(L, CK_SIZE, kind_name(t->kind), t->where, 0), 0, NULL);
  k_end(L);
  for (int d = 0; d < rank; d++) ext[d] = lw_k_select(L, bad, zero, ext[d]);
}

/* A shape expression's extents, each checked to be non-negative, and their count. */
static int *shape_exp(lower *L, const lacc_node *t, const aenv *env) {
  int *v = lw_lower_exp(L, t->kids[0], NULL, env), *ext = ints(L, t->rank);
  int zero = lw_k_int(L, S_I64, 0);
  for (int d = 0; d < t->rank; d++) {
    int neg = lw_k_prim(L, P_LT, v[d], zero);
    k_if(L, neg);
    int args[2] = { v[d], lw_k_int(L, S_I64, d + 1) };
    lw_k_fail(L, lw_add_check(L, CK_EXTENT, kind_name(t->kind), t->where, 0), 2, args);
    k_end(L);
    ext[d] = lw_k_select(L, neg, zero, v[d]);
  }
  size_check(L, t, t->rank, ext);
  return ext;
}

int lw_size_of(lower *L, int rank, const int *ext) {
  int n = lw_k_int(L, S_I64, 1);
  for (int d = 0; d < rank; d++) n = lw_k_prim(L, P_MUL, n, ext[d]);
  return n;
}

int *lw_shape_of(lower *L, const lacc_node *t, const aenv *env) {
  int s = lw_slot_of(L, t);
  if (s >= 0) return lw_slot_ext(L, s);
  if (t->kind == K_AVAR) {
    const aenv *e = lw_a_lookup(env, t->field);
    return e->slot >= 0 ? lw_slot_ext(L, e->slot) : lw_shape_of(L, e->node, e->env);
  }
  int *ext = memo_find(L, t, env, SHAPE_MEMO);
  if (ext != NULL) return ext;
  int pro = L->pro, key = L->key;
  L->pro = 1;
  L->key = lw_k_int(L, S_I64, -1);
  switch (t->kind) {
  case K_ALET: ext = lw_shape_of(L, t->kids[1], lw_bind_let(L, t->kids[0], env)); break;
  case K_UNIT: ext = ints(L, 0); break;
  case K_COMPUTE: ext = lw_shape_of(L, t->kids[0], env); break;
  case K_APPEND: case K_INTERLEAVE: {
    int *e1 = lw_shape_of(L, t->kids[0], env), *e2 = lw_shape_of(L, t->kids[1], env), r = t->rank;
    ext = ints(L, r);
    for (int d = 0; d < r; d++) ext[d] = lw_k_prim(L, P_MIN, e1[d], e2[d]);
    ext[r - 1] = t->kind == K_APPEND ? lw_k_prim(L, P_ADD, e1[r - 1], e2[r - 1])
                                     : lw_k_prim(L, P_MUL, ext[r - 1], lw_k_int(L, S_I64, 2));
    size_check(L, t, r, ext);
    break;
  }
  case K_GENERATE: case K_BACKPERMUTE: ext = shape_exp(L, t, env); break;
  case K_RESHAPE: {
    ext = shape_exp(L, t, env);
    const lacc_node *src = t->kids[1];
    int n = lw_size_of(L, t->rank, ext), m = lw_size_of(L, src->rank, lw_shape_of(L, src, env));
    k_if(L, lw_k_prim(L, P_NE, n, m));
    int args[2] = { m, n };
    lw_k_fail(L, lw_add_check(L, CK_RESHAPE, "reshape", t->where, 0), 2, args);
    k_end(L);
    break;
  }
  case K_MAP: {
    ext = ints(L, t->rank);
    for (int i = 1; i < t->nkids; i++) {
      int *e = lw_shape_of(L, t->kids[i], env);
      for (int d = 0; d < t->rank; d++) ext[d] = i == 1 ? e[d] : lw_k_prim(L, P_MIN, ext[d], e[d]);
    }
    break;
  }
  default:
    ctx_error(L->ctx, LACC_ERR_ARG, "lower: no shape for %s", kind_name(t->kind));
    oom(L);
  }
  L->pro = pro;
  L->key = key;
  memo_add(L, t, env, SHAPE_MEMO, ext);
  return ext;
}

/* Whether every operand of map t has t's extents past the outermost, so that t's row-major
 * index is each operand's own: once, in the prologue. Where the element's multi-index was
 * divided out of its row-major index (L->by_division: a reshape's source, a total fold's
 * elements, a kernel's element by element) and this holds, the map reads its operands at
 * that index and the divisions go unused: the kernel tests it once and the C compiler
 * keeps a loop of each kind (it unswitched the loop of a dot product of two matrices:
 * 4x the time of one of vectors with the divisions). Elsewhere (a row's loop, a
 * backpermute's computed index) each operand's index is raveled again, no test. */
static int map_rows_agree(lower *L, const lacc_node *t, const aenv *env) {
  int *memo = memo_find(L, t, env, ROWS_MEMO);
  if (memo != NULL) return memo[0];
  int *ext = lw_shape_of(L, t, env), pro = L->pro, key = L->key;
  L->pro = 1;
  L->key = lw_k_int(L, S_I64, -1);
  int ok = -1;
  for (int i = 1; i < t->nkids; i++) {
    int *e = lw_shape_of(L, t->kids[i], env);
    for (int d = 1; d < t->rank; d++) ok = lw_k_and(L, ok, lw_k_prim(L, P_EQ, e[d], ext[d]));
  }
  L->pro = pro;
  L->key = key;
  memo = ints(L, 1);
  memo[0] = ok;
  memo_add(L, t, env, ROWS_MEMO, memo);
  return ok;
}

static int *elem_term(lower *L, const lacc_node *t, const aenv *env, const kindex *ix);

/* Element ix of an array term: a load, or the term's code pulled into this kernel. */
int *lw_elem(lower *L, const lacc_node *t, const aenv *env, const kindex *ix) {
  int s = lw_slot_of(L, t);
  if (s >= 0) return lw_load_elem(L, s, ix->lin);
  if (t->kind == K_AVAR || t->kind == K_ALET) return elem_term(L, t, env, ix);
  lw_describe(L, " ", kind_name(t->kind));
  lw_describe(L, "(", "");
  int *v = elem_term(L, t, env, ix);
  lw_describe(L, ")", "");
  return v;
}

/* lw_elem with L->by_division set to `divided` while it lowers t (a reshape's source is
 * pulled at indices divided out of the row-major one, a backpermute's at computed ones) */
int *lw_elem_by_division(lower *L, const lacc_node *t, const aenv *env, const kindex *ix,
                         int divided) {
  int saved = L->by_division;
  L->by_division = divided;
  int *v = lw_elem(L, t, env, ix);
  L->by_division = saved;
  return v;
}

/* Element ix of a part of a push array, with j in its innermost dimension. */
int *lw_part_elem(lower *L, const lacc_node *part, const aenv *env, const kindex *ix, int r,
                  int j) {
  kindex k = *ix;
  k.ix[r - 1] = j;
  k.lin = lw_ravel(L, r, lw_shape_of(L, part, env), k.ix);
  return lw_elem(L, part, env, &k);
}

/* Pulling one element of an append or interleave: a test on the index picks the part. */
static int *push_pull(lower *L, const lacc_node *t, const aenv *env, const kindex *ix) {
  int r = t->rank, j = ix->ix[r - 1];
  int n1 = lw_shape_of(L, t->kids[0], env)[r - 1];
  int first, jx, jy;
  if (t->kind == K_APPEND) {
    first = lw_k_prim(L, P_LT, j, n1);
    jx = j;
    jy = lw_k_prim(L, P_SUB, j, n1);
  } else {
    int two = lw_k_int(L, S_I64, 2);
    first = lw_k_prim(L, P_EQ, lw_k_prim(L, P_MOD, j, two), lw_k_int(L, S_I64, 0));
    jx = jy = lw_k_prim(L, P_IDIV, j, two);
  }
  int *v = lw_fresh(L, t->type);
  k_if(L, first);
  lw_assign(L, t->type, v, lw_part_elem(L, t->kids[0], env, ix, r, jx));
  k_else(L);
  lw_assign(L, t->type, v, lw_part_elem(L, t->kids[1], env, ix, r, jy));
  k_end(L);
  return v;
}

static int *elem_term(lower *L, const lacc_node *t, const aenv *env, const kindex *ix) {
  switch (t->kind) {
  case K_APPEND: case K_INTERLEAVE: return push_pull(L, t, env, ix);
  case K_AVAR: {
    const aenv *e = lw_a_lookup(env, t->field);
    if (e->elem != NULL) {   /* the element the loop just stored */
      char name[32];
      snprintf(name, sizeof name, " a%d", e->elem_slot);
      lw_describe(L, name, "");
      return (int *)e->elem;
    }
    return e->slot >= 0 ? lw_load_elem(L, e->slot, ix->lin) : lw_elem(L, e->node, e->env, ix);
  }
  case K_ALET: return lw_elem(L, t->kids[1], lw_bind_let(L, t->kids[0], env), ix);
  case K_UNIT: return lw_lower_exp(L, t->kids[0], NULL, env);
  case K_GENERATE: {
    const lacc_type *st = t->kids[0]->type;
    return lw_apply(L, t->kids[1], NULL, env, &st, ix->ix);
  }
  case K_MAP: {
    int n = t->nkids - 1, total = 0;
    const lacc_type *pt[LACC_MAX_ARGS];
    for (int k = 0; k < n; k++) total += t->kids[k + 1]->type->nleaves;
    int *args = ints(L, total), off = 0;
    for (int k = 0; k < n; k++) {
      const lacc_node *in = t->kids[k + 1];
      kindex sub = *ix;
      if (n > 1 && t->rank > 1) {
        sub.lin = lw_ravel(L, t->rank, lw_shape_of(L, in, env), ix->ix);
        if (L->by_division) sub.lin = lw_k_select(L, map_rows_agree(L, t, env), ix->lin, sub.lin);
      }
      int *v = lw_elem(L, in, env, &sub);
      pt[k] = in->type;
      memcpy(args + off, v, sizeof *args * (size_t)in->type->nleaves);
      off += in->type->nleaves;
    }
    return lw_apply(L, t->kids[0], NULL, env, pt, args);
  }
  case K_BACKPERMUTE: {
    const lacc_node *src = t->kids[2];
    const lacc_type *st = t->kids[0]->type;
    int *to = lw_apply(L, t->kids[1], NULL, env, &st, ix->ix);
    int *ext = lw_shape_of(L, src, env);
    kindex k;
    if (src->rank == 0) {
      k.lin = lw_k_int(L, S_I64, 0);
      return lw_elem(L, src, env, &k);
    }
    int zero = lw_k_int(L, S_I64, 0), ok = -1;
    for (int d = 0; d < src->rank; d++) {
      ok = lw_k_and(L, ok, lw_k_in_range(L, to[d], zero, ext[d]));
    }
    k_if(L, lw_k_prim(L, P_LNOT, ok, -1));
    lw_k_fail(L, lw_add_check(L, CK_BACKPERMUTE, "backpermute", t->where, 0), 0, NULL);
    k_end(L);
    for (int d = 0; d < src->rank; d++) k.ix[d] = lw_k_select(L, ok, to[d], zero);
    k.lin = lw_ravel(L, src->rank, ext, k.ix);
    return lw_elem_by_division(L, src, env, &k, 0);
  }
  case K_COMPUTE: return lw_elem(L, t->kids[0], env, ix);
  case K_RESHAPE: {
    const lacc_node *src = t->kids[1];
    kindex k;
    k.lin = ix->lin;
    lw_unravel(L, src->rank, lw_shape_of(L, src, env), ix->lin, k.ix);
    return lw_elem_by_division(L, src, env, &k, 1);
  }
  default:
    ctx_error(L->ctx, LACC_ERR_ARG, "lower: %s is not a delayed array", kind_name(t->kind));
    oom(L);
    return NULL;
  }
}
