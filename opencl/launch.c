/* launch.c: running a lowered plan on an OpenCL device.
 *
 * Owns: the device side of a run: device buffers for the plan's slots (inputs uploaded
 * unless they are on the device already, intermediates kept on the device and freed
 * after their last use, results left there as mirrors of host arrays read lazily),
 * launching each function of a step with the work-items its role splits over (the same
 * shares the cpu backend gives its chunks; a long launch in batches, between which the
 * run reports progress and stops if asked to), and the failure record kernels fill.
 * Must not: lower, print or build kernels (lower.c, emit_c.c, clrt.c do), or decide
 * semantics: a plan runs here exactly as cpu/launch.c runs it.
 */
#include "have.h"
#ifdef LACC_HAVE_OPENCL
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clrt.h"
#include "launch.h"
#include "program.h"
#include "pool.h"
#include "sort.h"
#include "kir/backend.h"
#include "base/settings.h"
#include "base/text.h"
#include "base/vec.h"
#include "kir/hostfn.h"

/* ---- device arrays */

/* An array on the device: one buffer per layout buffer, shared through its count by
 * slots (an acond's select) and by host arrays it mirrors (inputs kept on the device,
 * results not read back yet). Kernels never write a buffer once it is shared. */
typedef struct darr {
  array_mirror base;       /* first: a darr is a host array's mirror */
  int refs;
  int dev;
  const layout_plan *plan;
  int nbufs;
  int64_t ext[LACC_MAX_RANK];
  int64_t size;
  cl_mem *mem;
  size_t *bytes;           /* each buffer's size (the pool's buffers may be larger) */
  void **host;             /* a rank-0 result's values, a block per buffer, read with its
                              step (stage_result) */
} darr;

struct exec;
static void spare_put(struct exec *X, cl_mem m, size_t bytes);

/* A reference dropped: the last gives the buffers back, during a run to the run's own
 * spares (its queue may still use them: the run's later arrays take them, in order on
 * that queue), else to the pool (no command is pending on them then). */
static void darr_put(struct exec *X, darr *d) {
  if (d == NULL || --d->refs > 0) return;
  for (int b = 0; b < d->nbufs; b++) {
    if (d->mem[b] == NULL) continue;
    if (X != NULL) spare_put(X, d->mem[b], d->bytes[b]);
    else pool_give(d->dev, d->mem[b], d->bytes[b]);
  }
  free(d->mem);
  free(d->bytes);
  free(d->host);
  free(d);
}

static void darr_release(darr *d) { darr_put(NULL, d); }

/* The first n elements of each of d's buffers read into dst[b] on queue q, the last read
 * blocking if block: the queue is in order, so one wait covers them all (each wait on
 * PoCL costs a round trip to its threads). An enqueue that fails waits
 * for those before it, whose targets the caller may free. */
static int read_buffers(lacc_ctx *ctx, cl_command_queue q, const darr *d, int64_t n,
                        void *const *dst, cl_bool block) {
  int last = -1, rc = LACC_OK;
  for (int b = 0; b < d->nbufs; b++)
    if (scalar_size(d->plan->buf_kind[b]) * (size_t)n > 0) last = b;
  for (int b = 0; rc == LACC_OK && b <= last; b++) {
    size_t bytes = scalar_size(d->plan->buf_kind[b]) * (size_t)n;
    if (bytes == 0) continue;
    cl_int err = CL.EnqueueReadBuffer(q, d->mem[b], b == last ? block : CL_FALSE, 0, bytes,
                                      dst[b], 0, NULL, NULL);
    if (err != CL_SUCCESS) {
      rc = clrt_fail(ctx, "clEnqueueReadBuffer", err, "a result");
      CL.Finish(q);
    }
    ctx->moved.bytes_down += (int64_t)bytes;
  }
  if (rc == LACC_OK) ctx->moved.downloads++;
  return rc;
}

/* A host array's values read back from the device it was computed on, through the
 * device's shared queue (the run that computed them has finished). */
static int darr_fetch(array_mirror *m, lacc_array *a) {
  darr *d = (darr *)m;
  cl_command_queue q;
  int rc = clrt_transfer_queue(a->ctx, d->dev, &q);
  return rc == LACC_OK ? read_buffers(a->ctx, q, d, a->size, a->buf, CL_TRUE) : rc;
}

static void darr_drop(array_mirror *m) { darr_release((darr *)m); }

static const mirror_ops darr_ops = { darr_fetch, darr_drop };

/* Bytes of a buffer of n elements of kind k on the device: padded to 8 (atomics on
 * narrow elements use their aligned word; an empty buffer is an error). */
static size_t dev_bytes(scalar_kind k, int64_t n) {
  size_t b = scalar_size(k) * (size_t)n;
  return b < 8 ? 8 : (b + 7) / 8 * 8;
}

typedef struct {
  cl_mem mem;
  size_t bytes;
} spare;

