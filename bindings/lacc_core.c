/* lacc_core.c: the Lua 5.4 C module `lacc.core`.
 *
 * Owns: the thin layer between Lua 5.4 values and the C API: handles as full
 * userdata with __gc, Lua numbers <-> element values, errors as Lua errors (also for a
 * call after the context's finaliser, at lua_close). The
 * LuaJIT side (lua/lacc/ffi_core.lua) offers the same functions over the FFI;
 * keep the two in step (every spec runs under both VMs).
 * Must not: hold semantics: every check that matters lives in liblacc.
 */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
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

/* Errors carry no position of their own: luaL_error would name lacc's own Lua file; the
 * messages from the core and the surface name the user's line instead. */
static int fail(lua_State *L, const char *fmt, ...) {
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
  if (b->ctx == NULL) fail(L, "lacc: the Lua state is closing (lacc called from a finaliser)");
  return b;
}

static lacc_ctx *get_ctx(lua_State *L) { return live_box(L)->ctx; }

static int raise(lua_State *L) {
  lua_pushstring(L, lacc_errmsg(get_ctx(L)));
  return lua_error(L);
}

static lacc_array *check_array(lua_State *L, int i) {
  array_box *b = luaL_checkudata(L, i, ARRAY_MT);
  if (b->a == NULL) fail(L, "array used after free()");
  return b->a;
}

static lacc_node *check_node(lua_State *L, int i) {
  node_box *b = luaL_checkudata(L, i, NODE_MT);
  return b->n;
}

/* The collector cannot see array memory: when the context's holding has doubled since
 * the last look (and is past 64 MiB), run a full collection so dead arrays go. */
static void nudge_gc(lua_State *L) {
  ctx_box *c = live_box(L);
  int64_t now = lacc_ctx_bytes(c->ctx);
  if (now > c->gc_mark && now > ((int64_t)64 << 20)) {
    lua_gc(L, LUA_GCCOLLECT);
    c->gc_mark = 2 * lacc_ctx_bytes(c->ctx);
  }
}

static void push_array(lua_State *L, lacc_array *a) {
  nudge_gc(L);
  array_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->a = a;
  luaL_setmetatable(L, ARRAY_MT);
}

