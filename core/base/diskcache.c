/* diskcache.c: the disk caches of compiled kernels, and who may write them.
 *
 * Owns: choosing the cache directory (LACC_CACHE, $XDG_CACHE_HOME/lacc, ~/.cache/lacc,
 * $XDG_RUNTIME_DIR/lacc; never a shared /tmp name), trusting it only when it is private
 * (ours, not writable by others, every ancestor owned by us or root and not writable by
 * others unless sticky), the per-user secret key kept 0600 in it, sealed files (a header
 * and an HMAC-SHA-256 tag over header and payload: a file is used only when it is exactly
 * what this user's lacc wrote under this name), the size bound (LACC_CACHE_MB: only
 * lacc's own names with lacc's own magic count and are evicted, oldest first, before a
 * new file is written), claims on files being built (so that processes missing one file
 * at once build it once) and private temporary directories for compiling.
 * Must not: know what the payloads are (cpu/kcache.c and opencl/clrt.c do); fail a run: a cache
 * that cannot be used is told once and then done without.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "base/diskcache.h"
#include "base/internal.h"
#include "base/vec.h"
#include "base/settings.h"
#include "base/sha256.h"

/* magic (8) | key (32) | payload length (8, little-endian) | tag (32) | payload */
enum { MAGIC = 8, KEY = 32, LEN = 8, TAG = 32, HEADER = MAGIC + KEY + LEN + TAG };
#define TMP_PREFIX ".lacc-tmp-"
/* A temporary file older than this was left by a process that died while writing. */
#define STALE_SECONDS 3600

static const char *const kind_sub[] = { "", "opencl" };

static void magic_of(diskcache_kind kind, unsigned char m[MAGIC]) {
  memcpy(m, "LACC?v2\n", MAGIC);
  m[4] = kind == DC_KERNEL ? 'K' : 'B';
}

/* ---- trusting a directory */

/* Why path cannot hold a private cache, or NULL when it can: an existing directory of
 * ours that nobody else may write, whose ancestors nobody but us or root may change. */
static const char *untrusted(const char *path, char *why, size_t size) {
  char real[PATH_MAX];
  if (realpath(path, real) == NULL) {
    snprintf(why, size, "%s", strerror(errno));
    return why;
  }
  struct stat st;
  uid_t me = geteuid();
  if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
    snprintf(why, size, "it is not a directory");
    return why;
  }
  if (st.st_uid != me) {
    snprintf(why, size, "it belongs to another user (uid %ld)", (long)st.st_uid);
    return why;
  }
  if (st.st_mode & 022) {
    snprintf(why, size, "other users may write to it (mode %04o)", (unsigned)(st.st_mode & 07777));
    return why;
  }
  /* Each ancestor: whoever may write it may rename our directory away and put theirs in
   * its place, unless the sticky bit (as on /tmp) forbids renaming others' entries. */
  for (char *slash = strrchr(real, '/'); slash != NULL; slash = strrchr(real, '/')) {
    if (slash == real) slash[1] = '\0';
    else *slash = '\0';
    if (stat(real, &st) != 0) {
      snprintf(why, size, "%.200s: %s", real, strerror(errno));
      return why;
    }
    if (st.st_uid != me && st.st_uid != 0) {
      snprintf(why, size, "%.200s belongs to another user (uid %ld)", real, (long)st.st_uid);
      return why;
    }
    if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
      snprintf(why, size, "other users may write to %.200s (mode %04o)", real,
               (unsigned)(st.st_mode & 07777));
      return why;
    }
    if (slash == real) break;
  }
  return NULL;
}

/* mkdir -p with 0700 for every level created here. */
static void make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    mkdir(path, 0700);
    *p = '/';
  }
  mkdir(path, 0700);
}

