/* bulk.c: an array's elements in and out as packed bytes.
 *
 * Owns: the packed form of an element (its scalar leaves in order, native endianness, no
 * padding: NumPy's packed structured dtype for a tuple) and the copies between it and an
 * array's leaf buffers (one buffer per leaf for every type without a sum), the leaves
 * form every type has (a sum's constructor index and all its alternatives' leaves, each
 * element through the layout's store and load: lacc.mpi sends arrays of sums so), and
 * the one buffer of a scalar array handed to the host (lacc_array_data).
 * Must not: give sum types a packed form (their layouts share and pack buffers: the
 * leaves form is the one way out as bytes), or touch a device copy other than through
 * array_host.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static int64_t packed_bytes(const lacc_type *t) {
  int64_t n = 0;
  for (int l = 0; l < t->nleaves; l++) n += (int64_t)scalar_size(type_leaf(t, l));
  return n;
}

/* t's packed size, or -1 with an error naming what for a type with a sum. */
static int64_t element_bytes(lacc_ctx *ctx, const lacc_type *t, const char *what) {
  if (t->has_sum) {
    ctx_error(ctx, LACC_ERR_TYPE, "%s: %s holds a sum type, which has no packed byte form "
              "(scalars and tuples of scalars have)", what, t->sig);
    return -1;
  }
  return packed_bytes(t);
}

int64_t lacc_type_bytes(lacc_ctx *ctx, const char *type) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  return t == NULL ? -1 : element_bytes(ctx, t, "bytes");
}

/* Leaf l of every element between the packed form (stride bytes apart, at offset off)
 * and the leaf's own buffer; bools read in are made 0 or 1. */
static void copy_leaf(lacc_array *a, int l, unsigned char *packed, int64_t stride, int64_t off,
                      int into_array) {
  scalar_kind k = type_leaf(a->type, l);
  size_t w = scalar_size(k);
  unsigned char *buf = a->buf[a->plan->leaf_buf[l]];
  if ((int64_t)w == stride) {   /* a scalar array: one copy */
    if (into_array) memcpy(buf, packed, w * (size_t)a->size);
    else memcpy(packed, buf, w * (size_t)a->size);
  } else {
    for (int64_t i = 0; i < a->size; i++) {
      unsigned char *p = packed + i * stride + off;
      if (into_array) memcpy(buf + (size_t)i * w, p, w);
      else memcpy(p, buf + (size_t)i * w, w);
    }
  }
  if (into_array && k == S_BOOL)
    for (int64_t i = 0; i < a->size; i++) buf[i] = buf[i] != 0;
}

static void copy_all(lacc_array *a, unsigned char *packed, int64_t stride, int into_array) {
  int64_t off = 0;
  for (int l = 0; l < a->type->nleaves; l++) {
    copy_leaf(a, l, packed, stride, off, into_array);
    off += (int64_t)scalar_size(type_leaf(a->type, l));
  }
}

lacc_array *lacc_array_from_buffer(lacc_ctx *ctx, const char *type, int rank,
                                   const int64_t *extents, const void *data, int64_t bytes) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  if (t == NULL) return NULL;
  int64_t eb = element_bytes(ctx, t, "from_buffer");
  if (eb < 0) return NULL;
  const layout_plan *plan = layout_plan_of(ctx, t, ctx->layout);
  lacc_array *a = plan != NULL ? array_alloc_out(ctx, t, rank, extents, plan) : NULL;
  if (a == NULL) return NULL;
  if (bytes != a->size * eb) {
    ctx_error(ctx, LACC_ERR_SHAPE, "from_buffer: %lld elements of %s take %lld bytes, got %lld",
              (long long)a->size, t->sig, (long long)(a->size * eb), (long long)bytes);
    lacc_array_release(a);
    return NULL;
  }
  if (a->size > 0 && data == NULL) {
    ctx_error(ctx, LACC_ERR_ARG, "from_buffer: the data pointer is NULL");
    lacc_array_release(a);
    return NULL;
  }
  if (a->size > 0) copy_all(a, (unsigned char *)data, eb, 1);
  return a;
}

