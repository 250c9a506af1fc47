/* lacc_core.c: the Lua 5.4 C module `lacc.core` (its host arrays: lacc_arrays.c).
 *
 * Owns: the thin layer between Lua 5.4 values and the C API: handles as full userdata
 * with __gc, Lua numbers <-> element values, errors as Lua errors (also for a call after
 * the context's finaliser, at lua_close). The LuaJIT side (lua/lacc/ffi_core.lua) offers
 * the same functions over the FFI; keep the two in step (every spec runs under both VMs).
 * Must not: hold semantics: every check that matters lives in liblacc.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "lacc_core.h"

/* Errors carry no position of their own: luaL_error would name lacc's own Lua file; the
 * messages from the core and the surface name the user's line instead. */
int lb_fail(lua_State *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return lua_error(L);
}

/* The context's box. At lua_close, finalisers run newest first: one set before lacc made
 * its context runs after the context's and may still call lacc, which is then an error
 * rather than a NULL context (arrays and nodes hold the context themselves). */
static ctx_box *live_box(lua_State *L) {
  ctx_box *b = lua_touserdata(L, lua_upvalueindex(1));
  if (b->ctx == NULL) lb_fail(L, "lacc: the Lua state is closing (lacc called from a finaliser)");
  return b;
}

lacc_ctx *lb_ctx(lua_State *L) { return live_box(L)->ctx; }

int lb_raise(lua_State *L) {
  lua_pushstring(L, lacc_errmsg(lb_ctx(L)));
  return lua_error(L);
}

lacc_array *lb_check_array(lua_State *L, int i) {
  array_box *b = luaL_checkudata(L, i, ARRAY_MT);
  if (b->a == NULL) lb_fail(L, "array used after free()");
  return b->a;
}

lacc_node *lb_check_node(lua_State *L, int i) {
  node_box *b = luaL_checkudata(L, i, NODE_MT);
  return b->n;
}

/* The collector cannot see array memory: when the context's holding has grown by what it
 * held after the last collection, at most GC_GROWTH (and is past 64 MiB), run a full
 * collection so dead arrays go. The bound keeps what one collection frees within what the
 * core keeps for reuse (LACC_RECYCLE_MB, 256 by default): freed beyond it, buffers are
 * unmapped and the next results fault fresh pages in (the arrays held after a collection
 * count those the collector has yet to reach: a conjugate-gradient turn of 16 MiB grids
 * under lacc.mpi, one rank, took 1.15x the time with no bound). */
#define GC_GROWTH ((int64_t)128 << 20)
static void nudge_gc(lua_State *L) {
  ctx_box *c = live_box(L);
  int64_t now = lacc_ctx_bytes(c->ctx);
  if (now > c->gc_mark && now > ((int64_t)64 << 20)) {
    lua_gc(L, LUA_GCCOLLECT);
    int64_t live = lacc_ctx_bytes(c->ctx);
    c->gc_mark = live + (live < GC_GROWTH ? live : GC_GROWTH);
  }
}

void lb_push_array(lua_State *L, lacc_array *a) {
  nudge_gc(L);
  array_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->a = a;
  luaL_setmetatable(L, ARRAY_MT);
}

int lb_push_node(lua_State *L, lacc_node *n) {
  if (n == NULL) return lb_raise(L);
  node_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->n = n;
  luaL_setmetatable(L, NODE_MT);
  return 1;
}

static int ctx_gc(lua_State *L) {
  ctx_box *b = luaL_checkudata(L, 1, CTX_MT);
  lacc_ctx_release(b->ctx);
  b->ctx = NULL;
  return 0;
}

int lb_array_gc(lua_State *L) {
  array_box *b = luaL_checkudata(L, 1, ARRAY_MT);
  lacc_array_release(b->a);
  b->a = NULL;
  return 0;
}

static int node_gc(lua_State *L) {
  node_box *b = luaL_checkudata(L, 1, NODE_MT);
  lacc_node_release(b->n);
  b->n = NULL;
  return 0;
}

/* ---- nodes */

static const char *opt_where(lua_State *L, int i) { return luaL_optstring(L, i, "?"); }

