/* cpu.c: the CPU backend: a plan's C compiled by the system compiler, run on the pool.
 *
 * Owns: compiling a plan's translation unit (`cc`, or LACC_CC with LACC_CFLAGS) in a
 * private temporary directory, under a time limit (LACC_CC_TIMEOUT), the kernel caches
 * (in memory, process-wide under a lock; on disk through diskcache.c, keyed by a hash of
 * source, compiler and flags, loaded only after the sealed file checks out), and executing a plan:
 * shapes, allocation, parallel loops, fold partials, run-time checks raised as errors
 * after the kernel that failed, release of intermediates after their last use.
 * Must not: lower or print code (lower.c, emit_c.c) or decide what fuses.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cpu/cpu.h"
#include "kir/backend.h"
#include "base/diskcache.h"
#include "cpu/pool.h"
#include "base/settings.h"

#include "kir/kabi.h"

LACC_KABI(LACC_KABI_DECLARE)
typedef lacc_kslot kslot;
typedef void (*kfn_ptr)(const kslot *, lacc_krt *, int64_t, int64_t, int64_t, int64_t, int64_t *);

/* A run's failure record: the kernels see its first member only. */
typedef struct {
  lacc_krt abi;
  pthread_mutex_t lock;
  int failed;
  int64_t key;
  int check;
  int64_t vals[2 * LACC_MAX_RANK];
  int nvals;
} krt;

/* ---- compiling and caching */

typedef struct loaded {
  unsigned char key[32];
  void *dl;
  struct loaded *next;
} loaded;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static loaded *cache;                 /* kernels stay loaded for the life of the process */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int have_compiler;

/* Largest kernel file read back from the cache; anything bigger is not ours. */
#define MAX_SO ((size_t)256 << 20)
/* Words of LACC_CFLAGS: more is a mistake (a file pasted in), not a set of flags. */
#define MAX_FLAG_WORDS 256

/* The compiler and its flags in force (LACC_CC, LACC_CFLAGS or lacc_config_set), into out. */
void cpu_cc(char *out, size_t cap) {
  if (!setting_text("LACC_CC", out, cap)) snprintf(out, cap, "cc");
}

void cpu_cflags(char *out, size_t cap) {
  if (!setting_text("LACC_CFLAGS", out, cap)) snprintf(out, cap, "-O3 -march=native");
}

/* Flags lacc's semantics depend on: no contraction into fma (results must equal the
 * interpreter's), no errno (lets sqrt be one instruction). */
static const char *const fixed_flags[] = { "-std=c11", "-ffp-contract=off", "-fno-math-errno",
                                           "-fPIC", "-shared" };
enum { NFIXED = sizeof fixed_flags / sizeof *fixed_flags };

extern char **environ;

/* Splits flags at blanks into a NULL-terminated argv with room for `extra` more words;
 * NULL when out of memory or past MAX_FLAG_WORDS (told once). */
static char **split_flags(char *flags, int extra, int *n) {
  int words = 0;
  for (const char *p = flags; *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (*p) words++;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
  }
  if (words > MAX_FLAG_WORDS) {
    warn_once("setting LACC_CFLAGS", "ignoring LACC_CFLAGS: %d words, more than %d; using "
              "the default, -O3 -march=native", words, MAX_FLAG_WORDS);
    strcpy(flags, "-O3 -march=native");   /* flags holds more than 2 * MAX_FLAG_WORDS bytes */
    words = 2;
  }
  char **argv = malloc(sizeof *argv * (size_t)(words + extra + 1));
  if (argv == NULL) return NULL;
  char *save = NULL;
  *n = 0;
  for (char *w = strtok_r(flags, " \t\n", &save); w != NULL; w = strtok_r(NULL, " \t\n", &save))
    argv[(*n)++] = w;
  return argv;
}

/* Seconds a compiler may take before it is taken for hung and killed. */
static double cc_timeout(void) {
  return setting_number("LACC_CC_TIMEOUT", 600, 1, 1e6, 0);
}

/* Waits for pid until the deadline (seconds from now; <= 0: for ever) or until ctx is
 * asked to stop (a SIGINT: the compiler runs in a process group of its own, which the
 * terminal's ^C does not reach); then kills its process group. The exit status, -1 on a
 * failure, -2 past the deadline, -3 when stopped. */
