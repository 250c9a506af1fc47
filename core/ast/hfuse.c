/* hfuse.c: horizontal fusion: sibling folds, and sibling materialised maps, over the same
 * rows computed in one loop; sibling permutes with one index function in one scatter pass.
 *
 * Owns: the groups (hlead, hnext: on folds and permutes before fusion, on materialised
 * maps after it), a scan paired with a fold group over the same rows (hscan: the
 * group's rows folded in the scan's row loop), and the reasons a fold (or a scan) with
 * a sibling over the same rows stays alone (hwhy), and the fold classes both this pass
 * and the lowering go by (fold_commutative, fold_ordered_only, fold_nan_chunks,
 * fold_lanes_ok). Members of a group are in one
 * scope (no let or acond branch between them: lowering plans them with one environment,
 * under one guard), neither reads the other, and their rows are those of one array (maps
 * and reshapes of it: the same extents at run time). Folds also fold the same way (start
 * value or not, but a float min or max fold1 joins either; per-lane accumulators of one
 * width or none; in order or in chunks), so that the merged loop combines each fold's
 * elements in exactly the order its own loop would: every result stays bit for bit what
 * it was: the executors choose a fold's path by its rows' sizes, which a group shares,
 * and lowering lowers a group of folds along rows apart where a fold alone could take
 * another path (tiles: lower_fold.c). Maps: several results of one shape, written by one
 * loop. A let-bound map that a fold (or group) of the let's body reads element for
 * element, once or more, whole or flattened (hwrite): the fold's loop can write it as it
 * folds it. Permutes: the same index
 * function (same_term), each scattering as it would alone (permute_joins). A member
 * planned where an earlier one is raises no error of its own before its place: quiet
 * rows and functions, or the same reads as an earlier member's (a fold1's error on
 * empty rows: lower_fold.c's lw_fold_reached).
 * Must not: change what any node computes (lowering does the merging, fusion.c counts a
 * group's reads of a producer once).
 */
#include <stdlib.h>
#include <string.h>
#include "ast/ast.h"
#include "base/settings.h"

/* ---- fold classes */

int fold_ordered_only(const lacc_node *f, const lacc_type *t) {
  if (t->kind != T_SCALAR || !scalar_is_float(t->scalar) || f->kind != K_LAM || f->nparams != 2)
    return 0;
  const lacc_node *e = f->kids[0];
  return e->kind == K_PRIM && (e->prim == P_MIN || e->prim == P_MAX);
}

/* A float min or max of the accumulator and the element, in that order (`y < acc ? y :
 * acc`): in order, a NaN start stays and a NaN element is passed over, so chunks that
 * pass over every NaN but the first element's reproduce the in-order result exactly
 * (lower_fold.c). The primitive, or -1 (the other order keeps a NaN element). */
int fold_nan_chunks(const lacc_node *f, const lacc_type *t) {
  if (!fold_ordered_only(f, t)) return -1;
  const lacc_node *e = f->kids[0];
  const lacc_node *x = e->kids[0], *y = e->kids[1];
  if (x->kind != K_EVAR || y->kind != K_EVAR || x->field != 1 || y->field != 0) return -1;
  return (int)e->prim;
}

/* Such folds take per-lane accumulators, which combine elements l, l + W, l + 2W, ...
 * before their neighbours; float min/max are not commutative bit for bit (which NaN or
 * which zero wins depends on the order: fold_lanes_ok gives the canonical ones lanes that
 * lowering combines in order). (A permute onto few targets also uses it: lower_push.c.) */
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

/* ---- the rows a fold folds, the shape a map writes */

/* Whose extents a term's are, in its scope: the arrays whose extents meet in it (an
 * element-wise map's are the intersection of its arrays'), each an input or parameter
 * (its node) or a let-bound variable (its index in the scope), through maps and, where
 * only the element count matters (the rows of a rank-0 fold), reshapes. Two terms with
 * the same set have the same extents at run time. n < 0: the extents come from an
 * expression (generate) or there are too many arrays to follow. */