typedef struct exec {
  lacc_ctx *ctx;
  const kplan *P;
  clprog *cp;
  darr **d;                /* per slot */
  spare *spares;           /* buffers freed during the run (darr_put) */
  int nspares, spcap;
  int64_t *E;              /* extents of every slot, as the kernels see them */
  cl_mem dE, F;
  size_t dE_bytes, F_bytes;
  int64_t fail_init;       /* F[0] before a kernel: no failure */
  cl_long finit[4];        /* the failure record before a step's kernels */
  int64_t **snaps;         /* copies of E being written (prepare_step), freed at the end */
  int nsnaps, snapcap;
  int drained;             /* nothing enqueued since a blocking read returned: no finish */
  int unordered;           /* a failure was recorded without 64-bit atomics: the first to
                              arrive, not necessarily the lowest element */
  int serial;              /* run steps in order on one work-item */
  const pstep *st;         /* the running step (its outputs: stage_result), or NULL */
  int64_t *unwritten;      /* extents not yet written to the device (prepare_step) */
  int hdefer;              /* a fold step left to the scan step after it (SF_HROWS), -1 */
} exec;

static void spare_put(exec *X, cl_mem m, size_t bytes) {
  if (vec_reserve(&X->spares, &X->spcap, X->nspares + 1, 8, sizeof *X->spares) != 0) {
    CL.ReleaseMemObject(m);   /* safe at any time: OpenCL frees it once unused */
    return;
  }
  X->spares[X->nspares].mem = m;
  X->spares[X->nspares].bytes = bytes;
  X->nspares++;
}

/* A buffer of at least `bytes`: a spare of this run (up to a quarter larger), else one
 * from the pool. */
static cl_mem buffer_for(exec *X, size_t bytes, size_t *got) {
  int best = -1;
  for (int i = 0; i < X->nspares; i++)
    if (X->spares[i].bytes >= bytes && X->spares[i].bytes - bytes <= bytes / 4 &&
        (best < 0 || X->spares[i].bytes < X->spares[best].bytes))
      best = i;
  if (best >= 0) {
    cl_mem m = X->spares[best].mem;
    *got = X->spares[best].bytes;
    X->spares[best] = X->spares[--X->nspares];
    return m;
  }
  return pool_buffer(X->ctx, X->cp->dev, X->cp->context, bytes, got);
}

static darr *darr_new(exec *X, const pslot *ps, int rank, const int64_t *ext) {
  lacc_ctx *ctx = X->ctx;
  darr *d = calloc(1, sizeof *d);
  if (d == NULL) {
    err_oom(ctx);
    return NULL;
  }
  d->base.ops = &darr_ops;
  d->refs = 1;
  d->dev = X->cp->dev;
  d->plan = ps->plan;
  if (shape_size(ctx, NULL, rank, ext, &d->size) != LACC_OK) {
    free(d);
    return NULL;
  }
  for (int i = 0; i < rank; i++) d->ext[i] = ext[i];
  d->nbufs = ps->plan->nbufs;
  d->mem = calloc((size_t)(d->nbufs ? d->nbufs : 1), sizeof *d->mem);
  d->bytes = calloc((size_t)(d->nbufs ? d->nbufs : 1), sizeof *d->bytes);
  if (d->mem == NULL || d->bytes == NULL) {
    free(d->mem);
    free(d->bytes);
    free(d);
    err_oom(ctx);
    return NULL;
  }
  for (int b = 0; b < d->nbufs; b++) {
    size_t bytes = dev_bytes(ps->plan->buf_kind[b], d->size);
    if ((int64_t)bytes > X->cp->info->max_alloc) {
      ctx_error(ctx, LACC_ERR_MEMORY, "opencl: an array of %lld bytes is too large for device "
                "'%s' (it allocates at most %lld bytes at once)", (long long)bytes,
                X->cp->info->name, (long long)X->cp->info->max_alloc);
      darr_put(X, d);
      return NULL;
    }
    d->mem[b] = buffer_for(X, bytes, &d->bytes[b]);
    if (d->mem[b] == NULL) {
      darr_put(X, d);
      return NULL;
    }
  }
  return d;
}

static void set_slot(exec *X, int s, darr *d) {
  darr_put(X, X->d[s]);
  X->d[s] = d;
  for (int i = 0; i < LACC_MAX_RANK; i++) X->E[s * LACC_MAX_RANK + i] = d->ext[i];
}

/* A host array on the device (uploaded with blocking writes: the host may change it
 * after the run). */
static int upload(exec *X, int s, const lacc_array *a) {
  const pslot *ps = &X->P->slots[s];
  darr *d = darr_new(X, ps, a->rank, a->extent);
  if (d == NULL) return X->ctx->errcode;
  for (int b = 0; b < d->nbufs; b++) {
    size_t bytes = scalar_size(ps->plan->buf_kind[b]) * (size_t)a->size;
    if (bytes == 0) continue;
    cl_int err = CL.EnqueueWriteBuffer(X->cp->q, d->mem[b], CL_TRUE, 0, bytes, a->buf[b], 0,
                                       NULL, NULL);
    if (err != CL_SUCCESS) {
      darr_put(X, d);
      return clrt_fail(X->ctx, "clEnqueueWriteBuffer", err, "an input array");
    }
    X->ctx->moved.bytes_up += (int64_t)bytes;
  }
  X->ctx->moved.uploads++;
  set_slot(X, s, d);
  return LACC_OK;
}

/* An array from outside the program in slot s: its copy on this device when it has one
 * (a result of an earlier run, or an input uploaded before), else uploaded from the host
 * and kept as its mirror for the next run. */
static int take_input(exec *X, int s, lacc_array *a) {
  if (a->mirror != NULL && a->mirror->ops == &darr_ops) {
    darr *d = (darr *)a->mirror;
    if (d->dev == X->cp->dev && d->plan == X->P->slots[s].plan) {
      d->refs++;
      set_slot(X, s, d);
      return LACC_OK;
    }
  }
  int rc = array_host(a);   /* its values may be on another device */
  if (rc == LACC_OK) rc = upload(X, s, a);
  if (rc == LACC_OK) {
    X->d[s]->refs++;
    array_set_mirror(a, &X->d[s]->base, 0);
  }
  return rc;
}

