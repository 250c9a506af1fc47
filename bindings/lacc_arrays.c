/* lacc_arrays.c: host arrays in the Lua 5.4 module lacc.core (lacc_core.c is the module).
 *
 * Owns: array handles' functions: new arrays, their shape and type, elements by leaf,
 * the direct element paths (a scalar array's element by its indices, a tuple's fields as
 * values: no table, no general path), bulk data (packed bytes, rows of Lua values, fills),
 * .npy and PNG files.
 * Must not: word an error the general path (lua/lacc/array.lua) words: where a direct
 * path cannot serve a call it returns nothing and the general path says what is wrong.
 */
#include <math.h>
#include <string.h>
#include "lacc_core.h"


static int check_shape(lua_State *L, int idx, int64_t *ext) {
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_Integer rank = luaL_len(L, idx);
  if (rank > LACC_MAX_RANK)
    return lb_fail(L, "rank %d is out of range (0 to %d)", (int)rank, LACC_MAX_RANK);
  for (int d = 0; d < rank; d++) {
    lua_geti(L, idx, d + 1);
    int ok;
    ext[d] = lua_tointegerx(L, -1, &ok);
    if (!ok) return lb_fail(L, "shape: extent %d is not an integer", d + 1);
    lua_pop(L, 1);
  }
  return (int)rank;
}

static int l_array_new(lua_State *L) {
  const char *type = luaL_checkstring(L, 1);
  int64_t ext[LACC_MAX_RANK];
  int rank = check_shape(L, 2, ext);
  lacc_array *a = lacc_array_new(lb_ctx(L), type, rank, ext);
  if (a == NULL) return lb_raise(L);
  lb_push_array(L, a);
  return 1;
}

static int l_array_free(lua_State *L) { return lb_array_gc(L); }

static int l_array_shape(lua_State *L) {
  lacc_array *a = lb_check_array(L, 1);
  int r = lacc_array_rank(a);
  lua_createtable(L, r, 0);
  for (int d = 0; d < r; d++) {
    lua_pushinteger(L, lacc_array_extent(a, d));
    lua_rawseti(L, -2, d + 1);
  }
  return 1;
}

static int l_array_leaf_type(lua_State *L) {
  const char *t = lacc_array_leaf_type(lb_check_array(L, 1), (int)luaL_checkinteger(L, 2));
  if (t == NULL) return lb_fail(L, "no such field");
  lua_pushstring(L, t);
  return 1;
}

int lb_is_float_type(const char *t) { return t[0] == 'f'; }

/* The arguments (a, leaf0, i0) of array_get and array_set: the leaf's type (an error
 * for a leaf the array does not have). */
static const char *leaf_args(lua_State *L, lacc_array **a, int *leaf, int64_t *i) {
  *a = lb_check_array(L, 1);
  *leaf = (int)luaL_checkinteger(L, 2);
  *i = luaL_checkinteger(L, 3);
  const char *t = lacc_array_leaf_type(*a, *leaf);
  if (t == NULL) lb_fail(L, "no such field");
  return t;
}

