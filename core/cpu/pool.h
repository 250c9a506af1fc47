/* pool.h: the process-wide thread pool (pool.c). */
#ifndef LACC_POOL_H
#define LACC_POOL_H

#include <stdint.h>

typedef void (*pool_fn)(void *arg, int64_t chunk);

/* Threads that run a job: the workers and the caller. */
int pool_threads(void);
/* The threads the pool has (*started 1) or will start with (LACC_THREADS or the cores). */
int pool_threads_planned(int *started);
/* fn(arg, c) for every chunk 0 <= c < nchunks, spread over the pool; returns when all
 * are done (or, with a stop test, fewer: see pool_on_stop). Runs on the calling thread
 * alone when the pool is busy with another job. */
void pool_run(int64_t nchunks, pool_fn fn, void *arg);
/* A hook for the jobs the calling thread submits: tick(arg, share of chunks claimed) runs
 * on that thread after each chunk it runs itself (NULL: none). Per thread. */
void pool_on_tick(void (*tick)(void *arg, double done), void *arg);
/* A stop test for the jobs the calling thread submits: once stop(arg) is true, no
 * thread claims another chunk of them and pool_run returns when the chunks already
 * claimed are done (NULL: none). Called from any thread, before each chunk. Per thread. */
void pool_on_stop(int (*stop)(void *arg), void *arg);
/* For a stop test, on the thread that calls it: the share of the current job's chunks
 * claimed so far and the seconds since it started (1), or 0 outside a job. */
int pool_progress(double *share, double *seconds);

#endif
