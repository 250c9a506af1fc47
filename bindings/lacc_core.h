/* lacc_core.h: what the files of the Lua 5.4 module lacc.core share (lacc_core.c: the
 * module, contexts, nodes and runs; lacc_arrays.c: host arrays; entries.c: the plain
 * entry points, generated from entries.def). */
#ifndef LACC_BINDING_CORE_H
#define LACC_BINDING_CORE_H

#include <lauxlib.h>
#include <lua.h>
#include "lacc.h"

#define CTX_MT "lacc.ctx"
#define CTX_KEY "lacc.ctx.instance"
#define ARRAY_MT "lacc.array"
#define NODE_MT "lacc.node"

typedef struct {
  lacc_ctx *ctx;
  int64_t gc_mark;   /* bytes held at which to collect next */
  lua_State *running;             /* the state inside lacc_run, for progress calls */
  int progress_ref, progress_err; /* registry refs: the callback, its first error */
} ctx_box;

typedef struct {
  lacc_array *a;
} array_box;

typedef struct {
  lacc_node *n;
} node_box;

/* Shared by the module's files only (hidden: the module exports luaopen_lacc_core). Every
 * function of the module has the context's box as its upvalue. */
#define LB_HIDDEN __attribute__((visibility("hidden")))
/* A Lua error with the message (no position: the surface names the user's line). */
LB_HIDDEN int lb_fail(lua_State *L, const char *fmt, ...);
/* The context's last error as a Lua error. */
LB_HIDDEN int lb_raise(lua_State *L);
LB_HIDDEN lacc_ctx *lb_ctx(lua_State *L);
/* The live array at i (an error for anything else, or one freed). */
LB_HIDDEN lacc_array *lb_check_array(lua_State *L, int i);
/* a as a new Lua handle (owned by it). */
LB_HIDDEN void lb_push_array(lua_State *L, lacc_array *a);
/* An array handle's __gc (and free()). */
LB_HIDDEN int lb_array_gc(lua_State *L);
/* Whether t names a float type ("f32", "f64"). */
LB_HIDDEN int lb_is_float_type(const char *t);
/* The Lua value at i described in *v for the core's checks (lacc_value); returns v. */
LB_HIDDEN const lacc_value *lb_value(lua_State *L, int i, lacc_value *v);
/* A node handle at i. */
LB_HIDDEN lacc_node *lb_check_node(lua_State *L, int i);
/* n as a new Lua handle, or the context's error when n is NULL. */
LB_HIDDEN int lb_push_node(lua_State *L, lacc_node *n);
/* lacc_arrays.c's functions, and entries.c's (generated from entries.def). */
LB_HIDDEN extern const luaL_Reg lb_array_funcs[];
LB_HIDDEN extern const luaL_Reg lb_entry_funcs[];

#endif
