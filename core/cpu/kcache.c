/* kcache.c: the cpu backend's compilers and its caches of compiled kernels.
 *
 * Owns: which compiler builds what (`cc`, or LACC_CC with LACC_CFLAGS, and the level
 * lacc chooses for the optimised kernels; `tcc`, or LACC_FAST_CC, for the fast tier),
 * one build of a translation unit in a private temporary directory under its time limit
 * (LACC_CC_TIMEOUT, LACC_FAST_CC_TIMEOUT) and the caches: loaded kernels in memory
 * (process-wide, under a lock, never unloaded), and on disk through diskcache.c (keyed by
 * a hash of source, compiler and flags; loaded only after the sealed file checks out,
 * from a private copy; a kernel another process is building is waited for, not built
 * again), the fast tier's builds as well as the optimised ones; and the pace of this
 * process's optimised builds (for the estimate of a build's remaining time).
 * Must not: queue builds or run them in the background (builds.c), or decide which
 * code a plan's runs use (code.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cpu/kcache.h"
#include "kir/kir.h"
#include "cpu/spawn.h"
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
 * interpreter's; LACC_CONTRACT lifts it, below), no errno (lets sqrt be one instruction), no floating-point traps (no
 * program sees the exception flags; values are as they were, and the compiler may then
 * compute both arms of a select whose arms compute, as base/ownmath.h's exp and log do:
 * their loops vectorise). */
static const char *const fixed_flags[] = { "-std=c11", "-ffp-contract=off", "-fno-math-errno",
                                           "-fno-trapping-math", "-fPIC", "-shared" };
enum { NFIXED = sizeof fixed_flags / sizeof *fixed_flags };

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

static void probe(void) {
  char cc[SETTING_MAX];
  cpu_cc(cc, sizeof cc);
  char *argv[] = { cc, "--version", NULL };
  have_compiler = spawn_run(argv, "/dev/null", NULL, cc_timeout(), NULL, NULL, -1) == 0;
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
 * at -O3, a minute at -O1 on a match over 4096 constructors; a program of many functions
 * comes in parts of less: code.c, cpu_build_parts); by default (no LACC_CFLAGS), -O2 where a loop has more than LONG_LOOP
 * operations: gcc's vectorisers at -O3 take time that grows faster than the code
 * (docs/design.md, Measurements). NULL: the flags as they are. */
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


static void fast_cc(char *out, size_t cap) {
  if (!setting_text("LACC_FAST_CC", out, cap)) snprintf(out, cap, "tcc");
}

void request_free(request *q) {
  if (q == NULL) return;
  free(q->src);
  free(q);
}

/* The hash state after the text every kernel's C starts with (emit_c_prefix), taken once:
 * hashing it again for every program was a quarter of a program built anew and run. The
 * keys are the same as without it. */
static pthread_once_t prefix_once = PTHREAD_ONCE_INIT;
static const char *prefix;
static size_t prefix_len;
static sha256_ctx prefix_state;
static void hash_prefix(void) {
  prefix = emit_c_prefix();
  if (prefix == NULL) return;
  prefix_len = strlen(prefix);
  diskcache_key_prefix(prefix, prefix_len, &prefix_state);
}

/* A request for src (copied) with the compiler and flags in force now. */
request *request_new(const char *src, int64_t longest, int fast) {
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
    /* LACC_CONTRACT (lacc.config{contract = true}): gcc may fuse a * b + c into one fma,
     * rounding once: a 1024 f32 product 13.7-14.0 -> 10.9-11.1 ms (Zen 4: a multiply
     * and an add take two of the four pipes' slots where an fma takes one). In the
     * flags, so in the key; the fixed -ffp-contract=off is then left out. */
    q->contract = setting_switch("LACC_CONTRACT", 0);
    size_t used = strlen(q->flags);
    if (q->contract && used + 20 < sizeof q->flags)
      snprintf(q->flags + used, sizeof q->flags - used, " -ffp-contract=fast");
    else q->contract = 0;
  }
  const char *parts[5] = { src, q->cc, q->flags, q->level != NULL ? q->level : "",
                           fast ? "fast tier" : "" };
  pthread_once(&prefix_once, hash_prefix);
  if (prefix != NULL && strncmp(src, prefix, prefix_len) == 0)
    diskcache_key_after(&prefix_state, prefix_len, fast ? 5 : 4, parts, q->key);
  else
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
 * the estimate of a build's remaining time; under pace_lock. */
static double built_seconds, built_bytes;
static pthread_mutex_t pace_lock = PTHREAD_MUTEX_INITIALIZER;

double kcache_build_seconds(size_t bytes) {
  pthread_mutex_lock(&pace_lock);
  double b = (double)bytes;
  double s = built_bytes > 0 ? b * built_seconds / built_bytes : 0.1 + b * 5e-6;
  pthread_mutex_unlock(&pace_lock);
  return s;
}

void kcache_fork_prepare(void) {
  pthread_mutex_lock(&cache_lock);
  pthread_mutex_lock(&pace_lock);
}

void kcache_fork_after(void) {
  pthread_mutex_unlock(&pace_lock);
  pthread_mutex_unlock(&cache_lock);
}

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
    snprintf(err, cap, "cpu: cannot write %.900s (%s)", cfile, strerror(errno));
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
  for (int i = 0; i < NFIXED; i++)
    if (!q->contract || strcmp(fixed_flags[i], "-ffp-contract=off") != 0)
      argv[n++] = (char *)fixed_flags[i];
  argv[n++] = "-o";
  argv[n++] = sofile;
  argv[n++] = cfile;
  argv[n++] = "-lm";
  argv[n] = NULL;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = spawn_run(argv, logfile, tmp, q->fast ? fast_cc_timeout() : cc_timeout(), stop, arg,
                    slot);
  free(argv);
  free(flags);
  if (rc != 0) return failed_text(q, rc, logfile, err, cap);
  double took = seconds_since(&t0);
  if (!q->fast) {
    pthread_mutex_lock(&pace_lock);
    built_seconds += took;
    built_bytes += (double)strlen(q->src);
    pthread_mutex_unlock(&pace_lock);
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

int obtain(const request *q, int how, int (*stop)(void *), void *arg, char *err, size_t cap,
           void **out) {
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

int obtain_now(lacc_ctx *ctx, const char *src, int64_t longest, int how, void **dl) {
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
