/* compile.c: the cpu backend's C compilers: a plan's translation unit built and loaded,
 * now or in the background, and the code a plan's runs use meanwhile.
 *
 * Owns: running the compilers (`cc`, or LACC_CC with LACC_CFLAGS, for the optimised
 * kernels; `tcc`, or LACC_FAST_CC, for the fast tier) in private temporary directories
 * under a time limit (LACC_CC_TIMEOUT); the kernel caches (in memory, process-wide under
 * a lock; on disk through diskcache.c for the optimised kernels only, keyed by a hash of
 * source, compiler and flags, loaded only after the sealed file checks out; a kernel
 * another process is building is waited for, not built again); the
 * background builds (LACC_TIER=auto): a process-wide queue and worker threads, each build
 * owning copies of all it needs and never a Lua state's context, so a state may close
 * while its kernels build, and its compiler is stopped when the process exits; and a
 * plan's code (cpu_code): the functions its runs use now, which change between runs only.
 * Must not: run kernels (cpu.c), choose a run's tier (tier.c) or print code (emit_c.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
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
#include "cpu/compile.h"
#include "base/diskcache.h"
#include "base/inflight.h"
#include "base/settings.h"

/* ---- the compilers and the caches */

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

/* The fast tier exists to answer at once: a fast compiler that hangs must not hold a
 * new program's first run for LACC_CC_TIMEOUT; past its own limit the run goes to the
 * interpreter. tcc takes milliseconds on any program lacc accepts. */
static double fast_cc_timeout(void) {
  double t = setting_number("LACC_FAST_CC_TIMEOUT", 10, 0.1, 1e6, 0);
  double all = cc_timeout();
  return t < all ? t : all;
}

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

/* Runs argv (no shell: nothing to quote) in a process group of its own (so that a hung
 * compiler and its subprocesses can be killed together) with stdout and stderr to `log`
 * and the caller's environment minus LD_PRELOAD, which sanitizer runs use for the host
 * process only; with TMPDIR set to `tmp` (unless NULL), so that the temporary files of a
 * compiler killed midway are removed with that directory. Returns the exit status, -1,
 * or -2 past the deadline (see wait_for). */