static int push_node(lua_State *L, lacc_node *n) {
  if (n == NULL) return raise(L);
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

static int array_gc(lua_State *L) {
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

/* ---- arrays */

static int check_shape(lua_State *L, int idx, int64_t *ext) {
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_Integer rank = luaL_len(L, idx);
  if (rank > LACC_MAX_RANK)
    return fail(L, "rank %d is out of range (0 to %d)", (int)rank, LACC_MAX_RANK);
  for (int d = 0; d < rank; d++) {
    lua_geti(L, idx, d + 1);
    int ok;
    ext[d] = lua_tointegerx(L, -1, &ok);
    if (!ok) return fail(L, "shape: extent %d is not an integer", d + 1);
    lua_pop(L, 1);
  }
  return (int)rank;
}

static int l_array_new(lua_State *L) {
  const char *type = luaL_checkstring(L, 1);
  int64_t ext[LACC_MAX_RANK];
  int rank = check_shape(L, 2, ext);
  lacc_array *a = lacc_array_new(get_ctx(L), type, rank, ext);
  if (a == NULL) return raise(L);
  push_array(L, a);
  return 1;
}

static int l_array_free(lua_State *L) { return array_gc(L); }

static int l_array_type(lua_State *L) {
  lua_pushstring(L, lacc_array_type(check_array(L, 1)));
  return 1;
}

static int l_array_shape(lua_State *L) {
  lacc_array *a = check_array(L, 1);
  int r = lacc_array_rank(a);
  lua_createtable(L, r, 0);
  for (int d = 0; d < r; d++) {
    lua_pushinteger(L, lacc_array_extent(a, d));
    lua_rawseti(L, -2, d + 1);
  }
  return 1;
}

static int l_array_size(lua_State *L) {
  lua_pushinteger(L, lacc_array_size(check_array(L, 1)));
  return 1;
}

static int l_array_nleaves(lua_State *L) {
  lua_pushinteger(L, lacc_array_nleaves(check_array(L, 1)));
  return 1;
}

static int l_array_leaf_type(lua_State *L) {
  const char *t = lacc_array_leaf_type(check_array(L, 1), (int)luaL_checkinteger(L, 2));
  if (t == NULL) return fail(L, "no such field");
  lua_pushstring(L, t);
  return 1;
}

static int is_float_type(const char *t) { return t[0] == 'f'; }

/* array_get(a, leaf0, i0): integers as Lua integers, floats as floats, bools as booleans */
static int l_array_get(lua_State *L) {
  lacc_array *a = check_array(L, 1);
  int leaf = (int)luaL_checkinteger(L, 2);
  int64_t i = luaL_checkinteger(L, 3);
  lacc_ctx *ctx = get_ctx(L);
  const char *t = lacc_array_leaf_type(a, leaf);
  if (t == NULL) return fail(L, "no such field");
  if (is_float_type(t) || strcmp(t, "bool") == 0) {
    double v;
    if (lacc_array_get_f(ctx, a, leaf, i, &v) != LACC_OK) return raise(L);
    if (t[0] == 'b') lua_pushboolean(L, v != 0);
    else lua_pushnumber(L, v);
  } else {
    int64_t v;
    if (lacc_array_get_i(ctx, a, leaf, i, &v) != LACC_OK) return raise(L);
    lua_pushinteger(L, v);
  }
  return 1;
}

static int l_array_set(lua_State *L) {
  lacc_array *a = check_array(L, 1);
  int leaf = (int)luaL_checkinteger(L, 2);
  int64_t i = luaL_checkinteger(L, 3);
  lacc_ctx *ctx = get_ctx(L);
  const char *t = lacc_array_leaf_type(a, leaf);
  if (t == NULL) return fail(L, "no such field");
  int rc;
  if (strcmp(t, "bool") == 0) {
    if (!lua_isboolean(L, 4))
      return fail(L, "expected a boolean for bool, got %s", luaL_typename(L, 4));
    rc = lacc_array_set_i(ctx, a, leaf, i, lua_toboolean(L, 4));
  } else if (is_float_type(t)) {
    if (lua_type(L, 4) != LUA_TNUMBER)
      return fail(L, "expected a number for %s, got %s", t, luaL_typename(L, 4));
    rc = lacc_array_set_f(ctx, a, leaf, i, lua_tonumber(L, 4));
  } else {
    int ok;
    lua_Integer v = lua_tointegerx(L, 4, &ok);
    if (!ok && lua_type(L, 4) == LUA_TNUMBER) {
      lua_Number d = lua_tonumber(L, 4);
      /* integral floats beyond the int64 range (u64 values) go through a float cast */
      if (d == floor(d) && d >= 9223372036854775808.0 && d < 18446744073709551616.0) {
        rc = lacc_array_set_f(ctx, a, leaf, i, d);
        return rc == LACC_OK ? 0 : raise(L);
      }
    }
    if (!ok) {
      if (lua_type(L, 4) == LUA_TNUMBER)
        return fail(L, "expected an integer for %s, got %s", t, lua_tostring(L, 4));
      return fail(L, "expected an integer for %s, got %s", t, luaL_typename(L, 4));
    }
    rc = lacc_array_set_i(ctx, a, leaf, i, v);
  }
  return rc == LACC_OK ? 0 : raise(L);
}

/* ---- bulk data: packed bytes and rows of Lua values */

typedef enum { E_NONE = -1, E_BOOL, E_I8, E_I16, E_I32, E_I64, E_U8, E_U16, E_U32, E_U64, E_F32, E_F64 } elem_kind;

static elem_kind elem_of(const char *t) {
  static const char *const names[] = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
                                       "u64", "f32", "f64" };
  for (int k = 0; k < 11; k++)
    if (strcmp(t, names[k]) == 0) return (elem_kind)k;
  return E_NONE;
}

static int l_type_bytes(lua_State *L) {
  int64_t n = lacc_type_bytes(get_ctx(L), luaL_checkstring(L, 1));
  if (n < 0) return raise(L);
  lua_pushinteger(L, n);
  return 1;
}

/* array_from_bytes(type, shape, string) */
static int l_array_from_bytes(lua_State *L) {
  const char *type = luaL_checkstring(L, 1);
  int64_t ext[LACC_MAX_RANK];
  int rank = check_shape(L, 2, ext);
  size_t len;
  const char *data = luaL_checklstring(L, 3, &len);
  lacc_array *a = lacc_array_from_buffer(get_ctx(L), type, rank, ext, data, (int64_t)len);
  if (a == NULL) return raise(L);
  push_array(L, a);
  return 1;
}

/* One copy into the new string: straight from a scalar array's buffer; a tuple's fields
 * packed into a scratch buffer first. */
/* Bytes [off, off + n) of the storage of an array of a scalar type (row-major, as C
 * stores them): array_read_bytes(a, off, n) -> string; array_write_bytes(a, off, s)
 * writes s there. For lacc.mpi's halo rows: no copy of the whole array. */
static void *scalar_storage(lua_State *L, lacc_array *a, int64_t off, int64_t n, int write) {
  lacc_ctx *ctx = get_ctx(L);
  if (elem_of(lacc_array_type(a)) == E_NONE) {
    fail(L, "array bytes: %s is not a scalar type", lacc_array_type(a));
    return NULL;
  }
  int64_t total = lacc_type_bytes(ctx, lacc_array_type(a)) * lacc_array_size(a);
  if (off < 0 || n < 0 || off > total || n > total - off) {
    fail(L, "array bytes: [%lld, %lld) outside the array's %lld bytes", (long long)off,
         (long long)(off + n), (long long)total);
    return NULL;
  }
  void *p = write ? lacc_array_data(a) : (void *)lacc_array_data_read(a);
  if (p == NULL && total > 0) raise(L);
  return p;
}

static int l_array_read_bytes(lua_State *L) {
  lacc_array *a = check_array(L, 1);
  int64_t off = (int64_t)luaL_checkinteger(L, 2), n = (int64_t)luaL_checkinteger(L, 3);
  const char *p = scalar_storage(L, a, off, n, 0);
  lua_pushlstring(L, n > 0 ? p + off : "", (size_t)n);
  return 1;
}

static int l_array_write_bytes(lua_State *L) {
  lacc_array *a = check_array(L, 1);
  int64_t off = (int64_t)luaL_checkinteger(L, 2);
  size_t n;
  const char *s = luaL_checklstring(L, 3, &n);
  char *p = scalar_storage(L, a, off, (int64_t)n, 1);
  if (n > 0) memcpy(p + off, s, n);
  return 0;
}

static int l_array_to_bytes(lua_State *L) {
  lacc_array *a = check_array(L, 1);
  lacc_ctx *ctx = get_ctx(L);
  int64_t eb = lacc_type_bytes(ctx, lacc_array_type(a));
  if (eb < 0) return raise(L);
  int64_t n = eb * lacc_array_size(a);
  if (elem_of(lacc_array_type(a)) != E_NONE) {
    const void *p = lacc_array_data_read(a);
    if (p == NULL && n > 0) return raise(L);
    lua_pushlstring(L, n > 0 ? p : "", (size_t)n);
    return 1;
  }
  char *tmp = lua_newuserdatauv(L, (size_t)n + 1, 0);   /* collected, whatever raises */
  if (lacc_array_to_buffer(ctx, a, tmp, n) != LACC_OK) return raise(L);
  lua_pushlstring(L, tmp, (size_t)n);
  return 1;
}

static int l_array_load_npy(lua_State *L) {
  lacc_array *a = lacc_array_load_npy(get_ctx(L), luaL_checkstring(L, 1));
  if (a == NULL) return raise(L);
  push_array(L, a);
  return 1;
}

static int l_array_read_png(lua_State *L) {
  lacc_array *a = lacc_array_read_png(get_ctx(L), luaL_checkstring(L, 1));
  if (a == NULL) return raise(L);
  push_array(L, a);
  return 1;
}

static int l_array_save_npy(lua_State *L) {
  lacc_array *a = check_array(L, 1);
  if (lacc_array_save_npy(get_ctx(L), a, luaL_checkstring(L, 2)) != LACC_OK) return raise(L);
  return 0;
}

/* The 64 bits an integer element gets from the value at idx (the setters' rules: integers,
 * integral floats up to 2^64), or 0 when it is none. */
static int int_bits(lua_State *L, int idx, uint64_t *out) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (ok) {
    *out = (uint64_t)v;
    return 1;
  }
  if (lua_type(L, idx) != LUA_TNUMBER) return 0;
  lua_Number d = lua_tonumber(L, idx);
  if (d != floor(d) || !(d >= 9223372036854775808.0 && d < 18446744073709551616.0)) return 0;
  *out = (uint64_t)d;
  return 1;
}

