/* builds.h: the cpu backend's background builds (builds.c): jobs, their queue and lock. */
#ifndef LACC_BUILDS_H
#define LACC_BUILDS_H

#include <pthread.h>
#include <stdatomic.h>
#include "cpu/code.h"
#include "cpu/kcache.h"

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

/* The jobs' states and the queue are under jobs_lock; jobs_cond is broadcast whenever a
 * job changes state. */
extern pthread_mutex_t jobs_lock;
extern pthread_cond_t jobs_cond;

/* The build of q (taken) queued, or the one of the same kernels already under way: a
 * reference to it; NULL when out of memory (q freed). */
job *enqueue(request *q);
/* A reference to j dropped (NULL: nothing). */
void job_release(job *j);
/* Under jobs_lock: workers started again for jobs left queued (after a fork). */
void kick_locked(void);
/* Under jobs_lock: j, queued, taken off the queue and counted under way. */
void take_locked(job *j);
/* Under jobs_lock, released while the compiler runs: j (taken) built by this thread,
 * stop(arg) stopping it; a build stopped for a run's SIGINT goes back on the queue. */
void build_locked(job *j, int (*stop)(void *), void *arg);
/* Whether the process is exiting (every compiler is being stopped). */
int builds_exiting(void);
/* The time ms milliseconds from now, for pthread_cond_timedwait (CLOCK_REALTIME). */
struct timespec in_ms(long ms);

#endif
