/* array.c: host arrays.
 *
 * Owns: allocation of struct-of-arrays buffers (one per scalar leaf), the process-wide
 * cache of freed large buffers, the memory counter of the context, element access by
 * linear index for hosts, and when an array's host buffers are valid: a backend may
 * attach a mirror (a device copy) and leave the host buffers stale until the host reads;
 * what the host may not do to an array a run is reading (write it), and that constructor
 * indices the host writes name constructors (checked on write, or before a run reads
 * buffers handed out raw).
 * Must not: interpret programs, know about nodes, or look inside a mirror.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include "base/internal.h"
#include "base/settings.h"


/* Large buffers come straight from mmap, 2 MiB aligned and marked for huge pages:
 * the first touch of fresh memory otherwise costs more than a memory-bound kernel
 * (one fault per 4 KiB); middle-sized ones (MID_BUFFER on) from mmap too, page-aligned;
 * both are recycled (below). Small ones are aligned to a cache line (BUF_ALIGN), at least 8
 * bytes so that index 0 is always readable: malloc's 16 bytes would split every other
 * 64-byte vector load across two lines (a 512 f64 matrix product's rows of b, read a
 * vector at a time, took 1.3x the time). Both are zeroed unless the caller will write
 * every element. */
#define BIG_BUFFER (4u << 20)
#define HUGE_PAGE (2u << 20)
#define BUF_ALIGN 64u
/* From this size on, buffers come from mmap too (page-aligned) and are recycled: malloc
 * returned a freed 4 MB result to the system (its heap trimmed) and faulted it in afresh
 * on the next call, a fold's call taking 6.4 ms where 3.7 with the memory kept. */
#ifdef __SANITIZE_ADDRESS__
#define MID_BUFFER BIG_BUFFER   /* AddressSanitizer watches malloc's buffers, not mmap's */
#else
#define MID_BUFFER (256u << 10)
#endif

/* Freed buffers of MID_BUFFER or more are kept, up to a bound, for the next allocation of
 * the same size: a program run again (a loop of lacc.run, a compiled function) then
 * writes into memory that is already mapped instead of faulting in fresh pages. Process-wide, under a lock;
 * LACC_RECYCLE_MB sets the bound (default 256, 0 turns it off). */
#define RECYCLE_SLOTS 256
static struct {
  pthread_mutex_t lock;
  int init;
  size_t limit, held;
  int n;
  struct { void *p; size_t bytes; } bin[RECYCLE_SLOTS];   /* oldest first */
} recycle = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void recycle_init(void) {
  if (recycle.init) return;
  double mb = setting_number("LACC_RECYCLE_MB", 256, 0, 1 << 24, 1);
  recycle.limit = (size_t)mb << 20;
  recycle.init = 1;
}

static void *recycle_take(size_t bytes) {
  void *p = NULL;
  pthread_mutex_lock(&recycle.lock);
  for (int i = recycle.n - 1; i >= 0; i--)
    if (recycle.bin[i].bytes == bytes) {
      p = recycle.bin[i].p;
      recycle.held -= bytes;
      memmove(&recycle.bin[i], &recycle.bin[i + 1], sizeof recycle.bin[0] * (size_t)(recycle.n - 1 - i));
      recycle.n--;
      break;
    }
  pthread_mutex_unlock(&recycle.lock);
  return p;
}

/* Keeps p, evicting the oldest buffers to stay in bounds; returns what to unmap. */
static int recycle_put(void *p, size_t bytes, void **drop, size_t *drop_bytes) {
  int nd = 0;
  pthread_mutex_lock(&recycle.lock);
  recycle_init();
  if (bytes > recycle.limit) {
    drop[nd] = p;
    drop_bytes[nd++] = bytes;
  } else {
    while (recycle.n > 0 && (recycle.n == RECYCLE_SLOTS || recycle.held + bytes > recycle.limit)) {
      drop[nd] = recycle.bin[0].p;
      drop_bytes[nd++] = recycle.bin[0].bytes;
      recycle.held -= recycle.bin[0].bytes;
      memmove(&recycle.bin[0], &recycle.bin[1], sizeof recycle.bin[0] * (size_t)(recycle.n - 1));
      recycle.n--;
    }
    recycle.bin[recycle.n].p = p;
    recycle.bin[recycle.n++].bytes = bytes;
    recycle.held += bytes;
  }
  pthread_mutex_unlock(&recycle.lock);
  return nd;
}