/* The configured cache directory into out; -1 when none is configured. */
int diskcache_dir(char *out, size_t size) {
  const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME"), *r = getenv("XDG_RUNTIME_DIR");
  char d[SETTING_MAX];
  int n;
  if (setting_text("LACC_CACHE", d, sizeof d)) n = snprintf(out, size, "%s", d);
  else if (x != NULL && *x == '/') n = snprintf(out, size, "%s/lacc", x);
  else if (h != NULL && *h) n = snprintf(out, size, "%s/.cache/lacc", h);
  else if (r != NULL && *r == '/') n = snprintf(out, size, "%s/lacc", r);
  else return -1;
  return n > 0 && (size_t)n < size ? 0 : -1;
}

static void no_cache(const char *dir, const char *why) {
  char key[300];
  snprintf(key, sizeof key, "cache %.280s", dir);
  warn_once(key, "not using the kernel cache %s: %s; kernels are compiled for this process "
            "only (see \"The caches\" in the guide)", dir, why);
}

/* ---- the secret key */

static int read_full(int fd, void *p, size_t n) {
  unsigned char *b = p;
  while (n > 0) {
    ssize_t k = read(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

static int write_full(int fd, const void *p, size_t n) {
  const unsigned char *b = p;
  while (n > 0) {
    ssize_t k = write(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

/* 0 with the key, 1 when there is none, -1 when the file is not a private key of ours
 * (then it is replaced: only we or root can have put it in our private directory). */
static int read_secret(const char *path, unsigned char secret[32]) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 1 : -1;
  struct stat st;
  int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 077) == 0 && st.st_size == 32 && read_full(fd, secret, 32) == 0;
  close(fd);
  return ok ? 0 : -1;
}

static int random_bytes(unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t k = getrandom(p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* A new key, published with link() so that of two processes making one at once, both
 * use the one that landed. */
static int make_secret(const char *base, const char *path) {
  static atomic_uint counter;
  unsigned char fresh[32];
  char tmp[DISKCACHE_PATH + 64];
  if (random_bytes(fresh, sizeof fresh) != 0) return -1;
  snprintf(tmp, sizeof tmp, "%s/" TMP_PREFIX "key-%ld-%u", base, (long)getpid(),
           (unsigned)atomic_fetch_add(&counter, 1));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  int ok = write_full(fd, fresh, sizeof fresh) == 0;
  ok = close(fd) == 0 && ok;
  if (ok && link(tmp, path) != 0 && errno != EEXIST) ok = 0;
  unlink(tmp);
  return ok ? 0 : -1;
}

static int get_secret(const char *base, unsigned char secret[32], char *why, size_t size) {
  char path[DISKCACHE_PATH + 16];
  snprintf(path, sizeof path, "%s/secret", base);
  for (int attempt = 0; attempt < 2; attempt++) {
    int rc = read_secret(path, secret);
    if (rc == 0) return 0;
    if (rc < 0) unlink(path);
    if (make_secret(base, path) != 0) break;
  }
  snprintf(why, size, "cannot make its key file secret (%s)", strerror(errno));
  return -1;
}

static int64_t limit_bytes(void);

int diskcache_open(diskcache_kind kind, diskcache *c) {
  char why[400];
  limit_bytes();   /* a bad LACC_CACHE_MB is told at once, not at the next write */
  if (diskcache_dir(c->base, sizeof c->base) != 0) {
    warn_once("cache none", "no kernel cache directory (LACC_CACHE, XDG_CACHE_HOME and HOME "
              "are unset); kernels are compiled for this process only");
    return -1;
  }
  make_dirs(c->base);
  if (untrusted(c->base, why, sizeof why) != NULL) {
    no_cache(c->base, why);
    return -1;
  }
  int n = *kind_sub[kind] ? snprintf(c->dir, sizeof c->dir, "%s/%s", c->base, kind_sub[kind])
                          : snprintf(c->dir, sizeof c->dir, "%s", c->base);
  if (n < 0 || (size_t)n >= sizeof c->dir) return -1;
  if (*kind_sub[kind]) {
    mkdir(c->dir, 0700);
    if (untrusted(c->dir, why, sizeof why) != NULL) {
      no_cache(c->dir, why);
      return -1;
    }
  }
  if (get_secret(c->base, c->secret, why, sizeof why) != 0) {
    no_cache(c->base, why);
    return -1;
  }
  return 0;
}

/* ---- names and sealed files */

void diskcache_key(int nparts, const char *const *parts, unsigned char key[32]) {
  sha256_ctx h;
  sha256_init(&h);
  for (int i = 0; i < nparts; i++) sha256_update(&h, parts[i], strlen(parts[i]) + 1);
  sha256_final(&h, key);
}

void diskcache_key_prefix(const char *text, size_t len, sha256_ctx *state) {
  sha256_init(state);
  sha256_update(state, text, len);
}

void diskcache_key_after(const sha256_ctx *start, size_t len, int nparts, const char *const *parts,
                         unsigned char key[32]) {
  sha256_ctx h = *start;
  sha256_update(&h, parts[0] + len, strlen(parts[0] + len) + 1);
  for (int i = 1; i < nparts; i++) sha256_update(&h, parts[i], strlen(parts[i]) + 1);
  sha256_final(&h, key);
}

void diskcache_name(diskcache_kind kind, const unsigned char key[32], char name[48]) {
  char hex[33];
  for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
  snprintf(name, 48, kind == DC_KERNEL ? "k%s.kso" : "%s.clbin", hex);
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int k = 0; k < 8; k++) v |= (uint64_t)p[k] << (8 * k);
  return v;
}

static void seal(const unsigned char secret[32], const unsigned char *head,
                 const void *payload, size_t len, unsigned char tag[TAG]) {
  const void *parts[2] = { head, payload };
  size_t lens[2] = { MAGIC + KEY + LEN, len };
  hmac_sha256(secret, 32, 2, parts, lens, tag);
}

static int same_tag(const unsigned char *a, const unsigned char *b) {
  unsigned char d = 0;
  for (int i = 0; i < TAG; i++) d |= a[i] ^ b[i];
  return d == 0;
}

static void path_of(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                    char *out, size_t size) {
  char name[48];
  diskcache_name(kind, key, name);
  snprintf(out, size, "%s/%s", c->dir, name);
}

/* The whole file, when it is a regular file of ours of at most max bytes. */
static unsigned char *slurp(const char *path, size_t max, size_t *len, int *exists) {
  *exists = 0;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *exists = errno != ENOENT;
    return NULL;
  }
  *exists = 1;
  struct stat st;
  unsigned char *b = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
      st.st_size >= HEADER && (uint64_t)st.st_size <= (uint64_t)max + HEADER) {
    b = malloc((size_t)st.st_size);
    if (b != NULL && read_full(fd, b, (size_t)st.st_size) != 0) {
      free(b);
      b = NULL;
    }
    *len = (size_t)st.st_size;
  }
  close(fd);
  return b;
}

unsigned char *diskcache_read(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                              size_t max, size_t *len) {
  char path[DISKCACHE_PATH + 64];
  path_of(c, kind, key, path, sizeof path);
  size_t n = 0;
  int exists;
  unsigned char *b = slurp(path, max, &n, &exists);
  if (b == NULL) {
    if (exists) unlink(path);   /* truncated, too big, a link, not ours: rebuilt */
    return NULL;
  }
  unsigned char m[MAGIC], tag[TAG];
  magic_of(kind, m);
  int ok = memcmp(b, m, MAGIC) == 0 && memcmp(b + MAGIC, key, KEY) == 0 &&
           get_u64(b + MAGIC + KEY) == n - HEADER;
  if (ok) {
    seal(c->secret, b, b + HEADER, n - HEADER, tag);
    ok = same_tag(tag, b + MAGIC + KEY + LEN);
  }
  if (!ok) {
    free(b);
    unlink(path);
    return NULL;
  }
  memmove(b, b + HEADER, n - HEADER);
  *len = n - HEADER;
  utimes(path, NULL);   /* used: the last to be evicted */
  return b;
}

/* ---- the size bound */

typedef struct {
  char path[DISKCACHE_PATH + 64];
  off_t size;
  struct timespec mtime;
  diskcache_kind kind;
} entry;

typedef struct {
  entry *v;
  int n, cap;
  int64_t total;
} listing;

static int64_t limit_bytes(void) {
  return (int64_t)(setting_number("LACC_CACHE_MB", 512, 0, 1 << 24, 0) * 1048576.0);
}

static int is_hex(const char *s, int n) {
  for (int i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

/* lacc's own names: k<32 hex>.kso and <32 hex>.clbin. */
static int our_name(diskcache_kind kind, const char *name) {
  size_t n = strlen(name);
  if (kind == DC_KERNEL)
    return n == 37 && name[0] == 'k' && is_hex(name + 1, 32) && strcmp(name + 33, ".kso") == 0;
  return n == 38 && is_hex(name, 32) && strcmp(name + 32, ".clbin") == 0;
}

static int our_magic(const char *path, diskcache_kind kind) {
  unsigned char m[MAGIC], got[MAGIC];
  magic_of(kind, m);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  int ok = read_full(fd, got, MAGIC) == 0 && memcmp(got, m, MAGIC) == 0;
  close(fd);
  return ok;
}

static void add(listing *l, const char *path, const struct stat *st, diskcache_kind kind) {
  if (vec_reserve(&l->v, &l->cap, l->n + 1, 64, sizeof *l->v) != 0) return;
  entry *x = &l->v[l->n++];
  snprintf(x->path, sizeof x->path, "%s", path);
  x->size = st->st_size;
  x->mtime = st->st_mtim;
  x->kind = kind;
  l->total += st->st_size;
}

static int claim_stale(const char *path, double limit_s);

/* Whether name is a claim on one of kind's files ("<our name>.building"). */
static int claim_name(diskcache_kind kind, const char *name) {
  size_t n = strlen(name);
  char base[64];
  if (n <= 9 || n - 9 >= sizeof base || strcmp(name + n - 9, ".building") != 0) return 0;
  memcpy(base, name, n - 9);
  base[n - 9] = '\0';
  return our_name(kind, base);
}

/* Files of kind in dir into l (by name: the magic is checked before one is deleted);
 * temporary files a dead writer left are removed, and so are claims whose builder is
 * gone (a process killed midway: its claim would otherwise wait for a taker). */
static void scan(const char *dir, diskcache_kind kind, listing *l) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  time_t now = time(NULL);
  while ((e = readdir(d)) != NULL) {
    char path[DISKCACHE_PATH + 64];
    struct stat st;
    int mine = our_name(kind, e->d_name), tmp = strncmp(e->d_name, TMP_PREFIX, 10) == 0;
    if (!mine && !tmp && claim_name(kind, e->d_name)) {
      if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
          claim_stale(path, STALE_SECONDS))
        unlink(path);
      continue;
    }
    if (!mine && !tmp) continue;
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
        lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
      continue;
    if (tmp) {
      if (now - st.st_mtim.tv_sec > STALE_SECONDS) unlink(path);
    } else {
      add(l, path, &st, kind);
    }
  }
  closedir(d);
}

static int older(const void *a, const void *b) {
  const struct timespec *x = &((const entry *)a)->mtime, *y = &((const entry *)b)->mtime;
  if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
  return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* What the last scan found, plus what this process wrote since: while that stays under
 * the bound, a write needs no scan (a scan reads every entry: the suite's 6,000 kernels
 * made scanning on every write cost minutes). Writes of other processes are seen at the
 * next scan, at most RESCAN_SECONDS later. */
#define RESCAN_SECONDS 10
static struct {
  pthread_mutex_t lock;
  char base[DISKCACHE_PATH];
  int64_t total;
  struct timespec at;
} estimate = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int fits_estimate(const diskcache *c, int64_t reserve, int64_t limit) {
  pthread_mutex_lock(&estimate.lock);
  int fits = strcmp(estimate.base, c->base) == 0 && estimate.at.tv_sec != 0 &&
             seconds_since(&estimate.at) < RESCAN_SECONDS && estimate.total + reserve <= limit;
  if (fits) estimate.total += reserve;
  pthread_mutex_unlock(&estimate.lock);
  return fits;
}

static void set_estimate(const diskcache *c, int64_t total) {
  pthread_mutex_lock(&estimate.lock);
  snprintf(estimate.base, sizeof estimate.base, "%s", c->base);
  estimate.total = total;
  clock_gettime(CLOCK_MONOTONIC, &estimate.at);
  pthread_mutex_unlock(&estimate.lock);
}

/* Evicts the least recently used files until `reserve` more bytes fit under the bound;
 * with `free_at_least`, until that many bytes are gone too (a full disk). Returns whether
 * the reserve fits. Only files with lacc's magic are deleted; others are not counted. */
static int make_room(const diskcache *c, int64_t reserve, int64_t free_at_least) {
  int64_t limit = limit_bytes(), freed = 0;
  if (free_at_least == 0 && fits_estimate(c, reserve, limit)) return 1;
  char cl[DISKCACHE_PATH + 16];
  snprintf(cl, sizeof cl, "%s/opencl", c->base);
  listing l = { 0 };
  scan(c->base, DC_KERNEL, &l);
  scan(cl, DC_CLBIN, &l);
  if (l.n > 1) qsort(l.v, (size_t)l.n, sizeof *l.v, older);
  for (int i = 0; i < l.n && (l.total + reserve > limit || freed < free_at_least); i++) {
    if (!our_magic(l.v[i].path, l.v[i].kind)) {
      l.total -= l.v[i].size;   /* a user's file under a name like ours: not ours to count */
    } else if (unlink(l.v[i].path) == 0) {
      l.total -= l.v[i].size;
      freed += l.v[i].size;
    }
  }
  free(l.v);
  int fits = l.total + reserve <= limit;
  set_estimate(c, fits ? l.total + reserve : l.total);
  return fits;
}

/* Writes the sealed file through a temporary one renamed over path, so that a reader in
 * another process sees the old file or the whole new one. 0, or errno. */
static int write_sealed(const diskcache *c, const char *path, const unsigned char *head,
                        const void *payload, size_t len) {
  static atomic_uint counter;
  char tmp[DISKCACHE_PATH + 64];
  snprintf(tmp, sizeof tmp, "%s/" TMP_PREFIX "%ld-%u", c->dir, (long)getpid(),
           (unsigned)atomic_fetch_add(&counter, 1));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errno ? errno : EIO;
  int err = 0;
  if (write_full(fd, head, HEADER) != 0 || write_full(fd, payload, len) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp, path) != 0) err = errno;
  if (err != 0) unlink(tmp);
  return err;
}

void diskcache_write(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                     const void *payload, size_t len) {
  char path[DISKCACHE_PATH + 64];
  path_of(c, kind, key, path, sizeof path);
  unsigned char head[HEADER];
  magic_of(kind, head);
  memcpy(head + MAGIC, key, KEY);
  put_u64(head + MAGIC + KEY, len);
  seal(c->secret, head, payload, len, head + MAGIC + KEY + LEN);
  if (!make_room(c, HEADER + (int64_t)len, 0)) return;   /* larger than the whole bound */
  int err = write_sealed(c, path, head, payload, len);
  if (err == ENOSPC || err == EDQUOT) {
    make_room(c, HEADER + (int64_t)len, 2 * (HEADER + (int64_t)len));
    err = write_sealed(c, path, head, payload, len);
  }
  if (err != 0) {
    char key_text[300];
    snprintf(key_text, sizeof key_text, "cache write %.280s", c->dir);
    warn_once(key_text, "cannot write to the kernel cache %s (%s); kernels are kept for this "
              "process only", c->dir, strerror(err));
  }
}

/* ---- builds in flight: one process builds a file, the others wait for it
 *
 * Processes that start together (MPI ranks on one machine, a test suite's parallel
 * runs) miss the cache for the same kernels at the same moment; without a claim each
 * compiled every kernel itself. The claim is a file beside the one it promises,
 * "<name>.building", holding "<host> <pid>"; it is stale when that process is gone (on
 * this host) or it is older than the build's time limit (any host). */

void diskcache_claim_path(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                          char *out, size_t size) {
  char path[DISKCACHE_PATH + 64];
  path_of(c, kind, key, path, sizeof path);
  snprintf(out, size, "%s.building", path);
}

/* Whether the claim at path was left by a process that no longer builds. */
static int claim_stale(const char *path, double limit_s) {
  struct stat st;
  if (lstat(path, &st) != 0) return 0;
  if (!S_ISREG(st.st_mode) || difftime(time(NULL), st.st_mtime) > limit_s) return 1;
  char text[320], host[256], me[256];
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  long pid = 0;
  if (n <= 0) return 0;   /* being written */
  text[n] = '\0';
  if (sscanf(text, "%255s %ld", host, &pid) != 2 || pid <= 0) return 1;
  if (gethostname(me, sizeof me) != 0) return 0;
  me[sizeof me - 1] = '\0';
  return strcmp(host, me) == 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int diskcache_claim(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                    double limit_s) {
  char path[DISKCACHE_PATH + 80];
  diskcache_claim_path(c, kind, key, path, sizeof path);
  for (int tries = 0; tries < 2; tries++) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      char me[256], text[320];
      if (gethostname(me, sizeof me) != 0) snprintf(me, sizeof me, "?");
      me[sizeof me - 1] = '\0';
      int n = snprintf(text, sizeof text, "%s %ld\n", me, (long)getpid());
      int ok = n > 0 && write_full(fd, text, (size_t)n) == 0;
      close(fd);
      if (!ok) {
        unlink(path);
        return -1;
      }
      return 1;
    }
    if (errno != EEXIST) return -1;
    if (!claim_stale(path, limit_s)) return 0;
    unlink(path);   /* its builder is gone: take it over */
  }
  return -1;
}

void diskcache_release(const diskcache *c, diskcache_kind kind, const unsigned char key[32]) {
  char path[DISKCACHE_PATH + 80];
  diskcache_claim_path(c, kind, key, path, sizeof path);
  unlink(path);
}

unsigned char *diskcache_wait(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                              size_t max, size_t *len, double limit_s, int (*stop)(void *),
                              void *arg) {
  char path[DISKCACHE_PATH + 80];
  diskcache_claim_path(c, kind, key, path, sizeof path);
  struct timespec pause = { 0, 2000000 };   /* 2 ms, doubling up to 32 */
  for (;;) {
    unsigned char *b = diskcache_read(c, kind, key, max, len);
    if (b != NULL) return b;
    struct stat st;
    if (lstat(path, &st) != 0)   /* the claim ended: the file is there, or never will be */
      return diskcache_read(c, kind, key, max, len);
    if (claim_stale(path, limit_s) || (stop != NULL && stop(arg))) return NULL;
    nanosleep(&pause, NULL);
    if (pause.tv_nsec < 32000000) pause.tv_nsec *= 2;
  }
}

/* ---- private temporary directories */

int private_tmpdir(char *out, size_t size) {
  const char *t = getenv("TMPDIR");
  const char *where[] = { t != NULL && *t == '/' ? t : NULL, "/tmp", "/dev/shm", "/var/tmp" };
  for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
    if (where[i] == NULL) continue;
    int n = snprintf(out, size, "%s/lacc-XXXXXX", where[i]);
    if (n > 0 && (size_t)n < size && mkdtemp(out) != NULL) return 0;
  }
  return -1;
}

void private_tmpdir_remove(const char *dir) {
  DIR *d = opendir(dir);
  if (d != NULL) {
    struct dirent *e;
    char path[DISKCACHE_PATH + 300];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}