static int wait_for(pid_t pid, double deadline, lacc_ctx *ctx) {
  struct timespec t0, nap = { 0, 1000000 };
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int st;
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (w < 0 && errno != EINTR) return -1;
    int late = deadline > 0 && seconds_since(&t0) > deadline;
    int stop = ctx != NULL && run_stopped(ctx);
    if (late || stop) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
      return late ? -2 : -3;
    }
    nanosleep(&nap, NULL);
    if (nap.tv_nsec < 20000000) nap.tv_nsec += nap.tv_nsec / 2;   /* 1 ms growing to 20 */
  }
}

/* Runs argv (no shell: nothing to quote) in a process group of its own (so that a hung
 * compiler and its subprocesses can be killed together) with stdout and stderr to `log`
 * and the caller's environment minus LD_PRELOAD, which sanitizer runs use for the host
 * process only. Returns the exit status, -1, or -2 past the deadline (see wait_for). */
static int run_tool(char *const argv[], const char *log, double deadline, lacc_ctx *ctx) {
  int nenv = 0;
  while (environ[nenv] != NULL) nenv++;
  char **env = malloc(sizeof *env * (size_t)(nenv + 1));
  if (env == NULL) return -1;
  int k = 0;
  for (int i = 0; i < nenv; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0) env[k++] = environ[i];
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
      posix_spawnp(&pid, argv[0], &fa, &attr, argv, env) == 0)
    rc = wait_for(pid, deadline, ctx);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  free(env);
  return rc;
}

static void probe(void) {
  char cc[SETTING_MAX];
  cpu_cc(cc, sizeof cc);
  char *argv[] = { cc, "--version", NULL };
  have_compiler = run_tool(argv, "/dev/null", cc_timeout(), NULL) == 0;
  if (!have_compiler)
    fprintf(stderr, "lacc: no C compiler ('%s' failed); the cpu backend runs the interpreter "
            "(set LACC_CC to a compiler)\n", cc);
}

int cpu_available(void) {
  pthread_once(&probe_once, probe);
  return have_compiler;
}

/* A kernel file's lacc_kernel_id must be the one asked for: a last check that the code
 * loaded is the code compiled (the file was verified before anything of it ran). */
static void *open_checked(const char *path, const char *id) {
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (dl == NULL) return NULL;
  const char *got = dlsym(dl, "lacc_kernel_id");
  if (got == NULL || strcmp(got, id) != 0) {
    dlclose(dl);
    return NULL;
  }
  return dl;
}

static char *read_log(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return NULL;
  char *s = calloc(1, 2048);
  if (s != NULL) {
    size_t n = fread(s, 1, 2047, f);
    s[n] = '\0';
  }
  fclose(f);
  return s;
}

/* The whole of a file we just wrote, for the disk cache; NULL if it cannot be read. */
static unsigned char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  unsigned char *b = NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n > 0 && (size_t)n <= MAX_SO && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n)) != NULL &&
      fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = b != NULL ? (size_t)n : 0;
  return b;
}

static int write_file(const char *path, const void *p, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "wb");
  if (f == NULL) {
    close(fd);
    return -1;
  }
  int ok = fwrite(p, 1, n, f) == n;
  return fclose(f) == 0 && ok ? 0 : -1;
}

static int compile_failed(lacc_ctx *ctx, int rc, const char *logfile) {
  if (rc == -3) return run_interrupted(ctx);
  if (rc == -2)
    return ctx_error(ctx, LACC_ERR_BACKEND, "cpu: the C compiler did not finish within %g s "
                     "(LACC_CC_TIMEOUT) and was stopped", cc_timeout());
  char *log = read_log(logfile);
  char mine[8];
  ctx_error(ctx, LACC_ERR_BACKEND, "cpu: the C compiler failed on generated code%s:\n%.700s",
            setting_text("LACC_CFLAGS", mine, sizeof mine) ? " (check LACC_CFLAGS)" : "",
            log != NULL ? log : "");
  free(log);
  return LACC_ERR_BACKEND;
}

/* Compiles src in the private directory tmp into tmp/k.so, loads it, and gives its bytes
 * for the disk cache. */
/* An optimisation level that overrides the flags' for a program whose kernels would take
 * an optimising C compiler too long: past LACC_OPT_SOURCE bytes of C, -O0 (gcc: minutes
 * at -O3); by default (no LACC_CFLAGS), -O2 where a loop has more than LONG_LOOP
 * operations: gcc's vectorisers at -O3 grow faster than the code (a map of 2000
 * floating-point operations in one chain: 4.3 s at -O3, 1.2 s at -O2; 1000: 1.4 s and
 * 0.5 s; the benchmarks' longest loops have 36 to 482). NULL: the flags as they are. */