static void *buf_alloc(size_t bytes, int zeroed) {
  if (bytes < MID_BUFFER) {
    void *s = NULL;
    size_t n = (bytes + BUF_ALIGN - 1) & ~(size_t)(BUF_ALIGN - 1);
    if (posix_memalign(&s, BUF_ALIGN, n < BUF_ALIGN ? BUF_ALIGN : n) != 0) return NULL;
    if (zeroed) memset(s, 0, n < BUF_ALIGN ? BUF_ALIGN : n);
    return s;
  }
  void *r = recycle_take(bytes);
  if (r != NULL) {
    if (zeroed) memset(r, 0, bytes);
    return r;
  }
  if (bytes < BIG_BUFFER) {   /* fresh pages are zero */
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
  }
  size_t len = bytes + HUGE_PAGE;
  char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  size_t head = start - (uintptr_t)p, tail = len - head - bytes;
  if (head > 0) munmap(p, head);
  if (tail > 0) munmap((char *)start + bytes, tail);
#ifdef MADV_HUGEPAGE
  madvise((void *)start, bytes, MADV_HUGEPAGE);
#endif
  return (void *)start;
}

static void buf_free(void *p, size_t bytes);
void *buffer_take(size_t bytes) { return buf_alloc(bytes, 0); }
void buffer_give(void *p, size_t bytes) { buf_free(p, bytes); }

static void buf_free(void *p, size_t bytes) {
  if (p == NULL) return;
  if (bytes < MID_BUFFER) {
    free(p);
    return;
  }
  void *drop[RECYCLE_SLOTS + 1];
  size_t drop_bytes[RECYCLE_SLOTS + 1];
  int nd = recycle_put(p, bytes, drop, drop_bytes);
  for (int i = 0; i < nd; i++) munmap(drop[i], drop_bytes[i]);
}

lacc_array *array_alloc(lacc_ctx *ctx, const lacc_type *t, int rank, const int64_t *extent) {
  const layout_plan *plan = layout_plan_of(ctx, t, ctx->layout);
  return plan != NULL ? array_alloc_plan(ctx, t, rank, extent, plan) : NULL;
}

static void view_sync(lacc_array *a);
static int err_discarded(lacc_ctx *ctx);
static int check_not_busy(const lacc_array *a, const char *what);
static lacc_array *alloc_plan(lacc_ctx *ctx, const lacc_type *t, int rank,
                              const int64_t *extent, const layout_plan *plan, int zeroed);

lacc_array *array_alloc_plan(lacc_ctx *ctx, const lacc_type *t, int rank, const int64_t *extent,
                             const layout_plan *plan) {
  return alloc_plan(ctx, t, rank, extent, plan, 1);
}

/* For outputs a kernel writes in full: recycled memory is not cleared. */
lacc_array *array_alloc_out(lacc_ctx *ctx, const lacc_type *t, int rank, const int64_t *extent,
                            const layout_plan *plan) {
  return alloc_plan(ctx, t, rank, extent, plan, 0);
}

int shape_size(lacc_ctx *ctx, const char *prefix, int rank, const int64_t *ext, int64_t *size) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) {
    if (ext[d] < 0) return err_shape_extent(ctx, prefix, ext[d], d + 1);
    if (ext[d] > 0 && n > LACC_MAX_ELEMS / ext[d]) return err_shape_size(ctx, prefix);
    n *= ext[d];
  }
  *size = n;
  return LACC_OK;
}

