/* A wall clock for the Lua 5.4 lacc rows (Lua's os.clock is CPU time, which counts every
 * thread): require "benchclock".now() -> seconds from CLOCK_MONOTONIC, as a float. */
#define _POSIX_C_SOURCE 200809L
#include <lauxlib.h>
#include <lua.h>
#include <time.h>

static int now(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + 1e-9 * (lua_Number)ts.tv_nsec);
  return 1;
}

int luaopen_benchclock(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, now);
  lua_setfield(L, -2, "now");
  return 1;
}