static int run_tool(char *const argv[], const char *log, const char *tmp, double deadline,
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

static void probe(void) {
  char cc[SETTING_MAX];
  cpu_cc(cc, sizeof cc);
  char *argv[] = { cc, "--version", NULL };
  have_compiler = run_tool(argv, "/dev/null", NULL, cc_timeout(), NULL, NULL, -1) == 0;
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

/* ---- one build: the compiler run on a translation unit, the caches */

/* What one build needs, owned by it: a background build outlives the run that asked. */
typedef struct {
  char *src;                   /* the translation unit */
  char cc[SETTING_MAX], flags[SETTING_MAX];
  const char *level;           /* opt_level's choice, or NULL */
  int64_t longest;
  int fast;                    /* the fast tier: its compiler, no level, no disk cache */
  unsigned char key[32];
  char id[48];
} request;

static void fast_cc(char *out, size_t cap) {
  if (!setting_text("LACC_FAST_CC", out, cap)) snprintf(out, cap, "tcc");
}

static void request_free(request *q) {
  if (q == NULL) return;
  free(q->src);
  free(q);
}

/* A request for src (copied) with the compiler and flags in force now. */
static request *request_new(const char *src, int64_t longest, int fast) {
  request *q = calloc(1, sizeof *q);
  if (q == NULL || (q->src = strdup(src)) == NULL) {
    free(q);
    return NULL;
  }
  q->fast = fast;
  q->longest = longest;
  if (fast) fast_cc(q->cc, sizeof q->cc);
  else {
    cpu_cc(q->cc, sizeof q->cc);
    cpu_cflags(q->flags, sizeof q->flags);
    q->level = opt_level(src, longest);
  }
  const char *parts[5] = { src, q->cc, q->flags, q->level != NULL ? q->level : "",
                           fast ? "fast tier" : "" };
  diskcache_key(fast ? 5 : 4, parts, q->key);
  diskcache_name(DC_KERNEL, q->key, q->id);
  q->id[33] = '\0';   /* "k<hex>" */
  return q;
}

/* The compiler's failure as text into err: LACC_ERR_BACKEND, or LACC_ERR_INTERRUPTED
 * when it was stopped. */
static int failed_text(const request *q, int rc, const char *logfile, char *err, size_t cap) {
  if (rc == -3) {
    snprintf(err, cap, "the build was stopped");
    return LACC_ERR_INTERRUPTED;
  }
  if (rc == -2) {
    snprintf(err, cap, "cpu: the C compiler%s did not finish within %g s (%s) and was stopped",
             q->fast ? " of the fast tier (LACC_FAST_CC)" : "",
             q->fast ? fast_cc_timeout() : cc_timeout(),
             q->fast ? "LACC_FAST_CC_TIMEOUT" : "LACC_CC_TIMEOUT");
    return LACC_ERR_BACKEND;
  }
  char *log = read_log(logfile);
  char mine[8];
  snprintf(err, cap, "cpu: the C compiler%s failed on generated code%s:\n%.700s",
           q->fast ? " of the fast tier (LACC_FAST_CC)" : "",
           !q->fast && setting_text("LACC_CFLAGS", mine, sizeof mine) ? " (check LACC_CFLAGS)" : "",
           log != NULL ? log : "");
  free(log);
  return LACC_ERR_BACKEND;
}

/* Seconds per byte of C the optimising builds of this process took (0: none yet), for
 * the estimate of a build's remaining time; under jobs_lock. */
static double built_seconds, built_bytes;
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;

/* Compiles q in the private directory tmp into tmp/k.so and loads it, with its bytes for
 * the disk cache. stop(arg) stops the compiler. LACC_OK, or an error code with err. */
static int build(const request *q, const char *tmp, int slot, int (*stop)(void *), void *arg,
                 char *err, size_t cap, void **dl, unsigned char **bytes, size_t *len) {
  char cfile[4200], sofile[4200], logfile[4200];
  snprintf(cfile, sizeof cfile, "%s/k.c", tmp);
  snprintf(sofile, sizeof sofile, "%s/k.so", tmp);
  snprintf(logfile, sizeof logfile, "%s/k.log", tmp);
  FILE *f = fopen(cfile, "w");
  if (f == NULL) {
    snprintf(err, cap, "cpu: cannot write %.900s", cfile);
    return LACC_ERR_BACKEND;
  }
  int ok = fputs(q->src, f) >= 0 &&
           fprintf(f, "\nconst char lacc_kernel_id[] = \"%s\";\n", q->id) > 0;
  ok = fclose(f) == 0 && ok;
  if (!ok) {
    snprintf(err, cap, "cpu: cannot write %.900s (%s)", cfile, strerror(errno));
    return LACC_ERR_BACKEND;
  }
  char *flags = strdup(q->flags);
  int n = 0;
  char **argv = flags != NULL ? split_flags(flags, NFIXED + 7, &n) : NULL;
  if (argv == NULL) {
    free(flags);
    snprintf(err, cap, "out of memory");
    return LACC_ERR_MEMORY;
  }
  memmove(argv + 1, argv, sizeof *argv * (size_t)n);
  argv[0] = (char *)q->cc;
  n++;
  if (q->level != NULL) argv[n++] = (char *)q->level;   /* after the user's flags: the last -O counts */
  for (int i = 0; i < NFIXED; i++) argv[n++] = (char *)fixed_flags[i];
  argv[n++] = "-o";
  argv[n++] = sofile;
  argv[n++] = cfile;
  argv[n++] = "-lm";
  argv[n] = NULL;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = run_tool(argv, logfile, tmp, q->fast ? fast_cc_timeout() : cc_timeout(), stop, arg,
                    slot);
  free(argv);
  free(flags);
  if (rc != 0) return failed_text(q, rc, logfile, err, cap);
  double took = seconds_since(&t0);
  if (!q->fast) {
    pthread_mutex_lock(&jobs_lock);
    built_seconds += took;
    built_bytes += (double)strlen(q->src);
    pthread_mutex_unlock(&jobs_lock);
  }
  if (verbose()) {
    char *log = read_log(logfile);
    fprintf(stderr, "lacc: compiled kernels (%zu bytes of C, the longest loop %lld "
            "operations%s%s%s%s) in %.3f s%s%s\n", strlen(q->src), (long long)q->longest,
            q->fast ? ", the fast tier's " : "", q->fast ? q->cc : "",
            q->level != NULL ? ", at " : "", q->level != NULL ? q->level : "", took,
            log != NULL && *log ? ":\n" : "", log != NULL ? log : "");
    free(log);
  }
  *bytes = read_file(sofile, len);
  *dl = open_checked(sofile, q->id);
  if (*dl == NULL) {
    snprintf(err, cap, "cpu: cannot load the compiled kernels: %s", dlerror());
    return LACC_ERR_BACKEND;
  }
  return LACC_OK;
}

enum { FIND_ONLY = 0, FIND_OR_BUILD = 1 };

/* q's kernels: from memory, from the disk cache, or (how: FIND_OR_BUILD) built and
 * cached. LACC_OK with *dl; *dl NULL when only finding and nothing is there; else an
 * error code with err. */
static int obtain(const request *q, int how, int (*stop)(void *), void *arg, char *err,
                  size_t cap, void **out) {
  if ((*out = lookup(q->key)) != NULL) return LACC_OK;
  char tmp[4096];
  if (private_tmpdir(tmp, sizeof tmp) != 0) {
    snprintf(err, cap, "cpu: cannot make a private directory to compile in (TMPDIR, /tmp, "
             "/dev/shm): %s", strerror(errno));
    return LACC_ERR_BACKEND;
  }
  int slot = inflight_add(tmp);   /* removed, with the claim, if SIGTERM ends the process */
  diskcache dc;
  int disk = diskcache_open(DC_KERNEL, &dc) == 0;
  size_t len = 0;
  unsigned char *bytes = disk ? diskcache_read(&dc, DC_KERNEL, q->key, MAX_SO, &len) : NULL;
  void *dl = bytes != NULL ? load_bytes(tmp, bytes, len, q->id) : NULL;
  int rc = LACC_OK;
  if (dl == NULL && how == FIND_OR_BUILD) {
    free(bytes);
    bytes = NULL;
    /* another process building the same kernel (MPI ranks starting together): its file */
    int claim = disk ? diskcache_claim(&dc, DC_KERNEL, q->key, cc_timeout()) : -1;
    if (claim == 1) {
      char path[DISKCACHE_PATH + 80];
      diskcache_claim_path(&dc, DC_KERNEL, q->key, path, sizeof path);
      inflight_claim(slot, path);
    }
    if (claim == 0) bytes = diskcache_wait(&dc, DC_KERNEL, q->key, MAX_SO, &len, cc_timeout(), stop, arg);
    /* claimed: written by a process whose claim ended after this one missed it? */
    else if (claim == 1) bytes = diskcache_read(&dc, DC_KERNEL, q->key, MAX_SO, &len);
    if (bytes != NULL) dl = load_bytes(tmp, bytes, len, q->id);
    if (dl == NULL) {
      free(bytes);
      bytes = NULL;
      rc = build(q, tmp, slot, stop, arg, err, cap, &dl, &bytes, &len);   /* its k.so replaces a copy that failed */
      if (rc == LACC_OK && disk && bytes != NULL) diskcache_write(&dc, DC_KERNEL, q->key, bytes, len);
    }
    inflight_claim(slot, NULL);   /* before the release: the next claim is not ours */
    if (claim == 1) diskcache_release(&dc, DC_KERNEL, q->key);
  }
  free(bytes);
  private_tmpdir_remove(tmp);
  inflight_done(slot);
  if (rc != LACC_OK || dl == NULL) return rc;
  lib_pin();   /* the cache below outlives any one Lua state */
  remember(q->key, dl);
  *out = dl;
  return LACC_OK;
}

/* obtain of src's optimised build for a run of ctx: a SIGINT stops the compiler; errors
 * go into ctx. */
static int obtain_now(lacc_ctx *ctx, const char *src, int64_t longest, int how, void **dl) {
  request *q = request_new(src, longest, 0);
  if (q == NULL) return err_oom(ctx);
  char err[LACC_ERRMAX];
  run_begin(ctx);
  int rc = obtain(q, how, run_stopped, ctx, err, sizeof err, dl);
  run_end(ctx);
  request_free(q);
  if (rc == LACC_ERR_INTERRUPTED) return run_interrupted(ctx);
  return rc == LACC_OK ? LACC_OK : ctx_error(ctx, rc, "%s", err);
}

/* ---- background builds: a queue, worker threads, stopped at exit */

enum { J_QUEUED, J_RUNNING, J_DONE, J_FAILED };

typedef struct job {
  int refs;                    /* the queue's while queued or running, each code's */
  int state;
  request *q;
  void *dl;                    /* J_DONE */
  int code;                    /* J_FAILED: the error code, and its text */
  char err[LACC_ERRMAX];
  struct timespec queued;
  double seconds;              /* J_DONE, J_FAILED: since it was queued */
  struct job *next;            /* the queue, or the list of jobs under way */
} job;

/* Under jobs_lock: the queue (oldest first), the jobs being built, the workers. */
static pthread_cond_t jobs_cond = PTHREAD_COND_INITIALIZER;
static job *queue_head, *queue_tail, *building;
static int workers, running;
static atomic_int exiting;          /* the process is exiting: stop every compiler */
static atomic_long builds_done;     /* jobs finished, built or failed */

long cpu_builds_done(void) { return atomic_load(&builds_done); }
static atomic_long tier_counts[NTIER_COUNTS];

void cpu_tier_count(int which) { atomic_fetch_add(&tier_counts[which], 1); }

void cpu_tier_counts(int64_t *out) {
  for (int i = 0; i < NTIER_COUNTS; i++) out[i] = atomic_load(&tier_counts[i]);
}

static int exit_asked(void *unused) {
  (void)unused;
  return atomic_load(&exiting);
}

static void job_release_locked(job *j) {
  if (j == NULL || --j->refs > 0) return;
  request_free(j->q);
  free(j);
}

static void job_release(job *j) {
  pthread_mutex_lock(&jobs_lock);
  job_release_locked(j);
  pthread_mutex_unlock(&jobs_lock);
}

static void unlink_building(job *j) {
  for (job **p = &building; *p != NULL; p = &(*p)->next)
    if (*p == j) {
      *p = j->next;
      return;
    }
}

/* Under jobs_lock: j, queued, taken off the queue and counted under way. */
static void take_locked(job *j) {
  job *prev = NULL;
  for (job **p = &queue_head; *p != NULL; prev = *p, p = &(*p)->next)
    if (*p == j) {
      *p = j->next;
      if (queue_tail == j) queue_tail = prev;
      break;
    }
  j->state = J_RUNNING;
  j->next = building;
  building = j;
  running++;
}

/* Under jobs_lock, released while the compiler runs: j (taken) built, stop(arg) stopping
 * it. A build stopped for a run's SIGINT (not the process's exit) goes back to the front
 * of the queue for a worker or a later run; any other end is the job's. */
static void build_locked(job *j, int (*stop)(void *), void *arg) {
  pthread_mutex_unlock(&jobs_lock);
  void *dl = NULL;
  char err[LACC_ERRMAX];
  int rc = obtain(j->q, FIND_OR_BUILD, stop, arg, err, sizeof err, &dl);
  pthread_mutex_lock(&jobs_lock);
  unlink_building(j);
  running--;
  if (rc == LACC_ERR_INTERRUPTED && !atomic_load(&exiting)) {
    j->state = J_QUEUED;
    j->next = queue_head;
    queue_head = j;
    if (queue_tail == NULL) queue_tail = j;
    pthread_cond_broadcast(&jobs_cond);
    return;
  }
  j->seconds = seconds_since(&j->queued);
  j->state = rc == LACC_OK ? J_DONE : J_FAILED;
  j->dl = dl;
  j->code = rc;
  if (rc != LACC_OK) snprintf(j->err, sizeof j->err, "%s", err);
  cpu_tier_count(rc == LACC_OK ? TC_BUILT : TC_BUILD_FAILED);
  atomic_fetch_add(&builds_done, 1);
  job_release_locked(j);   /* the queue's */
  pthread_cond_broadcast(&jobs_cond);
}

static void *worker(void *unused) {
  (void)unused;
  pthread_mutex_lock(&jobs_lock);
  for (;;) {
    while (queue_head == NULL && !atomic_load(&exiting)) pthread_cond_wait(&jobs_cond, &jobs_lock);
    if (atomic_load(&exiting)) break;
    job *j = queue_head;
    take_locked(j);
    build_locked(j, exit_asked, NULL);
  }
  workers--;
  pthread_cond_broadcast(&jobs_cond);
  pthread_mutex_unlock(&jobs_lock);
  return NULL;
}

/* The time ms milliseconds from now, for pthread_cond_timedwait (CLOCK_REALTIME). */
static struct timespec in_ms(long ms) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += ms / 1000;
  t.tv_nsec += (ms % 1000) * 1000000;
  if (t.tv_nsec >= 1000000000) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000;
  }
  return t;
}