static lacc_array *alloc_plan(lacc_ctx *ctx, const lacc_type *t, int rank,
                              const int64_t *extent, const layout_plan *plan, int zeroed) {
  if (rank < 0 || rank > LACC_MAX_RANK) {
    ctx_error(ctx, LACC_ERR_ARG, "rank %d is out of range (0 to %d)", rank, LACC_MAX_RANK);
    return NULL;
  }
  int64_t size;
  if (shape_size(ctx, NULL, rank, extent, &size) != LACC_OK) return NULL;
  lacc_array *a = ctx_alloc(ctx, sizeof *a);
  if (a == NULL) return NULL;
  a->buf = ctx_alloc(ctx, sizeof *a->buf * (size_t)(plan->nbufs ? plan->nbufs : 1));
  if (a->buf == NULL) {
    free(a);
    return NULL;
  }
  a->refs = 1;
  a->ctx = ctx;
  a->type = t;
  a->plan = plan;
  a->rank = rank;
  a->size = size;
  for (int d = 0; d < rank; d++) a->extent[d] = extent[d];
  for (int k = 0; k < plan->nbufs; k++) {
    size_t bytes = scalar_size(plan->buf_kind[k]) * (size_t)size;
    a->buf[k] = buf_alloc(bytes, zeroed);
    if (a->buf[k] == NULL) {
      ctx_error(ctx, LACC_ERR_MEMORY, "out of memory allocating %lld elements of %s",
                (long long)size, t->sig);
      for (int j = 0; j < k; j++) buf_free(a->buf[j], scalar_size(plan->buf_kind[j]) * (size_t)size);
      free(a->buf);
      free(a);
      return NULL;
    }
    a->bytes += (int64_t)bytes;
  }
  ctx->bytes += a->bytes;
  ctx_retain(ctx);
  view_sync(a);
  return a;
}

void array_load(const lacc_array *a, int64_t i, lacc_val *leaves) {
  layout_load(a->plan, a->type, a->buf, i, leaves);
}

void array_store(lacc_array *a, int64_t i, const lacc_val *leaves) {
  layout_store(a->plan, a->type, a->buf, i, leaves);
}

_Static_assert((int)S_F64 == (int)LACC_F64 && (int)S_BOOL == (int)LACC_BOOL,
               "lacc_scalar follows scalar_kind");

/* The view record follows every change of where a's values are and who may write them. */
static void view_sync(lacc_array *a) {
  lacc_view *v = &a->view;
  if (a->type->kind != T_SCALAR) return;
  v->data = a->buf[0];
  v->size = a->size;
  v->cols = a->rank > 0 ? a->extent[a->rank - 1] : 1;
  v->rank = a->rank;
  v->scalar = (int32_t)a->type->scalar;
  v->readable = !a->host_stale && !a->discarded;
  v->writable = v->readable && a->mirror == NULL && a->busy == 0;
}

void array_busy(lacc_array *a, int d) {
  a->busy += d;
  view_sync(a);
}

static void drop_mirror(lacc_array *a) {
  if (a->mirror != NULL) a->mirror->ops->drop(a->mirror);
  a->mirror = NULL;
}

int array_host(lacc_array *a) {
  if (a->discarded) return err_discarded(a->ctx);
  if (!a->host_stale) return LACC_OK;
  int rc = a->mirror->ops->fetch(a->mirror, a);
  if (rc == LACC_OK) a->host_stale = 0;
  view_sync(a);
  return rc;
}

void array_host_written(lacc_array *a) {
  drop_mirror(a);
  a->host_stale = 0;
  view_sync(a);
}

void array_set_mirror(lacc_array *a, array_mirror *m, int stale) {
  drop_mirror(a);
  a->mirror = m;
  a->host_stale = stale;
  view_sync(a);
}

lacc_array *array_relayout(lacc_ctx *ctx, lacc_array *a, const layout_plan *plan) {
  if (plan == NULL || a->plan == plan) {
    lacc_array_retain(a);
    return a;
  }
  if (array_host(a) != LACC_OK) return NULL;
  lacc_array *r = array_alloc_out(ctx, a->type, a->rank, a->extent, plan);
  lacc_val small[64];
  int nl = a->type->nleaves;
  lacc_val *v = nl <= 64 ? small : malloc(sizeof *v * (size_t)nl);
  if (r == NULL || v == NULL) {
    lacc_array_release(r);
    if (r != NULL) err_oom(ctx);
    return NULL;
  }
  for (int64_t i = 0; i < a->size; i++) {
    array_load(a, i, v);
    array_store(r, i, v);
  }
  if (v != small) free(v);
  return r;
}

