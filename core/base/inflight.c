/* inflight.c: what builds under way leave on disk, removed when SIGTERM ends the process.
 *
 * Owns: a fixed table of the builds under way (their private directory, their claim in
 * the disk cache, their compiler's process group) and a SIGTERM handler, installed when
 * the first build starts and only where SIGTERM has its default action (a host that
 * handles SIGTERM itself may go on running, and its builds with it). The handler stops
 * each compiler, removes each directory's files and each claim, then ends the process by
 * SIGTERM as the default action would. Everything it does is async-signal-safe: the
 * table is written before a slot is marked used and read only through that mark, and the
 * directory is listed with getdents64, not readdir (which may allocate).
 * A SIGKILL leaves the files; claims then expire (diskcache.c: the process is gone, or
 * past the build's time limit).
 * Must not: start, wait for or judge builds (cpu/kcache.c and cpu/builds.c do).
 */
#define _GNU_SOURCE   /* syscall, getdents64's record */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/inflight.h"

#define SLOTS 64
#define PATHLEN 4200

typedef struct {
  atomic_int used;             /* 0 free, 1 taken (being written), 2 in force */
  atomic_int group;            /* the compiler's process group, or 0 */
  atomic_int has_claim;
  char dir[PATHLEN];
  char claim[PATHLEN];
} slot;

static slot table[SLOTS];
static atomic_int installed;

/* Every entry of dir unlinked (a compiler's temporaries included), then dir itself. */
static void remove_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      struct dirent64 *e = (struct dirent64 *)(buf + off);
      off += e->d_reclen;
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(fd, e->d_name, 0);
    }
  }
  close(fd);
  rmdir(dir);
}

static void on_sigterm(int sig) {
  for (int i = 0; i < SLOTS; i++) {
    slot *s = &table[i];
    if (atomic_load(&s->used) != 2) continue;
    int g = atomic_load(&s->group);
    if (g > 0) kill(-g, SIGKILL);
    if (atomic_load(&s->has_claim)) unlink(s->claim);
    remove_dir(s->dir);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install(void) {
  if (atomic_exchange(&installed, 1)) return;
  struct sigaction cur, ours;
  if (sigaction(SIGTERM, NULL, &cur) != 0) return;
  if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL) return;
  memset(&ours, 0, sizeof ours);
  ours.sa_handler = on_sigterm;
  sigemptyset(&ours.sa_mask);
  ours.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &ours, NULL);
}

int inflight_add(const char *dir) {
  if (strlen(dir) >= PATHLEN) return -1;
  install();
  for (int i = 0; i < SLOTS; i++) {
    int free_ = 0;
    if (!atomic_compare_exchange_strong(&table[i].used, &free_, 1)) continue;
    snprintf(table[i].dir, PATHLEN, "%s", dir);
    atomic_store(&table[i].group, 0);
    atomic_store(&table[i].has_claim, 0);
    atomic_store(&table[i].used, 2);
    return i;
  }
  return -1;
}

void inflight_claim(int i, const char *claim) {
  if (i < 0) return;
  atomic_store(&table[i].has_claim, 0);
  if (claim == NULL || strlen(claim) >= PATHLEN) return;
  snprintf(table[i].claim, PATHLEN, "%s", claim);
  atomic_store(&table[i].has_claim, 1);
}

void inflight_compiler(int i, pid_t group) {
  if (i >= 0) atomic_store(&table[i].group, (int)group);
}

void inflight_done(int i) {
  if (i >= 0) atomic_store(&table[i].used, 0);
}