/* Whether builds still queued or under way at exit are finished by a process of their
 * own (LACC_DETACH_BUILDS, default on): so that a short script's second run starts warm.
 * Not under MPI (its launcher and fork do not mix; ranks share their cache anyway). */
static int detach_wanted(void) {
  if (getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMI_SIZE") != NULL) return 0;
  return setting_switch("LACC_DETACH_BUILDS", 1);
}

/* The detached builder's standard streams go nowhere and it holds no other descriptor of
 * the host's: a reader of the host's output (a pipe, a terminal) sees its end at once. */
static void quiet_fds(void) {
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && null >= 0; fd++) dup2(null, fd);
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (int fd = 3; fd < max; fd++) close(fd);
}

/* In the detached builder: every job queued (fork_child put the ones under way back on
 * the queue), built one after another into the disk cache. Never returns. */
static void build_detached(void) {
  for (job *j = queue_head; j != NULL; j = j->next) {
    void *dl = NULL;
    char err[LACC_ERRMAX];
    if (!j->q->fast) obtain(j->q, FIND_OR_BUILD, NULL, NULL, err, sizeof err, &dl);
  }
  _exit(0);
}

/* At exit, builds left: a process of their own (its parent gone at once: no zombie, no
 * session of the host's) finishes them while the host exits. */