lacc_array *lacc_array_new(lacc_ctx *ctx, const char *type, int rank, const int64_t *extents) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  if (t == NULL) return NULL;
  return array_alloc(ctx, t, rank, extents);
}

void lacc_array_retain(lacc_array *a) { a->refs++; }

static int err_discarded(lacc_ctx *ctx) {
  return ctx_error(ctx, LACC_ERR_ARG, "array's elements were released (lacc_array_discard): "
                   "they can no longer be read or written");
}

int lacc_array_discard(lacc_ctx *ctx, lacc_array *a) {
  ctx_clear(ctx);
  if (a->ctx != ctx)
    return ctx_error(ctx, LACC_ERR_ARG, "array belongs to another lacc context (Lua state)");
  if (a->discarded) return LACC_OK;
  if (check_not_busy(a, "discard") != LACC_OK) return ctx->errcode;
  drop_mirror(a);
  for (int k = 0; k < a->plan->nbufs; k++) {
    buf_free(a->buf[k], scalar_size(a->plan->buf_kind[k]) * (size_t)a->size);
    a->buf[k] = NULL;
  }
  ctx->bytes -= a->bytes;
  a->bytes = 0;
  a->host_stale = 0;
  a->exposed = 0;   /* no elements left whose tags a run would check */
  a->discarded = 1;
  view_sync(a);
  return LACC_OK;
}

void lacc_array_release(lacc_array *a) {
  if (a == NULL || --a->refs > 0) return;
  drop_mirror(a);
  for (int k = 0; k < a->plan->nbufs; k++)
    buf_free(a->buf[k], scalar_size(a->plan->buf_kind[k]) * (size_t)a->size);
  free(a->buf);
  a->ctx->bytes -= a->bytes;
  lacc_ctx_release(a->ctx);
  free(a);
}

lacc_ctx *lacc_array_ctx(const lacc_array *a) { return a->ctx; }
const char *lacc_array_type(const lacc_array *a) { return a->type->sig; }
int lacc_array_rank(const lacc_array *a) { return a->rank; }
int64_t lacc_array_size(const lacc_array *a) { return a->size; }
int lacc_array_nleaves(const lacc_array *a) { return a->type->nleaves; }

int64_t lacc_array_extent(const lacc_array *a, int dim) {
  return dim >= 0 && dim < a->rank ? a->extent[dim] : -1;
}

const char *lacc_array_leaf_type(const lacc_array *a, int leaf) {
  if (leaf < 0 || leaf >= a->type->nleaves) return NULL;
  return scalar_name(type_leaf(a->type, leaf));
}

/* The sum whose constructor index is value leaf `leaf` of t, NULL for a scalar leaf. */
static const lacc_type *tag_owner(const lacc_type *t, int leaf) {
  int pos = 0;
  while (t->kind != T_SCALAR) {
    if (t->kind == T_SUM) {
      if (leaf == pos) return t;
      pos++;
    }
    int f = 0;
    while (f < t->n && leaf >= pos + t->fields[f]->nleaves) pos += t->fields[f++]->nleaves;
    if (f == t->n) return NULL;
    t = t->fields[f];
  }
  return NULL;
}

/* Writes go through the layout's store, which cannot represent a constructor that does
 * not exist (and the backends would read one as some other constructor, or crash). */
static int check_tag_write(const lacc_array *a, int leaf, int64_t v, const double *d) {
  const lacc_type *sum = tag_owner(a->type, leaf);
  if (sum == NULL) return LACC_OK;
  int integral = d == NULL || (*d >= 0 && *d < 4294967296.0 && (double)(int64_t)*d == *d);
  if (d != NULL && integral) v = (int64_t)*d;
  if (integral && v >= 0 && v < sum->n) return LACC_OK;
  char shown[32];
  if (d == NULL) snprintf(shown, sizeof shown, "%lld", (long long)v);
  else snprintf(shown, sizeof shown, "%.17g", *d);
  return ctx_error(a->ctx, LACC_ERR_ARG, "set: %s is not a constructor index of %s (0 to %d)",
                   shown, sum->sig, sum->n - 1);
}

/* Host writes into an array a run reads would change (or, through the device copy's
 * bookkeeping, break) what its kernels see. */
