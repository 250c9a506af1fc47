/* layout.c: the struct-of-arrays layout of element types ("Accelerating Sum Types",
 * van Hoef 2022; "Variant Types in Data-Parallel Array Languages", de Graaf 2024).
 *
 * Owns: for an element type and a strategy, the tag(s) and the field arrays, their
 * widths and member types, the bits per element, and the theoretical minimum of
 * "Accelerating Sum Types" (equation 1); storing and loading one element through a
 * layout. Strategies:
 *   unboxed  Accelerate's baseline: a tag per sum, a field per constructor field;
 *   rtu      one combined tag for all nested sums (sums add choices, products multiply),
 *            and a product of unions: the i-th fields of all alternatives share one field;
 *   compact  rtu, but each alternative's fields are ordered by width, widest first,
 *            before they are merged, so equal-width members share a field (stored as
 *            bits and cast) and narrow ones never widen a wide field needlessly.
 * Must not: allocate arrays (array.c does) or know about programs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/internal.h"
#include "base/text.h"
#include "base/vec.h"

static int width(scalar_kind k) { return scalar_bits(k); }

/* The smallest of 8/16/32/64 bits that holds n choices; 0 when there is one. */
static int tag_width(uint64_t choices) {
  if (choices <= 1) return 0;
  if (choices <= 256) return 8;
  if (choices <= 65536) return 16;
  if (choices <= 4294967296ULL) return 32;
  return 64;
}

static scalar_kind unsigned_of(int bits) {
  return bits <= 8 ? S_U8 : bits <= 16 ? S_U16 : bits <= 32 ? S_U32 : S_U64;
}

static int log2_ceil(uint64_t n) {
  int b = 0;
  while (b < 64 && ((uint64_t)1 << b) < n) b++;
  return b;
}

/* "Accelerating Sum Types", equation 1: log2 of the constructors plus the widest
 * alternative. */
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

static const char *const strategy_names[LAYOUT_NSTRATEGIES] = {
  "unboxed", "rtu", "compact", "rtu_radix", "compact_radix"
};

const char *layout_name(layout_strategy st) { return strategy_names[st]; }

int layout_lookup(const char *name, layout_strategy *out) {
  if (name == NULL) name = "compact";
  for (int k = 0; k < LAYOUT_NSTRATEGIES; k++)
    if (strcmp(name, strategy_names[k]) == 0) {
      *out = (layout_strategy)k;
      return 1;
    }
  return 0;
}

void layout_plan_free(layout_plan *p) {
  if (p == NULL) return;
  free(p->buf_kind);
  free(p->leaf_buf);
  free(p);
}

/* ---- building plans */

/* A slot being assigned: its width and the value leaves stored in it. */
typedef struct {
  int bits;
  int *leaves;
  int nl;
} entry;

typedef struct {
  entry *v;
  int n, cap;
  int oom;
} elist;

static entry *add_entry(elist *l, int bits) {
  if (vec_reserve(&l->v, &l->cap, l->n + 1, 8, sizeof *l->v) != 0) {
    l->oom = 1;
    return NULL;
  }
  entry *e = &l->v[l->n++];
  e->bits = bits;
  e->leaves = NULL;
  e->nl = 0;
  return e;
}

static void add_leaves(elist *l, entry *e, const int *leaves, int n) {
  int *v = realloc(e->leaves, sizeof *v * (size_t)(e->nl + n + 1));
  if (v == NULL) {
    l->oom = 1;
    return;
  }
  memcpy(v + e->nl, leaves, sizeof *v * (size_t)n);
  e->leaves = v;
  e->nl += n;
}

static void elist_free(elist *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i].leaves);
  free(l->v);
}

/* Widest first, keeping the order of equal widths (insertion sort: lists are short). */
static void sort_by_width(elist *l) {
  for (int i = 1; i < l->n; i++) {
    entry e = l->v[i];
    int j = i;
    while (j > 0 && l->v[j - 1].bits < e.bits) {
      l->v[j] = l->v[j - 1];
      j--;
    }
    l->v[j] = e;
  }
}

