/* Several Lua states in several threads, all using lacc at once (issue 8, issue 9): each
 * thread makes its own lua_State, loads lacc, and runs programs on its own data: the same
 * program text in every thread (one kernel, compiled once for the process: the kernel
 * caches are shared), a compiled function called repeatedly, and programs that differ per
 * thread. Each thread's results are checked against what plain C computes.
 * Build: cc examples/c/threads.c $(pkg-config --cflags --libs lua5.4) -lpthread
 * Run with LUA_PATH / LUA_CPATH finding lacc; argv: threads (default 8), backend. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static const char *chunk =
    "local id, backend = ...\n"
    "local lacc = require 'lacc'\n"
    "local opts = { backend = backend }\n"
    "local n = 1000 + 37 * id\n"
    "local t = {}\n"
    "for i = 1, n do t[i] = i % 97 + id end\n"
    "local xs = lacc.fromtable(t, 'i64')\n"
    "local f = lacc.compile(function(a) return lacc.sum(lacc.map(function(v) return v * 3 - 1 end, a)) end, opts)\n"
    "local total = 0\n"
    "for rep = 1, 20 do\n"
    "  total = total + f(xs):get()\n"
    "  local shifted = lacc.run(lacc.map(function(v) return v + rep end, xs), opts)\n"
    "  total = total + shifted:get(n)\n"
    "end\n"
    "-- a program only this thread builds: its id is in the code (a kernel of its own)\n"
    "local own = lacc.run(lacc.fold(function(a, b) return a + b end, id * 1000, xs), opts):get()\n"
    "return total + own\n";

typedef struct {
  int id;
  const char *backend;
  long long got, want;
  char err[512];
} job;

static long long expected(int id) {
  long long n = 1000 + 37 * id, total = 0, sum3 = 0, last = (n % 97) + id, sum = 0;
  for (long long i = 1; i <= n; i++) {
    long long v = i % 97 + id;
    sum3 += v * 3 - 1;
    sum += v;
  }
  for (int rep = 1; rep <= 20; rep++) total += sum3 + last + rep;
  return total + (long long)id * 1000 + sum;
}

static void *run(void *arg) {
  job *j = arg;
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    snprintf(j->err, sizeof j->err, "no Lua state");
    return NULL;
  }
  luaL_openlibs(L);
  if (luaL_loadstring(L, chunk) != LUA_OK) {
    snprintf(j->err, sizeof j->err, "%s", lua_tostring(L, -1));
  } else {
    lua_pushinteger(L, j->id);
    lua_pushstring(L, j->backend);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) snprintf(j->err, sizeof j->err, "%s", lua_tostring(L, -1));
    else j->got = (long long)lua_tointeger(L, -1);
  }
  lua_close(L);
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8;
  const char *backend = argc > 2 ? argv[2] : "cpu";
  if (n < 1 || n > 64) n = 8;
  pthread_t th[64];
  job jobs[64];
  for (int i = 0; i < n; i++) {
    jobs[i] = (job){ .id = i + 1, .backend = backend };
    jobs[i].want = expected(i + 1);
    if (pthread_create(&th[i], NULL, run, &jobs[i]) != 0) return 1;
  }
  int bad = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(th[i], NULL);
    if (jobs[i].err[0] || jobs[i].got != jobs[i].want) {
      fprintf(stderr, "thread %d: got %lld, want %lld %s\n", jobs[i].id, jobs[i].got, jobs[i].want,
              jobs[i].err);
      bad++;
    }
  }
  printf("%d Lua states in %d threads on %s: %s\n", n, n, backend, bad ? "FAILED" : "all results right");
  return bad ? 1 : 0;
}