static void detach_builds(void) {
  pthread_mutex_lock(&jobs_lock);
  int any = queue_head != NULL || building != NULL;
  pthread_mutex_unlock(&jobs_lock);
  if (!any || !detach_wanted()) return;
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    quiet_fds();
    build_detached();
  }
  while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

/* At exit: the builds left handed to a detached process (detach_builds), then every
 * compiler under way stopped (its process group killed, its directory removed by its
 * worker), waiting a bounded time for the workers to see it. */
static void stop_builds(void) {
  detach_builds();
  pthread_mutex_lock(&jobs_lock);
  atomic_store(&exiting, 1);
  pthread_cond_broadcast(&jobs_cond);
  struct timespec until = in_ms(2000);
  while (running > 0)
    if (pthread_cond_timedwait(&jobs_cond, &jobs_lock, &until) == ETIMEDOUT) break;
  pthread_mutex_unlock(&jobs_lock);
}

/* Background compilers at once: one fewer than the cores (the runs keep one), at least
 * one, at most four. */
static int max_workers(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN) - 1;
  return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

/* fork(): the child has none of the parent's threads, so a build they had queued or
 * under way would never finish there and a run waiting for it would wait for ever. The
 * locks are held across the fork (no worker is inside them then); in the child every
 * job goes back on the queue with no worker counted, and the first run that looks at a
 * job starts workers again (kick_locked). A build the parent's compiler still runs is
 * claimed in the disk cache by the parent, so the child's worker waits for its file. */