/* rtu/compact: products concatenate their fields; a sum merges its alternatives
 * position-wise (compact: each alternative ordered widest first). Tag leaves live in
 * the combined tag. */
static void assign(const lacc_type *t, int compact, int *leaf, elist *out) {
  if (t->kind == T_SCALAR) {
    entry *e = add_entry(out, width(t->scalar));
    if (e != NULL) add_leaves(out, e, leaf, 1);
    (*leaf)++;
    return;
  }
  if (t->kind == T_TUPLE) {
    for (int i = 0; i < t->n; i++) assign(t->fields[i], compact, leaf, out);
    return;
  }
  (*leaf)++;   /* the constructor index */
  elist merged = { 0 };
  for (int k = 0; k < t->n; k++) {
    elist alt = { 0 };
    assign(t->fields[k], compact, leaf, &alt);
    if (compact) sort_by_width(&alt);
    for (int i = 0; i < alt.n && !merged.oom; i++) {
      entry *m = i < merged.n ? &merged.v[i] : add_entry(&merged, 0);
      if (m == NULL) break;
      m->bits = alt.v[i].bits > m->bits ? alt.v[i].bits : m->bits;
      add_leaves(&merged, m, alt.v[i].leaves, alt.v[i].nl);
    }
    merged.oom |= alt.oom;
    elist_free(&alt);
  }
  for (int i = 0; i < merged.n && !out->oom; i++) {
    entry *e = add_entry(out, merged.v[i].bits);
    if (e != NULL) add_leaves(out, e, merged.v[i].leaves, merged.v[i].nl);
  }
  out->oom |= merged.oom;
  elist_free(&merged);
}

/* Without sums, and for unboxed: buffer k holds leaf k; a sum's own tag is as wide as
 * its constructor count needs. */
static void plain_kinds(const lacc_type *t, layout_plan *p, int *leaf) {
  if (t->kind == T_SCALAR) {
    p->leaf_buf[*leaf] = p->nbufs;
    p->buf_kind[p->nbufs++] = t->scalar;
    (*leaf)++;
    return;
  }
  if (t->kind == T_SUM) {   /* a sum of one constructor needs no tag */
    int tw = tag_width((uint64_t)t->n);
    p->leaf_buf[*leaf] = tw > 0 ? p->nbufs : -1;
    if (tw > 0) p->buf_kind[p->nbufs++] = unsigned_of(tw);
    (*leaf)++;
  }
  for (int i = 0; i < t->n; i++) plain_kinds(t->fields[i], p, leaf);
}

static layout_plan *build_plan(lacc_ctx *ctx, const lacc_type *t, layout_strategy st) {
  layout_plan *p = calloc(1, sizeof *p);
  int n = t->nleaves;
  if (p == NULL) goto oom;
  p->strategy = st;
  p->tag_buf = -1;
  p->leaf_buf = malloc(sizeof *p->leaf_buf * (size_t)(n ? n : 1));
  if (p->leaf_buf == NULL) goto oom;
  if (!t->has_sum || st == LAYOUT_UNBOXED) {
    p->buf_kind = malloc(sizeof *p->buf_kind * (size_t)(n ? n : 1));
    if (p->buf_kind == NULL) goto oom;
    int leaf = 0;
    plain_kinds(t, p, &leaf);
    return p;
  }
  if (t->choices == UINT64_MAX) {
    ctx_error(ctx, LACC_ERR_TYPE, "%s: too many choices for a 64-bit tag", t->sig);
    layout_plan_free(p);
    return NULL;
  }
  elist slots = { 0 };
  int leaf = 0;
  int radix = st == LAYOUT_RTU_RADIX || st == LAYOUT_COMPACT_RADIX;
  assign(t, st == LAYOUT_COMPACT || st == LAYOUT_COMPACT_RADIX, &leaf, &slots);
  int tw = tag_width(t->choices);
  p->raw = 1;
  p->packed = !radix && tw > 0 && t->packed_bits <= tw;
  p->nbufs = slots.n + (tw > 0);
  p->buf_kind = malloc(sizeof *p->buf_kind * (size_t)(p->nbufs ? p->nbufs : 1));
  if (slots.oom || p->buf_kind == NULL) {
    elist_free(&slots);
    goto oom;
  }
  for (int k = 0; k < n; k++) p->leaf_buf[k] = -1;
  int b = 0;
  if (tw > 0) {
    p->tag_buf = b;
    p->buf_kind[b++] = unsigned_of(tw);
  }
  for (int i = 0; i < slots.n; i++, b++) {
    p->buf_kind[b] = unsigned_of(slots.v[i].bits);
    for (int j = 0; j < slots.v[i].nl; j++) p->leaf_buf[slots.v[i].leaves[j]] = b;
  }
  elist_free(&slots);
  return p;
oom:
  layout_plan_free(p);
  err_oom(ctx);
  return NULL;
}