/* A rank-0 result's staged values into host array a. */
static void unstage(const darr *d, lacc_array *a) {
  for (int b = 0; b < d->nbufs; b++)
    memcpy(a->buf[b], d->host[b], scalar_size(d->plan->buf_kind[b]));
}

/* A device array as a new host array in the slot's layout, read back when the host
 * first needs its values (a rank-0 result: with its step, stage_result). */
static lacc_array *lazy_result(exec *X, int s) {
  const pslot *ps = &X->P->slots[s];
  darr *d = X->d[s];
  lacc_array *a = array_alloc_out(X->ctx, ps->type, ps->rank, d->ext, ps->plan);
  if (a == NULL) return NULL;
  if (d->host != NULL) unstage(d, a);
  d->refs++;
  array_set_mirror(a, &d->base, d->host == NULL);
  return a;
}

/* ---- launching */

static int write_extents(exec *X);

static int set_arg(exec *X, cl_kernel k, cl_uint i, size_t size, const void *v) {
  cl_int err = CL.SetKernelArg(k, i, size, v);
  return err == CL_SUCCESS ? LACC_OK : clrt_fail(X->ctx, "clSetKernelArg", err, NULL);
}

/* Work-items off <= c < off + cnt of function fn over nch (none: nothing to do) in
 * work-groups of local (0: the driver's choice), its roles' p0..p3. Buffers of slots
 * that do not exist yet are passed as NULL (function fn does not touch them). */
static int launch_part(exec *X, int fn, int64_t nch, int64_t off, int64_t cnt, size_t local,
                       int64_t p0, int64_t p1, int64_t p2, int64_t p3) {
  if (nch <= 0 || cnt <= 0) return LACC_OK;
  const clprog *cp = X->cp;
  cl_kernel k = cp->k;
  cl_long p[5] = { p0, p1, p2, p3, nch };
  cl_mem fixed[3] = { X->dE, cp->K, X->F };
  cl_int which = fn;
  int rc = LACC_OK;
  cl_uint i = 0;
  for (; rc == LACC_OK && i < 3; i++) rc = set_arg(X, k, i, sizeof(cl_mem), &fixed[i]);
  for (int j = 0; rc == LACC_OK && j < 5; j++, i++) rc = set_arg(X, k, i, sizeof(cl_long), &p[j]);
  if (rc == LACC_OK) rc = set_arg(X, k, i++, sizeof which, &which);
  for (int j = 0; rc == LACC_OK && j < cp->nbufs; j++, i++) {
    const darr *d = X->d[cp->bufs[2 * j]];
    cl_mem m = d != NULL ? d->mem[cp->bufs[2 * j + 1]] : NULL;
    rc = set_arg(X, k, i, sizeof(cl_mem), &m);
  }
  if (rc != LACC_OK) return rc;
  size_t g = (size_t)cnt, o = (size_t)off;
  X->drained = 0;
  rc = write_extents(X);
  if (rc != LACC_OK) return rc;
  cl_int err = CL.EnqueueNDRangeKernel(X->cp->q, k, 1, off > 0 ? &o : NULL, &g,
                                       local > 0 ? &local : NULL, 0, NULL, NULL);
  return err == CL_SUCCESS ? LACC_OK : clrt_fail(X->ctx, "clEnqueueNDRangeKernel", err, NULL);
}

static int launch_in(exec *X, int fn, int64_t nch, size_t local, int64_t p0, int64_t p1,
                     int64_t p2, int64_t p3) {
  return launch_part(X, fn, nch, 0, nch, local, p0, p1, p2, p3);
}

/* The work-items of a long launch in batches, each waited for; then progress, and the
 * stop request, if any, as the step's error. */
static int launch_batches(exec *X, int fn, int64_t nch, int64_t nb, size_t local, int64_t p0,
                          int64_t p1, int64_t p2, int64_t p3) {
  for (int64_t b = 0; b < nb; b++) {
    int64_t lo = nch * b / nb, hi = nch * (b + 1) / nb;
    int rc = launch_part(X, fn, nch, lo, hi - lo, local, p0, p1, p2, p3);
    if (rc != LACC_OK) return rc;
    cl_int err = CL.Finish(X->cp->q);
    if (err != CL_SUCCESS) return clrt_fail(X->ctx, "clFinish", err, NULL);
    progress_tick(X->ctx, (double)(b + 1) / (double)nb);
    if (run_stopped(X->ctx)) return run_interrupted(X->ctx);
  }
  return LACC_OK;
}

/* Function fn over nch work-items covering `work` elements: in one launch, or in
 * batches of about TUNE_CL_BATCH_WORK elements (each keeping enough work-items to fill the
 * device). On a CPU device work-groups of one work-item: each takes a chunk anyway, and
 * PoCL compiles a kernel once per work-group size (a size of its choosing would vary
 * with the global size and cost a build each time). */