enum { LONG_LOOP = 800 };
static const char *opt_level(const char *src, int64_t longest) {
  if (strlen(src) > LACC_OPT_SOURCE) {
    warn_once("big kernels", "a program's kernels come to %.1f MB of C: compiled without "
              "optimisation (-O0), which a C compiler finishes in seconds",
              (double)strlen(src) / 1048576.0);
    return "-O0";
  }
  char flags[SETTING_MAX];
  if (longest > LONG_LOOP && !setting_text("LACC_CFLAGS", flags, sizeof flags)) return "-O2";
  return NULL;
}

static int build(lacc_ctx *ctx, const char *tmp, const char *src, int64_t longest,
                 const char *level, const char *id, void **dl, unsigned char **bytes,
                 size_t *len) {
  char cfile[4200], sofile[4200], logfile[4200];
  snprintf(cfile, sizeof cfile, "%s/k.c", tmp);
  snprintf(sofile, sizeof sofile, "%s/k.so", tmp);
  snprintf(logfile, sizeof logfile, "%s/k.log", tmp);
  FILE *f = fopen(cfile, "w");
  if (f == NULL) return ctx_error(ctx, LACC_ERR_BACKEND, "cpu: cannot write %s", cfile);
  int ok = fputs(src, f) >= 0 && fprintf(f, "\nconst char lacc_kernel_id[] = \"%s\";\n", id) > 0;
  ok = fclose(f) == 0 && ok;
  if (!ok) return ctx_error(ctx, LACC_ERR_BACKEND, "cpu: cannot write %s (%s)", cfile, strerror(errno));
  char cc[SETTING_MAX], cflags[SETTING_MAX];
  cpu_cc(cc, sizeof cc);
  cpu_cflags(cflags, sizeof cflags);
  char *flags = strdup(cflags);
  int n = 0;
  char **argv = flags != NULL ? split_flags(flags, NFIXED + 7, &n) : NULL;
  if (argv == NULL) {
    free(flags);
    return ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
  }
  memmove(argv + 1, argv, sizeof *argv * (size_t)n);
  argv[0] = cc;
  n++;
  if (level != NULL) argv[n++] = (char *)level;   /* after the user's flags: the last -O counts */
  for (int i = 0; i < NFIXED; i++) argv[n++] = (char *)fixed_flags[i];
  argv[n++] = "-o";
  argv[n++] = sofile;
  argv[n++] = cfile;
  argv[n++] = "-lm";
  argv[n] = NULL;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  run_begin(ctx);   /* a SIGINT while the compiler runs stops it */
  int rc = run_tool(argv, logfile, cc_timeout(), ctx);
  run_end(ctx);
  free(argv);
  free(flags);
  if (rc != 0) return compile_failed(ctx, rc, logfile);
  if (verbose()) {
    char *log = read_log(logfile);
    fprintf(stderr, "lacc: compiled kernels (%zu bytes of C, the longest loop %lld "
            "operations%s%s) in %.2f s%s%s\n", strlen(src), (long long)longest,
            level != NULL ? ", at " : "", level != NULL ? level : "", seconds_since(&t0),
            log != NULL && *log ? ":\n" : "", log != NULL ? log : "");
    free(log);
  }
  *bytes = read_file(sofile, len);
  *dl = open_checked(sofile, id);
  if (*dl == NULL)
    return ctx_error(ctx, LACC_ERR_BACKEND, "cpu: cannot load the compiled kernels: %s", dlerror());
  return LACC_OK;
}

/* Loads verified bytes from the disk cache: copied into a private directory and opened
 * there (never mapped from the cache itself, which another process may be replacing).
 * NULL when that fails; the kernel is then rebuilt. */
static void *load_bytes(const char *tmp, const unsigned char *bytes, size_t len, const char *id) {
  char sofile[4200];
  snprintf(sofile, sizeof sofile, "%s/k.so", tmp);
  void *dl = write_file(sofile, bytes, len) == 0 ? open_checked(sofile, id) : NULL;
  if (dl == NULL) unlink(sofile);   /* the build writes its own */
  return dl;
}