static int store_elem(lua_State *L, elem_kind k, void *p, int64_t i, int idx) {
  uint64_t u = 0;
  switch (k) {
  case E_BOOL:
    if (lua_type(L, idx) != LUA_TBOOLEAN) return 0;
    ((uint8_t *)p)[i] = (uint8_t)lua_toboolean(L, idx);
    return 1;
  case E_F32: case E_F64:
    if (lua_type(L, idx) != LUA_TNUMBER) return 0;
    if (k == E_F32) ((float *)p)[i] = (float)lua_tonumber(L, idx);
    else ((double *)p)[i] = lua_tonumber(L, idx);
    return 1;
  default:
    if (!int_bits(L, idx, &u)) return 0;
    switch (k) {
    case E_I8: case E_U8: ((uint8_t *)p)[i] = (uint8_t)u; break;
    case E_I16: case E_U16: ((uint16_t *)p)[i] = (uint16_t)u; break;
    case E_I32: case E_U32: ((uint32_t *)p)[i] = (uint32_t)u; break;
    default: ((uint64_t *)p)[i] = u; break;
    }
    return 1;
  }
}

static void push_elem(lua_State *L, elem_kind k, const void *p, int64_t i) {
  switch (k) {
  case E_BOOL: lua_pushboolean(L, ((const uint8_t *)p)[i] != 0); break;
  case E_I8: lua_pushinteger(L, ((const int8_t *)p)[i]); break;
  case E_I16: lua_pushinteger(L, ((const int16_t *)p)[i]); break;
  case E_I32: lua_pushinteger(L, ((const int32_t *)p)[i]); break;
  case E_I64: lua_pushinteger(L, ((const int64_t *)p)[i]); break;
  case E_U8: lua_pushinteger(L, ((const uint8_t *)p)[i]); break;
  case E_U16: lua_pushinteger(L, ((const uint16_t *)p)[i]); break;
  case E_U32: lua_pushinteger(L, ((const uint32_t *)p)[i]); break;
  case E_U64: lua_pushinteger(L, (lua_Integer)((const uint64_t *)p)[i]); break;
  case E_F32: lua_pushnumber(L, ((const float *)p)[i]); break;
  default: lua_pushnumber(L, ((const double *)p)[i]); break;
  }
}

