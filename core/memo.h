/* memo.h: programs of one shape, found again (memo.c). */
#ifndef LACC_MEMO_H
#define LACC_MEMO_H

#include <stddef.h>
#include <stdint.h>
#include "base/internal.h"
#include "ast/ast.h"

typedef struct memo_entry memo_entry;
struct kplan;

/* The constants a key leaves out (memo_key's kc): their values by kindex - 1. */
typedef struct {
  lacc_val *v;
  int n, cap;
} memo_consts;

/* What planning an AST depends on, as bytes: every node's kind, type, rank, primitive,
 * field, constant and place, each array it uses as its place among `uses` (the program's
 * arrays, each once) with its type, rank and layout, and the settings of the context and
 * process that lowering reads, and the number of parameters (a compiled function's:
 * each K_PARAM node its index, type and layout). Two ASTs of one key lower to the same
 * plan, whichever arrays they use. With kc (a backend that reads the plan's constants at
 * each run), the constants lowering reads from that table are written as their places,
 * not their values: kc gets the values, each node its kindex, and programs that differ
 * only there share a key (memo_find tells apart those whose values the plan depends on). NULL
 * (nothing set in ctx) where the AST has loops (their nested plans bind their own
 * arrays) or memory ran out. */
char *memo_key(const lacc_ctx *ctx, ast_arena *ast, int nparams, const lacc_node *const *uses,
               int nuses, int backend, const char *device, memo_consts *kc, size_t *len);

/* The value stored under key (len bytes) for a program whose left-out constants are kc
 * (NULL: none): one whose plan read none of them, or the same values. NULL: none. */
void *memo_find(const lacc_ctx *ctx, const char *key, size_t len, const memo_consts *kc);
/* Stores value, the program of `ast` and plan P, under key, taking the key (freed with the
 * entry), with the left-out constants whose values its plan depends on (read by a stage
 * after the key: node_value_read, kconst_src.read); NULL when out of memory (the key
 * freed, nothing stored). */
memo_entry *memo_add(lacc_ctx *ctx, char *key, size_t len, void *value, const ast_arena *ast,
                     const struct kplan *P);
/* Removes and frees an entry memo_add returned. (The context frees the table itself.) */
void memo_remove(lacc_ctx *ctx, memo_entry *e);

/* The values kept past their holders' lifetime (the context's kept list: at most
 * TUNE_MEMO_KEEP of them, holding at most TUNE_MEMO_KEEP_BYTES): value, holding about
 * `bytes`, kept as the newest. LACC_ERR_MEMORY: nothing kept. */
int memo_keep(lacc_ctx *ctx, void *value, size_t bytes);
/* The oldest kept value, no longer kept, while the list is past either bound (else NULL;
 * never the newest). */
void *memo_evict(lacc_ctx *ctx);
/* A kept value found again: the newest now. */
void memo_touch(lacc_ctx *ctx, void *value);
/* Every kept value into out (room for TUNE_MEMO_KEEP + 1), none kept after; their count. */
int memo_take_kept(lacc_ctx *ctx, void **out);

#endif