/* The Lua value at i as a lacc_value in *v (the core checks it against a type). */
const lacc_value *lb_value(lua_State *L, int i, lacc_value *v) {
  v->name = luaL_typename(L, i);
  v->i = 0;
  v->f = 0;
  switch (lua_type(L, i)) {
  case LUA_TBOOLEAN:
    v->kind = LACC_VALUE_BOOL;
    v->i = lua_toboolean(L, i);
    return v;
  case LUA_TNUMBER:
    if (lua_isinteger(L, i)) {
      v->kind = LACC_VALUE_INT;
      v->i = lua_tointeger(L, i);
    } else {
      v->kind = LACC_VALUE_FLOAT;
      v->f = lua_tonumber(L, i);
    }
    return v;
  default:
    v->kind = LACC_VALUE_OTHER;
    return v;
  }
}

/* A scalar operation's arguments: a match takes one alternative per constructor after its
 * value; the core holds each operation to its own limit. */
#define MAX_OP_ARGS (1 + LACC_MAX_CONSTRUCTORS)

/* what names the operation and where is the user's place (NULL: none), for the message
 * past max. */
static int collect_upto(lua_State *L, int from, int max, lacc_node **args, const char *what,
                        const char *where) {
  int n = lua_gettop(L) - from + 1;
  if (n > max)
    return lb_fail(L, "%s: too many arguments (%d; at most %d)%s%s%s", what, n, max,
                where ? " (at " : "", where ? where : "", where ? ")" : "");
  for (int i = 0; i < n; i++) args[i] = lb_check_node(L, from + i);
  return n;
}

static int collect(lua_State *L, int from, lacc_node **args, const char *what, const char *where) {
  return collect_upto(L, from, LACC_MAX_ARGS, args, what, where);
}

/* node_op(op, where, args...) */
static int l_node_op(lua_State *L) {
  const char *op = luaL_checkstring(L, 1);
  const char *where = opt_where(L, 2);
  lacc_node *args[MAX_OP_ARGS];
  int n = collect_upto(L, 3, MAX_OP_ARGS, args, op, where);
  return lb_push_node(L, lacc_exp_op(lb_ctx(L), op, n, args, where));
}

/* node_rebind(node, na, nn, from arrays (na), to arrays (na), from nodes (nn), to nodes (nn)) */
static int l_node_rebind(lua_State *L) {
  lacc_node *n = lb_check_node(L, 1);
  lua_Integer na = luaL_checkinteger(L, 2), nn = luaL_checkinteger(L, 3);
  if (na < 0 || nn < 0 || na > LACC_MAX_ARGS || nn > LACC_MAX_ARGS)
    return lb_fail(L, "rebind: at most %d arrays and %d programs", LACC_MAX_ARGS, LACC_MAX_ARGS);
  lacc_array *from[LACC_MAX_ARGS], *to[LACC_MAX_ARGS];
  lacc_node *from_node[LACC_MAX_ARGS], *to_node[LACC_MAX_ARGS];
  int at = 4;
  for (int i = 0; i < (int)na; i++) from[i] = lb_check_array(L, at + i);
  at += (int)na;
  for (int i = 0; i < (int)na; i++) to[i] = lb_check_array(L, at + i);
  at += (int)na;
  for (int i = 0; i < (int)nn; i++) from_node[i] = lb_check_node(L, at + i);
  at += (int)nn;
  for (int i = 0; i < (int)nn; i++) to_node[i] = lb_check_node(L, at + i);
  return lb_push_node(L, lacc_acc_rebind(lb_ctx(L), n, (int)na, from, to, (int)nn, from_node, to_node));
}

/* fma of three Lua numbers (lacc.fma outside a function): C's, one rounding. */
static int l_fma(lua_State *L) {
  lua_pushnumber(L, fma(luaL_checknumber(L, 1), luaL_checknumber(L, 2), luaL_checknumber(L, 3)));
  return 1;
}

/* node_con(type, con0, where, fields...) */
static int l_node_con(lua_State *L) {
  const char *type = luaL_checkstring(L, 1);
  int con = (int)luaL_checkinteger(L, 2);
  const char *where = opt_where(L, 3);
  lacc_node *args[LACC_MAX_ARGS];
  int n = collect(L, 4, args, "constructor", where);
  return lb_push_node(L, lacc_exp_con(lb_ctx(L), type, con, n, args, where));
}