static void remember(const unsigned char key[32], void *dl) {
  loaded *l = malloc(sizeof *l);
  if (l == NULL) return;   /* still loaded and usable; only the next lookup misses */
  memcpy(l->key, key, 32);
  l->dl = dl;
  pthread_mutex_lock(&cache_lock);
  l->next = cache;
  cache = l;
  pthread_mutex_unlock(&cache_lock);
}

static void *lookup(const unsigned char key[32]) {
  void *dl = NULL;
  pthread_mutex_lock(&cache_lock);
  for (loaded *l = cache; l != NULL && dl == NULL; l = l->next)
    if (memcmp(l->key, key, 32) == 0) dl = l->dl;
  pthread_mutex_unlock(&cache_lock);
  return dl;
}

static int cpu_load(lacc_ctx *ctx, const char *src, int64_t longest, void **out) {
  if (source_size_check(ctx, "cpu", "C", strlen(src)) != LACC_OK) return ctx->errcode;
  char cc[SETTING_MAX], cflags[SETTING_MAX];
  cpu_cc(cc, sizeof cc);
  cpu_cflags(cflags, sizeof cflags);
  const char *level = opt_level(src, longest);
  const char *parts[4] = { src, cc, cflags, level != NULL ? level : "" };
  unsigned char key[32];
  diskcache_key(4, parts, key);
  char id[48];
  diskcache_name(DC_KERNEL, key, id);
  id[33] = '\0';   /* "k<hex>" */
  if ((*out = lookup(key)) != NULL) return LACC_OK;
  char tmp[4096];
  if (private_tmpdir(tmp, sizeof tmp) != 0)
    return ctx_error(ctx, LACC_ERR_BACKEND, "cpu: cannot make a private directory to compile "
                     "in (TMPDIR, /tmp, /dev/shm): %s", strerror(errno));
  diskcache dc;
  int disk = diskcache_open(DC_KERNEL, &dc) == 0;
  size_t len = 0;
  unsigned char *bytes = disk ? diskcache_read(&dc, DC_KERNEL, key, MAX_SO, &len) : NULL;
  void *dl = bytes != NULL ? load_bytes(tmp, bytes, len, id) : NULL;
  int rc = LACC_OK;
  if (dl == NULL) {
    free(bytes);
    bytes = NULL;
    rc = build(ctx, tmp, src, longest, level, id, &dl, &bytes, &len);   /* its k.so replaces a copy that failed */
    if (rc == LACC_OK && disk && bytes != NULL) diskcache_write(&dc, DC_KERNEL, key, bytes, len);
  }
  free(bytes);
  private_tmpdir_remove(tmp);
  if (rc != LACC_OK) return rc;
  lib_pin();   /* the cache below outlives any one Lua state */
  remember(key, dl);
  *out = dl;
  return LACC_OK;
}

static int cpu_resolve(lacc_ctx *ctx, void *dl, int nfns, void **fns) {
  for (int k = 0; k < nfns; k++) {
    char name[32];
    snprintf(name, sizeof name, "lacc_f%d", k);
    fns[k] = dlsym(dl, name);
    if (fns[k] == NULL) return ctx_error(ctx, LACC_ERR_BACKEND, "cpu: %s missing", name);
  }
  return LACC_OK;
}

/* ---- run-time checks */

static void rt_fail(lacc_krt *abi, int64_t key, int check, const int64_t *vals, int n) {
  krt *rt = (krt *)abi;
  pthread_mutex_lock(&rt->lock);
  if (!rt->failed || key < rt->key) {
    rt->failed = 1;
    rt->key = key;
    rt->check = check;
    rt->nvals = n > 2 * LACC_MAX_RANK ? 2 * LACC_MAX_RANK : n;
    for (int i = 0; i < rt->nvals; i++) rt->vals[i] = vals[i];
  }
  pthread_mutex_unlock(&rt->lock);
}

static int raise_check(lacc_ctx *ctx, const kplan *P, const krt *rt) {
  return plan_check_error(ctx, P, rt->check, rt->vals);
}

/* ---- running a plan */

typedef struct {
  const kslot *S;
  lacc_krt *rt;
  kfn_ptr fn;
  int64_t n, nchunks;
  int64_t seg;              /* FN_PART: the segment */
} launch;

static int64_t chunk_lo(const launch *l, int64_t c) {
  return (int64_t)((__int128)l->n * c / l->nchunks);
}