/* array_get(a, leaf0, i0): integers as Lua integers, floats as floats, bools as booleans */
static int l_array_get(lua_State *L) {
  lacc_array *a;
  int leaf;
  int64_t i;
  const char *t = leaf_args(L, &a, &leaf, &i);
  lacc_ctx *ctx = lb_ctx(L);
  if (lb_is_float_type(t) || strcmp(t, "bool") == 0) {
    double v;
    if (lacc_array_get_f(ctx, a, leaf, i, &v) != LACC_OK) return lb_raise(L);
    if (t[0] == 'b') lua_pushboolean(L, v != 0);
    else lua_pushnumber(L, v);
  } else {
    int64_t v;
    if (lacc_array_get_i(ctx, a, leaf, i, &v) != LACC_OK) return lb_raise(L);
    lua_pushinteger(L, v);
  }
  return 1;
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

typedef lacc_array *(*from_fn)(lacc_ctx *, const char *, int, const int64_t *, const void *, int64_t);

/* (type, shape, string) -> a new array, by from (packed bytes, or leaves) */
static int array_from(lua_State *L, from_fn from) {
  const char *type = luaL_checkstring(L, 1);
  int64_t ext[LACC_MAX_RANK];
  int rank = check_shape(L, 2, ext);
  size_t len;
  const char *data = luaL_checklstring(L, 3, &len);
  lacc_array *a = from(lb_ctx(L), type, rank, ext, data, (int64_t)len);
  if (a == NULL) return lb_raise(L);
  lb_push_array(L, a);
  return 1;
}
/* array_from_bytes(type, shape, string); array_from_leaves(...) (lacc.mpi: sums too) */
static int l_array_from_bytes(lua_State *L) { return array_from(L, lacc_array_from_buffer); }
static int l_array_from_leaves(lua_State *L) { return array_from(L, lacc_array_from_leaves); }

typedef int (*to_fn)(lacc_ctx *, lacc_array *, void *, int64_t);

/* a's n bytes, copied out by to into a scratch buffer, as a new string */
static int array_to(lua_State *L, lacc_array *a, int64_t n, to_fn to) {
  char *tmp = lua_newuserdatauv(L, (size_t)n + 1, 0);   /* collected, whatever raises */
  if (to(lb_ctx(L), a, tmp, n) != LACC_OK) return lb_raise(L);
  lua_pushlstring(L, tmp, (size_t)n);
  return 1;
}

/* array_to_leaves(a) -> the leaves form as a string (lacc.mpi: sums too) */
static int l_array_to_leaves(lua_State *L) {
  lacc_array *a = lb_check_array(L, 1);
  int64_t eb = lacc_type_leaf_bytes(lb_ctx(L), lacc_array_type(a));
  if (eb < 0) return lb_raise(L);
  return array_to(L, a, eb * lacc_array_size(a), lacc_array_to_leaves);
}

/* Bytes [off, off + n) of the storage of an array of a scalar type (row-major, as C
 * stores them): array_read_bytes(a, off, n) -> string; array_write_bytes(a, off, s)
 * writes s there. For lacc.mpi's halo rows: no copy of the whole array. */
static int l_array_read_bytes(lua_State *L) {
  lacc_array *a = lb_check_array(L, 1);
  int64_t off = (int64_t)luaL_checkinteger(L, 2), n = (int64_t)luaL_checkinteger(L, 3);
  const char *p = lacc_array_bytes(lb_ctx(L), a, off, n, 0);
  if (p == NULL) return lb_raise(L);
  lua_pushlstring(L, p, (size_t)n);
  return 1;
}

static int l_array_write_bytes(lua_State *L) {
  lacc_array *a = lb_check_array(L, 1);
  int64_t off = (int64_t)luaL_checkinteger(L, 2);
  size_t n;
  const char *s = luaL_checklstring(L, 3, &n);
  char *p = lacc_array_bytes(lb_ctx(L), a, off, (int64_t)n, 1);
  if (p == NULL) return lb_raise(L);
  if (n > 0) memcpy(p, s, n);
  return 0;
}

/* One copy into the new string: straight from a scalar array's buffer; a tuple's fields
 * packed into a scratch buffer first. */
static int l_array_to_bytes(lua_State *L) {
  lacc_array *a = lb_check_array(L, 1);
  lacc_ctx *ctx = lb_ctx(L);
  int64_t eb = lacc_type_bytes(ctx, lacc_array_type(a));
  if (eb < 0) return lb_raise(L);
  int64_t n = eb * lacc_array_size(a);
  if (elem_of(lacc_array_type(a)) != E_NONE) {
    const void *p = lacc_array_data_read(a);
    if (p == NULL && n > 0) return lb_raise(L);
    lua_pushlstring(L, n > 0 ? p : "", (size_t)n);
    return 1;
  }
  return array_to(L, a, n, lacc_array_to_buffer);
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
    lb_fail(L, "elements %lld to %lld out of range", (long long)lin + 1, (long long)(lin + n));
    return NULL;
  }
  void *p = write ? lacc_array_data(a) : (void *)lacc_array_data_read(a);
  if (p == NULL && n > 0) lb_raise(L);
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
  lacc_array *a = lb_check_array(L, 1);
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
  lacc_array *a = lb_check_array(L, 1);
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

const luaL_Reg lb_array_funcs[] = {
  { "array_new", l_array_new }, { "array_free", l_array_free }, { "array_shape", l_array_shape },
  { "array_leaf_type", l_array_leaf_type }, { "array_get", l_array_get },
  { "array_from_bytes", l_array_from_bytes }, { "array_from_leaves", l_array_from_leaves },
  { "array_to_leaves", l_array_to_leaves },
  { "array_to_bytes", l_array_to_bytes }, { "array_read_bytes", l_array_read_bytes },
  { "array_write_bytes", l_array_write_bytes }, { "array_fill", l_array_fill },
  { "array_row", l_array_row }, { "maxn", l_maxn }, { "array_get1", l_array_get1 },
  { "array_set1", l_array_set1 }, { "array_fields", l_array_fields },
  { "array_set_fields", l_array_set_fields }, { NULL, NULL }
};
