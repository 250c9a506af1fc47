/* pool.h: the opencl backend's device-memory pool (pool.c). */
#ifndef LACC_CL_POOL_H
#define LACC_CL_POOL_H

#include "clrt.h"

/* A buffer of at least `bytes` for an array on device dev (context its context): one the
 * pool kept (up to a quarter larger), else a new one; an allocation that fails empties
 * the pool and tries once more. *got: the buffer's size, to give back with it. NULL with
 * an error in ctx. */
cl_mem pool_buffer(lacc_ctx *ctx, int dev, cl_context context, size_t bytes, size_t *got);
/* Buffer m of `bytes` of device dev, no command pending on it: kept for the next array,
 * the oldest ones released past the bound, or released at once. */
void pool_give(int dev, cl_mem m, size_t bytes);

#endif
