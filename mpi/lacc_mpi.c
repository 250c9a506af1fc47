/* lacc_mpi.c: MPI for lacc.mpi, as collectives over byte buffers (lacc_mpi.h).
 *
 * Owns: starting and ending MPI, the byte collectives (all-gather, all-to-all, the ranks'
 * agreement on what comes next and on a failure, with its bounded wait), and the counters
 * of what was sent. Must not: know lacc's arrays or programs (lua/lacc/mpi.lua turns
 * arrays into bytes and back, and describes each step): this file links MPI and nothing
 * of lacc.
 */
#define _GNU_SOURCE
#include "lacc_mpi.h"
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* MPI is one per process, so is this state; the lock orders every call. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int started_here;        /* this library called MPI_Init (and so ends MPI at exit) */
static _Thread_local char errbuf[2048];   /* each thread its own last error */
static lacc_mpi_stats stats;
/* LACC_MPI_TIMEOUT: the seconds an agreement waits for the other ranks (0: no bound) */
static double timeout_s = 600;
/* Set when an agreement timed out: its collective is still pending (MPI cannot cancel a
 * collective), so no later one could match the other ranks' calls. Every later call
 * fails with this, and the exit ends the job. */
static char broken[640];

static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  va_end(ap);
  return -1;
}

static int mpi_fail(const char *what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", code);
  return fail("%s failed: %s", what, text);
}

const char *lacc_mpi_error(void) { return errbuf; }
void lacc_mpi_free(void *p) { free(p); }

static int leave(void);

/* At exit: a clean end (status 0) finalizes MPI once every rank is leaving too (leave);
 * any other status (an uncaught Lua error, os.exit(false)), or MPI left unusable by a
 * timed-out agreement, aborts the whole job, so that the other ranks, maybe waiting in a
 * collective for this one, end too rather than hang. */
static void end_mpi(int status, void *unused) {
  (void)unused;
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return;
  fflush(NULL);   /* this rank's output so far, before an abort (maybe another's) ends it */
  if (status == 0 && !broken[0] && leave() != 0) {
    fprintf(stderr, "lacc.mpi: at exit: %s\n", errbuf);
    status = 1;
  }
  if (status != 0 || broken[0]) MPI_Abort(MPI_COMM_WORLD, status != 0 ? status : 1);
  MPI_Finalize();
}

/* Lua loads C modules (and LuaJIT libraries) with RTLD_LOCAL, so libmpi's symbols would
 * be hidden from the plugins Open MPI itself loads at MPI_Init ("undefined symbol"):
 * load libmpi again, globally, first. */
static void libmpi_global(void) {
  Dl_info info;
  if (dladdr((void *)&MPI_Init, &info) && info.dli_fname) {
    void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    (void)h;   /* kept open for good: libmpi must outlive this library */
  }
}

/* The exit handler lives in this library, which Lua unloads at lua_close, before exit:
 * pin it in memory (RTLD_NODELETE), or exit would call into an unmapped page. */
static void pin_self(void) {
  Dl_info info;
  if (dladdr((void *)&pin_self, &info) && info.dli_fname) {
    void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    (void)h;
  }
}

/* LACC_MPI_TIMEOUT, when set: a number of seconds, 0 for no bound */
static int read_timeout(void) {
  const char *v = getenv("LACC_MPI_TIMEOUT");
  if (v == NULL || *v == '\0') return 0;
  char *end = NULL;
  double t = strtod(v, &end);
  if (*end != '\0' || !isfinite(t) || t < 0)
    return fail("LACC_MPI_TIMEOUT must be a number of seconds (0: no bound), got '%s'", v);
  timeout_s = t;
  return 0;
}

/* MPI_Init where neither this library nor the host has started it */
static int start(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (fin) return fail("MPI has already been finalized in this process");
  if (init) return 0;
  libmpi_global();
  int provided = 0;
  int code = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
  if (code != MPI_SUCCESS) return mpi_fail("MPI_Init_thread", code);
  started_here = 1;
  /* errors come back as codes, each said as a Lua error, rather than ending the job */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  pin_self();
  on_exit(end_mpi, NULL);
  return 0;
}