enum { ROOTS_MOST = 8 };
typedef struct {
  const lacc_node *node[ROOTS_MOST];   /* K_USE, K_PARAM, or K_AVAR */
  int n;
} rows_of;

static int same_root(const lacc_node *a, const lacc_node *b) {
  if (a->kind != b->kind) return 0;
  switch (a->kind) {
  case K_USE: return a->array == b->array;
  case K_PARAM: case K_AVAR: return a->field == b->field;
  default: return 0;
  }
}

static int has_root(const rows_of *r, const lacc_node *x) {
  for (int i = 0; i < r->n; i++)
    if (same_root(r->node[i], x)) return 1;
  return 0;
}

static int same_rows(const rows_of *a, const rows_of *b) {
  if (a->n <= 0 || b->n <= 0) return 0;
  for (int i = 0; i < a->n; i++)
    if (!has_root(b, a->node[i])) return 0;
  for (int i = 0; i < b->n; i++)
    if (!has_root(a, b->node[i])) return 0;
  return 1;
}

/* Whether an expression reads an array through an index (`xs[i]`, `xs:at(i, j)`; not the
 * one value of a rank-0 array, `the(s)`, the same at every element). */
static int indexes(const lacc_node *e) {
  if (e->kind == K_INDEX && e->kids[0]->rank > 0) return 1;
  for (int i = 0; i < e->nkids; i++)
    if (node_level_of(e->kids[i]->kind) != L_ACC && indexes(e->kids[i])) return 1;
  return 0;
}

/* The array a flatten reads, or NULL: `let v = x in reshape(size(v), v)` (lacc.flatten,
 * and so a sum of every element of an array of rank 2 or more), whose elements are x's
 * in x's order (its extents only in the shape: no element read there). */
static const lacc_node *flattened(const lacc_node *t) {
  if (t->kind != K_ALET) return NULL;
  const lacc_node *b = t->kids[1];
  if (b->kind != K_RESHAPE || b->rank != 1 || b->kids[1]->kind != K_AVAR ||
      b->kids[1]->field != 0 || indexes(b->kids[0]))
    return NULL;
  return t->kids[0];
}

static void rows_add(rows_of *r, const lacc_node *t, int count_only) {
  if (r->n < 0) return;
  switch (t->kind) {
  case K_USE: case K_PARAM: case K_AVAR:
    if (has_root(r, t)) return;
    if (r->n == ROOTS_MOST) {
      r->n = -1;
      return;
    }
    r->node[r->n++] = t;
    return;
  case K_RESHAPE:
    if (count_only) rows_add(r, t->kids[1], count_only);
    else r->n = -1;
    return;
  case K_ALET:   /* a flatten (its x is read in the let's scope, this one) */
    if (count_only && flattened(t) != NULL) rows_add(r, flattened(t), count_only);
    else r->n = -1;
    return;
  case K_MAP:
    for (int i = 1; i < t->nkids; i++) rows_add(r, t->kids[i], count_only);
    return;
  default:
    r->n = -1;
    return;
  }
}

static rows_of rows(const lacc_node *t, int count_only) {
  rows_of r = { { NULL }, 0 };
  rows_add(&r, t, count_only);
  return r;
}

/* ---- groups */

typedef struct scope {
  lacc_node **v;
  int n, cap;
  lacc_ctx *ctx;
  int on;          /* grouping (else the walk only clears an earlier marking) */
  int maps;        /* the walk after fusion: materialised maps (else folds) */
  const struct scope *up;   /* the scope around it, and */
  const lacc_node *bound;   /* the term its let binds (variable 0), NULL for a branch */
} scope;

static int reads(const lacc_node *t, const lacc_node *x) {
  if (t == x) return 1;
  for (int i = 0; i < t->nkids; i++)
    if (node_level_of(t->kids[i]->kind) == L_ACC && reads(t->kids[i], x)) return 1;
  return 0;
}