static void *scalar_data(lua_State *L, lacc_array *a, int64_t lin, int64_t n, int write) {
  if (lin < 0 || n < 0 || lin + n > lacc_array_size(a)) {
    fail(L, "elements %lld to %lld out of range", (long long)lin + 1, (long long)(lin + n));
    return NULL;
  }
  void *p = write ? lacc_array_data(a) : (void *)lacc_array_data_read(a);
  if (p == NULL && n > 0) raise(L);
  return p;
}

/* The element at 1-based index i of a rank-1 array of a scalar type, or nothing (the
 * caller takes the general path, which words the errors). */
static lacc_array *live_array_or_null(lua_State *L, int i) {
  array_box *b = luaL_testudata(L, i, ARRAY_MT);
  return b != NULL ? b->a : NULL;
}

/* Whether the integers at 2 .. nidx+1 are 1-based indices of an element of a, whose rank
 * is nidx (*lin: its 0-based row-major position). */
static int index_at(lua_State *L, lacc_array *a, int nidx, int64_t *lin) {
  if (lacc_array_rank(a) != nidx) return 0;
  int64_t at = 0;
  for (int d = 0; d < nidx; d++) {
    int ok;
    lua_Integer k = lua_tointegerx(L, 2 + d, &ok);
    int64_t n = lacc_array_extent(a, d);
    if (!ok || k < 1 || k > n) return 0;
    at = at * n + (k - 1);
  }
  *lin = at;
  return 1;
}

/* The array at 1 when it is a live array of a scalar type whose rank is nidx and the
 * integers at 2 .. nidx+1 are 1-based indices of one of its elements (*i: its 0-based
 * row-major position), else NULL (the caller's general path words the errors). */
static lacc_array *scalar_at(lua_State *L, int nidx, int64_t *i) {
  lacc_array *a = live_array_or_null(L, 1);
  if (a == NULL || nidx < 1 || elem_of(lacc_array_type(a)) == E_NONE || !index_at(L, a, nidx, i))
    return NULL;
  return a;
}