static void run_range(void *arg, int64_t c) {
  launch *l = arg;
  l->fn(l->S, l->rt, chunk_lo(l, c), chunk_lo(l, c + 1), 0, 0, NULL);
}

static void run_part(void *arg, int64_t c) {
  launch *l = arg;
  l->fn(l->S, l->rt, l->seg, chunk_lo(l, c), chunk_lo(l, c + 1), c, NULL);
}

#define GRAIN 4096
#define PART_GRAIN 32768
/* The most elements of a chunk: a run stops (lacc_interrupt, SIGINT) only between
 * chunks; 2^14 elements take microseconds of simple code, milliseconds of heavy code
 * (a loop per element), and each chunk costs about as much as a few elements. */
#define CHUNK_MOST (1 << 14)
/* The most fold and scan partials of a row (their memory: 2^16 elements). */
#define PARTS_MOST (1 << 16)

/* Chunks for n elements: one below a grain (no thread hand-off for small work),
 * else several per thread so uneven elements balance, and none past CHUNK_MOST. */
static int64_t chunks_for(int64_t n, int64_t grain) {
  if (n <= grain) return 1;
  int64_t c = (int64_t)pool_threads() * 8;
  if (c < n / CHUNK_MOST) c = n / CHUNK_MOST;
  return n / grain < c ? n / grain : c;
}

/* Partials of a row of n elements (n >= 2 * PART_GRAIN): a few per thread, more for a
 * long row so that it reaches a chunk boundary often. */
static int64_t parts_for(int64_t n) {
  int64_t c = (int64_t)pool_threads() * 4;
  if (c < n / CHUNK_MOST) c = n / CHUNK_MOST < PARTS_MOST ? n / CHUNK_MOST : PARTS_MOST;
  return n / PART_GRAIN < c ? n / PART_GRAIN : c;
}

static void parallel(const kslot *S, lacc_krt *rt, kfn_ptr fn, int64_t n) {
  launch l = { S, rt, fn, n, chunks_for(n, GRAIN), 0 };
  pool_run(l.nchunks, run_range, &l);
}

/* A run's state: every slot's array (a reference each) and its view for the kernels. */
typedef struct {
  lacc_ctx *ctx;
  const kplan *P;
  kfn_ptr *fns;
  kslot *S;
  lacc_array **arrays;
  krt rt;
} exec;

/* Slot s holds a (the reference passes to the slot). */
static int set_slot(exec *E, int s, lacc_array *a) {
  lacc_array_release(E->arrays[s]);
  E->arrays[s] = a;
  E->S[s].buf = a->buf;
  E->S[s].ext = a->extent;
  E->S[s].size = a->size;
  return LACC_OK;
}

static int alloc_out(exec *E, const pstep *st, int slot, const int64_t *ext) {
  const pslot *s = &E->P->slots[slot];
  lacc_array *a = array_alloc_out(E->ctx, s->type, s->rank, ext, s->plan);
  if (a == NULL) return node_alloc_error(E->ctx, st->node);
  return set_slot(E, slot, a);
}

/* After a kernel: its failed check, or the interruption that cut it short (its output
 * is then incomplete, and is never handed out). */
static int checked(exec *E) {
  if (E->rt.failed) return raise_check(E->ctx, E->P, &E->rt);
  return run_stopped(E->ctx) ? run_interrupted(E->ctx) : LACC_OK;
}

