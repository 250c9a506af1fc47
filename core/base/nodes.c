/* nodes.c: what each node kind is, read from the one table of kinds (nodes.h).
 *
 * Owns: the lookups over NODEDEF: a kind's name, level, arity and flags, and the kind
 * of an operation called by name.
 * Must not: build, check or convert nodes (graph.c, sharing.c do); hold any state
 * beyond the constant table.
 */
#include <string.h>
#include "base/internal.h"

typedef struct {
  const char *name;
  node_level level;
  int arity;
  int flags;
} node_info;

static const node_info nodes[K_NKINDS] = {
#define NODE_INFO(e, name, level, arity, flags) { name, L_##level, arity, flags },
  NODEDEF(NODE_INFO)
#undef NODE_INFO
};

const char *kind_name(node_kind k) { return nodes[k].name; }
node_level node_level_of(node_kind k) { return nodes[k].level; }
int node_arity(node_kind k) { return nodes[k].arity; }
int node_has(node_kind k, int flag) { return (nodes[k].flags & flag) != 0; }

/* Only operations: "var" and "let" name two kinds each, none of them an operation. */
int node_lookup(const char *name, node_kind *out) {
  for (int k = 0; k < K_NKINDS; k++) {
    if ((nodes[k].flags & NF_OP) && strcmp(nodes[k].name, name) == 0) {
      *out = (node_kind)k;
      return 1;
    }
  }
  return 0;
}

int is_scan(node_kind k) { return node_has(k, NF_SCAN); }
int scan_right(node_kind k) { return node_has(k, NF_RIGHT); }
int scan_with_z(node_kind k) { return node_has(k, NF_SCAN) && node_has(k, NF_Z); }
