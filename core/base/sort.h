/* sort.h: the stable order of each row of radix keys (sort.c). */
#ifndef LACC_SORT_H
#define LACC_SORT_H

#include "base/internal.h"

/* A parallel for: fn(arg, c) for every 0 <= c < n, on a backend's threads (the cpu
 * backend's pool), in any order; NULL runs them in turn on the calling thread. */
typedef void (*sort_chunk_fn)(void *arg, int64_t c);
typedef void (*sort_parallel)(int64_t n, sort_chunk_fn fn, void *arg);

/* The positions (i64, 1-based) of the elements of each row (innermost dimension) of keys
 * (a host array of u32 or u64, rank 1 or more) in their stable ascending order, or with
 * want_keys the keys themselves, each row sorted: a new host array of keys' shape, or NULL
 * with the error in ctx. */
lacc_array *sort_rows(lacc_ctx *ctx, lacc_array *keys, sort_parallel par, int want_keys);

#endif