int fold_in_order(const lacc_node *a) {
  return fold_ordered_only(a->kids[0], a->type) && fold_nan_chunks(a->kids[0], a->type) < 0;
}

int fold_lanes_ok(const lacc_node *a) {
  return fold_commutative(a->kids[0], a->type) >= 0 || fold_nan_chunks(a->kids[0], a->type) >= 0;
}

static int lanes_of(const lacc_node *a) {
  return fold_lanes_ok(a) ? (int)scalar_size(a->type->scalar) : 0;
}

/* How a fold starts: 1 from its start value, 0 from the first element, -1 either way
 * (a fold1 of a canonical float min or max, which folding its first element a second
 * time leaves as it is: lowering starts it from element 0 and folds from 0 beside folds
 * with start values). */
static int starts(const lacc_node *a) {
  if (a->kind == K_FOLD) return 1;
  return fold_nan_chunks(a->kids[0], a->type) >= 0 ? -1 : 0;
}

/* Why b cannot join the group led by a (b folds the same rows), or NULL. */
static const char *differs(const lacc_node *a, const lacc_node *b) {
  for (const lacc_node *m = a; m != NULL; m = m->hnext)
    if (starts(m) >= 0 && starts(b) >= 0 && starts(m) != starts(b))
      return "one has a start value, the other not";
  if (fold_in_order(a) != fold_in_order(b))
    return "a float minimum or maximum folds its rows in order, the other in chunks";
  if (lanes_of(a) != lanes_of(b))
    return lanes_of(a) && lanes_of(b) ? "per-lane accumulators of other widths"
                                      : "one folds with per-lane accumulators, the other not";
  return NULL;
}

/* ---- sibling permutes: one scatter pass, the index computed once */

/* Whether an expression node can raise an error (an index out of bounds, an integer
 * division by zero), which names its place. */
static int may_raise(const lacc_node *e) {
  if (e->kind == K_INDEX) return 1;
  if (e->kind != K_PRIM) return 0;
  if (e->prim == P_TAPE_LIMIT) return 1;
  if (!(prim_has(e->prim, PF_DIV) || e->prim == P_IPOW)) return 0;
  const lacc_node *d = e->kids[1];   /* a division by a constant other than 0 cannot fail */
  if (!prim_has(e->prim, PF_DIV) || d->kind != K_CONST) return 1;
  node_value_read(d);
  return d->cval.u == 0;
}

/* Whether two terms of one scope are the same term: the same nodes, whatever their
 * sharing, and where one can raise an error, the same place for it to name (the others'
 * places are where their combinator was called). */
static int same_term(const lacc_node *a, const lacc_node *b) {
  if (a == b) return 1;
  if (a->kind != b->kind || a->type != b->type || a->rank != b->rank || a->prim != b->prim ||
      a->field != b->field || a->nparams != b->nparams || a->nkids != b->nkids ||
      a->array != b->array || a->loop != NULL || b->loop != NULL)
    return 0;
  node_value_read(a);   /* (constants: the same term only for their values) */
  node_value_read(b);
  if (memcmp(&a->cval, &b->cval, sizeof a->cval) != 0) return 0;
  if (may_raise(a) && (a->where == NULL || b->where == NULL || strcmp(a->where, b->where) != 0))
    return 0;
  for (int i = 0; i < a->nkids; i++)
    if (!same_term(a->kids[i], b->kids[i])) return 0;
  return 1;
}

/* Whether an array term's elements (and an expression) can be computed without raising an
 * error: no array read by index, no integer division, nothing the scope binds that could.
 * A group scatters its members' elements side by side and fills all their targets
 * first, where alone each would run in turn: only the first member's may fail (the
 * shared index function fails for all alike), so the first error is the one alone. */
static int quiet_exp(const lacc_node *e) {
  if (may_raise(e) || e->kind == K_ITERATE || e->kind == K_WHILE) return 0;
  for (int i = 0; i < e->nkids; i++)
    if (node_level_of(e->kids[i]->kind) != L_ACC && !quiet_exp(e->kids[i])) return 0;
  return 1;
}

