/* memo.h: programs of one shape, found again (memo.c). */
#ifndef LACC_MEMO_H
#define LACC_MEMO_H

#include <stddef.h>
#include <stdint.h>
#include "base/internal.h"
#include "ast/ast.h"

typedef struct memo_entry memo_entry;

/* What planning an AST depends on, as bytes: every node's kind, type, rank, primitive,
 * field, constant and place, each array it uses as its place among `uses` (the program's
 * arrays, each once) with its type, rank and layout, and the settings of the context and
 * process that lowering reads. Two ASTs of one key lower to the same plan, whichever
 * arrays they use. NULL (nothing set in ctx) where the AST has loops (their nested plans
 * bind their own arrays) or memory ran out. */
char *memo_key(const lacc_ctx *ctx, const ast_arena *ast, const lacc_node *const *uses,
               int nuses, int backend, const char *device, size_t *len);

/* The value stored under key (len bytes), or NULL. */
void *memo_find(const lacc_ctx *ctx, const char *key, size_t len);
/* Stores value under key, taking the key (freed with the entry); NULL when out of memory
 * (the key freed, nothing stored). */
memo_entry *memo_add(lacc_ctx *ctx, char *key, size_t len, void *value);
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