/* node_lam(where, body, params...) */
static int l_node_lam(lua_State *L) {
  const char *where = opt_where(L, 1);
  lacc_node *body = lb_check_node(L, 2);
  lacc_node *params[LACC_MAX_ARGS];
  int n = collect(L, 3, params, "function", where);
  return lb_push_node(L, lacc_lam(lb_ctx(L), n, params, body, where));
}

/* node_jvp(where, e, n, vars (n), tangents (n, nil: zero)) */
static int l_node_jvp(lua_State *L) {
  const char *where = opt_where(L, 1);
  lacc_node *e = lb_check_node(L, 2);
  lua_Integer n = luaL_checkinteger(L, 3);
  if (n < 0 || n > LACC_MAX_ARGS) return lb_fail(L, "derivative: at most %d variables", LACC_MAX_ARGS);
  lacc_node *vars[LACC_MAX_ARGS], *tans[LACC_MAX_ARGS];
  for (int i = 0; i < (int)n; i++) {
    vars[i] = lb_check_node(L, 4 + i);
    tans[i] = lua_isnoneornil(L, 4 + (int)n + i) ? NULL : lb_check_node(L, 4 + (int)n + i);
  }
  return lb_push_node(L, lacc_exp_jvp(lb_ctx(L), e, (int)n, vars, tans, where));
}

/* node_sites(e, a): the nodes of e that read elements of a, then for each its index */
static int l_node_sites(lua_State *L) {
  lacc_node *e = lb_check_node(L, 1), *a = lb_check_node(L, 2);
  lacc_node *out[LACC_MAX_ARGS], *index[LACC_MAX_ARGS];
  int n = lacc_exp_sites(e, a, out, index, LACC_MAX_ARGS);
  if (n < 0) return lb_fail(L, "derivative: more than %d reads of one array in a function", LACC_MAX_ARGS);
  luaL_checkstack(L, 2 * n, "derivative");
  for (int i = 0; i < n; i++) {
    lacc_node_retain(out[i]);
    lb_push_node(L, out[i]);
    lacc_node_retain(index[i]);
    lb_push_node(L, index[i]);
  }
  return 2 * n;
}

/* node_index_dims(idx, v, rank): nil, or a list of rank triples {dim (0-based, -1 for a
 * constant), constant, the broadcast's condition node or nil} */
static int l_node_index_dims(lua_State *L) {
  lacc_node *idx = lb_check_node(L, 1), *v = lb_check_node(L, 2);
  lua_Integer rank = luaL_checkinteger(L, 3);
  int dims[LACC_MAX_RANK + 1];
  int64_t consts[LACC_MAX_RANK + 1];
  lacc_node *conds[LACC_MAX_RANK + 1];
  if (rank < 0 || rank > LACC_MAX_RANK ||
      !lacc_exp_index_dims(idx, v, (int)rank, dims, consts, conds)) {
    lua_pushnil(L);
    return 1;
  }
  lua_createtable(L, (int)rank, 0);
  for (int k = 0; k < (int)rank; k++) {
    lua_createtable(L, 3, 0);
    lua_pushinteger(L, dims[k]);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, (lua_Integer)consts[k]);
    lua_rawseti(L, -2, 2);
    if (conds[k] != NULL) {
      lacc_node_retain(conds[k]);
      lb_push_node(L, conds[k]);
      lua_rawseti(L, -2, 3);
    }
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

/* node_acc(op, where, args...): an awhile of many arrays takes more than LACC_MAX_ARGS */
static int l_node_acc(lua_State *L) {
  const char *op = luaL_checkstring(L, 1);
  const char *where = opt_where(L, 2);
  lacc_node *args[MAX_OP_ARGS];
  int n = collect_upto(L, 3, MAX_OP_ARGS, args, op, where);
  return lb_push_node(L, lacc_acc_op(lb_ctx(L), op, n, args, where));
}

static int l_node_info(lua_State *L) {
  lacc_node *n = lb_check_node(L, 1);
  lua_pushstring(L, lacc_node_level(n));
  lua_pushstring(L, lacc_node_type(n));
  lua_pushinteger(L, lacc_node_rank(n));
  return 3;
}

/* The progress callback, on the thread running the program: the Lua function, called
 * protected; its first error is kept and raised once the run is over (an error must not
 * unwind through the core). */
static void on_progress(void *ud, double fraction) {
  ctx_box *c = ud;
  lua_State *L = c->running;
  if (L == NULL || c->progress_ref == LUA_NOREF || c->progress_err != LUA_NOREF ||
      !lua_checkstack(L, 3))
    return;
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->progress_ref);
  lua_pushnumber(L, fraction);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    c->progress_err = luaL_ref(L, LUA_REGISTRYINDEX);
    lacc_interrupt(c->ctx);   /* the run stops at its next chunk */
  }
}