/* a:get(i, ...) of a scalar array of any rank: the element, or nothing for the general
 * path. */
static int l_array_get1(lua_State *L) {
  int64_t i;
  lacc_array *a = scalar_at(L, lua_gettop(L) - 1, &i);
  const void *p = a != NULL ? lacc_array_data_read(a) : NULL;
  if (p == NULL) return 0;
  push_elem(L, elem_of(lacc_array_type(a)), p, i);
  return 1;
}

/* The live array at 1 when its element has no sum (a sum's signature names its
 * constructors in <...>) and every leaf a buffer of its own (not rtu or compact), and
 * the nidx integers after it index one of its elements (*lin), else NULL. */
static lacc_array *fields_at(lua_State *L, int nidx, int64_t *lin) {
  lacc_array *a = live_array_or_null(L, 1);
  if (a == NULL || nidx < 0 || strchr(lacc_array_type(a), '<') != NULL || !index_at(L, a, nidx, lin))
    return NULL;
  return a;
}

/* a:fields(i, ...): the element's leaves, or nil and then the indices (the general path,
 * lua/lacc/array.lua, words the errors). */
static int l_array_fields(lua_State *L) {
  int top = lua_gettop(L);
  int64_t lin;
  lacc_array *a = fields_at(L, top - 1, &lin);
  int n = a != NULL ? lacc_array_nleaves(a) : 0;
  luaL_checkstack(L, n + 1, "fields");
  for (int leaf = 0; leaf < n; leaf++) {
    const void *p = lacc_array_leaf_data(a, leaf);
    if (p == NULL) break;
    push_elem(L, elem_of(lacc_array_leaf_type(a, leaf)), p, lin);
    if (leaf == n - 1) return n;
  }
  lua_settop(L, top);
  lua_pushnil(L);
  lua_rotate(L, 2, 1);
  return top;
}

/* a:set_fields(i, ..., x, ...): true, or nothing for the general path. Values are checked
 * before any is written. */