static void fork_prepare(void) {
  pthread_mutex_lock(&jobs_lock);
  pthread_mutex_lock(&cache_lock);
}

static void fork_parent(void) {
  pthread_mutex_unlock(&cache_lock);
  pthread_mutex_unlock(&jobs_lock);
}

static void fork_child(void) {
  pthread_mutex_unlock(&cache_lock);
  while (building != NULL) {   /* back to the front of the queue, as if never taken */
    job *j = building;
    building = j->next;
    j->state = J_QUEUED;
    j->next = queue_head;
    queue_head = j;
    if (queue_tail == NULL) queue_tail = j;
  }
  workers = 0;
  running = 0;
  pthread_cond_init(&jobs_cond, NULL);
  pthread_mutex_unlock(&jobs_lock);
}

static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;
static void at_exit_register(void) {
  atexit(stop_builds);
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Under jobs_lock: a worker started while fewer than max_workers run and jobs wait. */
static void start_worker_locked(void) {
  if (workers >= max_workers() || atomic_load(&exiting)) return;
  if (!lib_pin()) return;   /* the workers' code must stay mapped after any Lua state closes */
  pthread_once(&atexit_once, at_exit_register);
  pthread_attr_t a;
  pthread_t t;
  if (pthread_attr_init(&a) != 0) return;
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &a, worker, NULL) == 0) workers++;
  pthread_attr_destroy(&a);
}

/* Under jobs_lock: workers started again for jobs left queued (after a fork). */
static void kick_locked(void) {
  if (queue_head != NULL && workers == 0) start_worker_locked();
}

/* The build of q (taken) queued, or the one of the same kernels already under way: a
 * reference to it; NULL when out of memory (q freed). */
static job *enqueue(request *q) {
  pthread_mutex_lock(&jobs_lock);
  job *j = NULL;
  for (job *k = queue_head; k != NULL && j == NULL; k = k->next)
    if (memcmp(k->q->key, q->key, 32) == 0) j = k;
  for (job *k = building; k != NULL && j == NULL; k = k->next)
    if (memcmp(k->q->key, q->key, 32) == 0) j = k;
  if (j != NULL) {
    j->refs++;
    request_free(q);
  } else if ((j = calloc(1, sizeof *j)) != NULL) {
    j->refs = 2;   /* the queue's and the caller's */
    j->q = q;
    j->state = J_QUEUED;
    clock_gettime(CLOCK_MONOTONIC, &j->queued);
    if (queue_tail != NULL) queue_tail->next = j;
    else queue_head = j;
    queue_tail = j;
    start_worker_locked();
    if (workers == 0) {   /* no thread could start: built when a run waits for it */
      j->state = J_FAILED;
      j->code = LACC_ERR_BACKEND;
      snprintf(j->err, sizeof j->err, "cpu: cannot start a thread to compile in");
      queue_head = queue_tail = NULL;
      j->refs--;
    }
    pthread_cond_broadcast(&jobs_cond);
  } else {
    request_free(q);
  }
  pthread_mutex_unlock(&jobs_lock);
  return j;
}

/* ---- a plan's code */

/* A part of a plan's code: functions lacc_f<lo..hi-1> in a translation unit of their
 * own, so that the parts of a large program compile at once, each in a cc process. */
typedef struct {
  int lo, hi;
  char *src;
  job *job;                    /* its optimised build under way (a reference), or NULL */
  void *opt, *fast;            /* its builds, once loaded */
} part;

