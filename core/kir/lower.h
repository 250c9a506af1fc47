/* lower.h: what the files of the lowering (lower*.c) share.
 *
 * Owns: the lowering's state (one `lower` per plan being built: the function being
 * written, memoised extents, the step's description, the jump out on failure), the
 * environments of array terms (aenv) and scalar values (senv), and the functions one
 * file of the lowering offers the others (prefix lw_).
 * Must not: be included outside core/kir/lower*.c: the rest of the core sees lower_plan
 * (kir.h) only.
 */
#ifndef LACC_LOWER_H
#define LACC_LOWER_H

#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kir/kir.h"
#include "base/settings.h"

typedef struct aenv {
  const lacc_node *node;   /* delayed: the term */
  const struct aenv *env;  /* delayed: its environment */
  int slot;                /* materialised: >= 0 */
  const struct aenv *up;
  const int *elem;         /* delayed, read only at one index: its element there, computed
                              (a map a fold's loop writes: lower_fold.c), or NULL; */
  int elem_slot;           /* and the slot it was stored into (explain) */
} aenv;

typedef struct senv {
  const int *v;
  const struct senv *up;
} senv;

typedef struct {
  int lin;
  int ix[LACC_MAX_RANK];
} kindex;

typedef struct memo {
  const lacc_node *node;
  const aenv *env;
  int slot;
  int *ext;
  struct memo *next;
} memo;

typedef struct {
  lacc_ctx *ctx;
  kplan *P;
  int fi;                  /* the function being written */
  int pro;                 /* appending to its prologue */
  int key;                 /* variable holding the element index for checks */
  memo *memos;             /* extents and shapes computed in this function's prologue */
  int step;                /* the step being lowered (slot uses) */
  int describe;            /* recording what elem() pulls into the step's desc */
  size_t dlen, dcap;
  int guard;               /* the guard of steps being planned (acond branches), -1 */
  struct leaf_load *loads; /* this function's element leaves read from buffers */
  int nloads, lcap;
  struct placed {          /* the slot each materialised AST term got (lw_set_slot): the
                              lowering's own table, keyed by node, so the AST stays const */
    const lacc_node *node;
    int slot;
  } *placed;
  int nplaced, pcap;       /* pcap: 0 or a power of two */
  int speculate;           /* matches and conds with cheap arms compute every arm */
  int by_division;         /* the element's multi-index came from its row-major index by
                              divisions: a map of several operands reads those of its rows
                              at that index (lower_pull.c map_rows_agree) */
  const int *acc;          /* a fold's accumulator while its function is lowered (the
                              leaves of the type being folded), else NULL */
  int nacc;
  int speculated;          /* how many did */
  struct grp *grp;         /* while a grouped producer's elements are lowered: what is known
                              of their index arithmetic (lower_group.c), else NULL */
  const lacc_node *fold_input;  /* the array a fold being lowered reads: an iteration
                                   space (lower_pull.c's size_check), not an array */
  const layout_strategy *layouts;  /* the parameters' layouts (NULL: their nodes') */
  struct {                 /* a map of a fold's results in the fold's step (lower.c): */
    const lacc_node *map;  /* the map (its function applied to each result), else NULL */
    const aenv *env;
    int slot;              /* the step's output, of the map's type: every store to it goes
                              through the function (lw_store_elem); -1 until made */
  } then;
  jmp_buf oom;
} lower;

/* How a leaf variable of a loaded element was read, so that a match arm can read its
 * alternative's fields again inside the arm: the element-wide reads before the tag test
 * are then dead wherever only arms use the fields, and the C compiler drops them (a
 * random mix of constructors reads only each element's own fields). */
typedef struct leaf_load {
  int var, slot, buf, idx, raw;
  scalar_kind kind;
} leaf_load;

/* lower_ir.c */
void *lw_alloc(lower *L, size_t n);
void lw_grow(lower *L, void **v, int *cap, int n, size_t size);
int lw_var(lower *L, scalar_kind k);
void lw_fact(lower *L, int v, int hi, int off);
kinst *lw_emit(lower *L, kop op);
int lw_k_const(lower *L, scalar_kind k, lacc_val v);
int lw_k_int(lower *L, scalar_kind k, int64_t i);
int lw_k_user_const(lower *L, const lacc_node *src, const lacc_type *t, lacc_val v);
void lw_k_mov(lower *L, int dst, int src);
int lw_k_prim(lower *L, prim_op p, int a, int b);
/* 0 <= x < n (zero: the constant 0), and acc && x (acc < 0: none yet, x itself): the
 * conjunctions an index check is made of. */
