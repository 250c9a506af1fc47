/* pool.c: the opencl backend's device-memory pool.
 *
 * Owns: the buffers of device arrays that were freed, kept per device for the next array
 * of about their size (the free lists of PyTorch's caching allocator and of Futhark's
 * runtime), up to LACC_CL_POOL_MB in all; the making of every array buffer (an
 * allocation that fails empties the pool and tries again); the counts
 * lacc_device_memory reports. Process-wide, under its own mutex: every Lua state's runs
 * on a device share it, as they share the device's context.
 * Must not: hand out a buffer a queue may still use: callers give a buffer back only when
 * no command on it is pending (after their run's clFinish, or when the host array that
 * kept it is collected, its run long done).
 */
#include "have.h"

#ifdef LACC_HAVE_OPENCL
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "clrt.h"
#include "pool.h"
#include "base/settings.h"
#include "base/vec.h"

typedef struct {
  int dev;
  cl_mem mem;
  size_t bytes;
} pooled;

static struct {
  pthread_mutex_t lock;
  int init;
  size_t limit, held;
  pooled *v;               /* oldest first */
  int n, cap;
  int64_t made, reused;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The bound: LACC_CL_POOL_MB, default 1024 (0: no pool). */
static void pool_init_locked(void) {
  if (pool.init) return;
  pool.limit = (size_t)setting_number("LACC_CL_POOL_MB", 1024, 0, 1 << 24, 1) << 20;
  pool.init = 1;
}

static void drop_at_locked(int i) {
  CL.ReleaseMemObject(pool.v[i].mem);
  pool.held -= pool.v[i].bytes;
  memmove(&pool.v[i], &pool.v[i + 1], sizeof *pool.v * (size_t)(pool.n - 1 - i));
  pool.n--;
}

/* The smallest pooled buffer of device dev of bytes to bytes + bytes / 4, taken out
 * (its size in *cap): the newest of exactly that size at once (a program run in a loop
 * gets back the sizes it gave; the pool may hold thousands of small results that Lua's
 * collector freed together, and a scan of them all cost a visible share of a small
 * run's time). */
static cl_mem take_locked(int dev, size_t bytes, size_t *cap) {
  int best = -1;
  for (int i = pool.n - 1; i >= 0; i--)
    if (pool.v[i].dev == dev && pool.v[i].bytes >= bytes && pool.v[i].bytes - bytes <= bytes / 4 &&
        (best < 0 || pool.v[i].bytes < pool.v[best].bytes)) {
      best = i;
      if (pool.v[i].bytes == bytes) break;
    }
  if (best < 0) return NULL;
  cl_mem m = pool.v[best].mem;
  *cap = pool.v[best].bytes;
  pool.held -= pool.v[best].bytes;
  memmove(&pool.v[best], &pool.v[best + 1], sizeof *pool.v * (size_t)(pool.n - 1 - best));
  pool.n--;
  return m;
}

/* Every buffer of device dev released; how many. */
static int empty_locked(int dev) {
  int n = 0;
  for (int i = pool.n - 1; i >= 0; i--)
    if (pool.v[i].dev == dev) {
      drop_at_locked(i);
      n++;
    }
  return n;
}

static int allocation_failed(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
         err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE;
}

cl_mem pool_buffer(lacc_ctx *ctx, int dev, cl_context context, size_t bytes, size_t *got) {
  pthread_mutex_lock(&pool.lock);
  pool_init_locked();
  cl_mem m = take_locked(dev, bytes, got);
  int nonempty = pool.n > 0;
  if (m != NULL) pool.reused++;
  pthread_mutex_unlock(&pool.lock);
  if (m != NULL) return m;
  cl_int err = CL_SUCCESS;
  /* LACC_CL_POOL_TEST_FAIL=1: allocations fail while the pool holds buffers (to test the
   * retry without filling a device) */
  if (nonempty && setting_switch("LACC_CL_POOL_TEST_FAIL", 0)) err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
  else m = CL.CreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (err != CL_SUCCESS && allocation_failed(err)) {
    pthread_mutex_lock(&pool.lock);
    int freed = empty_locked(dev);
    pthread_mutex_unlock(&pool.lock);
    if (freed > 0 || nonempty) m = CL.CreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  }
  if (err != CL_SUCCESS || m == NULL) {
    clrt_fail(ctx, "clCreateBuffer", err, "an array");
    return NULL;
  }
  pthread_mutex_lock(&pool.lock);
  pool.made++;
  pthread_mutex_unlock(&pool.lock);
  *got = bytes;
  return m;
}

void pool_give(int dev, cl_mem m, size_t bytes) {
  if (m == NULL) return;
  pthread_mutex_lock(&pool.lock);
  pool_init_locked();
  int kept = 0;
  if (bytes <= pool.limit &&
      vec_reserve(&pool.v, &pool.cap, pool.n + 1, 16, sizeof *pool.v) == 0) {
    while (pool.n > 0 && pool.held + bytes > pool.limit) drop_at_locked(0);
    pool.v[pool.n].dev = dev;
    pool.v[pool.n].mem = m;
    pool.v[pool.n].bytes = bytes;
    pool.n++;
    pool.held += bytes;
    kept = 1;
  }
  pthread_mutex_unlock(&pool.lock);
  if (!kept) CL.ReleaseMemObject(m);
}

void lacc_device_memory(lacc_devmem *out) {
  pthread_mutex_lock(&pool.lock);
  pool_init_locked();
  out->pooled = (int64_t)pool.held;
  out->buffers = pool.n;
  out->made = pool.made;
  out->reused = pool.reused;
  out->limit = (int64_t)pool.limit;
  pthread_mutex_unlock(&pool.lock);
}
#else
/* without OpenCL the backend has no memory: lacc_device_memory is in none.c */
typedef int lacc_no_device_pool;
#endif
