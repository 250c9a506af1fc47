/* front.h: building graph nodes (graph.c, awhile.c); the C API's lacc_exp_* and
 * lacc_acc_* (lacc.h) are the rest of this part. */
#ifndef LACC_FRONT_H
#define LACC_FRONT_H

#include "base/internal.h"

/* A graph node of kind k over kids (retained), its depth checked (graph.c). */
lacc_node *node_new(lacc_ctx *ctx, node_kind k, const lacc_type *t, int rank, int nkids,
                    lacc_node *const *kids, const char *where);
/* The node for awhile(cond, body, init) of m arrays: var[i] the parameter node cond and
 * the bodies were traced with for init[i]; what they read that does not depend on them
 * becomes the node's kids (after the m initial arrays). The node is the loop's first
 * array; awhile_array gives array i of the same loop (0 <= i < m). */
lacc_node *awhile_build(lacc_ctx *ctx, int m, lacc_node *const *init, lacc_node *const *var,
                        lacc_node *cond, lacc_node *const *body, const char *where);
lacc_node *awhile_array(lacc_ctx *ctx, lacc_node *loop, int i, const char *where);

#endif
