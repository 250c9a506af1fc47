/* diskcache.c: keeping the disk caches of compiled kernels bounded.
 *
 * Owns: the size limit of the cache directory (LACC_CACHE_MB, default 512; the cpu
 * backend's k*.so files and the OpenCL binaries under opencl/ count together), marking a
 * file used (its modification time, so eviction is least-recently-used across processes),
 * and eviction of the oldest files when a new one pushes the total past the limit.
 * Must not: know what the files hold or decide names (cpu.c and opencl/clrt.c do); fail
 * a run: every error here is ignored, the cache being an optimisation.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include "internal.h"

typedef struct {
  char path[4400];
  off_t size;
  struct timespec mtime;
} entry;

typedef struct {
  entry *v;
  int n, cap;
  long long total;
} listing;

static int64_t limit_bytes(void) {
  const char *e = getenv("LACC_CACHE_MB");
  double mb = e != NULL && *e != '\0' ? strtod(e, NULL) : 512;
  return mb > 0 ? (int64_t)(mb * 1048576.0) : 0;
}

/* Kernel files only: what cpu.c and clrt.c write (temporary files are left to their
 * writers). */
static int is_kernel_file(const char *name) {
  size_t n = strlen(name);
  if (name[0] == 'k' && n > 3 && strcmp(name + n - 3, ".so") == 0) return 1;
  return n > 6 && strcmp(name + n - 6, ".clbin") == 0;
}

static void scan(const char *dir, listing *l) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!is_kernel_file(e->d_name)) continue;
    if (l->n == l->cap) {
      int cap = l->cap ? 2 * l->cap : 64;
      entry *v = realloc(l->v, sizeof *v * (size_t)cap);
      if (v == NULL) break;
      l->v = v;
      l->cap = cap;
    }
    entry *x = &l->v[l->n];
    struct stat st;
    if (snprintf(x->path, sizeof x->path, "%s/%s", dir, e->d_name) >= (int)sizeof x->path ||
        stat(x->path, &st) != 0)
      continue;
    x->size = st.st_size;
    x->mtime = st.st_mtim;
    l->total += st.st_size;
    l->n++;
  }
  closedir(d);
}

static int older(const void *a, const void *b) {
  const struct timespec *x = &((const entry *)a)->mtime, *y = &((const entry *)b)->mtime;
  if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
  return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

void diskcache_touch(const char *path) { utimes(path, NULL); }

void diskcache_trim(const char *keep) {
  char base[4096], cl[4200];
  if (cache_dir(base, sizeof base) != 0) return;
  snprintf(cl, sizeof cl, "%s/opencl", base);
  listing l = { 0 };
  scan(base, &l);
  scan(cl, &l);
  int64_t limit = limit_bytes();
  if (l.total > limit) {
    qsort(l.v, (size_t)l.n, sizeof *l.v, older);
    for (int i = 0; i < l.n && l.total > limit; i++) {
      if (keep != NULL && strcmp(l.v[i].path, keep) == 0) continue;
      if (unlink(l.v[i].path) == 0) l.total -= l.v[i].size;
    }
  }
  free(l.v);
}
