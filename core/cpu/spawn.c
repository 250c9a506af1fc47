/* spawn.c: a tool (a C compiler) run in a process group of its own, bounded in time.
 *
 * Owns: posix_spawn with the caller's environment (minus LD_PRELOAD; TMPDIR the caller's
 * private directory), output to a log file, the wait with its deadline and stop test,
 * and the kill of the whole process group when either ends it.
 * Must not: know what the tool builds or where its output goes (kcache.c does).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cpu/spawn.h"
#include "base/inflight.h"
#include "base/internal.h"

extern char **environ;

/* Waits for pid until the deadline (seconds from now; <= 0: for ever) or until ctx is
 * stop(arg) says to stop (a SIGINT to the run waiting for it, or the process exiting: the
 * compiler runs in a process group of its own, which the terminal's ^C does not reach); then kills its process group. The exit status, -1 on a
 * failure, -2 past the deadline, -3 when stopped. */
static int wait_for(pid_t pid, double deadline, int (*stop_fn)(void *), void *arg) {
  struct timespec t0, nap = { 0, 1000000 };
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int st;
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (w < 0 && errno != EINTR) return -1;
    int late = deadline > 0 && seconds_since(&t0) > deadline;
    int stop = stop_fn != NULL && stop_fn(arg);
    if (late || stop) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
      return late ? -2 : -3;
    }
    nanosleep(&nap, NULL);
    if (nap.tv_nsec < 20000000) nap.tv_nsec += nap.tv_nsec / 2;   /* 1 ms growing to 20 */
  }
}

int spawn_run(char *const argv[], const char *log, const char *tmp, double deadline,
              int (*stop)(void *), void *arg, int slot) {
  int nenv = 0;
  while (environ[nenv] != NULL) nenv++;
  char **env = malloc(sizeof *env * (size_t)(nenv + 2));
  if (env == NULL) return -1;
  char tmpdir[4200];
  snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", tmp != NULL ? tmp : "");
  int k = 0;
  for (int i = 0; i < nenv; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
        (tmp == NULL || strncmp(environ[i], "TMPDIR=", 7) != 0))
      env[k++] = environ[i];
  if (tmp != NULL) env[k++] = tmpdir;
  env[k] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int rc = -1;
  if (posix_spawn_file_actions_init(&fa) != 0) {
    free(env);
    return -1;
  }
  if (posix_spawnattr_init(&attr) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    return -1;
  }
  pid_t pid;
  if (posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP) == 0 &&
      posix_spawnattr_setpgroup(&attr, 0) == 0 &&
      posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) == 0 &&
      posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600) == 0 &&
      posix_spawn_file_actions_adddup2(&fa, 1, 2) == 0 &&
      posix_spawnp(&pid, argv[0], &fa, &attr, argv, env) == 0) {
    inflight_compiler(slot, pid);   /* SIGTERM stops it with the process */
    rc = wait_for(pid, deadline, stop, arg);
    inflight_compiler(slot, 0);
  }
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  free(env);
  return rc;
}

