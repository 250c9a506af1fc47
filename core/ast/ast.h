/* ast.h: the closed AST and the stages over it: sharing recovery (sharing.c),
 * simplification (simplify.c), fusion's marks (fusion.c), the reference interpreter
 * (interp.c) and the AST as text (explain.c). */
#ifndef LACC_AST_H
#define LACC_AST_H

#include "base/internal.h"

/* ---- closed AST (sharing.c): nodes allocated in one arena, freed together */
typedef struct ast_block ast_block;
typedef struct ast_arena {
  lacc_ctx *ctx;
  ast_block *blocks;
  int nroots;
  struct lacc_node *root;      /* K_RESULTS, or lets around it */
  int lets;
  struct lacc_node **retained; /* graph roots kept alive while the AST lives (arrays, places) */
  int nretained;
  struct ast_arena **nested;   /* the awhile loops' condition and body pairs in it (each
                                  an array of two arenas, freed with this one) */
  int nnested;
  int nparams;                 /* of a nested arena: the loop's array, then what it reads */
  size_t bytes;                /* its blocks' memory */
} ast_arena;

/* Graph -> closed AST with lets and de Bruijn indices at both levels; every awhile's
 * condition and body converted too, into arenas nested in it (K_AWHILE's `loop`). */
int sharing_recover(lacc_ctx *ctx, int nroots, lacc_node *const *roots, ast_arena *out);

void ast_free(ast_arena *a);
void *ast_alloc(ast_arena *a, size_t n);

/* The places an AST borrowed from its graph, and their copies in its arena (detach.c). */
typedef struct ast_places {
  const char **from, **to;     /* sorted by from's address */
  int n;
} ast_places;
/* The AST without its graph (detach.c): every node's place copied into the arena (m: the
 * old places and their copies, for what borrowed them from the nodes), its lacc_acc_use
 * nodes' arrays forgotten and the graph's roots released. Not for an AST with loops. */
int ast_detach(ast_arena *a, ast_places *m);
/* The copy of place `from`, or `from` where it is not one of m's. */
const char *ast_place_of(const ast_places *m, const char *from);

/* Simplifier (simplify.c): rewrites the closed AST in place. */
void simplify_ast(ast_arena *ast);

/* Horizontal fusion (hfuse.c): sibling folds over the same rows grouped to share one
 * loop (hlead, hnext), and the folds' classes the grouping and lowering agree on. */
void hfuse_mark(ast_arena *ast, int enabled);
/* After fusion: materialised maps over the same rows, neither reading the other, grouped
 * to be written by one loop. */
void hfuse_maps(ast_arena *ast, int enabled);
/* A fold's combining function is one primitive that may be regrouped and swapped bit for
 * bit (per-lane accumulators): the primitive, or -1. */
int fold_commutative(const lacc_node *f, const lacc_type *t);
/* A float min or max, which NaNs make order-dependent: rows folded in order only. */
int fold_ordered_only(const lacc_node *f, const lacc_type *t);
/* A canonical float min or max fold (the accumulator first), which lowering folds in
 * chunks that pass over NaNs: its primitive, or -1. */
int fold_nan_chunks(const lacc_node *f, const lacc_type *t);
/* The fold takes per-lane accumulators (a commutative primitive, or a canonical float
 * min or max, whose lanes keep the positions of their elements: lower_fold.c). */
int fold_lanes_ok(const lacc_node *a);
/* The fold's rows are folded in order only (a float min or max in the other order). */
int fold_in_order(const lacc_node *a);
/* Array t reads array variable idx (scope-relative) once, element for element, through
 * maps only: a fold of t pulls idx's element at the index it is at. */
int reads_at_element(const lacc_node *t, int idx);
/* The array a fold folds. */
static inline lacc_node *fold_input(const lacc_node *a) { return a->kids[a->kind == K_FOLD ? 2 : 1]; }

/* Fusion (fusion.c): mark in the AST which array terms are materialised (`manifest`). */
void fusion_mark(ast_arena *ast, int enabled);

/* Reference interpreter (interp.c): results into out[0..nroots-1]. */
int interp_run(lacc_ctx *ctx, const ast_arena *ast, lacc_array *const *params,
               lacc_array **out);

/* Text for people (explain.c). */
char *explain_ast(lacc_ctx *ctx, const ast_arena *ast);

#endif