static int l_array_set_fields(lua_State *L) {
  int top = lua_gettop(L);
  lacc_array *a = live_array_or_null(L, 1);
  int n = a != NULL ? lacc_array_nleaves(a) : 0, nidx = top - 1 - n;
  int64_t lin;
  if (a == NULL || fields_at(L, nidx, &lin) == NULL) return 0;
  for (int leaf = 0; leaf < n; leaf++) {
    uint64_t u;
    elem_kind k = elem_of(lacc_array_leaf_type(a, leaf));
    int at = 2 + nidx + leaf, t = lua_type(L, at);
    if (k == E_BOOL ? t != LUA_TBOOLEAN : k == E_F32 || k == E_F64 ? t != LUA_TNUMBER : !int_bits(L, at, &u))
      return 0;
  }
  for (int leaf = 0; leaf < n; leaf++) {
    void *p = lacc_array_leaf_data(a, leaf);
    if (p == NULL || !store_elem(L, elem_of(lacc_array_leaf_type(a, leaf)), p, lin, 2 + nidx + leaf))
      return 0;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* a:set(i, ..., v) of a scalar array of any rank: true, or nothing for the general path. */
static int l_array_set1(lua_State *L) {
  int64_t i;
  int top = lua_gettop(L);
  lacc_array *a = scalar_at(L, top - 2, &i);
  if (a == NULL) return 0;
  void *p = lacc_array_data(a);
  if (p == NULL || !store_elem(L, elem_of(lacc_array_type(a)), p, i, top)) return 0;
  lua_pushboolean(L, 1);
  return 1;
}

/* The largest positive integer key of a table (Lua 5.1's table.maxn): a key past #t is a
 * hole that # did not see. */
static int l_maxn(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer m = 0;
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    lua_pop(L, 1);
    if (lua_isinteger(L, -1)) {
      lua_Integer k = lua_tointeger(L, -1);
      if (k > m) m = k;
    } else if (lua_type(L, -1) == LUA_TNUMBER) {
      lua_Number d = lua_tonumber(L, -1);
      if (d > (lua_Number)m && d == floor(d)) m = (lua_Integer)d;
    }
  }
  lua_pushinteger(L, m);
  return 1;
}

/* array_fill(a, lin, tbl, n): elements lin .. lin + n - 1 of a scalar array from
 * tbl[1..n]; returns nothing, or the position of a value that does not fit and what the
 * element type wants. */
static int l_array_fill(lua_State *L) {
  lacc_array *a = check_array(L, 1);
  int64_t lin = luaL_checkinteger(L, 2), n = luaL_checkinteger(L, 4);
  luaL_checktype(L, 3, LUA_TTABLE);
  void *p = scalar_data(L, a, lin, n, 1);
  elem_kind k = elem_of(lacc_array_type(a));
  for (int64_t i = 0; i < n; i++) {
    lua_rawgeti(L, 3, i + 1);
    if (!store_elem(L, k, p, lin + i, -1)) {
      lua_pushinteger(L, i + 1);
      lua_pushstring(L, k == E_BOOL ? "a boolean" : k >= E_F32 ? "a number" : "an integer");
      return 2;
    }
    lua_pop(L, 1);
  }
  return 0;
}

/* array_row(a, lin, n): elements lin .. lin + n - 1 of a scalar array in a new table. */
static int l_array_row(lua_State *L) {
  lacc_array *a = check_array(L, 1);
  int64_t lin = luaL_checkinteger(L, 2), n = luaL_checkinteger(L, 3);
  const void *p = scalar_data(L, a, lin, n, 0);
  elem_kind k = elem_of(lacc_array_type(a));
  lua_createtable(L, n > INT32_MAX ? INT32_MAX : (int)n, 0);
  for (int64_t i = 0; i < n; i++) {
    push_elem(L, k, p, lin + i);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ---- nodes */

static const char *opt_where(lua_State *L, int i) { return luaL_optstring(L, i, "?"); }

/* node_const(type, value, where): value a number, or a boolean for bool */
static int l_node_const(lua_State *L) {
  const char *type = luaL_checkstring(L, 1);
  const char *where = opt_where(L, 3);
  lacc_ctx *ctx = get_ctx(L);
  if (strcmp(type, "bool") == 0) {
    if (!lua_isboolean(L, 2))
      return fail(L, "constant: expected a boolean for bool, got %s (at %s)",
                        luaL_typename(L, 2), where);
    return push_node(L, lacc_exp_const_i(ctx, type, lua_toboolean(L, 2), where));
  }
  if (lua_type(L, 2) != LUA_TNUMBER)
    return fail(L, "constant: expected a number for %s, got %s (at %s)", type,
                      luaL_typename(L, 2), where);
  if (is_float_type(type)) return push_node(L, lacc_exp_const_f(ctx, type, lua_tonumber(L, 2), where));
  int ok;
  lua_Integer v = lua_tointegerx(L, 2, &ok);
  if (ok) return push_node(L, lacc_exp_const_i(ctx, type, v, where));
  lua_Number d = lua_tonumber(L, 2);
  if (d == floor(d) && d >= 9223372036854775808.0 && d < 18446744073709551616.0)
    return push_node(L, lacc_exp_const_f(ctx, type, d, where));
  return fail(L, "constant: %s is not a value of %s (cast the other operand?) (at %s)",
                    lua_tostring(L, 2), type, where);
}

static int l_node_var(lua_State *L) {
  return push_node(L, lacc_exp_var(get_ctx(L), luaL_checkstring(L, 1), opt_where(L, 2)));
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
    return fail(L, "%s: too many arguments (%d; at most %d)%s%s%s", what, n, max,
                where ? " (at " : "", where ? where : "", where ? ")" : "");
  for (int i = 0; i < n; i++) args[i] = check_node(L, from + i);
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
  return push_node(L, lacc_exp_op(get_ctx(L), op, n, args, where));
}

static int l_node_prj(lua_State *L) {
  int field = (int)luaL_checkinteger(L, 1);
  return push_node(L, lacc_exp_prj(get_ctx(L), field, check_node(L, 2), opt_where(L, 3)));
}

static int l_node_cast(lua_State *L) {
  const char *type = luaL_checkstring(L, 1);
  return push_node(L, lacc_exp_cast(get_ctx(L), type, check_node(L, 2), opt_where(L, 3)));
}

static int l_node_bitcast(lua_State *L) {
  const char *type = luaL_checkstring(L, 1);
  return push_node(L, lacc_exp_bitcast(get_ctx(L), type, check_node(L, 2), opt_where(L, 3)));
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
  return push_node(L, lacc_exp_con(get_ctx(L), type, con, n, args, where));
}

/* node_lam(where, body, params...) */
static int l_node_lam(lua_State *L) {
  const char *where = opt_where(L, 1);
  lacc_node *body = check_node(L, 2);
  lacc_node *params[LACC_MAX_ARGS];
  int n = collect(L, 3, params, "function", where);
  return push_node(L, lacc_lam(get_ctx(L), n, params, body, where));
}

static int l_node_use(lua_State *L) {
  return push_node(L, lacc_acc_use(get_ctx(L), check_array(L, 1), opt_where(L, 2)));
}

/* node_acc(op, where, args...) */
static int l_node_acc(lua_State *L) {
  const char *op = luaL_checkstring(L, 1);
  const char *where = opt_where(L, 2);
  lacc_node *args[LACC_MAX_ARGS];
  int n = collect(L, 3, args, op, where);
  return push_node(L, lacc_acc_op(get_ctx(L), op, n, args, where));
}

static int l_node_info(lua_State *L) {
  lacc_node *n = check_node(L, 1);
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
  for (int i = 0; rc == LACC_OK && i < n; i++) push_array(L, out[i]);
  end_run(L, c, prev);
  return rc == LACC_OK ? n : raise(L);
}

static int l_set_option(lua_State *L) {
  if (lacc_set_option(get_ctx(L), luaL_checkstring(L, 1), lua_toboolean(L, 2)) != LACC_OK)
    return raise(L);
  return 0;
}

/* node_param(index, type, rank, layout, where): index 0-based */
static int l_node_param(lua_State *L) {
  return push_node(L, lacc_acc_param(get_ctx(L), (int)luaL_checkinteger(L, 1),
                                     luaL_checkstring(L, 2), (int)luaL_checkinteger(L, 3),
                                     luaL_optstring(L, 4, NULL), opt_where(L, 5)));
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
  b->p = lacc_program_new(get_ctx(L), backend, nparams, n, roots);
  if (b->p == NULL) return raise(L);
  return 1;
}

/* program_run(program, arrays...) -> arrays... */
static int l_program_run(lua_State *L) {
  program_box *b = luaL_checkudata(L, 1, PROGRAM_MT);
  int n = lua_gettop(L) - 1;
  if (n > LACC_MAX_ARGS) return fail(L, "too many arguments (at most %d)", LACC_MAX_ARGS);
  lacc_array *args[LACC_MAX_ARGS], *out[LACC_MAX_ARGS];
  for (int i = 0; i < n; i++) args[i] = check_array(L, i + 2);
  if (b->p == NULL) return fail(L, "program was freed");
  lua_State *prev;
  ctx_box *c = begin_run(L, &prev);
  int rc = lacc_program_run(c->ctx, b->p, n, args, out);
  for (int i = 0; rc == LACC_OK && i < b->nresults; i++) push_array(L, out[i]);
  end_run(L, c, prev);
  return rc == LACC_OK ? b->nresults : raise(L);
}

/* explain(backend, roots...) -> text, kernels, intermediates, lets */
static int l_explain(lua_State *L) {
  lacc_node *roots[LACC_MAX_ARGS];
  const char *backend = luaL_optstring(L, 1, NULL);
  int n = collect(L, 2, roots, "explain", NULL);
  lacc_stats st;
  char *s = lacc_explain_on(get_ctx(L), backend, n, roots, &st);
  if (s == NULL) return raise(L);
  lua_pushstring(L, s);
  lacc_string_free(s);
  lua_pushinteger(L, st.kernels);
  lua_pushinteger(L, st.intermediates);
  lua_pushinteger(L, st.lets);
  return 4;
}

/* layout(type, strategy) -> text */
static int l_layout(lua_State *L) {
  char *s = lacc_layout(get_ctx(L), luaL_checkstring(L, 1), luaL_optstring(L, 2, NULL));
  if (s == NULL) return raise(L);
  lua_pushstring(L, s);
  lacc_string_free(s);
  return 1;
}

/* devices() -> text */
static int l_devices(lua_State *L) {
  char *s = lacc_devices(get_ctx(L));
  if (s == NULL) return raise(L);
  lua_pushstring(L, s);
  lacc_string_free(s);
  return 1;
}

/* config_get() -> text; config_set(name, value or nil) */
static int l_config_get(lua_State *L) {
  char *s = lacc_config_get(get_ctx(L));
  if (s == NULL) return raise(L);
  lua_pushstring(L, s);
  lacc_string_free(s);
  return 1;
}

static int l_config_set(lua_State *L) {
  if (lacc_config_set(get_ctx(L), luaL_checkstring(L, 1), luaL_optstring(L, 2, NULL)) != LACC_OK)
    return raise(L);
  return 0;
}

static int l_set_layout(lua_State *L) {
  if (lacc_set_layout(get_ctx(L), luaL_checkstring(L, 1)) != LACC_OK) return raise(L);
  return 0;
}

/* array_write_png(array, path) */
static int l_array_write_png(lua_State *L) {
  if (lacc_array_write_png(get_ctx(L), check_array(L, 1), luaL_checkstring(L, 2)) != LACC_OK)
    return raise(L);
  return 0;
}

static int l_array_layout(lua_State *L) {
  lua_pushstring(L, lacc_array_layout(check_array(L, 1)));
  return 1;
}

static int l_bytes(lua_State *L) {
  lua_pushinteger(L, lacc_ctx_bytes(get_ctx(L)));
  return 1;
}

static int l_transfers(lua_State *L) {
  lacc_transfers t;
  lacc_ctx_transfers(get_ctx(L), &t);
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

static int l_abi_version(lua_State *L) {
  lua_pushinteger(L, lacc_abi_version());
  return 1;
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
  { "abi_version", l_abi_version }, { "version", l_version }, { "array_new", l_array_new }, { "array_free", l_array_free },
  { "array_type", l_array_type }, { "array_shape", l_array_shape }, { "array_size", l_array_size },
  { "array_nleaves", l_array_nleaves }, { "array_leaf_type", l_array_leaf_type },
  { "array_get", l_array_get }, { "array_set", l_array_set }, { "node_const", l_node_const },
  { "node_var", l_node_var }, { "node_op", l_node_op }, { "node_prj", l_node_prj },
  { "node_cast", l_node_cast }, { "node_bitcast", l_node_bitcast }, { "fma", l_fma },
  { "type_bytes", l_type_bytes }, { "array_from_bytes", l_array_from_bytes },
  { "array_to_bytes", l_array_to_bytes }, { "array_read_bytes", l_array_read_bytes },
  { "array_write_bytes", l_array_write_bytes }, { "array_fill", l_array_fill }, { "array_row", l_array_row },
  { "maxn", l_maxn }, { "array_load_npy", l_array_load_npy }, { "array_save_npy", l_array_save_npy },
  { "array_read_png", l_array_read_png }, { "config_get", l_config_get },
  { "config_set", l_config_set }, { "array_get1", l_array_get1 }, { "array_set1", l_array_set1 }, { "array_fields", l_array_fields }, { "array_set_fields", l_array_set_fields }, { "node_con", l_node_con }, { "node_lam", l_node_lam }, { "node_use", l_node_use },
  { "node_acc", l_node_acc }, { "node_info", l_node_info }, { "run", l_run },
  { "explain", l_explain }, { "layout", l_layout }, { "devices", l_devices }, { "transfers", l_transfers }, { "device_memory", l_device_memory }, { "tiers", l_tiers }, { "tuning", l_tuning }, { "set_progress", l_set_progress }, { "set_layout", l_set_layout },
  { "array_layout", l_array_layout }, { "array_write_png", l_array_write_png }, { "bytes", l_bytes }, { "array_metatable", l_array_metatable },
  { "is_array", l_is_array }, { "array_alive", l_array_alive }, { "is_node", l_is_node },
  { "set_option", l_set_option }, { "node_param", l_node_param },
  { "program_new", l_program_new }, { "program_run", l_program_run }, { NULL, NULL }
};

int luaopen_lacc_core(lua_State *L) {
  if (luaL_newmetatable(L, CTX_MT)) {
    lua_pushcfunction(L, ctx_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, ARRAY_MT)) {
    lua_pushcfunction(L, array_gc);
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
    if (b->ctx == NULL) return fail(L, "lacc: out of memory");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, CTX_KEY);
  }
  luaL_setfuncs(L, funcs, 1);
  lua_pushstring(L, "lua5.4");
  lua_setfield(L, -2, "binding");
  push_limits(L);
  lua_setfield(L, -2, "limits");
  return 1;
}
