/* layout.c: the struct-of-arrays layout of element types (seeds 000 and 002).
 *
 * Owns: for an element type and a strategy, the tag(s) and the field arrays, their
 * widths and member types, the bits per element, and the theoretical minimum of seed
 * 000 equation 1. Strategies:
 *   unboxed  Accelerate's baseline: a tag per sum, a field per constructor field;
 *   rtu      one combined tag for all nested sums (sums add choices, products multiply),
 *            and a product of unions: the i-th fields of all alternatives share one field;
 *   compact  rtu, but each alternative's fields are ordered by width, widest first,
 *            before they are merged, so equal-width members share a field (stored as
 *            bits and cast) and narrow ones never widen a wide field needlessly.
 * Must not: allocate arrays or know about programs (that comes with arrays of sums).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

typedef enum { S_UNBOXED, S_RTU, S_COMPACT } strategy;

/* A field array: its width in bits and the scalar kinds stored in it (a bit set). */
typedef struct {
  int bits;
  unsigned members;
} slot;

typedef struct {
  slot *v;
  int n, cap;
  int oom;
} slots;

static void push(slots *s, slot x) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 8;
    slot *v = realloc(s->v, sizeof *v * (size_t)cap);
    if (v == NULL) {
      s->oom = 1;
      return;
    }
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = x;
}

static int width(scalar_kind k) { return scalar_bits(k); }

/* The smallest of 8/16/32/64 bits that holds n choices; 0 when there is one. */
static int tag_width(uint64_t choices) {
  if (choices <= 1) return 0;
  if (choices <= 256) return 8;
  if (choices <= 65536) return 16;
  if (choices <= 4294967296ULL) return 32;
  return 64;
}

static int log2_ceil(uint64_t n) {
  int b = 0;
  while (b < 64 && ((uint64_t)1 << b) < n) b++;
  return b;
}

/* Choices of a type: sums add, products multiply (saturating at 2^64 - 1). */
static uint64_t choices(const lacc_type *t) {
  if (t->kind == T_SCALAR) return 1;
  uint64_t c = t->kind == T_SUM ? 0 : 1;
  for (int i = 0; i < t->n; i++) {
    uint64_t f = choices(t->fields[i]);
    if (t->kind == T_SUM) c = c + f < c ? UINT64_MAX : c + f;
    else c = f != 0 && c > UINT64_MAX / f ? UINT64_MAX : c * f;
  }
  return c;
}

/* Bits of a bit-packed tag: a product packs its factors' tags side by side, a sum
 * puts its constructor number above the widest alternative's tag. */
static int packed_bits(const lacc_type *t) {
  if (t->kind == T_SCALAR) return 0;
  int b = 0;
  for (int i = 0; i < t->n; i++) {
    int f = packed_bits(t->fields[i]);
    if (t->kind == T_SUM) b = f > b ? f : b;
    else b += f;
  }
  return t->kind == T_SUM ? b + log2_ceil((uint64_t)t->n) : b;
}

/* Seed 000 equation 1: log2 of the constructors plus the widest alternative. */
static int minimum_bits(const lacc_type *t) {
  if (t->kind == T_SCALAR) return t->scalar == S_BOOL ? 1 : width(t->scalar);
  if (t->kind == T_TUPLE) {
    int b = 0;
    for (int i = 0; i < t->n; i++) b += minimum_bits(t->fields[i]);
    return b;
  }
  int widest = 0;
  for (int i = 0; i < t->n; i++) {
    int f = minimum_bits(t->fields[i]);
    widest = f > widest ? f : widest;
  }
  return log2_ceil((uint64_t)t->n) + widest;
}

static int by_width_desc(const void *a, const void *b) {
  const slot *x = a, *y = b;
  return y->bits - x->bits;
}

/* Merge alternatives position-wise: the i-th field of each shares one slot. */
static void merge_into(slots *acc, const slots *alt) {
  for (int i = 0; i < alt->n; i++) {
    if (i < acc->n) {
      acc->v[i].bits = alt->v[i].bits > acc->v[i].bits ? alt->v[i].bits : acc->v[i].bits;
      acc->v[i].members |= alt->v[i].members;
    } else {
      push(acc, alt->v[i]);
    }
  }
}