static int quiet(const lacc_node *t, const scope *S) {
  switch (t->kind) {
  case K_USE: case K_PARAM: return 1;
  case K_AVAR: {   /* the term its let binds, in the scope around that let */
    int k = t->field;
    for (const scope *s = S; s != NULL; s = s->up) {
      if (s->bound == NULL) continue;   /* an acond branch binds nothing */
      if (k-- == 0) return quiet(s->bound, s->up);
    }
    return 0;
  }
  case K_GENERATE: return quiet_exp(t->kids[0]) && quiet_exp(t->kids[1]);
  case K_ALET:   /* a flatten, whose count is its array's: its reshape cannot fail */
    return flattened(t) != NULL && quiet(flattened(t), S);
  case K_MAP:
    for (int i = 0; i < t->nkids; i++)
      if (i == 0 ? !quiet_exp(t->kids[0]) : !quiet(t->kids[i], S)) return 0;
    return 1;
  default: return 0;
  }
}

/* Whether permute b may be scattered in a's pass (its index function is a's, so each
 * source element's target is computed once), else NULL with *why set where it may not
 * though it could. Members of a group scatter alike: each with private copies (one
 * commutative primitive) or each in order, so each combines its elements in the order of
 * its own run; their sources and targets may differ in extents (the executors then run
 * the pass once per member: lower_push.c). */
static int permute_joins(const lacc_node *a, const lacc_node *b, const scope *S, const char **why) {
  if (a->rank != b->rank || a->kids[3]->rank != b->kids[3]->rank ||
      !same_term(a->kids[2], b->kids[2]))
    return 0;
  if ((fold_commutative(a->kids[0], a->type) >= 0) != (fold_commutative(b->kids[0], b->type) >= 0))
    *why = "one combines with one commutative primitive (private copies), the other in order";
  else if (!quiet_exp(b->kids[0]) || !quiet(b->kids[1], S) || !quiet(b->kids[3], S))
    *why = "its defaults, source or combining function may raise an error (alone, an error "
           "of the first would come first)";
  return 1;
}

static int is_fold(const lacc_node *t) { return t->kind == K_FOLD || t->kind == K_FOLD1; }

/* A fold's function and start value raise no error (no integer division, no index). */
static int quiet_fn(const lacc_node *f) {
  return quiet_exp(f->kids[0]) && (f->kind != K_FOLD || quiet_exp(f->kids[1]));
}

/* Whether array term t is u, or what a map in u maps. */
static int within(const lacc_node *t, const lacc_node *u) {
  if (same_term(t, u)) return 1;
  if (u->kind != K_MAP) return 0;
  for (int i = 1; i < u->nkids; i++)
    if (within(t, u->kids[i])) return 1;
  return 0;
}

/* Whether reading the elements of t raises no error that group a's rows would not raise
 * first: t is quiet, or maps with quiet functions of what a member's rows are made of
 * (the same reads: the member before raises the same error at the same element). */
static int quiet_rows(const lacc_node *t, const lacc_node *a, const scope *S) {
  for (const lacc_node *m = a; m != NULL; m = m->hnext)
    if (within(t, fold_input(m))) return 1;
  if (t->kind == K_MAP) {
    if (!quiet_exp(t->kids[0])) return 0;
    for (int i = 1; i < t->nkids; i++)
      if (!quiet_rows(t->kids[i], a, S)) return 0;
    return 1;
  }
  return quiet(t, S);
}

/* Why fold b, joining group a, would raise an error earlier than alone (the group runs
 * where a would: alone, steps between a and b could fail first), or NULL: its rows,
 * function or start value may raise an error. (A fold1's error on empty rows is reported
 * at its own place: lower_fold.c's lw_fold_reached.) */
static const char *fold_raises_first(const lacc_node *a, const lacc_node *b, const scope *S) {
  if (!quiet_fn(b) || !quiet_rows(fold_input(b), a, S))
    return "its rows, start value or combining function may raise an error (alone, an error "
           "of the first would come first)";
  return NULL;
}