/* LACC_OK where a buffer of `bytes` holds a's elements of eb bytes and a's values are on
 * the host (what: the call, for the error) */
static int ready_out(lacc_ctx *ctx, lacc_array *a, int64_t eb, int64_t bytes, const char *what) {
  if (bytes != a->size * eb)
    return ctx_error(ctx, LACC_ERR_SHAPE, "%s: %lld elements of %s take %lld bytes, "
                     "the buffer has %lld", what, (long long)a->size, a->type->sig,
                     (long long)(a->size * eb), (long long)bytes);
  return array_host(a);
}

int lacc_array_to_buffer(lacc_ctx *ctx, lacc_array *a, void *out, int64_t bytes) {
  ctx_clear(ctx);
  int64_t eb = element_bytes(ctx, a->type, "to_buffer");
  if (eb < 0) return lacc_errcode(ctx);
  int rc = ready_out(ctx, a, eb, bytes, "to_buffer");
  if (rc != LACC_OK) return rc;
  if (a->size > 0) copy_all(a, out, eb, 0);
  return LACC_OK;
}

/* ---- leaves: every type's packed form, sums included (for lacc.mpi) */

/* Bytes of one element as its leaves: each scalar, and a u32 constructor index per sum,
 * followed by every alternative's leaves (the inactive ones zero). */
static int64_t leaf_bytes(const lacc_type *t) {
  return packed_bytes(t);   /* a sum's tag leaf is u32 (type_leaf) */
}

int64_t lacc_type_leaf_bytes(lacc_ctx *ctx, const char *type) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  return t == NULL ? -1 : leaf_bytes(t);
}

/* Whether each active sum's constructor index among leaves (from *pos on) names one of
 * its constructors: a stored tag past them would read as no constructor. */
static int constructors_valid(const lacc_type *t, const lacc_val *leaves, int *pos, int active) {
  if (t->kind == T_SCALAR) {
    (*pos)++;
    return 1;
  }
  uint64_t k = 0;
  if (t->kind == T_SUM) {
    k = leaves[*pos].u;
    (*pos)++;
    if (active && k >= (uint64_t)t->n) return 0;
  }
  int ok = 1;
  for (int f = 0; f < t->n; f++)
    ok &= constructors_valid(t->fields[f], leaves, pos, t->kind == T_SUM ? active && (uint64_t)f == k : active);
  return ok;
}

/* Element i's leaves between the packed bytes at p and the array (layout_store/_load):
 * each leaf copied through an aligned word (p need not be aligned). */
static int leaves_in(lacc_array *a, const unsigned char *p, int64_t i, lacc_val *leaves) {
  const lacc_type *t = a->type;
  for (int l = 0; l < t->nleaves; l++) {
    scalar_kind k = type_leaf(t, l);
    uint64_t w = 0;
    memcpy(&w, p, scalar_size(k));
    leaves[l] = val_load(k, &w, 0);
    p += scalar_size(k);
  }
  int pos = 0;
  if (!constructors_valid(t, leaves, &pos, 1)) return 0;
  layout_store(a->plan, t, (void **)a->buf, i, leaves);
  return 1;
}

static void leaves_out(lacc_array *a, unsigned char *p, int64_t i, lacc_val *leaves) {
  const lacc_type *t = a->type;
  layout_load(a->plan, t, (void *const *)a->buf, i, leaves);
  for (int l = 0; l < t->nleaves; l++) {
    scalar_kind k = type_leaf(t, l);
    uint64_t w = 0;
    val_store(k, &w, 0, leaves[l]);
    memcpy(p, &w, scalar_size(k));
    p += scalar_size(k);
  }
}