static int check_not_busy(const lacc_array *a, const char *what) {
  if (a->busy == 0) return LACC_OK;
  return ctx_error(a->ctx, LACC_ERR_ARG, "%s: array is in use by a running program (it can "
                   "be written once the run has ended)", what);
}

/* Only where a leaf has a buffer of its own (no shared slots). A tag leaf's buffer can be
 * written with anything: the array's tags are checked before each later run. */
void *lacc_array_leaf_data(lacc_array *a, int leaf) {
  if (leaf < 0 || leaf >= a->type->nleaves || a->plan->raw || a->plan->leaf_buf[leaf] < 0)
    return NULL;
  if (check_not_busy(a, "leaf_data") != LACC_OK || array_host(a) != LACC_OK) return NULL;
  array_host_written(a);
  if (tag_owner(a->type, leaf) != NULL || type_leaf(a->type, leaf) == S_BOOL) a->exposed = 1;
  return a->buf[a->plan->leaf_buf[leaf]];
}

/* Whether element i's constructor indices name constructors, along the active
 * alternatives only: inactive ones hold whatever a kernel left there. Sets *bad to the
 * first invalid index and *sum to its type. Unboxed: each sum has a leaf of its own. */
static int tags_ok(const lacc_array *a, const lacc_type *t, int64_t i, int *leaf,
                   int active, uint64_t *bad, const lacc_type **sum) {
  if (t->kind == T_SCALAR) {
    (*leaf)++;
    return 1;
  }
  uint64_t k = 0;
  if (t->kind == T_SUM) {
    int b = a->plan->leaf_buf[(*leaf)++];
    if (active && b >= 0) k = val_load(a->plan->buf_kind[b], a->buf[b], i).u;
    if (active && k >= (uint64_t)t->n) {
      *bad = k;
      *sum = t;
      return 0;
    }
  }
  for (int f = 0; f < t->n; f++)
    if (!tags_ok(a, t->fields[f], i, leaf, active && (t->kind == T_TUPLE || (uint64_t)f == k),
                 bad, sum))
      return 0;
  return 1;
}

/* A bool leaf's buffer handed out may hold any byte: each is made 0 or 1, as frombytes
 * and load make them, so that every tier reads the same value (the interpreter tests a
 * byte, compiled code adds or compares it). */
static void normalise_bools(lacc_array *a) {
  for (int l = 0; l < a->type->nleaves; l++) {
    int b = a->plan->leaf_buf[l];
    if (type_leaf(a->type, l) != S_BOOL || b < 0 || a->plan->buf_kind[b] != S_BOOL) continue;
    unsigned char *p = a->buf[b];
    for (int64_t i = 0; i < a->size; i++) p[i] = p[i] != 0;
  }
}

/* Only unboxed arrays hand out tag buffers (rtu and compact share buffers between leaves,
 * so lacc_array_leaf_data gives none, and their tags are written only through set, which
 * checks them); a stale host copy is not read, the device copy came from a run. */
int array_check_tags(lacc_ctx *ctx, lacc_array *a, const char *what) {
  if (!a->exposed || a->plan->raw || a->host_stale) return LACC_OK;
  normalise_bools(a);
  for (int64_t i = 0; a->type->has_sum && i < a->size; i++) {
    int leaf = 0;
    uint64_t bad = 0;
    const lacc_type *sum = NULL;
    if (!tags_ok(a, a->type, i, &leaf, 1, &bad, &sum))
      return ctx_error(ctx, LACC_ERR_ARG, "%s: element %lld holds constructor index %llu, "
                       "which %s does not have (0 to %d): written through "
                       "lacc_array_leaf_data?", what, (long long)i + 1,
                       (unsigned long long)bad, sum->sig, sum->n - 1);
  }
  return LACC_OK;
}

const char *lacc_array_layout(const lacc_array *a) {
  return layout_name(a->plan->strategy);
}

/* One leaf of element i, through the layout (the whole element is decoded). */
static lacc_val leaf_get(const lacc_array *a, int leaf, int64_t i) {
  lacc_val small[64];
  lacc_val *v = a->type->nleaves <= 64 ? small : malloc(sizeof *v * (size_t)a->type->nleaves);
  lacc_val r = { .u = 0 };
  if (v == NULL) return r;
  array_load(a, i, v);
  r = v[leaf];
  if (v != small) free(v);
  return r;
}

