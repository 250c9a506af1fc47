/* builds.c: the cpu backend's background builds (LACC_TIER=auto).
 *
 * Owns: a process-wide queue of optimised builds and the worker threads that run them
 * (one fewer than the cores, at least one, at most four), each build owning copies of all
 * it needs and never a Lua state's context, so a state may close while its kernels
 * build; at exit, the builds left handed to a detached process (LACC_DETACH_BUILDS) and
 * every compiler under way stopped; after fork(), the parent's builds queued again in
 * the child; the process-wide counts of runs and builds (lacc_tiers).
 * Must not: compile (kcache.c does, for a job) or decide which code runs use (code.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cpu/builds.h"
#include "base/settings.h"


pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t jobs_cond = PTHREAD_COND_INITIALIZER;
/* Under jobs_lock: the queue (oldest first), the jobs being built, the workers. */
static job *queue_head, *queue_tail, *building;
static int workers, running;
static atomic_int exiting;          /* the process is exiting: stop every compiler */

int builds_exiting(void) { return atomic_load(&exiting); }
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

void job_release(job *j) {
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
void take_locked(job *j) {
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
void build_locked(job *j, int (*stop)(void *), void *arg) {
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
struct timespec in_ms(long ms) {
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
  kcache_fork_prepare();
}

static void fork_parent(void) {
  kcache_fork_after();
  pthread_mutex_unlock(&jobs_lock);
}

static void fork_child(void) {
  kcache_fork_after();
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
void kick_locked(void) {
  if (queue_head != NULL && workers == 0) start_worker_locked();
}

/* The build of q (taken) queued, or the one of the same kernels already under way: a
 * reference to it; NULL when out of memory (q freed). */
job *enqueue(request *q) {
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