static int run_fold(exec *E, const pstep *st, int64_t inner) {
  int64_t R = E->S[st->out].size, n = inner;
  if (!st->with_z && n == 0 && R > 0)
    return err_fold1_empty(E->ctx, st->node->where);
  int threads = pool_threads();
  if (R == 0) return LACC_OK;
  /* Partials split a segment over the threads; with per-lane accumulators (st->lanes)
   * they also pay on one thread, and for a few long segments. */
  int part = n >= 2 * PART_GRAIN && !st->ordered &&
             ((R < threads && threads > 1) || (st->lanes && R <= 4 * threads));
  int64_t J = st->rank > 0 ? E->S[st->out].ext[st->rank - 1] : 0;
  if (!part && st->fn_tile >= 0 && J >= st->tile_lanes) {
    /* tiles of tile_lanes outputs, one per vector lane (lower_tile.c) */
    int64_t lw = st->tile_lanes, rows = st->tile_rows;
    int64_t tiles = (R / J + rows - 1) / rows * ((J + lw - 1) / lw);
    launch l = { E->S, &E->rt.abi, E->fns[st->fn_tile], tiles, chunks_for(R * (n + 1), GRAIN), 0 };
    if (l.nchunks > tiles) l.nchunks = tiles;
    pool_run(l.nchunks, run_range, &l);
    return checked(E);
  }
  if (!part) {
    launch l = { E->S, &E->rt.abi, E->fns[st->fn_body], R, chunks_for(R * (n + 1), GRAIN), 0 };
    if (l.nchunks > R) l.nchunks = R;
    pool_run(l.nchunks, run_range, &l);
    return checked(E);
  }
  int64_t nch = parts_for(n);
  int64_t one = nch;
  int rc = alloc_out(E, st, st->partial, &one);
  if (rc != LACC_OK) return rc;
  for (int64_t o = 0; o < R && rc == LACC_OK; o++) {
    launch l = { E->S, &E->rt.abi, E->fns[st->fn_part], n, nch, o };
    pool_run(nch, run_part, &l);
    if (run_stopped(E->ctx)) break;   /* partials missing: nothing to combine */
    E->fns[st->fn_combine](E->S, &E->rt.abi, o, nch, 0, 0, NULL);
    rc = checked(E);
  }
  if (rc == LACC_OK) rc = checked(E);
  lacc_array_release(E->arrays[st->partial]);
  E->arrays[st->partial] = NULL;
  return rc;
}

/* Scans: rows in parallel, each in order; a few long rows instead in three passes over
 * chunks (reduce each chunk, turn the partials into carries in order, scan each chunk
 * from its carry), which needs only associativity. */
static int run_scan(exec *E, const pstep *st, int64_t n) {
  int64_t m = E->S[st->out].ext[st->rank - 1];
  int64_t R = m > 0 ? E->S[st->out].size / m : 0;
  int threads = pool_threads();
  if (R == 0) return LACC_OK;
  if (R >= threads || n < 2 * PART_GRAIN || threads == 1 || st->ordered) {
    launch l = { E->S, &E->rt.abi, E->fns[st->fn_body], R, chunks_for(R * (n + 1), GRAIN), 0 };
    if (l.nchunks > R) l.nchunks = R;
    pool_run(l.nchunks, run_range, &l);
    return checked(E);
  }
  int64_t nch = parts_for(n);
  int rc = alloc_out(E, st, st->partial, &nch);
  if (rc != LACC_OK) return rc;
  for (int64_t o = 0; o < R && rc == LACC_OK; o++) {
    launch l = { E->S, &E->rt.abi, E->fns[st->fn_part], n, nch, o };
    pool_run(nch, run_part, &l);
    rc = checked(E);
    if (rc != LACC_OK) break;
    E->fns[st->fn_combine](E->S, &E->rt.abi, o, nch, 0, 0, NULL);
    l.fn = E->fns[st->fn_chunk];
    pool_run(nch, run_part, &l);
    rc = checked(E);
  }
  lacc_array_release(E->arrays[st->partial]);
  E->arrays[st->partial] = NULL;
  return rc;
}

/* Below this many targets, threads would mostly contend for the same cache lines. */
#define PERMUTE_SPREAD (1 << 16)

static int private_off(void) {
  return !setting_switch("LACC_PRIVATE", 1);
}

static void run_private(void *arg, int64_t c) {   /* private copy c of a permute */
  launch *l = arg;
  l->fn(l->S, l->rt, chunk_lo(l, c), chunk_lo(l, c + 1), 0, c, NULL);
}

static void run_merge(void *arg, int64_t c) {     /* targets, from seg copies */
  launch *l = arg;
  l->fn(l->S, l->rt, chunk_lo(l, c), chunk_lo(l, c + 1), l->seg, 0, NULL);
}

/* A permute with one commutative primitive onto few targets: each thread scatters its
 * share of the source into a private copy of the targets (no contention, no atomics),
 * then the copies are combined into the defaults in parallel over the targets. */
