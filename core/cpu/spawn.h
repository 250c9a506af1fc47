/* spawn.h: running a tool in a process group of its own, bounded in time (spawn.c). */
#ifndef LACC_SPAWN_H
#define LACC_SPAWN_H

/* Runs argv (no shell: nothing to quote) in a process group of its own (so that a hung
 * compiler and its subprocesses can be killed together) with stdout and stderr to `log`
 * and the caller's environment minus LD_PRELOAD, which sanitizer runs use for the host
 * process only; with TMPDIR set to `tmp` (unless NULL), so that the temporary files of a
 * tool killed midway are removed with that directory. It is stopped (its process group
 * killed) past `deadline` seconds (<= 0: none) or when stop(arg) says so; slot is its
 * entry in inflight.c's table (-1: none), for SIGTERM. Returns the exit status, -1 on a
 * failure, -2 past the deadline, -3 when stopped. */
int spawn_run(char *const argv[], const char *log, const char *tmp, double deadline,
              int (*stop)(void *), void *arg, int slot);

#endif