int lw_k_in_range(lower *L, int x, int zero, int n);
int lw_k_and(lower *L, int acc, int x);
int lw_k_prim3(lower *L, prim_op p, int a, int b, int c);
int lw_k_unary(lower *L, kop op, scalar_kind k, int a);
int lw_k_cast(lower *L, scalar_kind to, int a);
int lw_k_select(lower *L, int c, int a, int b);
kinst *lw_k_for(lower *L, int i, int lo, int hi, int64_t step);
void lw_use_slot(lower *L, int slot);
void lw_describe(lower *L, const char *a, const char *b);
int lw_k_read(lower *L, kop op, int slot, int buf, int idx);
int lw_k_cas(lower *L, int slot, int buf, int idx, int expect, int v);
void lw_k_store(lower *L, int slot, int buf, int idx, int v);
int lw_add_check(lower *L, check_kind k, const char *what, const char *where, int rank);
void lw_k_fail(lower *L, int check, int nargs, const int *args);
int lw_new_fn(lower *L, fn_role role);
int lw_new_slot(lower *L, slot_kind kind, const lacc_type *t, int rank,
                const layout_plan *plan);
int lw_input_slot(lower *L, lacc_array *a);
int lw_param_slot(lower *L, const lacc_node *t);
const layout_plan *lw_out_plan(lower *L, const lacc_type *t);
int *lw_slot_ext(lower *L, int slot);

/* The slot term t was materialised in, or -1. */
int lw_slot_of(lower *L, const lacc_node *t);
void lw_set_slot(lower *L, const lacc_node *t, int slot);

/* lower_elem.c */
int lw_from_bits(lower *L, scalar_kind k, int bits);
int lw_lane_array(lower *L, scalar_kind k, int n);
int lw_k_lget(lower *L, int arr, int lane);
void lw_k_lset(lower *L, int arr, int lane, int v);
int lw_reload(lower *L, int v);
int *lw_load_elem(lower *L, int slot, int idx);
void lw_store_elem(lower *L, int slot, int idx, const int *v);
int lw_ravel(lower *L, int rank, const int *ext, const int *ix);
void lw_unravel(lower *L, int rank, const int *ext, int lin, int *ix);
void lw_unravel_in(lower *L, int rank, const int *ext, int lin, int *ix);

/* lower_scalar.c */
const aenv *lw_a_lookup(const aenv *env, int k);
const aenv *lw_a_push(lower *L, const aenv *env, const lacc_node *node, const aenv *nenv,
                      int slot);
int *lw_apply(lower *L, const lacc_node *lam, const senv *se, const aenv *ae,
              const lacc_type *const *ptypes, const int *args);
int *lw_fresh(lower *L, const lacc_type *t);
void lw_assign(lower *L, const lacc_type *t, const int *dst, const int *src);
int *lw_copy(lower *L, const lacc_type *t, const int *src);
int *lw_lower_exp(lower *L, const lacc_node *e, const senv *se, const aenv *ae);

/* lower_pull.c */
/* env with a let's bound array b (materialised: its slot; else delayed) pushed. */
const aenv *lw_bind_let(lower *L, const lacc_node *b, const aenv *env);
int lw_size_of(lower *L, int rank, const int *ext);
int *lw_shape_of(lower *L, const lacc_node *t, const aenv *env);
int *lw_elem(lower *L, const lacc_node *t, const aenv *env, const kindex *ix);
int *lw_elem_by_division(lower *L, const lacc_node *t, const aenv *env, const kindex *ix,
                         int divided);
int *lw_part_elem(lower *L, const lacc_node *part, const aenv *env, const kindex *ix, int r,
                  int j);

/* lower_fold.c */
int lw_new_step(lower *L, step_kind kind, const lacc_node *node, int rank);
/* Step st's k results, out[0] its own and the others its siblings' (hfuse.c's groups);
 * partials: each sibling gets a partial slot, -1 until the caller sets it. */
void lw_step_results(lower *L, int st, int k, const int *out, int partials);
void lw_start_desc(lower *L);
int lw_step_map(lower *L, const lacc_node *t, const aenv *env);
/* A group of sibling maps (hfuse.c: t's hlead list) as one step; each member's slot set,
 * t's returned. */
int lw_step_maps(lower *L, const lacc_node *t, const aenv *env);
int *lw_fold_elem(lower *L, const lacc_node *xs, const aenv *env, const int *sx,
                  const int *oix, int o, int j);
int *lw_combine(lower *L, const lacc_node *f, const lacc_type *t, const int *acc,
                const int *x, const aenv *env);
void lw_accumulate(lower *L, const lacc_node *f, const lacc_type *t, int *acc, const int *x,
                   const aenv *env);
void lw_fold_plain(lower *L, const lacc_node *a, const aenv *env, const int *sx,
                   const int *oix, int o, int lo, int hi, int *acc);

/* lower_push.c */
/* The identity of commutative primitive p (fold_commutative's) on scalars of kind k. */
int lw_identity(lower *L, prim_op p, scalar_kind k);

/* lower_tile.c */
void lw_fold_tiles(lower *L, int st, const lacc_node *a, const aenv *env);

/* lower_gtile.c */
void lw_fold_gtiles(lower *L, int st, const lacc_node *a, const aenv *env);
int lw_step_fold(lower *L, const lacc_node *a, const aenv *env);
/* A group of sibling folds (hfuse.c: a's hlead list) as one step; each member's slot set
 * (lw_set_slot), a's returned. */
