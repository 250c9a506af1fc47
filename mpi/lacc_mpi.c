/* lacc_mpi.c: MPI for lacc.mpi, as collectives over byte buffers (lacc_mpi.h).
 *
 * Owns: starting and ending MPI, the byte collectives (all-gather, all-to-all, agreeing
 * on a failure), and the counters of what was sent. Must not: know lacc's arrays or
 * programs (lua/lacc/mpi.lua turns arrays into bytes and back): this file links MPI
 * and nothing of lacc.
 */
#define _GNU_SOURCE
#include "lacc_mpi.h"
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPI is one per process, so is this state; the lock orders every call. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int started_here;        /* this library called MPI_Init (and so ends MPI at exit) */
static _Thread_local char errbuf[512];   /* each thread its own last error */
static lacc_mpi_stats stats;

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

/* At exit: a clean end (status 0) finalizes MPI; any other status (an uncaught Lua
 * error, os.exit(false)) aborts the whole job with it, so that the other ranks, maybe
 * waiting in a collective for this one, end too rather than hang. */
static void end_mpi(int status, void *unused) {
  (void)unused;
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return;
  if (status != 0) MPI_Abort(MPI_COMM_WORLD, status);
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

int lacc_mpi_init(void) {
  pthread_mutex_lock(&lock);
  int init = 0, fin = 0, rc = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (fin) {
    rc = fail("MPI has already been finalized in this process");
  } else if (!init) {
    libmpi_global();
    int provided = 0;
    int code = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (code != MPI_SUCCESS) {
      rc = mpi_fail("MPI_Init_thread", code);
    } else {
      started_here = 1;
      /* errors come back as codes, each said as a Lua error, rather than ending the job */
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      pin_self();
      on_exit(end_mpi, NULL);
    }
  }
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

int lacc_mpi_agree(int failed, const char *msg, int *first, char **out) {
  *first = -1, *out = NULL;
  if (ready() != 0) return -1;
  pthread_mutex_lock(&lock);
  int me = 0, size = 1, rc = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = failed ? me : size, low = size;
  int code = MPI_Allreduce(&mine, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) { mpi_fail("MPI_Allreduce", code); goto out; }
  stats.collectives++;
  if (low == size) { rc = 0; goto out; }
  int len = low == me && msg ? (int)strnlen(msg, 65536) : 0;
  code = MPI_Bcast(&len, 1, MPI_INT, low, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) { mpi_fail("MPI_Bcast", code); goto out; }
  char *text = malloc((size_t)len + 1);
  if (!text) { fail("out of memory"); goto out; }
  if (low == me) memcpy(text, msg, (size_t)len);
  code = MPI_Bcast(text, len, MPI_CHAR, low, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) { free(text); mpi_fail("MPI_Bcast", code); goto out; }
  text[len] = '\0';
  if (low == me) stats.bytes_sent += (int64_t)len * (size - 1), stats.messages_sent += size - 1;
  else stats.bytes_received += len, stats.messages_received++;
  *first = low, *out = text;
  rc = 0;
out:
  pthread_mutex_unlock(&lock);
  return rc;
}

int lacc_mpi_barrier(void) {
  if (ready() != 0) return -1;
  pthread_mutex_lock(&lock);
  int code = MPI_Barrier(MPI_COMM_WORLD);
  if (code == MPI_SUCCESS) stats.collectives++;
  pthread_mutex_unlock(&lock);
  return code == MPI_SUCCESS ? 0 : mpi_fail("MPI_Barrier", code);
}

void lacc_mpi_abort(int status) {
  if (lacc_mpi_initialized()) MPI_Abort(MPI_COMM_WORLD, status);
  exit(status);
}