static int permute_private(exec *E, const pstep *st, int64_t nsrc) {
  int64_t n = E->S[st->out].size, copies = pool_threads();
  if (copies > nsrc / GRAIN) copies = nsrc / GRAIN > 1 ? nsrc / GRAIN : 1;
  int64_t ext = copies * (n + LACC_PRIVATE_GAP);
  int rc = alloc_out(E, st, st->partial, &ext);
  if (rc != LACC_OK) return rc;
  launch l = { E->S, &E->rt.abi, E->fns[st->fn_pscatter], nsrc, copies, 0 };
  pool_run(copies, run_private, &l);
  rc = checked(E);
  if (rc == LACC_OK) {
    launch m = { E->S, &E->rt.abi, E->fns[st->fn_pmerge], n, chunks_for(n * copies, GRAIN), copies };
    pool_run(m.nchunks, run_merge, &m);
    rc = checked(E);
  }
  lacc_array_release(E->arrays[st->partial]);
  E->arrays[st->partial] = NULL;
  return rc;
}

/* Permute: the defaults copied in parallel, then the source scattered: in parallel when
 * each element is one scalar and the targets are many (the kernel updates them with
 * compare-and-swap loops), else in order on one thread, which is safe for tuples and
 * sums and, on few targets, faster than threads contending for them. */
static int run_permute(exec *E, const pstep *st, int64_t nsrc) {
  parallel(E->S, &E->rt.abi, E->fns[st->fn_body], E->S[st->out].size);
  int rc = checked(E);
  if (rc != LACC_OK || nsrc == 0) return rc;
  int64_t n = E->S[st->out].size;
  if (st->fn_pscatter >= 0 && n < PERMUTE_SPREAD && nsrc >= 2 * n && nsrc >= 2 * GRAIN &&
      pool_threads() > 1 && !private_off())
    return permute_private(E, st, nsrc);
  if (st->atomic && n >= PERMUTE_SPREAD && pool_threads() > 1) {
    parallel(E->S, &E->rt.abi, E->fns[st->fn_ascatter], nsrc);
    return checked(E);
  }
  /* in order, a chunk at a time (a stop request is seen between them) */
  for (int64_t lo = 0; lo < nsrc && rc == LACC_OK; lo += CHUNK_MOST) {
    int64_t hi = nsrc - lo > CHUNK_MOST ? lo + CHUNK_MOST : nsrc;
    E->fns[st->fn_scatter](E->S, &E->rt.abi, lo, hi, 0, 0, NULL);
    rc = checked(E);
  }
  return rc;
}

/* A kernel step: its shape, its output, its kernels. */
static int cpu_step(void *R, int k) {
  exec *E = R;
  const pstep *st = &E->P->steps[k];
  int64_t ext[LACC_MAX_RANK + 1] = { 0 };
  E->fns[st->fn_shape](E->S, &E->rt.abi, 0, 0, 0, 0, ext);
  int rc = checked(E);
  if (rc == LACC_OK) rc = alloc_out(E, st, st->out, ext);
  if (rc != LACC_OK) return rc;
  if (st->kind == SK_FOLD) return run_fold(E, st, ext[st->rank]);
  if (st->kind == SK_SCAN) return run_scan(E, st, ext[st->rank]);
  if (st->kind == SK_PERMUTE) return run_permute(E, st, ext[st->rank]);
  parallel(E->S, &E->rt.abi, E->fns[st->fn_body], E->S[st->out].size);
  return checked(E);
}

static void *cpu_begin(lacc_ctx *ctx, const kplan *P) {
  exec *E = calloc(1, sizeof *E);
  size_t n = (size_t)(P->nslots ? P->nslots : 1);
  if (E != NULL) {
    E->S = calloc(n, sizeof *E->S);
    E->arrays = calloc(n, sizeof *E->arrays);
  }
  if (E == NULL || E->S == NULL || E->arrays == NULL) {
    if (E != NULL) {
      free(E->S);
      free(E->arrays);
    }
    free(E);
    ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
    return NULL;
  }
  E->ctx = ctx;
  E->P = P;
  E->fns = P->code;
  E->rt.abi.fail = rt_fail;
  E->rt.abi.K = (const lacc_kval *)P->consts;
  pthread_mutex_init(&E->rt.lock, NULL);
  return E;
}

/* The pool reports progress and stops between chunks during the outermost run only
 * (no call per chunk otherwise). */
static void cpu_hooks(lacc_ctx *ctx, int on) {
  if (on) {
    if (ctx->progress.fn != NULL) pool_on_tick(progress_tick, ctx);
    pool_on_stop(run_stopped, ctx);
    return;
  }
  if (ctx->progress.depth == 0) pool_on_tick(NULL, NULL);
  if (ctx->run.depth == 1) pool_on_stop(NULL, NULL);
}

