/* type.c: element types and scalar values.
 *
 * Owns: the type tree (scalar | tuple | sum), interning (a hash table per context), signature
 * parsing and printing, the flattening of a type into scalar leaves, and the
 * conversion, loading and storing of single scalar values.
 * Must not: know about arrays' shapes, nodes or programs.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/internal.h"
#include "base/text.h"

static const char *const scalar_names[S_NSCALAR] = {
  "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"
};
static const size_t scalar_sizes[S_NSCALAR] = { 1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8 };

const char *scalar_name(scalar_kind k) { return scalar_names[k]; }
size_t scalar_size(scalar_kind k) { return scalar_sizes[k]; }
int scalar_is_float(scalar_kind k) { return k == S_F32 || k == S_F64; }
int scalar_is_int(scalar_kind k) { return k != S_BOOL && !scalar_is_float(k); }
int scalar_is_signed(scalar_kind k) { return k >= S_I8 && k <= S_I64; }
int scalar_bits(scalar_kind k) { return (int)scalar_sizes[k] * 8; }

static void proto_free(lacc_type *t) {
  for (int k = 0; k < LAYOUT_NSTRATEGIES; k++) layout_plan_free(t->plans[k]);
  free(t->fields);
  for (int i = 0; t->cnames != NULL && i < t->n; i++) free(t->cnames[i]);
  free(t->cnames);
  free(t->name);
}

static void type_free(lacc_type *t) {
  proto_free(t);
  free(t->sig);
  free(t);
}

/* FNV-1a. Types are interned in a hash table keyed by signature, so a new type, and the
 * lookup of a known one on every parse, costs the same however many types exist. */
