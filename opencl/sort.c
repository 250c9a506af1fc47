/* sort.c: the stable order of each row of radix keys on an OpenCL device (the sortperm
 * and sortkeys steps of a plan run on the opencl backend).
 *
 * Owns: an LSD radix sort, 8 bits a pass, as base/sort.c does it on the host, written
 * as a handful of fixed OpenCL kernels (one program per device, built and cached by
 * clrt): per pass every chunk of a row counts its digits (reduce), one work-item per
 * row turns the counts into each chunk's first place per digit in (digit, chunk) order
 * (scan), and each chunk moves its elements in order to those places (scatter), so
 * equal keys keep their order and the result does not depend on the chunking. Before
 * the passes one kernel ORs together the bits in which each key differs from its row's
 * first: digits constant over every row are skipped (the only value read back). Rows
 * of 32 or fewer keys are sorted by insertion, a work-item each. Many rows are sorted
 * in batches that bound the counts' memory.
 * Chunks run one per work-item, in order: on a CPU device (PoCL) a chunk is a loop over
 * contiguous memory on one core, as on the cpu backend; on a GPU the same kernels are
 * correct but not tuned (one work-item walks a chunk of 1024 keys).
 * Must not: know plans or arrays (opencl/launch.c gives the buffers), or compare keys in
 * any other order than their unsigned value (sort.lua makes the keys).
 */
#include "have.h"
#ifdef LACC_HAVE_OPENCL
#include <string.h>
#include "sort.h"

