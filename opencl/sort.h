/* sort.h: the stable order of each row of radix keys on an OpenCL device (sort.c). */
#ifndef LACC_CL_SORT_H
#define LACC_CL_SORT_H

#include "clrt.h"

/* A sort of `rows` rows of n keys each (u32, or u64 when wide) on one device. */
typedef struct {
  int dev;                    /* the device (clrt's index) and an in-order queue on it */
  cl_command_queue q;
  const clrt_info *info;
  int wide;
  int want_keys;              /* the keys in order (else the 1-based positions, i64) */
  int64_t rows, n;
  int64_t chunks;             /* per row: clsort_shape's choice */
} clsort_job;

/* The buffers of a sort: `keys` is read only; `out` takes rows x n i64 positions or
 * keys; the scratch buffers are of at least clsort_shape's sizes. */
typedef struct {
  cl_mem keys, out;
  cl_mem k[2], i[2];          /* keys and their 32-bit positions, pass by pass */
  cl_mem hist;                /* counts per (row, digit, chunk) */
  cl_mem mask;                /* two words: the key bits that vary within some row */
} clsort_bufs;

/* The chunks of each row J will be cut into (J->chunks) and the bytes of each scratch
 * buffer: keys, positions (0: none wanted), counts. */
void clsort_shape(clsort_job *J, size_t *kbytes, size_t *ibytes, size_t *hbytes);
/* The sort enqueued on J->q (ending in order with the queue's later commands): a
 * digit constant over every row is skipped (the mask read back once). LACC_OK, or an
 * error in ctx; a run asked to stop stops between passes. */
int clsort_run(lacc_ctx *ctx, const clsort_job *J, const clsort_bufs *B);

#endif