static uint64_t sig_hash(const char *s) {
  uint64_t h = 1469598103934665603u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static lacc_type *lookup(const lacc_ctx *ctx, const char *sig, uint64_t h) {
  if (ctx->types.nbuckets == 0) return NULL;
  for (lacc_type *t = ctx->types.bucket[h & (ctx->types.nbuckets - 1)]; t; t = t->next)
    if (t->hash == h && strcmp(t->sig, sig) == 0) return t;
  return NULL;
}

/* Doubles the buckets; -1 when out of memory (the table stays as it was). */
static int grow(lacc_ctx *ctx) {
  size_t nb = ctx->types.nbuckets ? ctx->types.nbuckets * 2 : 64;
  lacc_type **b = calloc(nb, sizeof *b);
  if (b == NULL) return -1;
  for (size_t i = 0; i < ctx->types.nbuckets; i++) {
    lacc_type *t = ctx->types.bucket[i];
    while (t != NULL) {
      lacc_type *next = t->next;
      t->next = b[t->hash & (nb - 1)];
      b[t->hash & (nb - 1)] = t;
      t = next;
    }
  }
  free(ctx->types.bucket);
  ctx->types.bucket = b;
  ctx->types.nbuckets = nb;
  return 0;
}

void types_free(lacc_ctx *ctx) {
  for (size_t i = 0; i < ctx->types.nbuckets; i++) {
    lacc_type *t = ctx->types.bucket[i];
    while (t != NULL) {
      lacc_type *next = t->next;
      type_free(t);
      t = next;
    }
  }
  free(ctx->types.bucket);
  ctx->types.bucket = NULL;
  ctx->types.nbuckets = ctx->types.n = 0;
}

/* Takes ownership of proto's arrays and of sig. */
static const lacc_type *intern(lacc_ctx *ctx, lacc_type *proto, char *sig) {
  uint64_t h = sig_hash(sig);
  lacc_type *t = lookup(ctx, sig, h);
  if (t != NULL) {
    free(sig);
    proto_free(proto);
    return t;
  }
  /* when no more buckets can be had, a full table only gets slower; an empty one fails */
  if (ctx->types.n >= ctx->types.nbuckets) (void)grow(ctx);
  t = ctx->types.nbuckets > 0 ? malloc(sizeof *t) : NULL;
  if (t == NULL) {
    free(sig);
    proto_free(proto);
    err_oom(ctx);
    return NULL;
  }
  *t = *proto;
  t->sig = sig;
  t->hash = h;
  size_t b = h & (ctx->types.nbuckets - 1);
  t->next = ctx->types.bucket[b];
  ctx->types.bucket[b] = t;
  ctx->types.n++;
  return t;
}

const lacc_type *type_scalar(lacc_ctx *ctx, scalar_kind k) {
  lacc_type proto = { .kind = T_SCALAR, .scalar = k, .nleaves = 1, .choices = 1 };
  char *sig = strdup(scalar_names[k]);
  if (sig == NULL) {
    err_oom(ctx);
    return NULL;
  }
  return intern(ctx, &proto, sig);
}

const lacc_type *type_tuple(lacc_ctx *ctx, int n, const lacc_type *const *fields) {
  lacc_type proto = { .kind = T_TUPLE, .n = n, .choices = 1 };
  size_t len = 3;
  for (int i = 0; i < n; i++) {
    uint64_t c = fields[i]->choices;
    proto.choices = proto.choices > UINT64_MAX / c ? UINT64_MAX : proto.choices * c;
    proto.packed_bits += fields[i]->packed_bits;
    proto.nleaves += fields[i]->nleaves;
    proto.has_sum |= fields[i]->has_sum;
    len += strlen(fields[i]->sig) + 1;
  }
  char *sig = malloc(len);
  proto.fields = malloc(sizeof *proto.fields * (size_t)(n ? n : 1));
  if (sig == NULL || proto.fields == NULL) {
    free(sig);
    free(proto.fields);
    err_oom(ctx);
    return NULL;
  }
  char *p = sig;
  *p++ = '(';
  for (int i = 0; i < n; i++) {
    size_t l = strlen(fields[i]->sig);
    if (i > 0) *p++ = ',';
    memcpy(p, fields[i]->sig, l);
    p += l;
    proto.fields[i] = fields[i];
  }
  *p++ = ')';
  *p = '\0';
  return intern(ctx, &proto, sig);
}

/* Canonical signature: Name<C1(t,t)|C2|...> or, structural, <t1|t2|...>. */
static char *sum_sig(const char *name, int n, const char *const *cnames,
                     const lacc_type *const *payloads) {
  text b = { 0 };
  text_put(&b, "%s<", name != NULL ? name : "");
  for (int i = 0; i < n; i++) {
    if (i > 0) text_put(&b, "|");
    if (name == NULL) {   /* structural: the single field stands for the constructor */
      text_put(&b, "%s", payloads[i]->fields[0]->sig);
      continue;
    }
    text_put(&b, "%s%s", cnames[i], payloads[i]->n > 0 ? payloads[i]->sig : "");
  }
  text_put(&b, ">");
  if (!b.oom) return b.s;
  free(b.s);
  return NULL;
}

const lacc_type *type_sum(lacc_ctx *ctx, const char *name, int n, const char *const *cnames,
                          const lacc_type *const *payloads) {
  lacc_type proto = { .kind = T_SUM, .n = n, .has_sum = 1, .nleaves = 1 };
  int widest = 0, cbits = 0;
  for (int i = 0; i < n; i++) {
    uint64_t c = payloads[i]->choices;
    proto.choices = proto.choices + c < proto.choices ? UINT64_MAX : proto.choices + c;
    proto.nleaves += payloads[i]->nleaves;
    if (payloads[i]->packed_bits > widest) widest = payloads[i]->packed_bits;
  }
  while (cbits < 31 && (1 << cbits) < n) cbits++;
  proto.packed_bits = widest + cbits;
  char *sig = sum_sig(name, n, cnames, payloads);
  proto.fields = calloc((size_t)(n ? n : 1), sizeof *proto.fields);
  proto.cnames = calloc((size_t)(n ? n : 1), sizeof *proto.cnames);
  proto.name = name != NULL ? strdup(name) : NULL;
  int ok = sig != NULL && proto.fields != NULL && proto.cnames != NULL &&
           (name == NULL || proto.name != NULL);
  for (int i = 0; ok && i < n; i++) {
    proto.fields[i] = payloads[i];
    proto.cnames[i] = strdup(cnames[i]);
    ok = proto.cnames[i] != NULL;
  }
  if (!ok) {
    free(sig);
    proto_free(&proto);
    err_oom(ctx);
    return NULL;
  }
  return intern(ctx, &proto, sig);
}


/* A type past one of the limits (docs/guide.md, Limits): the reason, not just "not an
 * element type". */
/* what: a limit of lacc.h, worded with its number. */
static const lacc_type *too_big(lacc_ctx *ctx, const char *what, int limit) {
  char msg[128];
  snprintf(msg, sizeof msg, what, limit);
  ctx_error(ctx, LACC_ERR_ARG, "element type too large: %s", msg);
  return NULL;
}

static void skip_space(const char **s) {
  while (**s == ' ') (*s)++;
}

/* 1, 0 (no identifier here) or -1 (one longer than size - 1 characters). */
static int ident(const char **s, char *out, size_t size) {
  size_t l = 0;
  const char *p = *s;
  if (!(isalpha((unsigned char)*p) || *p == '_')) return 0;
  while (isalnum((unsigned char)p[l]) || p[l] == '_') l++;
  if (l >= size) return -1;
  memcpy(out, p, l);
  out[l] = '\0';
  *s += l;
  return 1;
}

static const lacc_type *parse(lacc_ctx *ctx, const char **s, int depth);


typedef struct {
  char (*names)[LACC_MAX_NAME + 1];
  const char **cn;
  const lacc_type **pay;
} sum_parts;

static const lacc_type *parse_constructors(lacc_ctx *ctx, const char **s, const char *name,
                                           int depth, sum_parts *p) {
  int n = 0;
  (*s)++;   /* '<' */
  for (;;) {
    skip_space(s);
    if (n == LACC_MAX_CONSTRUCTORS)
      return too_big(ctx, "a sum has at most %d constructors", LACC_MAX_CONSTRUCTORS);
    if (name == NULL) {
      const lacc_type *f = parse(ctx, s, depth + 1);
      if (f == NULL) return NULL;
      p->pay[n] = type_tuple(ctx, 1, &f);
      snprintf(p->names[n], sizeof p->names[n], "%d", n + 1);
    } else {
      int id = ident(s, p->names[n], sizeof p->names[n]);
      if (id < 0) return too_big(ctx, "names have at most %d characters", LACC_MAX_NAME);
      if (id == 0) return NULL;
      skip_space(s);
      if (**s == '(') p->pay[n] = parse(ctx, s, depth + 1);
      else p->pay[n] = type_tuple(ctx, 0, NULL);
      if (p->pay[n] == NULL || p->pay[n]->kind != T_TUPLE) return NULL;
    }
    if (p->pay[n] == NULL) return NULL;
    p->cn[n] = p->names[n];
    n++;
    skip_space(s);
    if (**s == '|') {
      (*s)++;
      continue;
    }
    if (**s != '>') return NULL;
    (*s)++;
    if (name != NULL)
      for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
          if (strcmp(p->cn[i], p->cn[j]) == 0) return NULL;   /* names are unique */
    return type_sum(ctx, name, n, p->cn, p->pay);
  }
}

/* After "Name" or at "<": the constructors of a sum. */
static const lacc_type *parse_sum(lacc_ctx *ctx, const char **s, const char *name, int depth) {
  sum_parts p;
  p.names = malloc(sizeof *p.names * LACC_MAX_CONSTRUCTORS);
  p.cn = malloc(sizeof *p.cn * LACC_MAX_CONSTRUCTORS);
  p.pay = malloc(sizeof *p.pay * LACC_MAX_CONSTRUCTORS);
  const lacc_type *t = NULL;
  if (p.names == NULL || p.cn == NULL || p.pay == NULL) err_oom(ctx);
  else t = parse_constructors(ctx, s, name, depth, &p);
  free(p.names);
  free(p.cn);
  free(p.pay);
  return t;
}

static const lacc_type *parse(lacc_ctx *ctx, const char **s, int depth) {
  while (**s == ' ') (*s)++;
  if (depth > LACC_MAX_NESTING)
    return too_big(ctx, "types nest at most %d levels deep", LACC_MAX_NESTING);
  if (**s == '(') {
    const lacc_type *fields[LACC_MAX_FIELDS] = { 0 };
    int n = 0;
    (*s)++;
    while (**s == ' ') (*s)++;
    if (**s == ')') {
      (*s)++;
      return type_tuple(ctx, 0, fields);
    }
    for (;;) {
      if (n == LACC_MAX_FIELDS)
        return too_big(ctx, "a tuple has at most %d fields", LACC_MAX_FIELDS);
      const lacc_type *f = parse(ctx, s, depth + 1);
      if (f == NULL) return NULL;
      fields[n++] = f;
      while (**s == ' ') (*s)++;
      if (**s == ',') {
        (*s)++;
        continue;
      }
      if (**s != ')') return NULL;
      (*s)++;
      return type_tuple(ctx, n, fields);
    }
  }
  for (int k = 0; k < S_NSCALAR; k++) {
    size_t l = strlen(scalar_names[k]);
    if (strncmp(*s, scalar_names[k], l) != 0) continue;
    char next = (*s)[l];   /* in bounds: the prefix matched, so the string is that long */
    if (next == '\0' || next == ',' || next == ')' || next == ' ' || next == '|' || next == '>') {
      *s += l;
      return type_scalar(ctx, (scalar_kind)k);
    }
  }
  if (**s == '<') return parse_sum(ctx, s, NULL, depth);
  char name[LACC_MAX_NAME + 1];
  int id = ident(s, name, sizeof name);
  if (id < 0) return too_big(ctx, "names have at most %d characters", LACC_MAX_NAME);
  if (id == 0) return NULL;
  skip_space(s);
  if (**s != '<') return NULL;
  return parse_sum(ctx, s, name, depth);
}

const lacc_type *type_parse(lacc_ctx *ctx, const char *sig) {
  if (sig == NULL) {
    ctx_error(ctx, LACC_ERR_ARG, "missing element type");
    return NULL;
  }
  const lacc_type *known = lookup(ctx, sig, sig_hash(sig));
  if (known != NULL) return known;   /* a canonical signature: no parse */
  const char *s = sig;
  int before = ctx->errcode;
  const lacc_type *t = parse(ctx, &s, 0);
  while (t != NULL && *s == ' ') s++;
  if (t == NULL || *s != '\0') {
    if (ctx->errcode != LACC_ERR_MEMORY && (t != NULL || ctx->errcode == before))
      ctx_error(ctx, LACC_ERR_ARG, "not an element type: '%s'", sig);
    return NULL;
  }
  return t;
}

const lacc_type *type_shape(lacc_ctx *ctx, int rank) {
  const lacc_type *i64 = type_scalar(ctx, S_I64);
  if (rank == 1 || i64 == NULL) return i64;
  const lacc_type *f[LACC_MAX_RANK];
  for (int i = 0; i < rank; i++) f[i] = i64;
  return type_tuple(ctx, rank, f);
}

int type_is_shape(const lacc_type *t, int *rank) {
  if (t->kind == T_SCALAR) {
    *rank = 1;
    return t->scalar == S_I64;
  }
  if (t->n > LACC_MAX_RANK || t->n == 1) return 0;
  for (int i = 0; i < t->n; i++)
    if (t->fields[i]->kind != T_SCALAR || t->fields[i]->scalar != S_I64) return 0;
  *rank = t->n;
  return 1;
}

int type_leaf_offset(const lacc_type *t, int field) {
  int off = 0;
  for (int i = 0; i < field; i++) off += t->fields[i]->nleaves;
  return off;
}

scalar_kind type_leaf(const lacc_type *t, int leaf) {
  while (t->kind != T_SCALAR) {
    if (t->kind == T_SUM) {
      if (leaf == 0) return S_U32;   /* the constructor index */
      leaf--;
    }
    int i = 0;
    while (leaf >= t->fields[i]->nleaves) leaf -= t->fields[i++]->nleaves;
    t = t->fields[i];
  }
  return t->scalar;
}

/* Float to integer conversion is defined for every input: NaN gives 0 and values
 * out of range saturate (C leaves both undefined; lacc must never be). */
static int64_t f_to_i64(double d) {
  if (isnan(d)) return 0;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}

static uint64_t f_to_u64(double d) {
  if (isnan(d) || d <= 0) return 0;
  if (d >= 18446744073709551615.0) return UINT64_MAX;
  return (uint64_t)d;
}

static lacc_val wrap_int(scalar_kind to, uint64_t bits) {
  lacc_val r;
  switch (to) {
  case S_I8: r.i = (int8_t)(uint8_t)bits; break;
  case S_I16: r.i = (int16_t)(uint16_t)bits; break;
  case S_I32: r.i = (int32_t)(uint32_t)bits; break;
  case S_I64: r.u = bits; break;
  case S_U8: r.u = (uint8_t)bits; break;
  case S_U16: r.u = (uint16_t)bits; break;
  case S_U32: r.u = (uint32_t)bits; break;
  case S_U64: r.u = bits; break;
  case S_BOOL: r.u = bits != 0; break;
  default: r.u = bits; break;
  }
  return r;
}

/* Saturating float->int for narrow types goes through 64 bits and then clamps. */
static lacc_val float_to_int(scalar_kind to, double d) {
  if (to == S_BOOL) {
    lacc_val r = { .u = d != 0 };
    return r;
  }
  if (scalar_is_signed(to)) {
    int64_t v = f_to_i64(d);
    int bits = scalar_bits(to);
    if (bits < 64) {
      int64_t hi = ((int64_t)1 << (bits - 1)) - 1, lo = -hi - 1;
      v = v > hi ? hi : v < lo ? lo : v;
    }
    lacc_val r = { .i = v };
    return r;
  }
  uint64_t v = f_to_u64(d);
  int bits = scalar_bits(to);
  if (bits < 64) {
    uint64_t hi = ((uint64_t)1 << bits) - 1;
    v = v > hi ? hi : v;
  }
  lacc_val r = { .u = v };
  return r;
}

lacc_val val_cast(scalar_kind to, scalar_kind from, lacc_val v) {
  lacc_val r;
  if (scalar_is_float(from)) {
    double d = from == S_F32 ? (double)v.f : v.d;
    if (to == S_F32) r.f = (float)d;
    else if (to == S_F64) r.d = d;
    else r = float_to_int(to, d);
    return r;
  }
  /* from an integer or bool: v.i holds the sign-extended value for signed kinds */
  if (to == S_F32) {
    r.f = scalar_is_signed(from) ? (float)v.i : (float)v.u;
    return r;
  }
  if (to == S_F64) {
    r.d = scalar_is_signed(from) ? (double)v.i : (double)v.u;
    return r;
  }
  return wrap_int(to, v.u);
}

lacc_val val_load(scalar_kind k, const void *base, int64_t i) {
  lacc_val r;
  switch (k) {
  case S_BOOL: r.u = ((const uint8_t *)base)[i] != 0; break;
  case S_I8: r.i = ((const int8_t *)base)[i]; break;
  case S_I16: r.i = ((const int16_t *)base)[i]; break;
  case S_I32: r.i = ((const int32_t *)base)[i]; break;
  case S_I64: r.i = ((const int64_t *)base)[i]; break;
  case S_U8: r.u = ((const uint8_t *)base)[i]; break;
  case S_U16: r.u = ((const uint16_t *)base)[i]; break;
  case S_U32: r.u = ((const uint32_t *)base)[i]; break;
  case S_U64: r.u = ((const uint64_t *)base)[i]; break;
  case S_F32: r.f = ((const float *)base)[i]; break;
  default: r.d = ((const double *)base)[i]; break;
  }
  return r;
}

void val_store(scalar_kind k, void *base, int64_t i, lacc_val v) {
  switch (k) {
  case S_BOOL: ((uint8_t *)base)[i] = v.u != 0; break;
  case S_I8: ((int8_t *)base)[i] = (int8_t)v.i; break;
  case S_I16: ((int16_t *)base)[i] = (int16_t)v.i; break;
  case S_I32: ((int32_t *)base)[i] = (int32_t)v.i; break;
  case S_I64: ((int64_t *)base)[i] = v.i; break;
  case S_U8: ((uint8_t *)base)[i] = (uint8_t)v.u; break;
  case S_U16: ((uint16_t *)base)[i] = (uint16_t)v.u; break;
  case S_U32: ((uint32_t *)base)[i] = (uint32_t)v.u; break;
  case S_U64: ((uint64_t *)base)[i] = v.u; break;
  case S_F32: ((float *)base)[i] = v.f; break;
  default: ((double *)base)[i] = v.d; break;
  }
}

static char *format_float(double d, char *buf, size_t size, int digits) {
  if (isnan(d)) snprintf(buf, size, "%s", signbit(d) ? "-nan" : "nan");
  else if (isinf(d)) snprintf(buf, size, "%s", d < 0 ? "-inf" : "inf");
  else snprintf(buf, size, "%.*g", digits, d);
  return buf;
}

char *val_format(scalar_kind k, lacc_val v, char *buf, size_t size) {
  if (k == S_BOOL) snprintf(buf, size, "%s", v.u ? "true" : "false");
  else if (k == S_F32) format_float(v.f, buf, size, 9);
  else if (k == S_F64) format_float(v.d, buf, size, 17);
  else if (scalar_is_signed(k)) snprintf(buf, size, "%lld", (long long)v.i);
  else snprintf(buf, size, "%llu", (unsigned long long)v.u);
  return buf;
}