int lw_step_folds(lower *L, const lacc_node *a, const aenv *env);
/* The let-bound map b (hfuse.c: b->hwrite, its kids planned in benv, the environment of
 * the lets the bound term is made of) written by the loop of the fold group that reads
 * it, planned now in the let's env, the folds' slots set: b's slot. */
int lw_step_folds_writing(lower *L, const lacc_node *b, const aenv *benv, const aenv *env);
/* Lowering reached fold t (in env) again, planned in slot with its group: where the group
 * ran before t's place and t is its first fold1 reached, t's error on empty rows is
 * reported here, as alone (pstep.empty_later). */
void lw_fold_reached(lower *L, const lacc_node *t, const aenv *env, int slot);
/* The fold group (or fold) lead and the scan sc paired with it (hfuse.c: hscan), their
 * kids planned, as a fold step and then a scan step whose SF_HROWS folds and scans each
 * row (reached: the fold that lowering reached, NULL for the scan); each one's slot set.
 * 0, or -1 where the group is lowered apart (lw_step_folds) and nothing was planned. */
int lw_step_fold_scan(lower *L, const lacc_node *lead, const lacc_node *sc,
                      const lacc_node *reached, const aenv *env);

/* lower_group.c: a grouped producer's index algebra. The elements of a group are at
 * b + k, b (`base`) a multiple of `align` (the group's width; 1 while probing, which only
 * records in `shift` the largest right shift of the index by 1 to 3). */
typedef struct grp {
  int fi, base, align, shift;
  int cap;
  signed char *kind;       /* per variable: unknown, a constant, or base + an offset */
  lacc_val *val;           /* the constant or the offset */
} grp;
void lw_group_begin(lower *L, grp *g, int base, int align);
int lw_group_index(lower *L, int k);
/* hooks of the instruction builders (lower_ir.c): a rewritten result or -1; what an
 * emitted instruction's result is known to be */
int lw_group_prim(lower *L, prim_op p, int a, int b);
void lw_group_note(lower *L, int d, prim_op p, int a, int b);
void lw_group_cast(lower *L, int d, int a);
void lw_group_const(lower *L, int v, lacc_val x);
void lw_group_forget(lower *L, int v);
int lw_group_known(lower *L, int v, lacc_val *x);

/* lower_cse.c: the pure instructions written since body instruction `from` that repeat
 * one in force before them dropped, their results' uses renamed */
void lw_cse_since(lower *L, int from);

/* lower_scan.c */
int lw_step_scan(lower *L, const lacc_node *a, const aenv *env);
/* Row o of scan a (in env) scanned into slot out, in the function being written. */
void lw_scan_row(lower *L, const lacc_node *a, const aenv *env, int out, int o);

/* lower_push.c */
int lw_step_push(lower *L, const lacc_node *t, const aenv *env);
int lw_step_stencil(lower *L, const lacc_node *a, const aenv *env);
int lw_step_permute(lower *L, const lacc_node *a, const aenv *env);
/* A group of sibling permutes (hfuse.c: a's hlead list) as one step; each member's slot
 * set, a's returned. */
int lw_step_permutes(lower *L, const lacc_node *a, const aenv *env);

/* lower_control.c */
int lw_step_acond(lower *L, lacc_node *t, const aenv *env);
/* A rank-0 bool step of t (the current step), its shape function written and its body
 * begun: its output slot. */
int lw_bool_step(lower *L, const lacc_node *t, step_kind kind);
int lw_step_while(lower *L, lacc_node *t, const aenv *env);
int lw_step_sort(lower *L, lacc_node *t, const aenv *env);

/* lower.c */
/* The slot of t materialised: planned, a delayed array given a kernel of its own. */
int lw_plan_manifest(lower *L, lacc_node *t, const aenv *env);
int lw_plan_acc(lower *L, lacc_node *t, const aenv *env, const aenv **delayed);

/* one-liners every file uses */
static inline void oom(lower *L) { longjmp(L->oom, 1); }
static inline int *ints(lower *L, int n) {
  return lw_alloc(L, sizeof(int) * (size_t)(n > 0 ? n : 1));
}
static inline kfn *fn(lower *L) { return &L->P->fns[L->fi]; }
static inline scalar_kind vtype(lower *L, int v) { return fn(L)->vt[v]; }
static inline void k_if(lower *L, int c) { lw_emit(L, KO_IF)->a = c; }
static inline void k_else(lower *L) { lw_emit(L, KO_ELSE); }
static inline void k_end(lower *L) { lw_emit(L, KO_END); }
static inline int k_load(lower *L, int slot, int buf, int idx) {
  return lw_k_read(L, KO_LOAD, slot, buf, idx);
}
static inline int bits_of(lower *L, int v) { return lw_k_unary(L, KO_TOBITS, S_U64, v); }

#endif