const layout_plan *layout_plan_of(lacc_ctx *ctx, const lacc_type *t, layout_strategy st) {
  lacc_type *mt = (lacc_type *)t;   /* plans are a cache owned by the interned type */
  if (mt->plans[st] == NULL) mt->plans[st] = build_plan(ctx, t, st);
  return mt->plans[st];
}

/* ---- storing and loading one element */

uint64_t val_bits(scalar_kind k, lacc_val v) {
  if (k == S_F32) {
    uint32_t b;
    memcpy(&b, &v.f, sizeof b);
    return b;
  }
  if (k == S_F64) {
    uint64_t b;
    memcpy(&b, &v.d, sizeof b);
    return b;
  }
  int bits = scalar_bits(k);
  return bits == 64 ? v.u : v.u & (((uint64_t)1 << bits) - 1);
}

lacc_val val_of_bits(scalar_kind k, uint64_t bits) {
  lacc_val r;
  if (k == S_F32) {
    uint32_t b = (uint32_t)bits;
    memcpy(&r.f, &b, sizeof b);
  } else if (k == S_F64) {
    memcpy(&r.d, &bits, sizeof bits);
  } else {
    lacc_val x = { .u = bits };
    r = val_cast(k, S_U64, x);
  }
  return r;
}

/* Bits of the widest alternative's packed tag: a sum's constructor number sits above. */
int layout_payload_bits(const lacc_type *t) {
  int b = 0;
  for (int c = 0; c < t->n; c++)
    if (t->fields[c]->packed_bits > b) b = t->fields[c]->packed_bits;
  return b;
}

typedef struct {
  const layout_plan *p;
  void *const *bufs;
  int64_t i;
  lacc_val *leaves;
  int pos;
} walk;

/* Store the active leaves of the value in their slots; return its combined tag. */
static uint64_t store_rec(walk *w, const lacc_type *t, int active) {
  if (t->kind == T_SCALAR) {
    int b = w->p->leaf_buf[w->pos];
    if (active && b >= 0) {
      lacc_val bits = { .u = val_bits(t->scalar, w->leaves[w->pos]) };
      val_store(w->p->buf_kind[b], w->bufs[b], w->i, bits);
    }
    w->pos++;
    return 0;
  }
  if (t->kind == T_TUPLE) {
    uint64_t tag = 0;
    for (int f = 0; f < t->n; f++) {
      uint64_t sub = store_rec(w, t->fields[f], active);
      tag = w->p->packed ? (tag << t->fields[f]->packed_bits) | sub
                         : tag * t->fields[f]->choices + sub;
    }
    return tag;
  }
  uint64_t k = active ? w->leaves[w->pos].u : 0, tag = 0, offset = 0;
  w->pos++;
  for (int c = 0; c < t->n; c++) {
    uint64_t sub = store_rec(w, t->fields[c], active && (uint64_t)c == k);
    if ((uint64_t)c == k) tag = sub;
    if ((uint64_t)c < k) offset += t->fields[c]->choices;
  }
  if (w->p->packed) return (k << layout_payload_bits(t)) | tag;
  return offset + tag;
}