/* set_progress(fn | nil [, after seconds]) */
static int l_set_progress(lua_State *L) {
  ctx_box *c = live_box(L);
  luaL_unref(L, LUA_REGISTRYINDEX, c->progress_ref);
  c->progress_ref = LUA_NOREF;
  if (lua_isnoneornil(L, 1)) {
    lacc_set_progress(c->ctx, NULL, NULL, 0);
    return 0;
  }
  luaL_checktype(L, 1, LUA_TFUNCTION);
  double after = luaL_optnumber(L, 2, 1.0);
  lua_pushvalue(L, 1);
  c->progress_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lacc_set_progress(c->ctx, on_progress, c, after);
  return 0;
}

/* The state inside lacc_run; the one before it is kept by the caller (a progress
 * callback may run a program: the outer run's callback goes on being called after it). */
static ctx_box *begin_run(lua_State *L, lua_State **prev) {
  ctx_box *c = live_box(L);
  *prev = c->running;
  c->running = L;
  return c;
}

/* After a run: the progress callback's error, if it raised one. */
static void end_run(lua_State *L, ctx_box *c, lua_State *prev) {
  c->running = prev;
  if (prev != NULL) return;   /* nested: the outer run raises it when it ends */
  if (c->progress_err == LUA_NOREF) return;
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->progress_err);
  luaL_unref(L, LUA_REGISTRYINDEX, c->progress_err);
  c->progress_err = LUA_NOREF;
  lua_error(L);
}

/* run(backend, roots...) -> arrays... */
static int l_run(lua_State *L) {
  const char *backend = luaL_optstring(L, 1, NULL);
  lacc_node *roots[LACC_MAX_ARGS];
  lacc_array *out[LACC_MAX_ARGS];
  int n = collect(L, 2, roots, "run", NULL);
  lua_State *prev;
  ctx_box *c = begin_run(L, &prev);
  int rc = lacc_run(c->ctx, backend, n, roots, out);
  for (int i = 0; rc == LACC_OK && i < n; i++) lb_push_array(L, out[i]);
  end_run(L, c, prev);
  return rc == LACC_OK ? n : lb_raise(L);
}

#define PROGRAM_MT "lacc.program"
typedef struct { lacc_program *p; int nresults; } program_box;

static int program_gc(lua_State *L) {
  program_box *b = luaL_checkudata(L, 1, PROGRAM_MT);
  lacc_program_release(b->p);
  b->p = NULL;
  return 0;
}

/* program_new(backend, nparams, roots...) -> program */
static int l_program_new(lua_State *L) {
  const char *backend = luaL_optstring(L, 1, NULL);
  int nparams = (int)luaL_checkinteger(L, 2);
  lacc_node *roots[LACC_MAX_ARGS];
  int n = collect(L, 3, roots, "compile", NULL);
  program_box *b = lua_newuserdatauv(L, sizeof *b, 1);
  b->p = NULL;
  b->nresults = n;
  luaL_setmetatable(L, PROGRAM_MT);
  b->p = lacc_program_new(lb_ctx(L), backend, nparams, n, roots);
  if (b->p == NULL) return lb_raise(L);
  return 1;
}