struct cpu_code {
  int nfns;
  void **fns;                  /* what runs use now (tier's), NULL: none yet */
  int tier;                    /* TIER_NONE, TIER_FAST or TIER_OPT */
  void **opt, **fast;          /* the resolved functions of each, once loaded */
  int fast_tried;
  int opt_code;                /* an optimised build failed: its error, for a run that waits */
  char *opt_err;
  int64_t longest;
  int nparts;
  part parts[CPU_MAX_PARTS];
  tier_state tiers;            /* what its runs measured (tier.c) */
};

tier_state *cpu_code_tiers(cpu_code *c) { return &c->tiers; }

int cpu_tier_mode(void) {
  char v[16];
  if (!setting_text("LACC_TIER", v, sizeof v)) return TIER_MODE_AUTO;
  if (strcmp(v, "opt") == 0) return TIER_MODE_OPT;
  if (strcmp(v, "fast") == 0) return TIER_MODE_FAST;
  if (strcmp(v, "auto") != 0)
    warn_once("setting LACC_TIER", "ignoring LACC_TIER=%.40s: expected auto, fast or opt; "
              "using auto", v);
  return TIER_MODE_AUTO;
}

int cpu_build_parts(size_t bytes, int nfns) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int n = bytes < CPU_PART_BYTES || cores < 2 ? 1 : cores < CPU_MAX_PARTS ? (int)cores : CPU_MAX_PARTS;
  return n > nfns / 2 ? (nfns / 2 > 1 ? nfns / 2 : 1) : n;
}

/* The functions of every part, from each part's build (opt: the optimised ones). */
static int resolve(cpu_code *c, int opt, void ***out, char *err, size_t cap) {
  void **fns = calloc((size_t)(c->nfns ? c->nfns : 1), sizeof *fns);
  if (fns == NULL) {
    snprintf(err, cap, "out of memory");
    return LACC_ERR_MEMORY;
  }
  for (int i = 0; i < c->nparts; i++)
    for (int k = c->parts[i].lo; k < c->parts[i].hi; k++) {
      char name[32];
      snprintf(name, sizeof name, "lacc_f%d", k);
      fns[k] = dlsym(opt ? c->parts[i].opt : c->parts[i].fast, name);
      if (fns[k] == NULL) {
        snprintf(err, cap, "cpu: %s missing", name);
        free(fns);
        return LACC_ERR_BACKEND;
      }
    }
  *out = fns;
  return LACC_OK;
}

/* Runs use the optimised builds (every part has its own). */
static int use_opt(lacc_ctx *ctx, cpu_code *c) {
  char err[LACC_ERRMAX];
  int rc = resolve(c, 1, &c->opt, err, sizeof err);
  if (rc != LACC_OK) return ctx_error(ctx, rc, "%s", err);
  c->fns = c->opt;
  c->tier = TIER_OPT;
  return LACC_OK;
}

void cpu_code_free(cpu_code *c) {
  if (c == NULL) return;
  for (int i = 0; i < c->nparts; i++) {
    job_release(c->parts[i].job);
    free(c->parts[i].src);
  }
  free(c->opt);
  free(c->fast);
  free(c->opt_err);
  free(c);
}

/* Part i's optimised build queued (or joined: the same kernels may be under way). */
static int queue_part(lacc_ctx *ctx, cpu_code *c, int i) {
  request *q = request_new(c->parts[i].src, c->longest, 0);
  if (q == NULL || (c->parts[i].job = enqueue(q)) == NULL)
    return err_oom(ctx);
  return LACC_OK;
}

static int wait_opt(lacc_ctx *ctx, cpu_code *c);

/* The parts' optimised builds from the caches; those missing, under opt built now (the
 * last by this thread, the others by the workers at the same time), under auto queued. */
static int find_or_build(lacc_ctx *ctx, cpu_code *c, int mode) {
  int missing = 0, last = -1, rc = LACC_OK;
  for (int i = 0; i < c->nparts && rc == LACC_OK; i++) {
    rc = obtain_now(ctx, c->parts[i].src, c->longest, FIND_ONLY, &c->parts[i].opt);
    if (rc == LACC_OK && c->parts[i].opt == NULL) {
      missing++;
      last = i;
    }
  }
  if (rc != LACC_OK || missing == 0) return rc != LACC_OK ? rc : use_opt(ctx, c);
  for (int i = 0; i < c->nparts && rc == LACC_OK; i++)
    if (c->parts[i].opt == NULL && (mode == TIER_MODE_AUTO || i != last)) rc = queue_part(ctx, c, i);
  if (rc != LACC_OK || mode == TIER_MODE_AUTO) return rc;
  rc = obtain_now(ctx, c->parts[last].src, c->longest, FIND_OR_BUILD, &c->parts[last].opt);
  return rc != LACC_OK ? rc : wait_opt(ctx, c);
}

