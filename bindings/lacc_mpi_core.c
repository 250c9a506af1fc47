/* lacc_mpi_core.c: the Lua 5.4 C module `lacc.mpi_core` over mpi/lacc_mpi.h.
 *
 * Owns: Lua strings and tables <-> the byte collectives, agree and stats; the plain entry
 * points come from mpi/entries.def (mpi_entries.c). LuaJIT's lua/lacc/mpi_ffi.lua offers
 * the same functions over the FFI (bindings_spec checks the names match). Must not: hold
 * semantics (lua/lacc/mpi/ decides what moves where).
 */
#include <stdlib.h>
#include "lacc_mpi_core.h"

int lm_raise(lua_State *L) {
  lua_pushstring(L, lacc_mpi_error());
  return lua_error(L);
}

/* a buffer of size parts (lens) as a table of strings, the buffer freed */
static void push_parts(lua_State *L, char *buf, const int64_t *lens, int size) {
  lua_createtable(L, size, 0);
  int64_t off = 0;
  for (int r = 0; r < size; r++) {
    lua_pushlstring(L, buf + off, (size_t)lens[r]);
    lua_rawseti(L, -2, r + 1);
    off += lens[r];
  }
  lacc_mpi_free(buf);
}

static int l_allgather(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  int size = lacc_mpi_size();
  int64_t *lens = lua_newuserdatauv(L, sizeof *lens * (size_t)size, 0);
  void *out;
  if (lacc_mpi_allgather(s, (int64_t)n, lens, &out) != 0) return lm_raise(L);
  push_parts(L, out, lens, size);
  return 1;
}

/* parts: a table of size strings, the one for rank q at q + 1 */
static int l_alltoall(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int size = lacc_mpi_size();
  int64_t *lens = lua_newuserdatauv(L, sizeof *lens * 2 * (size_t)size, 0);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int r = 0; r < size; r++) {
    lua_rawgeti(L, 1, r + 1);
    size_t n = 0;
    const char *s = lua_tolstring(L, -1, &n);
    if (!s) return luaL_error(L, "alltoall: part %d is not a string", r + 1);
    lens[r] = (int64_t)n;
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  void *out;
  if (lacc_mpi_alltoall(lua_tostring(L, -1), lens, lens + size, &out) != 0) return lm_raise(L);
  push_parts(L, out, lens + size, size);
  return 1;
}

/* agree(failed, msg, what): nothing when no rank failed, else the first failing rank
 * (1-based) and its message, on every rank; an error where the ranks' `what`s differ */
static int l_agree(lua_State *L) {
  int failed = lua_toboolean(L, 1);
  const char *msg = luaL_optstring(L, 2, "");
  const char *what = luaL_optstring(L, 3, "");
  int first;
  char *text;
  if (lacc_mpi_agree(failed, msg, what, &first, &text) != 0) return lm_raise(L);
  if (first < 0) return 0;
  lua_pushinteger(L, first + 1);
  lua_pushstring(L, text);
  lacc_mpi_free(text);
  return 2;
}

/* exchange(to, s, from): s to rank `to` (0-based; nil: none), then one message from rank
 * `from` (nil: none), returned (nil where none) */
static int l_exchange(lua_State *L) {
  int to = (int)luaL_optinteger(L, 1, -1), from = (int)luaL_optinteger(L, 3, -1);
  size_t n = 0;
  const char *s = luaL_optlstring(L, 2, "", &n);
  void *out;
  int64_t len;
  if (lacc_mpi_exchange(to, s, (int64_t)n, from, &out, &len) != 0) return lm_raise(L);
  if (out == NULL) return 0;
  lua_pushlstring(L, out, (size_t)len);
  return 1;
}

static int l_reserve(lua_State *L) {
  if (lacc_mpi_reserve((int64_t)luaL_checkinteger(L, 1)) != 0) return lm_raise(L);
  return 0;
}

static int l_stats(lua_State *L) {
  lacc_mpi_stats s;
  lacc_mpi_get_stats(&s);
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, s.bytes_sent), lua_setfield(L, -2, "bytes_sent");
  lua_pushinteger(L, s.bytes_received), lua_setfield(L, -2, "bytes_received");
  lua_pushinteger(L, s.messages_sent), lua_setfield(L, -2, "messages_sent");
  lua_pushinteger(L, s.messages_received), lua_setfield(L, -2, "messages_received");
  lua_pushinteger(L, s.collectives), lua_setfield(L, -2, "collectives");
  return 1;
}

static int l_abort(lua_State *L) {
  lacc_mpi_abort((int)luaL_optinteger(L, 1, 1));
  return 0;
}

int luaopen_lacc_mpi_core(lua_State *L) {
  static const luaL_Reg fns[] = {
    { "allgather", l_allgather }, { "alltoall", l_alltoall }, { "agree", l_agree },
    { "stats", l_stats },         { "abort", l_abort },       { "exchange", l_exchange },
    { "reserve", l_reserve },     { NULL, NULL },
  };
  luaL_newlib(L, fns);
  luaL_setfuncs(L, lm_entry_funcs, 0);
  return 1;
}