/* An array from outside: its values on the host first. */
static int cpu_input(void *R, int s, lacc_array *a) {
  int rc = array_host(a);
  if (rc != LACC_OK) return rc;
  lacc_array_retain(a);
  return set_slot(R, s, a);
}

static int cpu_test(void *R, int s, int *v) {
  const lacc_array *t = ((exec *)R)->arrays[s];
  *v = t == NULL ? -1 : *(const uint8_t *)t->buf[0] != 0;
  return LACC_OK;
}

static void cpu_alias(void *R, int dst, int src) {
  exec *E = R;
  lacc_array_retain(E->arrays[src]);
  set_slot(E, dst, E->arrays[src]);
}

static void cpu_drop(void *R, int s) {
  exec *E = R;
  lacc_array_release(E->arrays[s]);
  E->arrays[s] = NULL;
}

static int cpu_output(void *R, int s, lacc_array **out) {
  *out = ((exec *)R)->arrays[s];
  lacc_array_retain(*out);
  return LACC_OK;
}

static int cpu_finish(void *R) {
  (void)R;
  return LACC_OK;
}

static void cpu_end(void *R) {
  exec *E = R;
  for (int s = 0; s < E->P->nslots; s++) lacc_array_release(E->arrays[s]);
  pthread_mutex_destroy(&E->rt.lock);
  free(E->S);
  free(E->arrays);
  free(E);
}

/* The plan's C, built (or found in the caches) and its functions resolved. */
/* The most operations of one loop of a function (those of loops inside it not counted;
 * the code outside loops is one more): gcc's vectorisers at -O3 take time that grows
 * faster than the loop, while a function of many modest loops (a stencil's border
 * regions: 1886 operations, 0.4 s) compiles fast. */
enum { MAX_NEST = 64 };
static int64_t loop_ops(const klist *l, int64_t *count, int *is_loop, int *depth) {
  int64_t most = 0;
  for (int i = 0; i < l->n; i++) {
    kop op = l->v[i].op;
    int d = *depth, loop = d;
    while (loop > 0 && !is_loop[loop]) loop--;
    if (op == KO_FOR || op == KO_LOOP || op == KO_IF) {
      if (d + 1 < MAX_NEST) {
        (*depth)++;
        is_loop[*depth] = op != KO_IF;
        count[*depth] = 0;
      }
      count[loop]++;
    } else if (op == KO_END) {
      if (d > 0) {
        if (is_loop[d] && count[d] > most) most = count[d];
        (*depth)--;
      }
    } else {
      count[loop]++;
    }
  }
  return most;
}

static int64_t longest_loop(const kplan *P) {
  int64_t most = 0;
  for (int k = 0; k < P->nfns; k++) {
    int64_t count[MAX_NEST] = { 0 };
    int is_loop[MAX_NEST] = { 1 }, depth = 0;
    int64_t a = loop_ops(&P->fns[k].pro, count, is_loop, &depth);
    int64_t b = loop_ops(&P->fns[k].body, count, is_loop, &depth);
    if (a > most) most = a;
    if (b > most) most = b;
    if (count[0] > most) most = count[0];
  }
  return most;
}

static int cpu_compile(lacc_ctx *ctx, const char *device, kplan *P) {
  (void)device;
  char *src = emit_c(P);
  int rc = src == NULL ? ctx_error(ctx, LACC_ERR_MEMORY, "out of memory") : LACC_OK;
  void *dl = NULL, **fns = NULL;
  if (rc == LACC_OK) rc = cpu_load(ctx, src, longest_loop(P), &dl);
  if (rc == LACC_OK) {
    fns = calloc((size_t)(P->nfns ? P->nfns : 1), sizeof *fns);
    rc = fns == NULL ? ctx_error(ctx, LACC_ERR_MEMORY, "out of memory")
                     : cpu_resolve(ctx, dl, P->nfns, fns);
  }
  free(src);
  if (rc == LACC_OK) P->code = fns;
  else free(fns);
  return rc;
}

static void cpu_release(kplan *P) { free(P->code); }

const backend_ops cpu_backend = {
  "cpu", cpu_compile, cpu_release, cpu_begin, cpu_hooks, cpu_input, cpu_step, cpu_test,
  cpu_alias, cpu_drop, cpu_output, cpu_finish, cpu_end, pool_run, NULL, NULL, NULL,
};
