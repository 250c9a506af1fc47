/* pool.c: the process-wide thread pool that runs kernel loops in chunks.
 *
 * Owns: the worker threads (LACC_THREADS, default the number of cores), started once
 * on first use, and the one job they work on at a time. Every Lua state of the
 * process shares them: a caller that finds the pool busy runs its loop on its own
 * thread instead of waiting, so no state ever blocks on another. A job may be stopped
 * (pool_on_stop): its chunks not yet claimed are dropped, so a run stops within a chunk.
 * Threads spin a little (TUNE_POOL_SPIN_US) before they sleep.
 * Must not: know about kernels, plans or contexts; it runs fn(arg, chunk) and returns.
 */
#define _GNU_SOURCE   /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "base/internal.h"
#include "cpu/pool.h"
#include "base/settings.h"

#define POOL_MAX 256

/* One job lives on its caller's stack; workers join it under the lock and the caller
 * unpublishes it only once no worker is inside. */
typedef struct job {
  pool_fn fn;
  void *arg;
  int64_t nchunks;
  atomic_llong next;             /* next chunk to claim */
  int64_t finished;              /* chunks completed or cut (under the lock) */
  int active;                    /* workers inside (under the lock) */
  uint64_t generation;
  int (*stop)(void *);           /* the submitter's stop test (pool_on_stop) */
  void *stop_arg;
  struct timespec t0;            /* when it started, for its stop test (pool_progress) */
} job;

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  pthread_mutex_t submit;        /* held by the caller whose job is running */
  int nthreads;                  /* workers + the caller */
  int spin;                      /* threads spin before they sleep (no more than the cores) */
  job *current;
  uint64_t generation;
  atomic_ullong published;       /* generation, as workers spinning outside the lock see it */
} pool;

static pool P = {
  .lock = PTHREAD_MUTEX_INITIALIZER,
  .work = PTHREAD_COND_INITIALIZER,
  .done = PTHREAD_COND_INITIALIZER,
  .submit = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Waking a sleeping thread costs some 10-30 us (a run of 200k to 4M elements paid it on
 * every kernel: 2-3x the C loop's time); a thread that finished its share spins that long
 * first, as OpenMP's do, and catches the next job (or its job's end) awake. */
static void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static double spin_seconds(void) { return P.spin ? TUNE_POOL_SPIN_US * 1e-6 : 0; }

/* Spins until published moves from g or the spin time is up; whether it moved. */
static int spin_for_job(uint64_t g) {
  if (!P.spin) return 0;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0;; i++) {
    if (atomic_load_explicit(&P.published, memory_order_acquire) != g) return 1;
    relax();
    if ((i & 63) == 63 && seconds_since(&t0) > spin_seconds()) return 0;
  }
}

static int threads_wanted(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores <= 0) cores = 1;
  if (cores > POOL_MAX) cores = POOL_MAX;
  return (int)setting_number("LACC_THREADS", (double)cores, 1, POOL_MAX, 1);
}

static _Thread_local void (*tick_fn)(void *, double);
static _Thread_local void *tick_arg;
static _Thread_local int (*stop_fn)(void *);
static _Thread_local void *stop_arg;
static _Thread_local job *draining;   /* the job whose chunks this thread claims now */

int pool_progress(double *share, double *seconds) {
  const job *j = draining;
  if (j == NULL || j->nchunks <= 0) return 0;
  int64_t c = atomic_load(&j->next);
  *share = (double)(c < j->nchunks ? c : j->nchunks) / (double)j->nchunks;
  *seconds = seconds_since(&j->t0);
  return 1;
}

void pool_on_tick(void (*tick)(void *arg, double done), void *arg) {
  tick_fn = tick;
  tick_arg = arg;
}

void pool_on_stop(int (*stop)(void *arg), void *arg) {
  stop_fn = stop;
  stop_arg = arg;
}

/* Takes every chunk nobody has claimed yet off the job; returns how many (they count
 * as finished: nobody will run them). */
static int64_t cut(job *j) {
  int64_t c = atomic_exchange(&j->next, j->nchunks);
  return c < j->nchunks ? j->nchunks - c : 0;
}

/* Claim chunks until none is left or the job is stopped; returns how many this thread
 * ran or cut. The submitting thread reports after each of its chunks (workers never
 * call into the host). */
static int64_t drain(job *j, int submitter) {
  int64_t ran = 0;
  draining = j;
  for (;;) {
    if (j->stop != NULL && j->stop(j->stop_arg)) {
      ran += cut(j);
      break;
    }
    int64_t c = atomic_fetch_add(&j->next, 1);
    if (c >= j->nchunks) break;
    j->fn(j->arg, c);
    ran++;
    if (submitter && tick_fn != NULL) tick_fn(tick_arg, (double)(c + 1) / (double)j->nchunks);
  }
  draining = NULL;
  return ran;
}