static int launch(exec *X, int fn, int64_t nch, int64_t work, int64_t p0, int64_t p1,
                  int64_t p2, int64_t p3) {
  size_t local = X->cp->info->is_cpu ? 1 : 0;
  int64_t fill = X->cp->info->is_cpu ? X->cp->info->compute_units : 256;
  int64_t nb = work / TUNE_CL_BATCH_WORK, most = nch / (fill > 0 ? fill : 1);
  if (nb > most) nb = most;
  if (nb <= 1) return launch_in(X, fn, nch, local, p0, p1, p2, p3);
  return launch_batches(X, fn, nch, nb, local, p0, p1, p2, p3);
}

/* The extents as kernels see them, and a clean failure record: written whenever a step
 * allocates an array, before its kernels run. Not waited for (two round trips fewer a
 * step): the extents are written from a copy that lives until the run ends (X->E
 * changes before the write may be done), the record from X->finit; the queue is in
 * order, so the kernels after them read what was written. Enqueued just before the
 * next kernel (write_extents): PoCL's threads sleep between commands that come apart,
 * and waking them costs more than the commands (a run of a small program took a third
 * less time so). */
static int write_extents(exec *X) {
  if (X->unwritten == NULL) return LACC_OK;
  size_t bytes = sizeof(int64_t) * LACC_MAX_RANK * (size_t)X->P->nslots;
  cl_int err = CL.EnqueueWriteBuffer(X->cp->q, X->dE, CL_FALSE, 0, bytes, X->unwritten, 0,
                                     NULL, NULL);
  if (err == CL_SUCCESS)
    err = CL.EnqueueWriteBuffer(X->cp->q, X->F, CL_FALSE, 0, sizeof X->finit, X->finit, 0, NULL,
                                NULL);
  X->unwritten = NULL;
  return err == CL_SUCCESS ? LACC_OK : clrt_fail(X->ctx, "clEnqueueWriteBuffer", err, "extents");
}

static int prepare_step(exec *X) {
  size_t bytes = sizeof(int64_t) * LACC_MAX_RANK * (size_t)X->P->nslots;
  if (vec_reserve(&X->snaps, &X->snapcap, X->nsnaps + 1, 4, sizeof *X->snaps) != 0)
    return err_oom(X->ctx);
  int64_t *copy = malloc(bytes);
  if (copy == NULL) return err_oom(X->ctx);
  X->drained = 0;
  memcpy(copy, X->E, bytes);
  X->snaps[X->nsnaps++] = copy;
  X->unwritten = copy;
  return LACC_OK;
}

/* A rank-0 result the running step made, read with the step's failure record: a fold's
 * value, which the host reads next almost always, then costs no wait of its own (on
 * PoCL a wait is a round trip to its threads, a third of a small run's time). */
static int stage_one(exec *X, int slot) {
  const pslot *ps = &X->P->slots[slot];
  darr *d = ps->result && ps->rank == 0 ? X->d[slot] : NULL;
  if (d == NULL || d->size != 1) return LACC_OK;
  if (d->host == NULL) {
    /* one block: the buffers' pointers, then a word each (no scalar is wider) */
    size_t n = (size_t)(d->nbufs > 0 ? d->nbufs : 1);
    d->host = malloc(n * (sizeof *d->host + sizeof(uint64_t)));
    if (d->host == NULL) return err_oom(X->ctx);
    uint64_t *words = (uint64_t *)(d->host + n);
    for (int b = 0; b < d->nbufs; b++) d->host[b] = &words[b];
  }
  int rc = read_buffers(X->ctx, X->cp->q, d, 1, d->host, CL_FALSE);
  if (rc != LACC_OK) {
    free(d->host);
    d->host = NULL;
  }
  return rc;
}

static int stage_step(exec *X, const pstep *st) {
  int rc = stage_one(X, st->out);
  for (int i = 0; i < st->nsib && rc == LACC_OK; i++) rc = stage_one(X, st->sib_out[i]);
  return rc;
}

/* The running step's rank-0 results: its output and its sibling folds' (hfuse.c), and
 * those of a fold step it ran the rows of (SF_HROWS). */
static int stage_result(exec *X) {
  if (X->st == NULL) return LACC_OK;
  int rc = stage_step(X, X->st);
  if (rc == LACC_OK && X->st->hfold >= 0 && X->hdefer == X->st->hfold)
    rc = stage_step(X, &X->P->steps[X->st->hfold]);
  return rc;
}

/* After a step's kernels: the failure they recorded, if any, as an error; a rank-0
 * result the step made is read in the same wait (stage_result). */
static int checked(exec *X) {
  int rc = write_extents(X);
  if (rc == LACC_OK) rc = stage_result(X);
  if (rc != LACC_OK) return rc;
  cl_long f[4 + 16];
  cl_int err = CL.EnqueueReadBuffer(X->cp->q, X->F, CL_TRUE, 0, sizeof f, f, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    CL.Finish(X->cp->q);   /* the staged reads before it write into the host's memory */
    return clrt_fail(X->ctx, "clEnqueueReadBuffer", err, "failures");
  }
  X->drained = 1;   /* the queue is in order: everything before the read is done */
  if (f[0] == X->fail_init) return LACC_OK;
  X->unordered = !X->cp->i64_atomics;
  int64_t vals[16];
  for (int i = 0; i < 16; i++) vals[i] = f[4 + i];
  return plan_check_error(X->ctx, X->P, (int)f[2], vals);
}