int lacc_mpi_init(void) {
  pthread_mutex_lock(&lock);
  int rc = read_timeout();
  if (rc == 0) rc = start();
  pthread_mutex_unlock(&lock);
  return rc;
}

int lacc_mpi_initialized(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

int lacc_mpi_rank(void) {
  int r = 0;
  if (lacc_mpi_initialized()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int lacc_mpi_size(void) {
  int s = 1;
  if (lacc_mpi_initialized()) MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

double lacc_mpi_wtime(void) { return MPI_Wtime(); }

void lacc_mpi_get_stats(lacc_mpi_stats *out) {
  pthread_mutex_lock(&lock);
  *out = stats;
  pthread_mutex_unlock(&lock);
}

void lacc_mpi_reset_stats(void) {
  pthread_mutex_lock(&lock);
  memset(&stats, 0, sizeof stats);
  pthread_mutex_unlock(&lock);
}

static int ready(void) {
  if (!lacc_mpi_initialized()) return fail("MPI is not running: call lacc.mpi.init() first");
  if (broken[0]) return fail("an earlier agreement failed: %s", broken);
  return 0;
}

/* lens (n entries) as MPI's int counts and displacements; -1 past INT_MAX bytes in all */
static int counts_of(const int64_t *lens, int n, int *counts, int *displs, int64_t *total) {
  int64_t t = 0;
  for (int r = 0; r < n; r++) {
    if (lens[r] < 0 || lens[r] > INT_MAX - t) return fail("a message of over %d bytes in all", INT_MAX);
    counts[r] = (int)lens[r];
    displs[r] = (int)t;
    t += lens[r];
  }
  *total = t;
  return 0;
}

/* What one rank sends the others: its parts to ranks other than itself. */
static void count_traffic(int me, int n, const int64_t *sent, const int64_t *received) {
  stats.collectives++;
  for (int r = 0; r < n; r++) {
    if (r == me) continue;
    if (sent[r] > 0) stats.bytes_sent += sent[r], stats.messages_sent++;
    if (received[r] > 0) stats.bytes_received += received[r], stats.messages_received++;
  }
}

/* Whether every rank can go on (each passes whether it can): the ranks decide together
 * before an exchange one of them could not take part in (a message past MPI's int
 * counts, a buffer that could not be allocated), so that none is left waiting in it.
 * 1: all can; 0: some rank cannot (errbuf says why, on the ranks that had no reason of
 * their own too); -1: MPI failed. */
static int all_can(int mine) {
  int all = 0;
  int code = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) return mpi_fail("MPI_Allreduce", code);
  stats.collectives++;
  if (all) return 1;
  if (mine) fail("another rank could not take part in the exchange (a message of over %d bytes, or out of memory)", INT_MAX);
  return 0;
}

/* The test hook LACC_MPI_TEST_FAIL=r: rank r (1-based) cannot allocate the buffers of
 * its exchanges (the specs' one rank that cannot take part). */
static int refused(int me) {
  const char *v = getenv("LACC_MPI_TEST_FAIL");
  if (v == NULL || atoi(v) != me + 1) return 0;
  fail("out of memory for an exchange (LACC_MPI_TEST_FAIL)");
  return 1;
}

/* The buffer of total bytes an exchange receives into (where this rank can go on so
 * far), then the ranks' agreement (all_can): 1 when every rank can take part. */
static int receive_buffer(int can, int64_t total, int me, char **buf) {
  if (can) {
    *buf = malloc(total > 0 ? (size_t)total : 1);
    if (*buf == NULL) fail("out of memory for %lld bytes", (long long)total);
    can = *buf != NULL && !refused(me);
  }
  return all_can(can);
}

/* n ranks' counts and displacements (int, for MPI) and 64-bit lengths: one block. */
typedef struct {
  int *counts, *displs, *rcounts, *rdispls;
  int64_t *lens;
} counts_t;

static int alloc_counts(int n, counts_t *c) {
  c->counts = calloc((size_t)n, sizeof *c->counts), c->displs = calloc((size_t)n, sizeof *c->displs);
  c->rcounts = calloc((size_t)n, sizeof *c->rcounts), c->rdispls = calloc((size_t)n, sizeof *c->rdispls);
  c->lens = calloc((size_t)n, sizeof *c->lens);
  if (c->counts && c->displs && c->rcounts && c->rdispls && c->lens) return 0;
  return fail("out of memory for %d ranks' counts", n);
}

static void free_counts(counts_t *c) {
  free(c->counts), free(c->displs), free(c->rcounts), free(c->rdispls), free(c->lens);
}

int lacc_mpi_allgather(const void *data, int64_t n, int64_t *lens, void **out) {
  *out = NULL;
  if (ready() != 0) return -1;
  pthread_mutex_lock(&lock);
  int me = 0, size = 1, rc = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  counts_t c = { 0 };
  int64_t total = 0;
  char *buf = NULL;
  /* every rank reaches each collective below, whatever failed on it */
  int code = MPI_Allgather(&n, 1, MPI_INT64_T, lens, 1, MPI_INT64_T, MPI_COMM_WORLD);
  int can = alloc_counts(size, &c) == 0;
  if (code != MPI_SUCCESS) { mpi_fail("MPI_Allgather", code); goto done; }
  can = can && counts_of(lens, size, c.counts, c.displs, &total) == 0;
  if (receive_buffer(can, total, me, &buf) != 1) goto done;
  code = MPI_Allgatherv(data, (int)n, MPI_BYTE, buf, c.counts, c.displs, MPI_BYTE, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) { mpi_fail("MPI_Allgatherv", code); goto done; }
  for (int r = 0; r < size; r++) c.lens[r] = n;
  count_traffic(me, size, c.lens, lens);
  *out = buf;
  buf = NULL;
  rc = 0;
done:
  free(buf);
  free_counts(&c);
  pthread_mutex_unlock(&lock);
  return rc;
}

/* The tag of lacc_mpi_exchange's messages (the collectives use MPI's own) */
enum { EXCHANGE_TAG = 7 };

/* lacc_mpi_exchange's receive buffer, reserved before the exchanges it serves */
static char *rbuf;
static int64_t rcap;

static int reserve_locked(int64_t n) {
  if (n <= rcap) return 0;
  char *p = realloc(rbuf, (size_t)n);
  if (p == NULL) return fail("out of memory for %lld bytes", (long long)n);
  rbuf = p, rcap = n;
  return 0;
}

int lacc_mpi_reserve(int64_t n) {
  if (ready() != 0) return -1;
  if (n < 0 || n > INT_MAX) return fail("a message of %lld bytes (at most %d)", (long long)n, INT_MAX);
  pthread_mutex_lock(&lock);
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int rc = refused(me) ? -1 : reserve_locked(n);
  pthread_mutex_unlock(&lock);
  return rc;
}

/* from's message, its size learnt by a probe, into the receive buffer */
static int receive_from(int from, void **out, int64_t *outlen) {
  MPI_Status st;
  int count = 0;
  int code = MPI_Probe(from, EXCHANGE_TAG, MPI_COMM_WORLD, &st);
  if (code != MPI_SUCCESS) return mpi_fail("MPI_Probe", code);
  code = MPI_Get_count(&st, MPI_BYTE, &count);
  if (code != MPI_SUCCESS) return mpi_fail("MPI_Get_count", code);
  if (reserve_locked(count > 0 ? count : 1) != 0) return -1;
  code = MPI_Recv(rbuf, count, MPI_BYTE, from, EXCHANGE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (code != MPI_SUCCESS) return mpi_fail("MPI_Recv", code);
  stats.bytes_received += count, stats.messages_received++;
  *out = rbuf, *outlen = count;
  return 0;
}

int lacc_mpi_exchange(int to, const void *data, int64_t n, int from, void **out, int64_t *outlen) {
  *out = NULL, *outlen = 0;
  if (ready() != 0) return -1;
  if (n < 0 || n > INT_MAX) return fail("a message of %lld bytes (at most %d)", (long long)n, INT_MAX);
  pthread_mutex_lock(&lock);
  int size = 1, rc = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Request req = MPI_REQUEST_NULL;
  if (to >= size || from >= size) rc = fail("no rank %d of %d", (to >= size ? to : from) + 1, size);
  if (rc == 0 && to >= 0) {
    int code = MPI_Isend(data, (int)n, MPI_BYTE, to, EXCHANGE_TAG, MPI_COMM_WORLD, &req);
    if (code != MPI_SUCCESS) rc = mpi_fail("MPI_Isend", code);
    else stats.bytes_sent += n, stats.messages_sent++;
  }
  if (rc == 0 && from >= 0) rc = receive_from(from, out, outlen);
  if (req != MPI_REQUEST_NULL) {
    int code = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS && rc == 0) rc = mpi_fail("MPI_Wait", code);
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

int lacc_mpi_alltoall(const void *send, const int64_t *sendlens, int64_t *recvlens, void **out) {
  *out = NULL;
  if (ready() != 0) return -1;
  pthread_mutex_lock(&lock);
  int me = 0, size = 1, rc = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  counts_t c = { 0 };
  int64_t stotal = 0, rtotal = 0;
  char *buf = NULL;
  /* every rank reaches each collective below, whatever failed on it */
  int code = MPI_Alltoall(sendlens, 1, MPI_INT64_T, recvlens, 1, MPI_INT64_T, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) { mpi_fail("MPI_Alltoall", code); goto done; }
  int can = alloc_counts(size, &c) == 0 && counts_of(sendlens, size, c.counts, c.displs, &stotal) == 0 &&
            counts_of(recvlens, size, c.rcounts, c.rdispls, &rtotal) == 0;
  if (receive_buffer(can, rtotal, me, &buf) != 1) goto done;
  code = MPI_Alltoallv(send, c.counts, c.displs, MPI_BYTE, buf, c.rcounts, c.rdispls, MPI_BYTE, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) { mpi_fail("MPI_Alltoallv", code); goto done; }
  count_traffic(me, size, sendlens, recvlens);
  *out = buf;
  buf = NULL;
  rc = 0;
done:
  free(buf);
  free_counts(&c);
  pthread_mutex_unlock(&lock);
  return rc;
}

/* FNV-1a: the digest of a description, compared across ranks (equal descriptions give
 * equal digests; unequal ones collide with odds of about 2^-64) */
static uint64_t digest_of(const char *s) {
  uint64_t h = 14695981039346656037ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Waits for a collective this rank has begun, polling (which also drives MPI's progress)
 * for up to `limit` seconds (0: no bound). Past it the collective stays pending (MPI
 * cannot cancel one): MPI is marked unusable in this process (broken) and -1 says why. */
static int wait_bounded(MPI_Request *req, double limit, const char *what) {
  double start = MPI_Wtime();
  struct timespec nap = { 0, 100000 };
  for (long polls = 0;; polls++) {
    int done = 0;
    int code = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS) return mpi_fail("MPI_Test", code);
    if (done) return 0;
    if (polls < 1000) continue;   /* the others usually answer within microseconds */
    double waited = MPI_Wtime() - start;
    if (limit > 0 && waited > limit) {
      snprintf(broken, sizeof broken, "no agreement within %g s (LACC_MPI_TIMEOUT) before %.200s: "
               "another rank has not reached this step (still busy, waiting elsewhere, or stopped); "
               "MPI cannot be used again in this process, whose exit ends the job", limit, what);
      return fail("%s", broken);
    }
    /* a long wait leaves the core to others (ranks may outnumber cores) */
    if (waited > 0.01) nanosleep(&nap, NULL);
    else sched_yield();
  }
}

/* The agreement's one all-reduce (MIN) of {this rank where it failed, else size; the
 * digest; its complement}: every rank learns alike the first failing rank and the least
 * and the greatest digest. Static: the buffers of a vote that timed out stay MPI's. */
static uint64_t vote_in[3], vote_out[3];

static int vote(int me, int size, int failed, const char *what, double limit) {
  uint64_t d = digest_of(what);
  vote_in[0] = failed ? (uint64_t)me : (uint64_t)size;
  vote_in[1] = d, vote_in[2] = ~d;
  MPI_Request req;
  int code = MPI_Iallreduce(vote_in, vote_out, 3, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD, &req);
  if (code != MPI_SUCCESS) return mpi_fail("MPI_Iallreduce", code);
  if (wait_bounded(&req, limit, what) != 0) return -1;
  stats.collectives++;
  return 0;
}

/* The first failing rank's message (low, 0-based), on every rank */
static int failure_of(int low, int me, int size, const char *msg, int *first, char **out) {
  int len = low == me && msg ? (int)strnlen(msg, 65536) : 0;
  int code = MPI_Bcast(&len, 1, MPI_INT, low, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) return mpi_fail("MPI_Bcast", code);
  char *text = malloc((size_t)len + 1);
  if (!text) return fail("out of memory");
  if (low == me) memcpy(text, msg, (size_t)len);
  code = MPI_Bcast(text, len, MPI_CHAR, low, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) { free(text); return mpi_fail("MPI_Bcast", code); }
  text[len] = '\0';
  if (low == me) stats.bytes_sent += (int64_t)len * (size - 1), stats.messages_sent += size - 1;
  else stats.bytes_received += len, stats.messages_received++;
  *first = low, *out = text;
  return 0;
}

/* the ranks' descriptions, as the all-gather left them */
typedef struct {
  const char *all;
  const int *lens, *displs;
  int size;
} said_t;

static int same(const said_t *s, int r, int q) {
  return s->lens[r] == s->lens[q] && memcmp(s->all + s->displs[r], s->all + s->displs[q], (size_t)s->lens[r]) == 0;
}

/* text += printf(fmt, ...), cut at cap */
__attribute__((format(printf, 3, 4))) static void put(char *text, size_t cap, const char *fmt, ...) {
  size_t n = strlen(text);
  if (n + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text + n, cap - n, fmt, ap);
  va_end(ap);
}

/* "rank 2" or "ranks 1-3, 5": the ranks (1-based) that said what rank r said; how many */
static int put_ranks(char *text, size_t cap, const said_t *s, int r) {
  int count = 0;
  for (int q = r; q < s->size; q++) count += same(s, q, r);
  put(text, cap, "%s", count == 1 ? "rank " : "ranks ");
  for (int q = r, sep = 0; q < s->size; q++) {
    if (!same(s, q, r)) continue;
    int end = q;
    while (end + 1 < s->size && same(s, end + 1, r)) end++;
    put(text, cap, "%s%d", sep ? ", " : "", q + 1);
    if (end > q) put(text, cap, "-%d", end + 1);
    sep = 1, q = end;
  }
  return count;
}

/* "ranks disagree on the next step: rank 1 runs X; ranks 2-4 run Y" (four kinds at most) */
static void say_disagreement(char *text, size_t cap, const said_t *s) {
  text[0] = '\0';
  put(text, cap, "ranks disagree on the next step: ");
  for (int r = 0, kinds = 0; r < s->size; r++) {
    int seen = 0;
    for (int q = 0; q < r && !seen; q++) seen = same(s, q, r);
    if (seen) continue;
    if (kinds == 4) { put(text, cap, "; and more"); break; }
    if (kinds++) put(text, cap, "; ");
    int n = put_ranks(text, cap, s, r);
    put(text, cap, " %s %.*s", n == 1 ? "runs" : "run", s->lens[r], s->all + s->displs[r]);
  }
}

/* The ranks' descriptions all-gathered, said as the error (every rank has them all, so
 * every rank raises the same). Reached by every rank, alike, when the vote's digests
 * differ; each collective is reached by every rank, whatever failed on it. */
static int disagreement(int size, const char *what) {
  int len = (int)strnlen(what, 512);   /* enough to tell steps apart in a message */
  int *lens = calloc((size_t)size, sizeof *lens), *displs = calloc((size_t)size, sizeof *displs);
  char *all = NULL;
  int rc = -1;
  if (all_can(lens && displs) != 1) goto done;
  int code = MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) { mpi_fail("MPI_Allgather", code); goto done; }
  int total = 0;
  for (int r = 0; r < size; r++) displs[r] = total, total += lens[r];
  all = malloc((size_t)total + 1);
  if (all_can(all != NULL) != 1) goto done;
  code = MPI_Allgatherv(what, len, MPI_CHAR, all, lens, displs, MPI_CHAR, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) { mpi_fail("MPI_Allgatherv", code); goto done; }
  char text[1536];
  said_t s = { all, lens, displs, size };
  say_disagreement(text, sizeof text, &s);
  fail("%s", text);
  rc = 1;
done:
  if (rc < 0 && !broken[0]) {   /* what failed, as part of the disagreement it was to say */
    char why[sizeof errbuf];
    memcpy(why, errbuf, sizeof why);
    fail("ranks disagree on the next step (and could not say how: %.400s)", why);
  }
  free(lens), free(displs), free(all);
  return rc;
}

/* The agreement, the lock held: 0 (*first, *out: lacc_mpi_agree's), 1 where the ranks
 * disagree, -1 where MPI failed or no agreement came in time (errbuf says which). */
static int agree_locked(int failed, const char *msg, const char *what, double limit, int *first, char **out) {
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (vote(me, size, failed, what, limit) != 0) return -1;
  /* a failure first: a rank that failed may not have known what it was about to do */
  if (vote_out[0] < (uint64_t)size) return failure_of((int)vote_out[0], me, size, msg, first, out);
  if (vote_out[1] != ~vote_out[2]) return disagreement(size, what);
  return 0;
}

int lacc_mpi_agree(int failed, const char *msg, const char *what, int *first, char **out) {
  *first = -1, *out = NULL;
  if (ready() != 0) return -1;
  pthread_mutex_lock(&lock);
  int rc = agree_locked(failed, msg, what ? what : "", timeout_s, first, out);
  pthread_mutex_unlock(&lock);
  return rc == 0 ? 0 : -1;
}

int lacc_mpi_barrier(void) {
  int first;
  char *text;
  if (lacc_mpi_agree(0, NULL, "lacc.mpi.barrier", &first, &text) != 0) return -1;
  free(text);
  return 0;
}

/* What a rank leaving says, in the others' disagreement */
#define LEAVING "the end of its program (exit, no more collectives)"

/* A clean exit: this rank answers the others' agreements with LEAVING (to them a
 * disagreement: an error, not a wait for a rank that is gone) until every rank leaves,
 * then MPI can be finalized. No bound: the others may work on for long. */
static int leave(void) {
  pthread_mutex_lock(&lock);
  int rc;
  for (;;) {
    int first = -1;
    char *text = NULL;
    rc = agree_locked(0, NULL, LEAVING, 0, &first, &text);
    free(text);
    if (rc < 0 || (rc == 0 && first < 0)) break;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

void lacc_mpi_abort(int status) {
  if (lacc_mpi_initialized()) MPI_Abort(MPI_COMM_WORLD, status);
  exit(status);
}