/* program_run(program, arrays...) -> arrays... */
static int l_program_run(lua_State *L) {
  program_box *b = luaL_checkudata(L, 1, PROGRAM_MT);
  int n = lua_gettop(L) - 1;
  if (n > LACC_MAX_ARGS) return lb_fail(L, "too many arguments (at most %d)", LACC_MAX_ARGS);
  lacc_array *args[LACC_MAX_ARGS], *out[LACC_MAX_ARGS];
  for (int i = 0; i < n; i++) args[i] = lb_check_array(L, i + 2);
  if (b->p == NULL) return lb_fail(L, "program was freed");
  lua_State *prev;
  ctx_box *c = begin_run(L, &prev);
  int rc = lacc_program_run(c->ctx, b->p, n, args, out);
  for (int i = 0; rc == LACC_OK && i < b->nresults; i++) lb_push_array(L, out[i]);
  end_run(L, c, prev);
  return rc == LACC_OK ? b->nresults : lb_raise(L);
}

/* explain(backend, roots...) -> text, kernels, intermediates, lets */
static int l_explain(lua_State *L) {
  lacc_node *roots[LACC_MAX_ARGS];
  const char *backend = luaL_optstring(L, 1, NULL);
  int n = collect(L, 2, roots, "explain", NULL);
  lacc_stats st;
  char *s = lacc_explain_on(lb_ctx(L), backend, n, roots, &st);
  if (s == NULL) return lb_raise(L);
  lua_pushstring(L, s);
  lacc_string_free(s);
  lua_pushinteger(L, st.kernels);
  lua_pushinteger(L, st.intermediates);
  lua_pushinteger(L, st.lets);
  return 4;
}

/* layout(type, strategy) -> text */
static int l_layout(lua_State *L) {
  char *s = lacc_layout(lb_ctx(L), luaL_checkstring(L, 1), luaL_optstring(L, 2, NULL));
  if (s == NULL) return lb_raise(L);
  lua_pushstring(L, s);
  lacc_string_free(s);
  return 1;
}

/* devices() -> text */
static int l_devices(lua_State *L) {
  char *s = lacc_devices(lb_ctx(L));
  if (s == NULL) return lb_raise(L);
  lua_pushstring(L, s);
  lacc_string_free(s);
  return 1;
}

/* config_get() -> text; config_set(name, value or nil) */
static int l_config_get(lua_State *L) {
  char *s = lacc_config_get(lb_ctx(L));
  if (s == NULL) return lb_raise(L);
  lua_pushstring(L, s);
  lacc_string_free(s);
  return 1;
}

static int l_transfers(lua_State *L) {
  lacc_transfers t;
  lacc_ctx_transfers(lb_ctx(L), &t);
  lua_pushinteger(L, t.uploads);
  lua_pushinteger(L, t.downloads);
  lua_pushinteger(L, t.bytes_up);
  lua_pushinteger(L, t.bytes_down);
  return 4;
}

/* Pushes n counts as integers: the fields of a C struct of counts, in order. */
static int push_counts(lua_State *L, int n, const int64_t *v) {
  for (int i = 0; i < n; i++) lua_pushinteger(L, v[i]);
  return n;
}

static int l_device_memory(lua_State *L) {
  lacc_devmem m;
  lacc_device_memory(&m);
  const int64_t v[] = { m.pooled, m.buffers, m.limit, m.made, m.reused };
  return push_counts(L, 5, v);
}

static int l_tiers(lua_State *L) {
  lacc_tiers t;
  lacc_tier_counts(&t);
  const int64_t v[] = { t.interp, t.fast, t.opt, t.fast_builds, t.builds, t.failed };
  return push_counts(L, 6, v);
}

/* tuning(i): the i-th (0-based) tuning's name, value, unit and what it decides, or
 * nothing past the last. */
static int l_tuning(lua_State *L) {
  lacc_tuning_row r;
  if (!lacc_tuning((int)luaL_checkinteger(L, 1), &r)) return 0;
  lua_pushstring(L, r.name);
  if (r.value == (double)(lua_Integer)r.value) lua_pushinteger(L, (lua_Integer)r.value);
  else lua_pushnumber(L, r.value);
  lua_pushstring(L, r.unit);
  lua_pushstring(L, r.what);
  return 4;
}

static int l_version(lua_State *L) {
  lua_pushinteger(L, LACC_VERSION_MAJOR);
  lua_pushinteger(L, LACC_VERSION_MINOR);
  lua_pushinteger(L, LACC_VERSION_PATCH);
  return 3;
}