int cpu_code_new(lacc_ctx *ctx, char **srcs, const int *first, int nparts, int64_t longest,
                 cpu_code **out) {
  *out = NULL;
  size_t bytes = 0;
  for (int i = 0; i < nparts; i++) bytes += strlen(srcs[i]);
  if (source_size_check(ctx, "cpu", "C", bytes) != LACC_OK) return ctx->errcode;
  cpu_code *c = calloc(1, sizeof *c);
  if (c == NULL) return err_oom(ctx);
  c->nfns = first[nparts];
  c->longest = longest;
  c->tiers.last = RUN_NONE;
  c->nparts = nparts;
  for (int i = 0; i < nparts; i++) {   /* the sources are the code's now */
    c->parts[i].lo = first[i];
    c->parts[i].hi = first[i + 1];
    c->parts[i].src = srcs[i];
    srcs[i] = NULL;
  }
  int mode = cpu_tier_mode();
  int rc = mode == TIER_MODE_FAST ? LACC_OK : find_or_build(ctx, c, mode);   /* fast: tcc's only */
  if (rc != LACC_OK) {
    cpu_code_free(c);
    return rc;
  }
  *out = c;
  return LACC_OK;
}

void **cpu_code_fns(const cpu_code *c, int *atomics) {
  *atomics = c->tier == TIER_OPT;   /* tcc's code has no atomics (emit_c.c) */
  return c->fns;
}

/* Finished background builds taken up: once every part's is there, runs use them; a
 * failure is kept and said once. */
static int poll_jobs(lacc_ctx *ctx, cpu_code *c) {
  int pending = 0, rc = LACC_OK;
  for (int i = 0; i < c->nparts; i++) {
    job *j = c->parts[i].job;
    if (j == NULL) continue;
    pthread_mutex_lock(&jobs_lock);
    kick_locked();
    int state = j->state;
    pthread_mutex_unlock(&jobs_lock);
    if (state == J_QUEUED || state == J_RUNNING) {
      pending++;
      continue;
    }
    c->parts[i].job = NULL;
    if (state == J_DONE) {
      c->parts[i].opt = j->dl;
    } else if (c->opt_err == NULL) {
      c->opt_code = j->code;
      c->opt_err = strdup(j->err);
      warn_once(j->q->id, "the optimised build of a program's kernels failed; it runs on %s:\n%s",
                c->tier == TIER_FAST ? "the fast tier" : "the interpreter", j->err);
    }
    job_release(j);
  }
  for (int i = 0; i < c->nparts; i++) pending += c->parts[i].opt == NULL;
  if (pending > 0 || c->opt_err != NULL || c->tier == TIER_OPT) return LACC_OK;
  rc = use_opt(ctx, c);
  if (rc == LACC_OK && verbose() && cpu_tier_mode() != TIER_MODE_OPT)
    fprintf(stderr, "lacc: a program's optimised kernels are loaded (%d part%s): runs switch "
            "to them\n", c->nparts, c->nparts == 1 ? "" : "s");
  return rc;
}

/* The fast tier's code: tcc's build of each part, tried once; a failure (no tcc, code it
 * does not take) only leaves the plan without it. */
static int try_fast(lacc_ctx *ctx, cpu_code *c) {
  c->fast_tried = 1;
  char err[LACC_ERRMAX];
  int rc = LACC_OK;
  for (int i = 0; i < c->nparts && rc == LACC_OK; i++) {
    request *q = request_new(c->parts[i].src, c->longest, 1);
    if (q == NULL) return err_oom(ctx);
    run_begin(ctx);
    rc = obtain(q, FIND_OR_BUILD, run_stopped, ctx, err, sizeof err, &c->parts[i].fast);
    run_end(ctx);
    request_free(q);
  }
  if (rc == LACC_ERR_INTERRUPTED) return run_interrupted(ctx);
  if (rc == LACC_OK) rc = resolve(c, 0, &c->fast, err, sizeof err);
  if (rc != LACC_OK) {
    if (verbose()) fprintf(stderr, "lacc: no fast tier for a program: %s\n", err);
    return LACC_OK;
  }
  cpu_tier_count(TC_FAST_BUILT);
  c->fns = c->fast;
  c->tier = TIER_FAST;
  return LACC_OK;
}

int cpu_code_opt_ready(const cpu_code *c) {
  if (c == NULL) return 0;
  if (c->tier == TIER_OPT) return 1;
  int ready = 1;
  pthread_mutex_lock(&jobs_lock);
  for (int i = 0; i < c->nparts && ready; i++)
    ready = c->parts[i].opt != NULL || (c->parts[i].job != NULL && c->parts[i].job->state == J_DONE);
  pthread_mutex_unlock(&jobs_lock);
  return ready;
}