static const char *sort_src =
  "inline ulong key_at(__global const uint *k, int wide, ulong i) {\n"
  "  return wide ? ((__global const ulong *)k)[i] : (ulong)k[i];\n"
  "}\n"
  /* work-item g of a launch: row row0 + g / chunks, its chunk [*lo, *hi) */
  "inline int chunk_of(ulong g, ulong rows, ulong row0, ulong n, ulong chunks, ulong *row,\n"
  "                    ulong *lo, ulong *hi) {\n"
  "  if (g >= rows * chunks) return 0;\n"
  "  ulong per = (n + chunks - 1) / chunks, c = g % chunks;\n"
  "  *row = row0 + g / chunks;\n"
  "  *lo = min(c * per, n);\n"
  "  *hi = min(*lo + per, n);\n"
  "  return 1;\n"
  "}\n"
  "__kernel void lacc_sort_vary(__global const uint *keys, int wide, ulong rows, ulong row0,\n"
  "                             ulong n, ulong chunks, __global volatile uint *mask) {\n"
  "  ulong row, lo, hi, v = 0;\n"
  "  if (!chunk_of(get_global_id(0), rows, row0, n, chunks, &row, &lo, &hi)) return;\n"
  "  ulong base = row * n, first = key_at(keys, wide, base);\n"
  "  for (ulong i = lo; i < hi; i++) v |= key_at(keys, wide, base + i) ^ first;\n"
  "  if ((uint)v != 0) atomic_or(&mask[0], (uint)v);\n"
  "  if ((uint)(v >> 32) != 0) atomic_or(&mask[1], (uint)(v >> 32));\n"
  "}\n"
  "__kernel void lacc_sort_count(__global const uint *keys, int wide, ulong rows, ulong row0,\n"
  "                              ulong n, ulong chunks, int shift, __global uint *hist) {\n"
  "  ulong row, lo, hi, g = get_global_id(0);\n"
  "  if (!chunk_of(g, rows, row0, n, chunks, &row, &lo, &hi)) return;\n"
  "  uint h[256];\n"
  "  for (int d = 0; d < 256; d++) h[d] = 0;\n"
  "  if (wide) {\n"
  "    __global const ulong *k = (__global const ulong *)keys + row * n;\n"
  "    for (ulong i = lo; i < hi; i++) h[(k[i] >> shift) & 255]++;\n"
  "  } else {\n"
  "    __global const uint *k = keys + row * n;\n"
  "    for (ulong i = lo; i < hi; i++) h[(k[i] >> shift) & 255]++;\n"
  "  }\n"
  "  __global uint *o = hist + (g / chunks) * 256 * chunks + g % chunks;\n"
  "  for (int d = 0; d < 256; d++) o[d * chunks] = h[d];\n"
  "}\n"
  "__kernel void lacc_sort_places(ulong rows, ulong chunks, __global uint *hist) {\n"
  "  ulong r = get_global_id(0);\n"
  "  if (r >= rows) return;\n"
  "  __global uint *h = hist + r * 256 * chunks;\n"
  "  uint at = 0;\n"
  "  for (ulong j = 0; j < 256 * chunks; j++) {\n"
  "    uint c = h[j];\n"
  "    h[j] = at;\n"
  "    at += c;\n"
  "  }\n"
  "}\n"
  /* first: the positions are the elements' own; positions: carry them at all */
  "__kernel void lacc_sort_scatter(__global const uint *ka, __global const uint *ia,\n"
  "                                __global uint *kb, __global uint *ib, int wide, int first,\n"
  "                                int positions, ulong rows, ulong row0, ulong n,\n"
  "                                ulong chunks, int shift, __global const uint *hist) {\n"
  "  ulong row, lo, hi, g = get_global_id(0);\n"
  "  if (!chunk_of(g, rows, row0, n, chunks, &row, &lo, &hi)) return;\n"
  "  uint next[256];\n"
  "  __global const uint *o = hist + (g / chunks) * 256 * chunks + g % chunks;\n"
  "  for (int d = 0; d < 256; d++) next[d] = o[d * chunks];\n"
  "  ulong base = row * n;\n"
  "  __global uint *ibr = ib + base;\n"
  "  __global const uint *iar = ia + base;\n"
  "  if (wide) {\n"
  "    __global const ulong *k = (__global const ulong *)ka + base;\n"
  "    __global ulong *kk = (__global ulong *)kb + base;\n"
  "    for (ulong i = lo; i < hi; i++) {\n"
  "      ulong key = k[i];\n"
  "      uint to = next[(key >> shift) & 255]++;\n"
  "      kk[to] = key;\n"
  "      if (positions) ibr[to] = first ? (uint)i : iar[i];\n"
  "    }\n"
  "  } else if (!positions) {\n"
  "    __global const uint *k = ka + base;\n"
  "    __global uint *kk = kb + base;\n"
  "    for (ulong i = lo; i < hi; i++) {\n"
  "      uint key = k[i];\n"
  "      kk[next[(key >> shift) & 255]++] = key;\n"
  "    }\n"
  "  } else {\n"
  "    __global const uint *k = ka + base;\n"
  "    __global uint *kk = kb + base;\n"
  "    for (ulong i = lo; i < hi; i++) {\n"
  "      uint key = k[i];\n"
  "      uint to = next[(key >> shift) & 255]++;\n"
  "      kk[to] = key;\n"
  "      ibr[to] = first ? (uint)i : iar[i];\n"
  "    }\n"
  "  }\n"
  "}\n"
  /* the 1-based positions as i64 (identity: no pass moved anything) */
  "__kernel void lacc_sort_positions(__global const uint *ia, int identity, ulong rows,\n"
  "                                  ulong row0, ulong n, ulong chunks, __global long *out) {\n"
  "  ulong row, lo, hi;\n"
  "  if (!chunk_of(get_global_id(0), rows, row0, n, chunks, &row, &lo, &hi)) return;\n"
  "  ulong base = row * n;\n"
  "  for (ulong i = lo; i < hi; i++) out[base + i] = (long)(identity ? i : ia[base + i]) + 1;\n"
  "}\n"
  /* a short row: insertion sort of its positions, stable (only a larger key moves) */
  "__kernel void lacc_sort_short(__global const uint *keys, int wide, int want_keys,\n"
  "                              ulong rows, ulong n, __global long *out) {\n"
  "  ulong r = get_global_id(0);\n"
  "  if (r >= rows) return;\n"
  "  ulong base = r * n;\n"
  "  uchar pos[32];\n"
  "  for (ulong i = 0; i < n; i++) {\n"
  "    ulong k = key_at(keys, wide, base + i), j = i;\n"
  "    while (j > 0 && key_at(keys, wide, base + pos[j - 1]) > k) {\n"
  "      pos[j] = pos[j - 1];\n"
  "      j--;\n"
  "    }\n"
  "    pos[j] = (uchar)i;\n"
  "  }\n"
  "  for (ulong i = 0; i < n; i++) {\n"
  "    if (!want_keys) out[base + i] = (long)pos[i] + 1;\n"
  "    else if (wide) ((__global ulong *)out)[base + i] = key_at(keys, 1, base + pos[i]);\n"
  "    else ((__global uint *)out)[base + i] = (uint)key_at(keys, 0, base + pos[i]);\n"
  "  }\n"
  "}\n";