static int leaf_set(lacc_array *a, int leaf, int64_t i, lacc_val x) {
  lacc_val small[64];
  lacc_val *v = a->type->nleaves <= 64 ? small : malloc(sizeof *v * (size_t)a->type->nleaves);
  if (v == NULL) return err_oom(a->ctx);
  array_load(a, i, v);
  v[leaf] = x;
  array_store(a, i, v);
  if (v != small) free(v);
  return LACC_OK;
}

/* The host reads and writes only host buffers: a stale array's values are fetched from
 * its mirror first (which changes the array, though the getters take it as const). */
static int check_access(lacc_ctx *ctx, const lacc_array *a, int leaf, int64_t i) {
  ctx_clear(ctx);
  if (a->ctx != ctx)
    return ctx_error(ctx, LACC_ERR_ARG, "array belongs to another lacc context (Lua state)");
  if (leaf < 0 || leaf >= a->type->nleaves)
    return ctx_error(ctx, LACC_ERR_ARG, "field %d out of range for element type %s",
                     leaf + 1, a->type->sig);
  if (i < 0 || i >= a->size)
    return ctx_error(ctx, LACC_ERR_BOUNDS, "index %lld out of bounds (size %lld)",
                     (long long)i + 1, (long long)a->size);
  return array_host((lacc_array *)a);
}

int lacc_array_get_i(lacc_ctx *ctx, const lacc_array *a, int leaf, int64_t i, int64_t *out) {
  int rc = check_access(ctx, a, leaf, i);
  if (rc != LACC_OK) return rc;
  scalar_kind k = type_leaf(a->type, leaf);
  *out = val_cast(scalar_is_signed(k) ? S_I64 : S_U64, k, leaf_get(a, leaf, i)).i;
  return LACC_OK;
}

int lacc_array_get_f(lacc_ctx *ctx, const lacc_array *a, int leaf, int64_t i, double *out) {
  int rc = check_access(ctx, a, leaf, i);
  if (rc != LACC_OK) return rc;
  scalar_kind k = type_leaf(a->type, leaf);
  *out = val_cast(S_F64, k, leaf_get(a, leaf, i)).d;
  return LACC_OK;
}

int lacc_array_set_i(lacc_ctx *ctx, lacc_array *a, int leaf, int64_t i, int64_t v) {
  int rc = check_access(ctx, a, leaf, i);
  if (rc == LACC_OK) rc = check_not_busy(a, "set");
  if (rc == LACC_OK) rc = check_tag_write(a, leaf, v, NULL);
  if (rc != LACC_OK) return rc;
  scalar_kind k = type_leaf(a->type, leaf);
  lacc_val x = { .i = v };
  array_host_written(a);
  return leaf_set(a, leaf, i, val_cast(k, S_I64, x));
}

int lacc_array_set_f(lacc_ctx *ctx, lacc_array *a, int leaf, int64_t i, double v) {
  int rc = check_access(ctx, a, leaf, i);
  if (rc == LACC_OK) rc = check_not_busy(a, "set");
  if (rc == LACC_OK) rc = check_tag_write(a, leaf, 0, &v);
  if (rc != LACC_OK) return rc;
  scalar_kind k = type_leaf(a->type, leaf);
  lacc_val x = { .d = v };
  array_host_written(a);
  return leaf_set(a, leaf, i, val_cast(k, S_F64, x));
}

int lacc_array_set_value(lacc_ctx *ctx, lacc_array *a, int leaf, int64_t i, const lacc_value *v) {
  int rc = check_access(ctx, a, leaf, i);
  if (rc != LACC_OK) return rc;
  lacc_val x;
  scalar_kind from;
  if (value_route(ctx, type_leaf(a->type, leaf), v, 0, NULL, &x, &from) != LACC_OK)
    return lacc_errcode(ctx);
  return from == S_F64 ? lacc_array_set_f(ctx, a, leaf, i, x.d) : lacc_array_set_i(ctx, a, leaf, i, x.i);
}