/* One element of a device array, for a shape function that reads data. */
static int load_one(void *arg, int slot, int buf, int64_t i, uint64_t *bits) {
  exec *X = arg;
  const darr *d = X->d[slot];
  if (d == NULL || i < 0 || i >= d->size)
    return ctx_error(X->ctx, LACC_ERR_BACKEND, "opencl: a shape reads outside its array");
  size_t sz = scalar_size(X->P->slots[slot].plan->buf_kind[buf]);
  *bits = 0;
  cl_int err = CL.EnqueueReadBuffer(X->cp->q, d->mem[buf], CL_TRUE, (size_t)i * sz, sz, bits, 0,
                                    NULL, NULL);
  return err == CL_SUCCESS ? LACC_OK : clrt_fail(X->ctx, "clEnqueueReadBuffer", err, "a shape");
}

/* The step's output extents from its shape function, run on the host. */
static int shape_of(exec *X, const pstep *st, int64_t *ext) {
  hostfn_fail f;
  int rc = hostfn_run(X->ctx, X->P, st->fn[SF_SHAPE], X->E, load_one, X, ext, &f);
  if (rc == LACC_OK && f.failed) rc = plan_check_error(X->ctx, X->P, f.check, f.vals);
  return rc;
}

static int alloc_out(exec *X, const pstep *st, int slot, const int64_t *ext) {
  const pslot *ps = &X->P->slots[slot];
  darr *d = darr_new(X, ps, ps->rank, ext);
  if (d == NULL) return node_alloc_error(X->ctx, st->node);
  set_slot(X, slot, d);
  return prepare_step(X);
}

/* Work-items for n elements: on a CPU device a few per compute unit, each a contiguous
 * chunk (PoCL runs a work-item's loop vectorised), and more for long arrays so that
 * launches can be batched (launch); on a GPU one element each, up to a bound past which
 * work-items take several. */
static int64_t items_for(const exec *X, int64_t n) {
  if (n <= 0) return 0;
  if (X->serial) return 1;
  if (!X->cp->info->is_cpu) return n < TUNE_CL_GPU_ITEMS ? n : TUNE_CL_GPU_ITEMS;
  if (n <= TUNE_CL_CPU_GRAIN) return 1;
  int64_t c = (int64_t)X->cp->info->compute_units * 8;
  if (c < n / TUNE_CL_CHUNK_MOST) c = n / TUNE_CL_CHUNK_MOST;
  return n / TUNE_CL_CPU_GRAIN < c ? n / TUNE_CL_CPU_GRAIN : c;
}

/* Chunks of a few long rows (fold partials, scan passes): as on the cpu backend. */
static int64_t parts_for(const exec *X, int64_t n) {
  int64_t c = (int64_t)(X->cp->info->is_cpu ? X->cp->info->compute_units * 4 : 1024);
  if (c < n / TUNE_CL_CHUNK_MOST)
    c = n / TUNE_CL_CHUNK_MOST < TUNE_PARTS_MOST ? n / TUNE_CL_CHUNK_MOST : TUNE_PARTS_MOST;
  return n / TUNE_PART_GRAIN < c ? n / TUNE_PART_GRAIN : c;
}

static int units(const exec *X) {
  return X->cp->info->is_cpu ? X->cp->info->compute_units : 1 << 16;
}

/* R rows (or elements) of `work` elements in all: work-items by the work, not the rows
 * (4096 rows of 4096 elements each, nbody's fold, took one work-item: one core), at most
 * one a row. */
static int run_rows(exec *X, const pstep *st, int f, int64_t R, int64_t work) {
  int64_t nch = items_for(X, work > R ? work : R);
  if (nch > R) nch = R;
  int rc = launch(X, st->fn[f], nch, work, 0, R, 0, 0);
  return rc == LACC_OK ? checked(X) : rc;
}

/* A contraction in tiles of LACC_GTILE x LACC_GTILE outputs (FN_GTILE): a work-group
 * each, numbered row-major over each batch's Q rows of J outputs. */
static int run_gtiles(exec *X, const pstep *st, int64_t R) {
  const int64_t *ext = X->d[st->out]->ext;
  int64_t J = ext[st->rank - 1], Q = ext[st->rank - 2], T = LACC_GTILE;
  int64_t tiles = R / (Q * J) * ((Q + T - 1) / T) * ((J + T - 1) / T);
  int rc = launch_in(X, st->fn[SF_GTILE], tiles * LACC_GROUP, LACC_GROUP, 0, 0, 0, 0);
  return rc == LACC_OK ? checked(X) : rc;
}

/* On a CPU device, a fold of many rows whose elements lie side by side across rows in
 * the cpu backend's tiles (FN_TILE, lower_tile.c), a chunk of tiles a work-item: the
 * column sums of a matrix, each work-item's outputs read down their columns, were many
 * times slower without them (docs/design.md, Measurements); on a GPU neighbouring work-items' reads of
 * neighbouring outputs are coalesced already. */
static int run_tiles(exec *X, const pstep *st, int64_t R, int64_t n) {
  int64_t lw = st->tile_lanes, rows = st->tile_rows, J = X->d[st->out]->ext[st->rank - 1];
  int64_t tiles = (R / J + rows - 1) / rows * ((J + lw - 1) / lw);
  /* few long chunks (a chunk rereads b's blocks), by the work, not the outputs: the
   * column sums of a 4096 x 4096 matrix are 16 tiles of 4096-element folds, which
   * counted by outputs went to one work-item */
  int64_t nch = items_for(X, R * (n + 1));
  int64_t most = X->cp->info->is_cpu ? (int64_t)X->cp->info->compute_units * 8 : nch;
  if (nch > most) nch = most;
  int rc = launch(X, st->fn[SF_TILE], nch < tiles ? nch : tiles, R * (n + 1), 0, tiles, 0, 0);
  return rc == LACC_OK ? checked(X) : rc;
}