enum {
  SHORT_ROW = 32,             /* rows this short: insertion (lacc_sort_short's pos[]) */
  CPU_CHUNK = 1 << 16,        /* a CPU device: elements per chunk of a long row, at least */
  CPU_CHUNKS = 64,
  GPU_CHUNK = 1 << 10,        /* a GPU: many more, shorter chunks */
  GPU_CHUNKS = 1 << 12,
  HIST_WORDS = 1 << 22,       /* counts per batch of rows (16 MB) */
  GROUP = 64                  /* work-items per work-group where there are many */
};

void clsort_shape(clsort_job *J, size_t *kbytes, size_t *ibytes, size_t *hbytes) {
  int64_t grain = J->info->is_cpu ? CPU_CHUNK : GPU_CHUNK;
  int64_t most = J->info->is_cpu ? CPU_CHUNKS : GPU_CHUNKS;
  int64_t c = J->n / grain;
  J->chunks = c < 1 ? 1 : c < most ? c : most;
  size_t total = (size_t)(J->rows * J->n);
  *kbytes = total * (J->wide ? 8 : 4) + 8;
  *ibytes = J->want_keys ? 0 : total * 4 + 4;
  int64_t batch = HIST_WORDS / (256 * J->chunks);
  if (batch > J->rows) batch = J->rows;
  *hbytes = (size_t)(batch < 1 ? 1 : batch) * 256 * (size_t)J->chunks * 4;
}

typedef struct {
  lacc_ctx *ctx;
  const clsort_job *J;
  const clsort_bufs *B;
  cl_kernel vary, count, places, scatter, positions, shortk;
} sorter;

enum { NKERNELS = 6 };
static const char *const kernel_names[NKERNELS] = {
  "lacc_sort_vary", "lacc_sort_count", "lacc_sort_places", "lacc_sort_scatter",
  "lacc_sort_positions", "lacc_sort_short"
};

/* The sorter's kernels, in kernel_names' order. */
static void kernel_slots(sorter *S, cl_kernel *ks[NKERNELS]) {
  cl_kernel *all[NKERNELS] = { &S->vary, &S->count, &S->places, &S->scatter, &S->positions,
                               &S->shortk };
  memcpy(ks, all, sizeof all);
}

static void sorter_free(sorter *S) {
  cl_kernel *ks[NKERNELS];
  kernel_slots(S, ks);
  for (int i = 0; i < NKERNELS; i++)
    if (*ks[i] != NULL) CL.ReleaseKernel(*ks[i]);
}

static int kernels(sorter *S) {
  cl_program prog = NULL;
  int rc = clrt_build(S->ctx, S->J->dev, sort_src, "-w", &prog);
  cl_kernel *ks[NKERNELS];
  kernel_slots(S, ks);
  for (int i = 0; rc == LACC_OK && i < NKERNELS; i++) {
    cl_int err;
    *ks[i] = CL.CreateKernel(prog, kernel_names[i], &err);
    if (err != CL_SUCCESS) rc = clrt_fail(S->ctx, "clCreateKernel", err, kernel_names[i]);
  }
  if (prog != NULL) CL.ReleaseProgram(prog);   /* the kernels keep it */
  return rc;
}

/* Arguments of one kernel: their sizes and values in order (a size 0 ends the list). */
typedef struct {
  size_t size;
  const void *v;
} karg;

/* Kernel k over `items` work-items (rows or chunks): on a CPU device one per
 * work-group unless there are many (each takes a chunk; one per group spreads a few
 * long chunks over the cores), elsewhere in work-groups of GROUP; padded to whole
 * groups, the kernels skip the extra work-items. */