lacc_array *lacc_array_from_leaves(lacc_ctx *ctx, const char *type, int rank,
                                   const int64_t *extents, const void *data, int64_t bytes) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  if (t == NULL) return NULL;
  if (!t->has_sum) return lacc_array_from_buffer(ctx, type, rank, extents, data, bytes);
  int64_t eb = leaf_bytes(t);
  const layout_plan *plan = layout_plan_of(ctx, t, ctx->layout);
  lacc_array *a = plan != NULL ? array_alloc_out(ctx, t, rank, extents, plan) : NULL;
  if (a == NULL) return NULL;
  if (bytes != a->size * eb || (a->size > 0 && data == NULL)) {
    ctx_error(ctx, LACC_ERR_SHAPE, "from_leaves: %lld elements of %s take %lld bytes, got %lld",
              (long long)a->size, t->sig, (long long)(a->size * eb), (long long)bytes);
    lacc_array_release(a);
    return NULL;
  }
  lacc_val *leaves = malloc(sizeof *leaves * (size_t)t->nleaves);
  if (leaves == NULL) {
    ctx_error(ctx, LACC_ERR_MEMORY, "from_leaves: out of memory");
    lacc_array_release(a);
    return NULL;
  }
  for (int64_t i = 0; i < a->size; i++) {
    if (!leaves_in(a, (const unsigned char *)data + i * eb, i, leaves)) {
      ctx_error(ctx, LACC_ERR_ARG, "from_leaves: element %lld of %s names no constructor",
                (long long)i + 1, t->sig);
      free(leaves);
      lacc_array_release(a);
      return NULL;
    }
  }
  free(leaves);
  return a;
}

int lacc_array_to_leaves(lacc_ctx *ctx, lacc_array *a, void *out, int64_t bytes) {
  ctx_clear(ctx);
  if (!a->type->has_sum) return lacc_array_to_buffer(ctx, a, out, bytes);
  int64_t eb = leaf_bytes(a->type);
  int rc = ready_out(ctx, a, eb, bytes, "to_leaves");
  if (rc != LACC_OK) return rc;
  lacc_val *leaves = malloc(sizeof *leaves * (size_t)a->type->nleaves);
  if (leaves == NULL) return ctx_error(ctx, LACC_ERR_MEMORY, "to_leaves: out of memory");
  for (int64_t i = 0; i < a->size; i++) leaves_out(a, (unsigned char *)out + i * eb, i, leaves);
  free(leaves);
  return LACC_OK;
}

static int scalar_only(lacc_array *a) {
  ctx_clear(a->ctx);
  if (a->type->kind == T_SCALAR) return 1;
  ctx_error(a->ctx, LACC_ERR_TYPE, "data: an array of %s has one buffer per field, not one "
            "of elements (copy it out packed with to_buffer)", a->type->sig);
  return 0;
}

void *lacc_array_data(lacc_array *a) {
  return scalar_only(a) ? lacc_array_leaf_data(a, 0) : NULL;
}

/* For reads: a device copy stays valid (lacc_array_data's pointer may be written, so it
 * drops it). */
const void *lacc_array_data_read(lacc_array *a) {
  if (!scalar_only(a) || array_host(a) != LACC_OK) return NULL;
  return a->buf[0];
}

void *lacc_array_bytes(lacc_ctx *ctx, lacc_array *a, int64_t off, int64_t n, int write) {
  static char none;    /* where an empty range of an empty array points */
  ctx_clear(ctx);
  if (a->type->kind != T_SCALAR) {
    ctx_error(ctx, LACC_ERR_TYPE, "array bytes: %s is not a scalar type", a->type->sig);
    return NULL;
  }
  int64_t total = (int64_t)scalar_size(a->type->scalar) * a->size;
  if (off < 0 || n < 0 || off > total || n > total - off) {
    ctx_error(ctx, LACC_ERR_ARG, "array bytes: [%lld, %lld) outside the array's %lld bytes",
              (long long)off, (long long)(off + n), (long long)total);
    return NULL;
  }
  if (total == 0) return &none;
  char *p = write ? lacc_array_data(a) : (char *)lacc_array_data_read(a);
  return p != NULL ? p + off : NULL;
}

const lacc_view *lacc_array_view(lacc_array *a) {
  return a->type->kind == T_SCALAR ? &a->view : NULL;
}