/* Fill the value's leaves from the slots, given its combined tag; leaves of inactive
 * alternatives are zero. */
static void load_rec(walk *w, const lacc_type *t, int active, uint64_t tag) {
  if (t->kind == T_SCALAR) {
    int b = w->p->leaf_buf[w->pos];
    lacc_val z = { .u = 0 };
    if (active && b >= 0) {
      lacc_val bits = val_load(w->p->buf_kind[b], w->bufs[b], w->i);
      w->leaves[w->pos] = val_of_bits(t->scalar, bits.u);
    } else {
      w->leaves[w->pos] = z;
    }
    w->pos++;
    return;
  }
  if (t->kind == T_TUPLE) {
    uint64_t parts[LACC_MAX_ARGS * 4];
    uint64_t rest = tag;
    for (int f = t->n - 1; f >= 0; f--) {
      const lacc_type *ft = t->fields[f];
      if (w->p->packed) {
        int b = ft->packed_bits;
        parts[f] = b >= 64 ? rest : rest & (((uint64_t)1 << b) - 1);
        rest = b >= 64 ? 0 : rest >> b;
      } else {
        parts[f] = rest % ft->choices;
        rest /= ft->choices;
      }
    }
    for (int f = 0; f < t->n; f++) load_rec(w, t->fields[f], active, parts[f]);
    return;
  }
  uint64_t k = 0, sub = tag;
  if (active && w->p->packed) {
    int pb = layout_payload_bits(t);
    k = pb >= 64 ? 0 : tag >> pb;
    sub = pb >= 64 ? tag : tag & (((uint64_t)1 << pb) - 1);
  } else if (active) {
    while (k + 1 < (uint64_t)t->n && sub >= t->fields[k]->choices) sub -= t->fields[k++]->choices;
  }
  w->leaves[w->pos].u = active ? k : 0;
  w->pos++;
  for (int c = 0; c < t->n; c++) load_rec(w, t->fields[c], active && (uint64_t)c == k, sub);
}

void layout_store(const layout_plan *p, const lacc_type *t, void **bufs, int64_t i,
                  const lacc_val *leaves) {
  if (!p->raw) {
    for (int k = 0; k < t->nleaves; k++) {
      int b = p->leaf_buf[k];
      if (b >= 0) val_store(p->buf_kind[b], bufs[b], i, leaves[k]);
    }
    return;
  }
  walk w = { p, bufs, i, (lacc_val *)leaves, 0 };
  uint64_t tag = store_rec(&w, t, 1);
  if (p->tag_buf >= 0) {
    lacc_val v = { .u = tag };
    val_store(p->buf_kind[p->tag_buf], bufs[p->tag_buf], i, v);
  }
}

void layout_load(const layout_plan *p, const lacc_type *t, void *const *bufs, int64_t i,
                 lacc_val *leaves) {
  if (!p->raw) {
    for (int k = 0; k < t->nleaves; k++) {
      int b = p->leaf_buf[k];
      lacc_val z = { .u = 0 };
      leaves[k] = b >= 0 ? val_load(p->buf_kind[b], bufs[b], i) : z;
    }
    return;
  }
  uint64_t tag = p->tag_buf >= 0 ? val_load(p->buf_kind[p->tag_buf], bufs[p->tag_buf], i).u : 0;
  walk w = { p, bufs, i, leaves, 0 };
  load_rec(&w, t, 1, tag);
}
static void put_members(text *b, unsigned members) {
  int first = 1;
  for (int k = 0; k < S_NSCALAR; k++) {
    if (!(members & (1u << k))) continue;
    text_put(b, "%s%s", first ? "" : ",", scalar_name((scalar_kind)k));
    first = 0;
  }
}