static int launch(sorter *S, cl_kernel k, const karg *args, int64_t items) {
  for (cl_uint i = 0; args[i].size != 0; i++) {
    cl_int err = CL.SetKernelArg(k, i, args[i].size, args[i].v);
    if (err != CL_SUCCESS) return clrt_fail(S->ctx, "clSetKernelArg", err, "a sort kernel");
  }
  int64_t units = S->J->info->compute_units > 0 ? S->J->info->compute_units : 1;
  size_t local = S->J->info->is_cpu && items < (int64_t)GROUP * 4 * units ? 1 : GROUP;
  size_t global = ((size_t)items + local - 1) / local * local;
  cl_int err = CL.EnqueueNDRangeKernel(S->J->q, k, 1, NULL, &global, &local, 0, NULL, NULL);
  return err == CL_SUCCESS ? LACC_OK : clrt_fail(S->ctx, "clEnqueueNDRangeKernel", err, "a sort");
}

/* The bits in which some key differs from its row's first (read back: it decides the
 * passes). */
static int varying(sorter *S, uint64_t *bits) {
  const clsort_job *J = S->J;
  static const cl_uint zero[2] = { 0, 0 };   /* static: the write is not waited for */
  cl_int err = CL.EnqueueWriteBuffer(J->q, S->B->mask, CL_FALSE, 0, sizeof zero, zero, 0, NULL,
                                     NULL);
  if (err != CL_SUCCESS) return clrt_fail(S->ctx, "clEnqueueWriteBuffer", err, "a sort");
  cl_ulong rows = (cl_ulong)J->rows, row0 = 0, n = (cl_ulong)J->n, ch = (cl_ulong)J->chunks;
  cl_int wide = J->wide;
  karg a[] = { { sizeof(cl_mem), &S->B->keys }, { sizeof wide, &wide }, { 8, &rows },
               { 8, &row0 }, { 8, &n }, { 8, &ch }, { sizeof(cl_mem), &S->B->mask }, { 0, 0 } };
  int rc = launch(S, S->vary, a, J->rows * J->chunks);
  cl_uint got[2] = { 0, 0 };
  if (rc == LACC_OK) {
    err = CL.EnqueueReadBuffer(J->q, S->B->mask, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
    if (err != CL_SUCCESS) rc = clrt_fail(S->ctx, "clEnqueueReadBuffer", err, "a sort");
  }
  *bits = (uint64_t)got[1] << 32 | got[0];
  return rc;
}

/* One pass over rows [row0, row0 + rows): count, places, scatter from (ka, ia) into
 * (kb, ib). */
static int pass(sorter *S, int64_t row0, int64_t rows, int shift, cl_mem ka, cl_mem ia,
                cl_mem kb, cl_mem ib, int first) {
  const clsort_job *J = S->J;
  cl_ulong r = (cl_ulong)rows, r0 = (cl_ulong)row0, n = (cl_ulong)J->n, ch = (cl_ulong)J->chunks;
  cl_int wide = J->wide, sh = shift, fst = first, positions = !J->want_keys;
  karg count[] = { { sizeof(cl_mem), &ka }, { sizeof wide, &wide }, { 8, &r }, { 8, &r0 },
                   { 8, &n }, { 8, &ch }, { sizeof sh, &sh }, { sizeof(cl_mem), &S->B->hist },
                   { 0, 0 } };
  karg places[] = { { 8, &r }, { 8, &ch }, { sizeof(cl_mem), &S->B->hist }, { 0, 0 } };
  karg scatter[] = { { sizeof(cl_mem), &ka }, { sizeof(cl_mem), &ia }, { sizeof(cl_mem), &kb },
                     { sizeof(cl_mem), &ib }, { sizeof wide, &wide }, { sizeof fst, &fst },
                     { sizeof positions, &positions }, { 8, &r }, { 8, &r0 }, { 8, &n },
                     { 8, &ch }, { sizeof sh, &sh }, { sizeof(cl_mem), &S->B->hist }, { 0, 0 } };
  int rc = launch(S, S->count, count, rows * J->chunks);
  if (rc == LACC_OK) rc = launch(S, S->places, places, rows);
  if (rc == LACC_OK) rc = launch(S, S->scatter, scatter, rows * J->chunks);
  return rc;
}

/* The result of rows [row0, row0 + rows) once the passes left the keys in ka and their
 * positions in ia (moved: some pass ran). */
static int result(sorter *S, int64_t row0, int64_t rows, cl_mem ka, cl_mem ia, int moved) {
  const clsort_job *J = S->J;
  if (J->want_keys) {
    size_t kw = J->wide ? 8 : 4, at = (size_t)(row0 * J->n) * kw, bytes = (size_t)(rows * J->n) * kw;
    cl_int err = CL.EnqueueCopyBuffer(J->q, ka, S->B->out, at, at, bytes, 0, NULL, NULL);
    return err == CL_SUCCESS ? LACC_OK : clrt_fail(S->ctx, "clEnqueueCopyBuffer", err, "a sort");
  }
  cl_ulong r = (cl_ulong)rows, r0 = (cl_ulong)row0, n = (cl_ulong)J->n, ch = (cl_ulong)J->chunks;
  cl_int identity = !moved;
  cl_mem from = moved ? ia : S->B->keys;   /* not read when identity */
  karg a[] = { { sizeof(cl_mem), &from }, { sizeof identity, &identity }, { 8, &r }, { 8, &r0 },
               { 8, &n }, { 8, &ch }, { sizeof(cl_mem), &S->B->out }, { 0, 0 } };
  return launch(S, S->positions, a, rows * J->chunks);
}

/* Rows of up to SHORT_ROW keys. */
static int short_rows(sorter *S) {
  const clsort_job *J = S->J;
  cl_ulong rows = (cl_ulong)J->rows, n = (cl_ulong)J->n;
  cl_int wide = J->wide, want = J->want_keys;
  karg a[] = { { sizeof(cl_mem), &S->B->keys }, { sizeof wide, &wide }, { sizeof want, &want },
               { 8, &rows }, { 8, &n }, { sizeof(cl_mem), &S->B->out }, { 0, 0 } };
  return launch(S, S->shortk, a, J->rows);
}

/* The passes over rows [row0, row0 + rows), each digit of `bits` (the varying ones). */
static int batch(sorter *S, int64_t row0, int64_t rows, uint64_t bits) {
  const clsort_job *J = S->J;
  cl_mem ka = S->B->keys, ia = S->B->keys;
  int buf = 0, moved = 0, rc = LACC_OK;
  for (int shift = 0; rc == LACC_OK && shift < (J->wide ? 64 : 32); shift += 8) {
    if (((bits >> shift) & 255) == 0) continue;
    rc = pass(S, row0, rows, shift, ka, ia, S->B->k[buf], S->B->i[buf], !moved);
    ka = S->B->k[buf];
    ia = S->B->i[buf];
    buf = 1 - buf;
    moved = 1;
    if (rc == LACC_OK && run_stopped(S->ctx)) rc = run_interrupted(S->ctx);
  }
  return rc == LACC_OK ? result(S, row0, rows, ka, ia, moved) : rc;
}

int clsort_run(lacc_ctx *ctx, const clsort_job *J, const clsort_bufs *B) {
  if (J->rows == 0 || J->n == 0) return LACC_OK;
  sorter S = { ctx, J, B, NULL, NULL, NULL, NULL, NULL, NULL };
  int rc = kernels(&S);
  if (rc == LACC_OK && J->n <= SHORT_ROW) rc = short_rows(&S);
  else if (rc == LACC_OK) {
    uint64_t bits = 0;
    rc = varying(&S, &bits);
    int64_t per = HIST_WORDS / (256 * J->chunks);
    if (per < 1) per = 1;
    for (int64_t row0 = 0; rc == LACC_OK && row0 < J->rows; row0 += per)
      rc = batch(&S, row0, J->rows - row0 < per ? J->rows - row0 : per, bits);
  }
  sorter_free(&S);
  return rc;
}
#endif /* LACC_HAVE_OPENCL */
