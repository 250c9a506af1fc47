/* front.h: building graph nodes (graph.c, awhile.c); the C API's lacc_exp_* and
 * lacc_acc_* (lacc.h) are the rest of this part. */
#ifndef LACC_FRONT_H
#define LACC_FRONT_H

#include "base/internal.h"

/* A graph node of kind k over kids (retained), its depth checked (graph.c). */
lacc_node *node_new(lacc_ctx *ctx, node_kind k, const lacc_type *t, int rank, int nkids,
                    lacc_node *const *kids, const char *where);
/* The node for awhile(cond, body, init): var is the parameter node cond and body were
 * traced with; what they read that does not depend on it becomes the node's kids. */
lacc_node *awhile_build(lacc_ctx *ctx, lacc_node *init, lacc_node *var, lacc_node *cond,
                        lacc_node *body, const char *where);

#endif