static int run_fold(exec *X, const pstep *st, int64_t n) {
  int64_t R = X->d[st->out]->size;
  if (!st->with_z && st->empty_later != 2 && n == 0 && R > 0)
    return err_fold1_empty(X->ctx, st->empty->where);
  if (R == 0) return LACC_OK;
  const clprog *cp = X->cp;
  fold_sizes z = { R, n, st->rank > 0 ? X->d[st->out]->ext[st->rank - 1] : 0, units(X), X->serial };
  fold_way way = cl_fold_way(cp, st, &z);
  if (way == FOLD_GROUP_TILES) return run_gtiles(X, st, R);
  if (way == FOLD_LANE_TILES) return run_tiles(X, st, R, n);
  if (way == FOLD_ROWS && st->hscan >= 0 &&
      !cl_scan_parts(&X->P->steps[st->hscan], R, n, units(X), X->serial)) {
    X->hdefer = (int)(st - X->P->steps);   /* the scan's row loop folds the rows too */
    return LACC_OK;
  }
  if (way == FOLD_ROWS) return run_rows(X, st, SF_BODY, R, R * (n + 1));
  int grouped = way == FOLD_GROUP_TREE;
  int64_t nch = !grouped ? parts_for(X, n)
                 : n / TUNE_CL_GROUP_CHUNK < TUNE_CL_GROUP_PARTS ? n / TUNE_CL_GROUP_CHUNK
                                                                 : TUNE_CL_GROUP_PARTS;
  int rc = alloc_out(X, st, st->partial, &nch);
  for (int i = 0; i < st->nsib && rc == LACC_OK; i++) rc = alloc_out(X, st, st->sib_partial[i], &nch);
  for (int64_t o = 0; o < R && rc == LACC_OK; o++) {
    rc = launch(X, st->fn[SF_PART], nch, n, o, 0, n, 0);
    if (rc == LACC_OK && grouped)
      rc = launch_in(X, st->fn[SF_GROUP], (int64_t)cp->group_size, cp->group_size, o, nch, 0, 0);
    else if (rc == LACC_OK)
      rc = launch(X, st->fn[SF_COMBINE], 1, nch, o, nch, 0, 0);
  }
  if (rc == LACC_OK) rc = checked(X);
  for (int i = -1; i < st->nsib; i++) {
    int p = i < 0 ? st->partial : st->sib_partial[i];
    darr_put(X, X->d[p]);
    X->d[p] = NULL;
  }
  return rc;
}

static int run_scan(exec *X, const pstep *st, int64_t n) {
  int64_t m = X->d[st->out]->ext[st->rank - 1];
  int64_t R = m > 0 ? X->d[st->out]->size / m : 0;
  if (st->hfold >= 0 && X->hdefer == st->hfold) {   /* the fold's rows and the scan's (a
                                                        scan1's rows may be empty, not the
                                                        fold's: its count of rows) */
    int64_t Rf = X->d[X->P->steps[st->hfold].out]->size;
    return run_rows(X, st, SF_HROWS, Rf, Rf * (2 * n + 1));
  }
  if (R == 0) return LACC_OK;
  if (!cl_scan_parts(st, R, n, units(X), X->serial)) return run_rows(X, st, SF_BODY, R, R * (n + 1));
  int64_t nch = parts_for(X, n);
  int rc = alloc_out(X, st, st->partial, &nch);
  for (int64_t o = 0; o < R && rc == LACC_OK; o++) {
    rc = launch(X, st->fn[SF_PART], nch, n, o, 0, n, 0);
    if (rc == LACC_OK) rc = launch(X, st->fn[SF_COMBINE], 1, nch, o, nch, 0, 0);
    if (rc == LACC_OK) rc = launch(X, st->fn[SF_CHUNK], nch, n, o, 0, n, 0);
  }
  if (rc == LACC_OK) rc = checked(X);
  darr_put(X, X->d[st->partial]);
  X->d[st->partial] = NULL;
  return rc;
}

/* Permute: the defaults copied, then the source scattered: with compare-and-swap
 * loops over many work-items when the kernel has them (one scalar per element; 64-bit
 * ones need the device's 64-bit atomics) and, on a CPU device, the targets are many (as
 * on the cpu backend: on few, the cores would contend for the same lines), else in order
 * by one work-item. Member m of a group alone (mask 1 << m), or with m < 0 all of them
 * (their extents agree). */
static int permute_run(exec *X, const pstep *st, int64_t nsrc, int64_t mask, int m) {
  int64_t size = X->d[step_member_slot(st, m)]->size;
  int rc = launch(X, st->fn[SF_BODY], items_for(X, size), size, 0, size, mask, 0);
  if (rc != LACC_OK || nsrc == 0) return rc == LACC_OK ? checked(X) : rc;
  int wide = 0;
  for (int i = m < 0 ? 0 : m; i <= (m < 0 ? st->nsib : m); i++) {
    const pslot *ps = &X->P->slots[step_member_slot(st, i)];
    wide = wide || (ps->plan->nbufs > 0 && scalar_bits(ps->plan->buf_kind[0]) == 64);
  }
  if (cl_permute_spread(X->cp, st, size, wide, X->serial))
    rc = launch(X, st->fn[SF_ASCATTER], items_for(X, nsrc), nsrc, 0, nsrc, mask, 0);
  else
    rc = launch(X, st->fn[SF_SCATTER], 1, nsrc, 0, nsrc, mask, 0);
  return rc == LACC_OK ? checked(X) : rc;
}