static int l_array_metatable(lua_State *L) {
  luaL_getmetatable(L, ARRAY_MT);
  return 1;
}

static int l_is_array(lua_State *L) {
  lua_pushboolean(L, luaL_testudata(L, 1, ARRAY_MT) != NULL);
  return 1;
}

static int l_array_alive(lua_State *L) {
  array_box *b = luaL_testudata(L, 1, ARRAY_MT);
  lua_pushboolean(L, b != NULL && b->a != NULL);
  return 1;
}

static int l_is_node(lua_State *L) {
  lua_pushboolean(L, luaL_testudata(L, 1, NODE_MT) != NULL);
  return 1;
}

/* core.limits: lacc.h's limits by name (ffi_core.lua gives the same table). */
static const struct { const char *name; lua_Integer value; } limits[] = {
  { "rank", LACC_MAX_RANK }, { "elements", (lua_Integer)1 << LACC_MAX_ELEMS_LOG2 },
  { "args", LACC_MAX_ARGS }, { "zip", LACC_MAX_ZIP }, { "fields", LACC_MAX_FIELDS },
  { "constructors", LACC_MAX_CONSTRUCTORS }, { "nesting", LACC_MAX_NESTING },
  { "name", LACC_MAX_NAME }, { "depth", LACC_MAX_DEPTH },
  { "stencil_rank", LACC_MAX_STENCIL_RANK }, { "window", LACC_MAX_WINDOW },
};

static void push_limits(lua_State *L) {
  int n = (int)(sizeof limits / sizeof limits[0]);
  lua_createtable(L, 0, n);
  for (int i = 0; i < n; i++) {
    lua_pushinteger(L, limits[i].value);
    lua_setfield(L, -2, limits[i].name);
  }
}

static const luaL_Reg funcs[] = {
  { "version", l_version }, { "node_op", l_node_op }, { "node_rebind", l_node_rebind }, { "node_jvp", l_node_jvp }, { "node_sites", l_node_sites }, { "node_index_dims", l_node_index_dims },
  { "fma", l_fma }, { "config_get", l_config_get }, { "node_con", l_node_con },
  { "node_lam", l_node_lam }, { "node_acc", l_node_acc }, { "node_info", l_node_info },
  { "run", l_run }, { "explain", l_explain }, { "layout", l_layout }, { "devices", l_devices },
  { "transfers", l_transfers }, { "device_memory", l_device_memory }, { "tiers", l_tiers },
  { "tuning", l_tuning }, { "set_progress", l_set_progress },
  { "array_metatable", l_array_metatable }, { "is_array", l_is_array },
  { "array_alive", l_array_alive }, { "is_node", l_is_node }, { "program_new", l_program_new },
  { "program_run", l_program_run }, { NULL, NULL }
};

int luaopen_lacc_core(lua_State *L) {
  if (luaL_newmetatable(L, CTX_MT)) {
    lua_pushcfunction(L, ctx_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, ARRAY_MT)) {
    lua_pushcfunction(L, lb_array_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, PROGRAM_MT)) {
    lua_pushcfunction(L, program_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, NODE_MT)) {
    lua_pushcfunction(L, node_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  lua_newtable(L);
  /* One context per Lua state, kept in the registry: opening the module again (after
   * package.loaded was cleared) must not orphan the arrays made so far. */
  if (lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY) != LUA_TUSERDATA) {
    lua_pop(L, 1);
    ctx_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->ctx = NULL;
    b->gc_mark = 0;
    b->running = NULL;
    b->progress_ref = b->progress_err = LUA_NOREF;
    luaL_setmetatable(L, CTX_MT);
    b->ctx = lacc_ctx_new();
    if (b->ctx == NULL) return lb_fail(L, "lacc: out of memory");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, CTX_KEY);
  }
  /* the module table, the context: every function's upvalue */
  lua_pushvalue(L, -2);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, lb_array_funcs, 1);
  lua_pop(L, 1);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, lb_entry_funcs, 1);
  lua_pop(L, 1);
  luaL_setfuncs(L, funcs, 1);
  lua_pushstring(L, "lua5.4");
  lua_setfield(L, -2, "binding");
  push_limits(L);
  lua_setfield(L, -2, "limits");
  return 1;
}