static void *worker(void *unused) {
  (void)unused;
  uint64_t seen = 0;
  pthread_mutex_lock(&P.lock);
  for (;;) {
    while (P.current == NULL || P.current->generation == seen) {
      uint64_t g = atomic_load(&P.published);
      pthread_mutex_unlock(&P.lock);
      int moved = spin_for_job(g);
      pthread_mutex_lock(&P.lock);
      if (!moved && (P.current == NULL || P.current->generation == seen))
        pthread_cond_wait(&P.work, &P.lock);
    }
    job *j = P.current;
    seen = j->generation;
    j->active++;
    pthread_mutex_unlock(&P.lock);
    int64_t ran = drain(j, 0);
    pthread_mutex_lock(&P.lock);
    j->finished += ran;
    j->active--;
    pthread_cond_broadcast(&P.done);
  }
  return NULL;
}

/* Workers wait inside this library for the life of the process, and the kernel cache
 * keeps its entries there, so it must never be unmapped: a Lua state that closes
 * unloads its C modules (and liblacc with them), and a waiting worker would then wake
 * up in unmapped code. */
static _Atomic int started_with;   /* the pool's threads once it has started, else 0 */
static atomic_int restart;         /* a forked child: its workers are to be started again */

/* fork(): the child has none of the workers, and a job under way belongs to a thread
 * that is not there. P.lock is held across the fork (workers hold it only between
 * jobs); the child forgets the job and starts workers again on its next run. */
static void fork_prepare(void) { pthread_mutex_lock(&P.lock); }
static void fork_parent(void) { pthread_mutex_unlock(&P.lock); }
static void fork_child(void) {
  P.current = NULL;
  P.nthreads = 1;
  pthread_mutex_init(&P.submit, NULL);   /* possibly held by a parent's thread */
  pthread_cond_init(&P.work, NULL);
  pthread_cond_init(&P.done, NULL);
  atomic_store(&restart, 1);
  pthread_mutex_unlock(&P.lock);
}

static void start(void) {
  int n = threads_wanted();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  P.nthreads = 1;
  P.spin = cores > 0 && n <= cores;   /* more threads than cores: a spinner takes a core
                                         another thread needs */
  if (n > 1 && !lib_pin()) return;   /* without it, no workers */
  static atomic_int registered;
  if (n > 1 && !atomic_exchange(&registered, 1)) pthread_atfork(fork_prepare, fork_parent, fork_child);
  for (int i = 1; i < n; i++) {
    pthread_t t;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) break;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, worker, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) break;
    P.nthreads++;
  }
}

int pool_threads(void) {
  if (atomic_exchange(&restart, 0)) start();
  else pthread_once(&once, start);
  started_with = P.nthreads;
  return P.nthreads;
}

int pool_threads_planned(int *started) {
  *started = started_with != 0;
  return *started ? started_with : threads_wanted();
}

void pool_run(int64_t nchunks, pool_fn fn, void *arg) {
  if (nchunks <= 0) return;
  job j = { .fn = fn, .arg = arg, .nchunks = nchunks, .stop = stop_fn, .stop_arg = stop_arg };
  atomic_init(&j.next, 0);
  if (stop_fn != NULL) clock_gettime(CLOCK_MONOTONIC, &j.t0);
  if (nchunks == 1 || pool_threads() == 1 || pthread_mutex_trylock(&P.submit) != 0) {
    drain(&j, 1);   /* on this thread alone */
    return;
  }
  pthread_mutex_lock(&P.lock);
  j.generation = ++P.generation;
  P.current = &j;
  atomic_store_explicit(&P.published, j.generation, memory_order_release);
  pthread_cond_broadcast(&P.work);
  pthread_mutex_unlock(&P.lock);
  int64_t ran = drain(&j, 1);
  pthread_mutex_lock(&P.lock);
  j.finished += ran;
  if (P.spin && (j.finished < nchunks || j.active > 0)) {   /* the workers' shares: awake */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; (j.finished < nchunks || j.active > 0) &&
                    ((i & 63) != 63 || seconds_since(&t0) <= spin_seconds()); i++) {
      pthread_mutex_unlock(&P.lock);
      relax();
      pthread_mutex_lock(&P.lock);
    }
  }
  while (j.finished < nchunks || j.active > 0) pthread_cond_wait(&P.done, &P.lock);
  P.current = NULL;
  pthread_mutex_unlock(&P.lock);
  pthread_mutex_unlock(&P.submit);
}