/* Fields of t under rtu or compact, appended to out. */
static void union_fields(const lacc_type *t, strategy st, slots *out) {
  if (t->kind == T_SCALAR) {
    push(out, (slot){ width(t->scalar), 1u << t->scalar });
    return;
  }
  if (t->kind == T_TUPLE) {
    slots mine = { 0 };
    for (int i = 0; i < t->n; i++) union_fields(t->fields[i], st, &mine);
    if (st == S_COMPACT && mine.n > 1) qsort(mine.v, (size_t)mine.n, sizeof *mine.v, by_width_desc);
    for (int i = 0; i < mine.n; i++) push(out, mine.v[i]);
    out->oom |= mine.oom;
    free(mine.v);
    return;
  }
  slots merged = { 0 };
  for (int i = 0; i < t->n; i++) {
    slots alt = { 0 };
    union_fields(t->fields[i], st, &alt);
    merge_into(&merged, &alt);
    merged.oom |= alt.oom;
    free(alt.v);
  }
  for (int i = 0; i < merged.n; i++) push(out, merged.v[i]);
  out->oom |= merged.oom;
  free(merged.v);
}

/* Unboxed: every sum has its own tag (recorded in tags) and every constructor field
 * its own array. */
static void unboxed_fields(const lacc_type *t, slots *out, slots *tags) {
  if (t->kind == T_SCALAR) {
    push(out, (slot){ width(t->scalar), 1u << t->scalar });
    return;
  }
  if (t->kind == T_SUM) push(tags, (slot){ tag_width((uint64_t)t->n), 0 });
  for (int i = 0; i < t->n; i++) unboxed_fields(t->fields[i], out, tags);
}

static int put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static int put(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (*len + (size_t)n + 1 > *cap) {
    size_t c = (*cap + (size_t)n + 1) * 2;
    char *b = realloc(*buf, c);
    if (b == NULL) return 0;
    *buf = b;
    *cap = c;
  }
  va_start(ap, fmt);
  vsnprintf(*buf + *len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  *len += (size_t)n;
  return 1;
}

static int put_members(char **buf, size_t *len, size_t *cap, unsigned members) {
  int first = 1, ok = 1;
  for (int k = 0; ok && k < S_NSCALAR; k++) {
    if (!(members & (1u << k))) continue;
    ok = put(buf, len, cap, "%s%s", first ? "" : ",", scalar_name((scalar_kind)k));
    first = 0;
  }
  return ok;
}

char *layout_describe(lacc_ctx *ctx, const lacc_type *t, const char *name) {
  strategy st;
  if (name == NULL || strcmp(name, "compact") == 0) st = S_COMPACT;
  else if (strcmp(name, "rtu") == 0) st = S_RTU;
  else if (strcmp(name, "unboxed") == 0) st = S_UNBOXED;
  else {
    ctx_error(ctx, LACC_ERR_ARG,
              "layout: unknown strategy '%s' (expected \"compact\", \"rtu\" or \"unboxed\")", name);
    return NULL;
  }
  slots fields = { 0 }, tags = { 0 };
  uint64_t c = choices(t);
  if (st == S_UNBOXED) {
    unboxed_fields(t, &fields, &tags);
  } else {
    int tw = tag_width(c);
    if (tw > 0) push(&tags, (slot){ tw, 0 });
    union_fields(t, st, &fields);
  }
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int bits = 0;
  int ok = !fields.oom && !tags.oom;
  const char *names[] = { "unboxed", "rtu", "compact" };
  ok = ok && put(&buf, &len, &cap, "strategy %s\nchoices %llu\n", names[st], (unsigned long long)c);
  /* Bit-packed tags are tested with masks and shifts instead of div/mod (seed 000
   * section 6.2): use them whenever they fit in the tag's storage width, which is
   * chosen from the (smaller) mixed-radix count; otherwise mixed radix. */
  const char *enc = tag_width(c) == 0 ? "none" : packed_bits(t) <= tag_width(c) ? "packed" : "radix";
  for (int i = 0; ok && i < tags.n; i++) {
    ok = put(&buf, &len, &cap, "tag %d %s\n", tags.v[i].bits, st == S_UNBOXED ? "own" : enc);
    bits += tags.v[i].bits;
  }
  for (int i = 0; ok && i < fields.n; i++) {
    ok = put(&buf, &len, &cap, "field %d ", fields.v[i].bits) &&
         put_members(&buf, &len, &cap, fields.v[i].members) && put(&buf, &len, &cap, "\n");
    bits += fields.v[i].bits;
  }
  ok = ok && put(&buf, &len, &cap, "bits %d\nminimum %d\n", bits, minimum_bits(t));
  free(fields.v);
  free(tags.v);
  if (!ok) {
    free(buf);
    ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
    return NULL;
  }
  return buf;
}

char *lacc_layout(lacc_ctx *ctx, const char *type, const char *strategy_name) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  return t != NULL ? layout_describe(ctx, t, strategy_name) : NULL;
}