/* The rows a fold folds, or a scan scans, as a fold of the rank of its result would
 * (a scan keeps the rank: its rows are those of a fold one rank lower). */
static rows_of rows_folded(const lacc_node *t, int *rank) {
  if (is_scan(t->kind)) {
    const lacc_node *xs = t->kids[scan_with_z(t->kind) ? 2 : 1];
    *rank = xs->rank - 1;
    return rows(xs, *rank == 0);
  }
  *rank = t->rank;
  return rows(fold_input(t), t->rank == 0);
}


static void group(scope *S) {
  for (int i = 0; i < S->n; i++) {
    lacc_node *a = S->v[i];
    if (is_scan(a->kind)) continue;   /* paired with a fold group after (pair_scans) */
    if (a->hlead != NULL) continue;
    int perm = a->kind == K_PERMUTE;
    rows_of ra = { { NULL }, 0 };
    if (!perm) ra = S->maps ? rows(a, 0) : rows(fold_input(a), a->rank == 0);
    lacc_node *last = a;
    int size = 1;
    for (int j = i + 1; j < S->n && size < TUNE_HFUSE_MOST; j++) {
      lacc_node *b = S->v[j];
      if (b->hlead != NULL || (b->kind == K_PERMUTE) != perm || is_scan(b->kind)) continue;
      const char *why = NULL;
      if (perm) {
        if (!permute_joins(a, b, S, &why)) continue;
      } else {
        rows_of rb = S->maps ? rows(b, 0) : rows(fold_input(b), b->rank == 0);
        if (a->rank != b->rank || !same_rows(&ra, &rb)) continue;   /* a whole array's
                                                                       count, or its rows */
        if (!S->maps) why = differs(a, b);
        if (!S->maps && why == NULL) why = fold_raises_first(a, b, S);
      }
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

static void walk(lacc_node *t, scope *S, int result);

/* ---- a scan and a fold (or group) over the same rows: the fold's row, then the
 * scan's, in one loop over the rows (lower_fold.c: lw_step_fold_scan) */

/* Whether the later of a scan and a fold group raises no error the earlier would not
 * first (lowering plans both where the earlier one is reached): its rows, function and
 * start value are quiet, or read what the other's rows are made of. A fold1's error on
 * empty rows keeps its own place (lw_fold_reached). */
static int scan_fold_quiet(const lacc_node *sc, const lacc_node *lead, const scope *S, int scan_later) {
  const lacc_node *xs = sc->kids[scan_with_z(sc->kind) ? 2 : 1];
  if (scan_later)
    return quiet_exp(sc->kids[0]) && (!scan_with_z(sc->kind) || quiet_exp(sc->kids[1])) &&
           quiet_rows(xs, lead, S);
  for (const lacc_node *m = lead; m != NULL; m = m->hnext)
    if (!quiet_fn(m) || !(within(fold_input(m), xs) || quiet(fold_input(m), S))) return 0;
  return 1;
}

/* Each scan of the scope with the first fold group (or fold) over the same rows that can
 * share its loop, else why not (explain). */
static void pair_scans(scope *S) {
  for (int i = 0; i < S->n; i++) {
    lacc_node *sc = S->v[i];
    if (!is_scan(sc->kind)) continue;
    int rs_rank, rf_rank;
    rows_of rs = rows_folded(sc, &rs_rank);
    const char *why = NULL;
    int paired = 0;
    for (int j = 0; j < S->n && !paired; j++) {
      lacc_node *f = S->v[j];
      if (!is_fold(f) || (f->hlead != NULL && f->hlead != f)) continue;   /* a group's first */
      rows_of rf = rows_folded(f, &rf_rank);
      if (rs_rank != rf_rank || !same_rows(&rs, &rf)) continue;
      const char *no = NULL;
      for (const lacc_node *m = f; no == NULL && m != NULL; m = m->hnext)
        if (reads(sc, m) || reads(m, sc)) no = "one reads the other's result";
      if (no == NULL && f->hwrite != NULL) no = "the fold's loop writes the map it folds";
      if (no == NULL && f->hscan != NULL) no = "the fold shares its loop with another scan";
      if (no == NULL && !scan_fold_quiet(sc, f, S, j < i))
        no = "the later one's rows, start value or function may raise an error (alone, "
             "an error of the first would come first)";
      if (no != NULL) {
        if (why == NULL) why = no;
        continue;
      }
      sc->hscan = f;
      f->hscan = sc;
      paired = 1;
    }
    if (!paired && why != NULL) sc->hwhy = why;
  }
}

/* ---- a map that is both kept and folded: written by the fold's loop */

/* Whether t (an expression or array term, scope-relative) reads array variable idx. */
static int reads_var(const lacc_node *t, int idx) {
  if (t->kind == K_AVAR) return t->field == idx;
  for (int i = 0; i < t->nkids; i++)
    if (reads_var(t->kids[i], t->kind == K_ALET && i == 1 ? idx + 1 : idx)) return 1;
  return 0;
}

/* An expression that reads no array at all (a fold's combining function, start value). */
static int closed(const lacc_node *e) {
  if (node_level_of(e->kind) == L_ACC) return 0;
  for (int i = 0; i < e->nkids; i++)
    if (!closed(e->kids[i])) return 0;
  return 1;
}

/* How many times array t reads variable idx, each read element for element through maps
 * (the same element: a map's arrays are read at its own index), or -1 where one read is
 * not. */
static int element_reads(const lacc_node *t, int idx) {
  if (t->kind == K_AVAR) return t->field == idx;
  const lacc_node *x = flattened(t);
  if (x != NULL) return element_reads(x, idx);
  if (t->kind != K_MAP || reads_var(t->kids[0], idx)) return -1;
  int n = 0;
  for (int i = 1; i < t->nkids; i++) {
    if (!reads_var(t->kids[i], idx)) continue;
    int k = element_reads(t->kids[i], idx);
    if (k < 0) return -1;
    n += k;
  }
  return n;
}

int reads_at_element(const lacc_node *t, int idx) { return element_reads(t, idx) == 1; }

/* Whether reading t, a writing fold's rows, raises no error before the fold's place:
 * maps with quiet functions of the map (variable 0, whose own errors come where the let
 * is in any case), flattened or not, and of quiet arrays. */
static int quiet_input(const lacc_node *t, const scope *S) {
  if (t->kind == K_AVAR && t->field == 0) return 1;
  const lacc_node *x = flattened(t);
  if (x != NULL) return quiet_input(x, S);
  if (t->kind != K_MAP) return quiet(t, S);
  if (!quiet_exp(t->kids[0])) return 0;
  for (int i = 1; i < t->nkids; i++)
    if (!quiet_input(t->kids[i], S)) return 0;
  return 1;
}

/* A fold whose loop can also write the let-bound map it reads (variable 0 of its scope):
 * it folds an array of the map's extents (maps of it alone, not of a shorter array
 * beside it: every element visited exactly once, in every path but tiles, which lowering
 * leaves out for it; read there once or more, as a dot product of the map with itself
 * reads it twice, each read the element just stored; flattened where the fold folds
 * every element), and its function and start value read no array (the fold is planned
 * where the let is). Its function, start value and rows raise no error (no integer
 * division; the map's own errors aside), since where the let is it runs before the steps
 * of the let's body that come before it (a fold1's error on empty rows is reported at its
 * own place: lower_fold.c's lw_fold_reached). */
static int can_write(const lacc_node *a, const scope *S) {
  /* the map's extents alone (or, folded to one value, its element count: a flatten of
   * it): all of it is written */
  rows_of r = rows(fold_input(a), a->rank == 0);
  return element_reads(fold_input(a), 0) >= 1 && r.n == 1 &&
         r.node[0]->kind == K_AVAR && r.node[0]->field == 0 && closed(a->kids[0]) &&
         (a->kind == K_FOLD1 || closed(a->kids[1])) && quiet_fn(a) &&
         quiet_input(fold_input(a), S);
}

/* The let's bound map b (or the map its own lets end in) and the folds of its body's
 * scope: the first fold (or group) that reads b element for element and can write it. */
static void writer(lacc_node *b, const scope *body) {
  while (b->kind == K_ALET) b = b->kids[1];   /* the term its own lets make (lower.c) */
  if (b->kind != K_MAP && b->kind != K_GENERATE) return;
  /* a map that reads arrays through indices is written by a loop of its own: there its
   * reads vectorise (a row by row loop), in a fold's loop of per-lane accumulators gcc
   * keeps them scalar (a softmax's exponentials of x:at(i, j) - mx[i]: 4x slower) */
  for (int i = 0; i < b->nkids; i++)
    if (node_level_of(b->kids[i]->kind) != L_ACC && indexes(b->kids[i])) return;
  for (int i = 0; i < body->n; i++) {
    lacc_node *a = body->v[i];
    if (!is_fold(a) || (a->hlead != NULL && a->hlead != a)) continue;
    int ok = 1;
    for (lacc_node *m = a; ok && m != NULL; m = m->hnext) ok = can_write(m, body);
    if (!ok) continue;
    b->hwrite = a;
    a->hwrite = b;
    return;
  }
}

/* t in a scope of its own; bound: the term a let binds, when t is that let's body (its
 * folds may write it: writer). */
static void in_new_scope(lacc_node *t, const scope *outer, lacc_node *bound) {
  scope inner = { NULL, 0, 0, outer->ctx, outer->on, outer->maps, outer, bound };
  walk(t, &inner, 0);
  if (inner.on) group(&inner);
  if (inner.on && !inner.maps && bound != NULL) writer(bound, &inner);
  if (inner.on && !inner.maps) pair_scans(&inner);
  free(inner.v);
}

/* In lowering's order: kids before the node, a let's bound term in the scope around it.
 * result: t is one of the program's results. Maps join only as results: a group of
 * intermediates would be materialised together, each before the step that needs it, and
 * all held at once. */
static void walk(lacc_node *t, scope *S, int result) {
  switch (t->kind) {
  case K_USE: case K_PARAM: case K_AVAR: return;
  case K_ALET:
    walk(t->kids[0], S, 0);
    in_new_scope(t->kids[1], S, t->kids[0]);
    return;
  case K_ACOND:   /* each branch runs behind the test, planned on its own */
    walk(t->kids[0], S, 0);
    in_new_scope(t->kids[1], S, NULL);
    in_new_scope(t->kids[2], S, NULL);
    return;
  default: break;
  }
  for (int i = 0; i < t->nkids; i++)
    if (node_level_of(t->kids[i]->kind) == L_ACC) walk(t->kids[i], S, t->kind == K_RESULTS);
  int fold = is_fold(t);
  if (!S->maps && (t->kind == K_MAP || t->kind == K_GENERATE)) t->hwrite = NULL;
  if (S->maps ? t->kind != K_MAP : !fold && t->kind != K_PERMUTE && !is_scan(t->kind)) return;
  t->hlead = t->hnext = NULL;
  t->hwhy = NULL;
  if (!S->maps) t->hscan = NULL;
  if (fold) t->hwrite = NULL;
  if (S->on && (!S->maps || (t->manifest && result))) add(S, t);
}

static void mark_all(ast_arena *ast, int enabled, int maps) {
  scope top = { NULL, 0, 0, ast->ctx, enabled && setting_switch("LACC_HFUSE", 1), maps, NULL, NULL };
  in_new_scope(ast->root, &top, NULL);
  for (int i = 0; i < ast->nnested; i++)
    for (int j = 0; j < 2; j++) mark_all(&ast->nested[i][j], enabled, maps);
}

void hfuse_mark(ast_arena *ast, int enabled) { mark_all(ast, enabled, 0); }
void hfuse_maps(ast_arena *ast, int enabled) { mark_all(ast, enabled, 1); }