static int pending(const cpu_code *c) {
  int n = 0;
  pthread_mutex_lock(&jobs_lock);
  kick_locked();
  for (int i = 0; i < c->nparts; i++)
    n += c->parts[i].job != NULL &&
         (c->parts[i].job->state == J_QUEUED || c->parts[i].job->state == J_RUNNING);
  pthread_mutex_unlock(&jobs_lock);
  return n;
}

/* Under jobs_lock: a build of c's still queued (the background builders are busy with
 * others), or NULL. */
static job *queued_part_locked(const cpu_code *c) {
  for (int i = 0; i < c->nparts; i++)
    if (c->parts[i].job != NULL && c->parts[i].job->state == J_QUEUED) return c->parts[i].job;
  return NULL;
}

/* A build a waiting run does itself stops for the run's SIGINT or the process's exit. */
static int help_stop(void *ctx) { return atomic_load(&exiting) || run_stopped(ctx); }

/* Waits for c's optimised builds (queued now where none is under way; those still
 * queued built by this thread meanwhile), a SIGINT stopping the wait; their failure is
 * the error where there is no code to run. */
static int wait_opt(lacc_ctx *ctx, cpu_code *c) {
  for (int i = 0; i < c->nparts && c->opt_err == NULL; i++)
    if (c->parts[i].opt == NULL && c->parts[i].job == NULL && queue_part(ctx, c, i) != LACC_OK)
      return ctx->errcode;
  run_begin(ctx);
  while (pending(c) > 0 && !run_stopped(ctx)) {
    pthread_mutex_lock(&jobs_lock);
    job *mine = queued_part_locked(c);
    if (mine != NULL) {   /* this thread would only wait: it builds one itself */
      take_locked(mine);
      build_locked(mine, help_stop, ctx);
    } else {
      struct timespec until = in_ms(20);   /* a SIGINT is seen within 20 ms */
      pthread_cond_timedwait(&jobs_cond, &jobs_lock, &until);
    }
    pthread_mutex_unlock(&jobs_lock);
  }
  int stopped = run_stopped(ctx);
  run_end(ctx);
  if (stopped) return run_interrupted(ctx);
  int rc = poll_jobs(ctx, c);
  if (rc != LACC_OK) return rc;
  /* under opt the build's failure is the run's error; else the interpreter runs it */
  if (c->tier == TIER_NONE && c->opt_err != NULL && cpu_tier_mode() == TIER_MODE_OPT)
    return ctx_error(ctx, c->opt_code, "%s", c->opt_err);
  return LACC_OK;
}

/* Seconds c's optimised builds will likely still take: the longest part's source at the
 * pace of this process's builds so far (at first 0.1 s plus 5 us a byte, this machine's
 * gcc -O3 on the benchmarks' kernels: 3-6 us). */
static double remaining(const cpu_code *c) {
  double most = 0;
  pthread_mutex_lock(&jobs_lock);
  for (int i = 0; i < c->nparts; i++) {
    const job *j = c->parts[i].job;
    if (j == NULL) continue;
    double bytes = (double)strlen(j->q->src);
    double expect = built_bytes > 0 ? bytes * built_seconds / built_bytes : 0.1 + bytes * 5e-6;
    double left = expect - seconds_since(&j->queued);
    if (left < 0.01) left = 0.01;
    if (left > most) most = left;
  }
  pthread_mutex_unlock(&jobs_lock);
  return most;
}

double cpu_code_opt_left(const cpu_code *c) { return c == NULL ? 0 : remaining(c); }

int cpu_code_advance(lacc_ctx *ctx, cpu_code *c, int want, int *tier, double *left) {
  if (c->tier == TIER_OPT) {   /* the steady state: no lock taken */
    *tier = TIER_OPT;
    *left = 0;
    return LACC_OK;
  }
  int rc = poll_jobs(ctx, c);
  if (rc == LACC_OK && want == WANT_FAST && c->tier == TIER_NONE && !c->fast_tried)
    rc = try_fast(ctx, c);
  if (rc == LACC_OK && want == WANT_OPT && c->tier != TIER_OPT) rc = wait_opt(ctx, c);
  *tier = c->tier;
  *left = remaining(c);
  return rc;
}

int cpu_code_cached(lacc_ctx *ctx, char **srcs, int nparts, int64_t longest, int *cached) {
  *cached = 1;
  for (int i = 0; i < nparts && *cached; i++) {
    void *dl = NULL;
    int rc = obtain_now(ctx, srcs[i], longest, FIND_ONLY, &dl);
    if (rc != LACC_OK) return rc;
    *cached = dl != NULL;
  }
  return LACC_OK;
}