/* A permute step: its members together where their extents (ext: each member's, then
 * its source's size) agree, else one after another, as each would run alone. */
static int run_permute(exec *X, const pstep *st, const int64_t *ext) {
  if (step_members_agree(st, ext)) return permute_run(X, st, ext[st->rank], -1, -1);
  int rc = LACC_OK;
  for (int m = 0; m <= st->nsib && rc == LACC_OK; m++)
    rc = permute_run(X, st, ext[m * (st->rank + 1) + st->rank], (int64_t)1 << m, m);
  return rc;
}

/* The value of a rank-0 bool array on the device (an acond's test). */
static int read_bool(exec *X, const darr *t, int *v) {
  uint8_t b = 0;
  cl_int err = CL.EnqueueReadBuffer(X->cp->q, t->mem[0], CL_TRUE, 0, 1, &b, 0, NULL, NULL);
  if (err != CL_SUCCESS) return clrt_fail(X->ctx, "clEnqueueReadBuffer", err, "a condition");
  *v = b != 0;
  return LACC_OK;
}

static int step_kernels(exec *X, const pstep *st, const int64_t *ext) {
  if (st->kind == SK_FOLD) return run_fold(X, st, ext[st->rank]);
  if (st->kind == SK_SCAN) return run_scan(X, st, ext[st->rank]);
  if (st->kind == SK_PERMUTE) return run_permute(X, st, ext);
  return run_rows(X, st, SF_BODY, X->d[st->out]->size, X->d[st->out]->size);
}

/* A kernel step: its shape (on the host), its output, its kernels. */
static int cl_step(void *R, int k) {
  exec *X = R;
  const pstep *st = &X->P->steps[k];
  int64_t ext[(LACC_MAX_RANK + 1) * TUNE_HFUSE_MOST] = { 0 };
  int rc = shape_of(X, st, ext);   /* on the host: reads X->E, not the device's copy */
  if (rc == LACC_OK) rc = alloc_out(X, st, st->out, ext);
  for (int i = 0; i < st->nsib && rc == LACC_OK; i++)
    rc = alloc_out(X, st, st->sib_out[i], step_sib_ext(st, ext, i));
  if (rc == LACC_OK && st->wout >= 0) rc = alloc_out(X, st, st->wout, ext + st->wext);
  if (rc != LACC_OK) return rc;
  X->st = st;
  rc = step_kernels(X, st, ext);
  if (rc != LACC_OK && X->unordered && !X->serial) {
    /* the failure record kept the first failure to arrive: the step again, in order on
     * one work-item, finds the lowest, as the other backends report it */
    X->unordered = 0;
    X->serial = 1;
    rc = prepare_step(X);
    if (rc == LACC_OK) rc = step_kernels(X, st, ext);
    X->serial = 0;
  }
  if (st->kind == SK_SCAN && st->hfold >= 0 && X->hdefer == st->hfold) X->hdefer = -1;
  X->st = NULL;
  return rc;
}

/* A sort step on the device (sort.c): the keys stay there; the positions or the sorted
 * keys are made there, in scratch buffers of the run that go to its spares after. */
static int cl_sort(void *R, const pstep *st) {
  exec *X = R;
  X->drained = 0;
  const darr *in = X->d[st->sort_in];
  const pslot *ps = &X->P->slots[st->sort_in];
  if (in == NULL || ps->rank < 1 || ps->plan->nbufs != 1 ||
      (ps->plan->buf_kind[0] != S_U32 && ps->plan->buf_kind[0] != S_U64))
    return ctx_error(X->ctx, LACC_ERR_TYPE, "sortperm: expected keys of u32 or u64 of rank 1 "
                     "or more on the device");
  int64_t n = in->ext[ps->rank - 1];
  if (n >= (int64_t)1 << 32)
    return ctx_error(X->ctx, LACC_ERR_SHAPE, "sort: a row of %lld elements: rows of 2^32 "
                     "elements or more cannot be sorted", (long long)n);
  clsort_job J = { X->cp->dev, X->cp->q, X->cp->info, ps->plan->buf_kind[0] == S_U64,
                   st->sort_keys, n > 0 ? in->size / n : 0, n, 1 };
  size_t kbytes, ibytes, hbytes;
  clsort_shape(&J, &kbytes, &ibytes, &hbytes);
  darr *out = darr_new(X, &X->P->slots[st->out], ps->rank, in->ext);
  if (out == NULL) return node_alloc_error(X->ctx, st->node);
  set_slot(X, st->out, out);
  clsort_bufs B = { in->mem[0], out->mem[0], { NULL, NULL }, { NULL, NULL }, NULL, NULL };
  cl_mem *scratch[6] = { &B.k[0], &B.k[1], &B.i[0], &B.i[1], &B.hist, &B.mask };
  size_t want[6] = { kbytes, kbytes, ibytes, ibytes, hbytes, 8 }, have[6] = { 0 };
  int rc = LACC_OK;
  for (int i = 0; rc == LACC_OK && in->size > 0 && i < 6; i++) {
    if (want[i] == 0) continue;
    *scratch[i] = buffer_for(X, want[i], &have[i]);
    if (*scratch[i] == NULL) rc = X->ctx->errcode;
  }
  if (rc == LACC_OK) rc = clsort_run(X->ctx, &J, &B);
  for (int i = 0; i < 6; i++)
    if (*scratch[i] != NULL) spare_put(X, *scratch[i], have[i]);
  return rc;
}