/* Which scalar kinds each buffer holds (a bit set), from the leaves stored in it. */
static void buffer_members(const lacc_type *t, const layout_plan *p, unsigned *members,
                           int *is_tag) {
  for (int k = 0; k < t->nleaves; k++) {
    int b = p->leaf_buf[k];
    if (b < 0) continue;
    scalar_kind kind = type_leaf(t, k);
    members[b] |= 1u << kind;
  }
  if (p->tag_buf >= 0) is_tag[p->tag_buf] = 1;
}

static void mark_tags(const lacc_type *t, const layout_plan *p, int *leaf, int *is_tag) {
  if (t->kind == T_SCALAR) {
    (*leaf)++;
    return;
  }
  if (t->kind == T_SUM) {
    if (p->leaf_buf[*leaf] >= 0) is_tag[p->leaf_buf[*leaf]] = 1;
    (*leaf)++;
  }
  for (int i = 0; i < t->n; i++) mark_tags(t->fields[i], p, leaf, is_tag);
}

static int unknown_strategy(lacc_ctx *ctx, const char *name) {
  return ctx_error(ctx, LACC_ERR_ARG,
                   "layout: unknown strategy '%s' (expected \"compact\", \"rtu\", \"unboxed\", "
                   "\"compact_radix\" or \"rtu_radix\")", name);
}

char *layout_describe(lacc_ctx *ctx, const lacc_type *t, const char *name) {
  layout_strategy st;
  if (!layout_lookup(name, &st)) {
    unknown_strategy(ctx, name);
    return NULL;
  }
  const layout_plan *p = layout_plan_of(ctx, t, st);
  if (p == NULL) return NULL;
  unsigned *members = calloc((size_t)(p->nbufs + 1), sizeof *members);
  int *is_tag = calloc((size_t)(p->nbufs + 1), sizeof *is_tag);
  text b = { 0 };
  int ok = members != NULL && is_tag != NULL, bits = 0;
  if (ok) {
    buffer_members(t, p, members, is_tag);
    if (!p->raw) {
      int leaf = 0;
      mark_tags(t, p, &leaf, is_tag);
    }
  }
  b.oom = !ok;
  text_put(&b, "strategy %s\nchoices %llu\n", layout_name(st), (unsigned long long)t->choices);
  /* Bit-packed tags are tested with masks and shifts instead of div/mod ("Accelerating Sum Types"
   * section 6.2): used whenever they fit the tag's width, which the (smaller)
   * mixed-radix count decides; otherwise mixed radix. */
  const char *enc = !p->raw ? "own" : p->packed ? "packed" : "radix";
  for (int k = 0; ok && k < p->nbufs; k++) {
    if (!is_tag[k]) continue;
    text_put(&b, "tag %d %s\n", scalar_bits(p->buf_kind[k]), enc);
    bits += scalar_bits(p->buf_kind[k]);
  }
  for (int k = 0; ok && k < p->nbufs; k++) {
    if (is_tag[k]) continue;
    text_put(&b, "field %d ", scalar_bits(p->buf_kind[k]));
    put_members(&b, members[k]);
    text_put(&b, "\n");
    bits += scalar_bits(p->buf_kind[k]);
  }
  text_put(&b, "bits %d\nminimum %d\n", bits, minimum_bits(t));
  free(members);
  free(is_tag);
  return text_finish(ctx, &b);
}

char *lacc_layout(lacc_ctx *ctx, const char *type, const char *strategy_name) {
  ctx_clear(ctx);
  const lacc_type *t = type_parse(ctx, type);
  return t != NULL ? layout_describe(ctx, t, strategy_name) : NULL;
}

int lacc_set_layout(lacc_ctx *ctx, const char *strategy) {
  ctx_clear(ctx);
  layout_strategy st;
  if (!layout_lookup(strategy, &st)) return unknown_strategy(ctx, strategy);
  ctx->layout = st;
  return LACC_OK;
}