/* The run's extents and failure record: pooled too (two buffers a run). */
static cl_mem small_buffer(exec *X, size_t bytes, size_t *got, int *rc) {
  if (*rc != LACC_OK) return NULL;
  cl_mem m = pool_buffer(X->ctx, X->cp->dev, X->cp->context, bytes, got);
  if (m == NULL) *rc = X->ctx->errcode;
  return m;
}

/* The run's buffers go to the pool once its queue is done with them (a run that failed
 * may have left commands in it). */
static void cl_end(void *R) {
  exec *X = R;
  for (int s = 0; X->d != NULL && s < X->P->nslots; s++) darr_put(X, X->d[s]);
  if (X->dE != NULL) spare_put(X, X->dE, X->dE_bytes);
  if (X->F != NULL) spare_put(X, X->F, X->F_bytes);
  int done = X->nspares == 0 || X->drained || CL.Finish(X->cp->q) == CL_SUCCESS;
  for (int i = 0; i < X->nspares; i++) {
    if (done) pool_give(X->cp->dev, X->spares[i].mem, X->spares[i].bytes);
    else CL.ReleaseMemObject(X->spares[i].mem);
  }
  /* the copies of E: written by commands that are done once the queue is (a failed
   * finish leaves them: the runtime may still read them) */
  if (done || X->nspares == 0)
    for (int i = 0; i < X->nsnaps; i++) free(X->snaps[i]);
  free(X->snaps);
  free(X->spares);
  free(X->d);
  free(X->E);
  free(X);
}

static void *cl_begin(lacc_ctx *ctx, const kplan *P) {
  exec *X = calloc(1, sizeof *X);
  if (X == NULL) {
    err_oom(ctx);
    return NULL;
  }
  X->ctx = ctx;
  X->P = P;
  X->cp = P->code;
  X->hdefer = -1;
  X->fail_init = X->cp->i64_atomics ? INT64_MAX : 0;
  X->finit[0] = X->fail_init;
  size_t ns = (size_t)(P->nslots ? P->nslots : 1);
  X->d = calloc(ns, sizeof *X->d);
  X->E = calloc(ns * LACC_MAX_RANK, sizeof *X->E);
  int rc = X->d == NULL || X->E == NULL ? err_oom(ctx) : LACC_OK;
  if (rc == LACC_OK) {
    X->dE = small_buffer(X, ns * LACC_MAX_RANK * sizeof(int64_t), &X->dE_bytes, &rc);
    X->F = small_buffer(X, (4 + 16) * sizeof(int64_t), &X->F_bytes, &rc);
  }
  if (rc != LACC_OK) {
    cl_end(X);
    return NULL;
  }
  return X;
}

static int cl_input(void *R, int s, lacc_array *a) { return take_input(R, s, a); }

/* The value of a rank-0 bool array (an acond's test), read back. */
static int cl_test(void *R, int s, int *v) {
  exec *X = R;
  *v = -1;
  return X->d[s] != NULL ? read_bool(X, X->d[s], v) : LACC_OK;
}

static void cl_alias(void *R, int dst, int src) {
  exec *X = R;
  X->d[src]->refs++;
  set_slot(X, dst, X->d[src]);
}

static void cl_drop(void *R, int s) {
  exec *X = R;
  darr_put(X, X->d[s]);
  X->d[s] = NULL;
}

/* A result, or a loop's array: a host array whose values stay on the device until the
 * host reads them. */
static int cl_output(void *R, int s, lacc_array **out) {
  *out = lazy_result(R, s);
  return *out != NULL ? LACC_OK : ((exec *)R)->ctx->errcode;
}

/* Later runs and reads use other queues: this run's commands must be done. */
static int cl_finish(void *R) {
  exec *X = R;
  if (X->drained) return LACC_OK;
  cl_int err = CL.Finish(X->cp->q);
  return err == CL_SUCCESS ? LACC_OK : clrt_fail(X->ctx, "clFinish", err, NULL);
}

const backend_ops opencl_backend = {
  .name = "opencl",
  .caps = CL_CAPS,
  .compile = cl_compile,
  .release = cl_release_code,
  .begin = cl_begin,
  .input = cl_input,
  .step = cl_step,
  .test = cl_test,
  .alias = cl_alias,
  .drop = cl_drop,
  .output = cl_output,
  .finish = cl_finish,
  .end = cl_end,
  .sort = cl_sort,
  .describe = cl_describe,
  .device_is_cpu = cl_is_cpu,
};

char *lacc_devices(lacc_ctx *ctx) {
  ctx_clear(ctx);
  clrt_load(ctx);   /* no OpenCL: no devices */
  ctx_clear(ctx);
  text b = { 0 };
  text_put(&b, "%s", "");
  for (int i = 0; i < clrt_count(); i++) {
    const clrt_info *d = clrt_info_of(i);
    text_put(&b, "%d\t%s\t%s\t%s\t%d\t%lld\t%d\t%s\n", i + 1, d->name, d->vendor,
             d->is_cpu ? "cpu" : "gpu", d->compute_units, (long long)d->global_mem, d->fp64,
             d->version);
  }
  return text_finish(ctx, &b);
}
#endif /* LACC_HAVE_OPENCL */
