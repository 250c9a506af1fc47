/* npy.c: arrays in NumPy's .npy format (versions 1.0, 2.0 and 3.0).
 *
 * Owns: the header (magic, version, the Python dict literal with descr, fortran_order and
 * shape), the dtypes lacc has (b1, i1-i8, u1-u8, f4, f8, either byte order; a structured
 * dtype of those for a tuple), and the files: a load reads straight into the array's
 * buffers; a save writes a temporary file beside the target and renames it, so a failed
 * save leaves nothing half-written.
 * Must not: know the Lua surface, or hold sum types (they have no packed form: bulk.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"

enum { NPY_MAX_HEADER = 1 << 20, NPY_MAX_FIELDS = 64 };

/* One field of a dtype: its scalar and whether its bytes are the other order. */
typedef struct {
  scalar_kind k;
  int swap;
} npy_field;

typedef struct {
  const char *s;   /* the header text, NUL-terminated */
  const char *at;
  lacc_ctx *ctx;
  const char *path;
  int bad;
} hparse;

static int little_endian(void) {
  const uint16_t one = 1;
  return *(const unsigned char *)&one == 1;
}

static int herr(hparse *P, const char *what) {
  if (!P->bad)
    ctx_error(P->ctx, LACC_ERR_ARG, "load: %s: malformed .npy header (%s)", P->path, what);
  P->bad = 1;
  return 0;
}

static void skip_ws(hparse *P) {
  while (*P->at == ' ' || *P->at == '\t' || *P->at == '\n' || *P->at == '\r') P->at++;
}

static int expect(hparse *P, char c) {
  skip_ws(P);
  if (*P->at != c) return herr(P, "unexpected character");
  P->at++;
  return 1;
}

/* A quoted Python string into out (at most cap - 1 characters). */
static int parse_str(hparse *P, char *out, size_t cap) {
  skip_ws(P);
  char q = *P->at;
  if (q != '\'' && q != '"') return herr(P, "expected a string");
  size_t n = 0;
  for (P->at++; *P->at != q; P->at++) {
    if (*P->at == '\0' || *P->at == '\\' || n + 1 >= cap) return herr(P, "bad string");
    out[n++] = *P->at;
  }
  P->at++;
  out[n] = '\0';
  return 1;
}

static int parse_int(hparse *P, int64_t *out) {
  skip_ws(P);
  char *end;
  long long v = strtoll(P->at, &end, 10);
  if (end == P->at || v < 0) return herr(P, "expected an extent");
  P->at = end;
  *out = (int64_t)v;
  return 1;
}

/* "<f8", "|u1", ">i4", "=b1": the scalar and whether it must be swapped here. */
static int simple_dtype(hparse *P, const char *d, npy_field *f) {
  static const struct { const char *code; scalar_kind k; } codes[] = {
    { "b1", S_BOOL }, { "i1", S_I8 }, { "i2", S_I16 }, { "i4", S_I32 }, { "i8", S_I64 },
    { "u1", S_U8 }, { "u2", S_U16 }, { "u4", S_U32 }, { "u8", S_U64 }, { "f4", S_F32 },
    { "f8", S_F64 }
  };
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    ctx_error(P->ctx, LACC_ERR_TYPE, "load: %s: dtype '%s' has no byte order mark", P->path, d);
    return 0;
  }
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    if (strcmp(d + 1, codes[i].code) == 0) {
      f->k = codes[i].k;
      f->swap = scalar_size(f->k) > 1 &&
                ((order == '<' && !little_endian()) || (order == '>' && little_endian()));
      return 1;
    }
  }
  ctx_error(P->ctx, LACC_ERR_TYPE, "load: %s: dtype '%s' is none lacc has (bool, i8-i64, "
            "u8-u64, f32, f64, and structured dtypes of them)", P->path, d);
  return 0;
}

/* descr: a string, or a list of (name, string) pairs. */
static int parse_descr(hparse *P, npy_field *f, int *n) {
  char d[64];
  skip_ws(P);
  if (*P->at != '[') {
    *n = 1;
    return parse_str(P, d, sizeof d) && simple_dtype(P, d, &f[0]);
  }
  P->at++;
  *n = 0;
  for (;;) {
    skip_ws(P);
    if (*P->at == ']') break;
    char name[256];
    if (*n >= NPY_MAX_FIELDS) {
      ctx_error(P->ctx, LACC_ERR_TYPE, "load: %s: more than %d fields", P->path, NPY_MAX_FIELDS);
      return 0;
    }
    if (!expect(P, '(') || !parse_str(P, name, sizeof name) || !expect(P, ',')) return 0;
    skip_ws(P);
    if (*P->at != '\'' && *P->at != '"') {
      ctx_error(P->ctx, LACC_ERR_TYPE, "load: %s: field '%s' is not a scalar (nested and "
                "sub-array dtypes are not held)", P->path, name);
      return 0;
    }
    if (!parse_str(P, d, sizeof d) || !simple_dtype(P, d, &f[*n])) return 0;
    skip_ws(P);
    if (*P->at == ',') {   /* a sub-array shape */
      ctx_error(P->ctx, LACC_ERR_TYPE, "load: %s: field '%s' has a shape (sub-array dtypes "
                "are not held)", P->path, name);
      return 0;
    }
    if (!expect(P, ')')) return 0;
    (*n)++;
    skip_ws(P);
    if (*P->at == ',') P->at++;
  }
  P->at++;
  if (*n == 0) return herr(P, "a structured dtype without fields");
  return 1;
}

static int parse_shape(hparse *P, int64_t *ext, int *rank) {
  if (!expect(P, '(')) return 0;
  *rank = 0;
  for (;;) {
    skip_ws(P);
    if (*P->at == ')') break;
    if (*rank >= LACC_MAX_RANK) {
      ctx_error(P->ctx, LACC_ERR_SHAPE, "load: %s: rank above %d", P->path, LACC_MAX_RANK);
      return 0;
    }
    if (!parse_int(P, &ext[(*rank)++])) return 0;
    skip_ws(P);
    if (*P->at == ',') P->at++;
  }
  P->at++;
  return 1;
}

typedef struct {
  npy_field f[NPY_MAX_FIELDS];
  int nf;
  int64_t ext[LACC_MAX_RANK];
  int rank;
} npy_header;

static int parse_header(hparse *P, npy_header *h) {
  int have = 0, fortran = 0;
  if (!expect(P, '{')) return 0;
  for (;;) {
    skip_ws(P);
    if (*P->at == '}') break;
    char key[32];
    if (!parse_str(P, key, sizeof key) || !expect(P, ':')) return 0;
    skip_ws(P);
    if (strcmp(key, "descr") == 0) {
      if (!parse_descr(P, h->f, &h->nf)) return 0;
      have |= 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (strncmp(P->at, "True", 4) == 0) fortran = 1;
      else if (strncmp(P->at, "False", 5) != 0) return herr(P, "fortran_order");
      P->at += fortran ? 4 : 5;
      have |= 2;
    } else if (strcmp(key, "shape") == 0) {
      if (!parse_shape(P, h->ext, &h->rank)) return 0;
      have |= 4;
    } else {
      return herr(P, "an unknown key");
    }
    skip_ws(P);
    if (*P->at == ',') P->at++;
  }
  if (have != 7) return herr(P, "descr, fortran_order or shape missing");
  if (fortran) {
    ctx_error(P->ctx, LACC_ERR_ARG, "load: %s: the array is in Fortran order (lacc reads C "
              "order: save it with np.ascontiguousarray)", P->path);
    return 0;
  }
  return 1;
}

/* The type signature of the header's dtype: a scalar name, or a tuple of them. */
static const lacc_type *header_type(lacc_ctx *ctx, const npy_header *h) {
  char sig[NPY_MAX_FIELDS * 6 + 8];
  size_t n = 0;
  if (h->nf > 1) sig[n++] = '(';
  for (int i = 0; i < h->nf; i++) {
    n += (size_t)snprintf(sig + n, sizeof sig - n, "%s%s", i ? "," : "",
                          scalar_name(h->f[i].k));
  }
  if (h->nf > 1) sig[n++] = ')';
  sig[n] = '\0';
  return type_parse(ctx, sig);
}

static void swap_bytes(unsigned char *p, size_t w) {
  for (size_t i = 0; i < w / 2; i++) {
    unsigned char c = p[i];
    p[i] = p[w - 1 - i];
    p[w - 1 - i] = c;
  }
}

/* Every field that is the other order, in packed elements. */
static void swap_fields(unsigned char *packed, int64_t count, const npy_header *h, size_t eb) {
  size_t off = 0;
  for (int i = 0; i < h->nf; i++) {
    size_t w = scalar_size(h->f[i].k);
    if (h->f[i].swap)
      for (int64_t e = 0; e < count; e++) swap_bytes(packed + (size_t)e * eb + off, w);
    off += w;
  }
}

static int read_exact(FILE *f, void *p, size_t n) { return n == 0 || fread(p, 1, n, f) == n; }

/* Magic and version; the header's text (malloc'd) into *text. */
static int read_preamble(lacc_ctx *ctx, FILE *f, const char *path, char **text) {
  unsigned char m[10];
  if (!read_exact(f, m, 8) || memcmp(m, "\x93NUMPY", 6) != 0)
    return ctx_error(ctx, LACC_ERR_ARG, "load: %s is not a .npy file (no \\x93NUMPY magic)", path);
  int major = m[6];
  if (major < 1 || major > 3)
    return ctx_error(ctx, LACC_ERR_ARG, "load: %s: .npy version %d.%d is not one lacc reads "
                     "(1.0 to 3.0)", path, major, m[7]);
  uint32_t len;
  if (major == 1) {
    if (!read_exact(f, m, 2)) goto truncated;
    len = (uint32_t)m[0] | (uint32_t)m[1] << 8;
  } else {
    if (!read_exact(f, m, 4)) goto truncated;
    len = (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24;
  }
  if (len > NPY_MAX_HEADER)
    return ctx_error(ctx, LACC_ERR_ARG, "load: %s: a header of %u bytes", path, (unsigned)len);
  *text = malloc((size_t)len + 1);
  if (*text == NULL) return ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
  if (!read_exact(f, *text, len)) {
    free(*text);
    *text = NULL;
    goto truncated;
  }
  (*text)[len] = '\0';
  return LACC_OK;
truncated:
  return ctx_error(ctx, LACC_ERR_ARG, "load: %s: the file ends inside its header", path);
}

/* The data after the header into a new array of h's type and shape: a scalar array's
 * straight into its buffer, a tuple's through a packed copy. */
static lacc_array *read_data(lacc_ctx *ctx, FILE *f, const char *path, const npy_header *h) {
  const lacc_type *t = header_type(ctx, h);
  const layout_plan *plan = t != NULL ? layout_plan_of(ctx, t, ctx->layout) : NULL;
  lacc_array *a = plan != NULL ? array_alloc_out(ctx, t, h->rank, h->ext, plan) : NULL;
  if (a == NULL) return NULL;
  int64_t eb = lacc_type_bytes(ctx, t->sig), want = a->size * eb;
  int direct = t->kind == T_SCALAR;
  unsigned char *packed = direct ? a->buf[0] : malloc((size_t)want + 1);
  if (packed == NULL && want > 0) {
    lacc_array_release(a);
    ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
    return NULL;
  }
  size_t got = want > 0 ? fread(packed, 1, (size_t)want, f) : 0;
  int extra = fgetc(f) != EOF;
  if ((int64_t)got != want || extra) {
    if (!direct) free(packed);
    lacc_array_release(a);
    ctx_error(ctx, LACC_ERR_ARG, "load: %s: the header says %lld bytes of data, the file %s",
              path, (long long)want, extra ? "holds more" : "holds fewer");
    return NULL;
  }
  swap_fields(packed, a->size, h, (size_t)eb);
  if (direct) {
    if (t->scalar == S_BOOL)
      for (int64_t i = 0; i < a->size; i++) packed[i] = packed[i] != 0;
    return a;
  }
  lacc_array_release(a);
  a = lacc_array_from_buffer(ctx, t->sig, h->rank, h->ext, packed, want);
  free(packed);
  return a;
}

lacc_array *lacc_array_load_npy(lacc_ctx *ctx, const char *path) {
  ctx_clear(ctx);
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    ctx_error(ctx, LACC_ERR_ARG, "load: cannot open %s", path);
    return NULL;
  }
  char *text = NULL;
  lacc_array *a = NULL;
  if (read_preamble(ctx, f, path, &text) == LACC_OK) {
    hparse P = { .s = text, .at = text, .ctx = ctx, .path = path };
    npy_header h;
    memset(&h, 0, sizeof h);
    if (parse_header(&P, &h)) a = read_data(ctx, f, path, &h);
  }
  free(text);
  fclose(f);
  return a;
}

/* ---- saving */

static void put_dtype(char *out, size_t cap, scalar_kind k) {
  static const char *const codes[S_NSCALAR] = {
    [S_BOOL] = "b1", [S_I8] = "i1", [S_I16] = "i2", [S_I32] = "i4", [S_I64] = "i8",
    [S_U8] = "u1", [S_U16] = "u2", [S_U32] = "u4", [S_U64] = "u8", [S_F32] = "f4",
    [S_F64] = "f8"
  };
  char order = scalar_size(k) == 1 ? '|' : little_endian() ? '<' : '>';
  snprintf(out, cap, "'%c%s'", order, codes[k]);
}

/* The header dict, padded with spaces and a newline so the data starts 64-byte aligned. */
static char *make_header(const lacc_array *a, size_t prefix, size_t *len) {
  const lacc_type *t = a->type;
  size_t cap = 256 + (size_t)t->nleaves * 32;
  char *h = malloc(cap + 64);
  if (h == NULL) return NULL;
  size_t n = (size_t)snprintf(h, cap, "{'descr': ");
  char d[16];
  if (t->kind == T_SCALAR) {
    put_dtype(d, sizeof d, t->scalar);
    n += (size_t)snprintf(h + n, cap - n, "%s", d);
  } else {
    n += (size_t)snprintf(h + n, cap - n, "[");
    for (int l = 0; l < t->nleaves; l++) {
      put_dtype(d, sizeof d, type_leaf(t, l));
      n += (size_t)snprintf(h + n, cap - n, "%s('f%d', %s)", l ? ", " : "", l, d);
    }
    n += (size_t)snprintf(h + n, cap - n, "]");
  }
  n += (size_t)snprintf(h + n, cap - n, ", 'fortran_order': False, 'shape': (");
  for (int d2 = 0; d2 < a->rank; d2++)
    n += (size_t)snprintf(h + n, cap - n, "%lld,%s", (long long)a->extent[d2],
                          d2 + 1 < a->rank ? " " : "");
  if (a->rank > 1) n--;   /* (3,) for rank 1 only, as Python writes tuples */
  n += (size_t)snprintf(h + n, cap - n, "), }");
  while ((prefix + n + 1) % 64 != 0) h[n++] = ' ';
  h[n++] = '\n';
  *len = n;
  return h;
}

static int write_all(FILE *f, const void *p, size_t n) { return n == 0 || fwrite(p, 1, n, f) == n; }

static int write_npy(lacc_ctx *ctx, lacc_array *a, FILE *f) {
  int64_t eb = lacc_type_bytes(ctx, a->type->sig);
  size_t hl;
  char *h = make_header(a, 10, &hl);
  if (h == NULL) return ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
  int v2 = hl > 65535;
  unsigned char pre[12] = { 0x93, 'N', 'U', 'M', 'P', 'Y', v2 ? 2 : 1, 0 };
  size_t pl = 8;
  if (v2) {   /* the padding was for a 10-byte preamble: 2 more bytes of length */
    free(h);
    h = make_header(a, 12, &hl);
    if (h == NULL) return ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
    for (int i = 0; i < 4; i++) pre[pl++] = (unsigned char)(hl >> (8 * i));
  } else {
    pre[pl++] = (unsigned char)(hl & 255);
    pre[pl++] = (unsigned char)(hl >> 8);
  }
  int ok = write_all(f, pre, pl) && write_all(f, h, hl);
  free(h);
  int64_t want = a->size * eb;
  if (ok && a->type->kind == T_SCALAR) {
    ok = write_all(f, a->buf[0], (size_t)want);
  } else if (ok && want > 0) {
    unsigned char *packed = malloc((size_t)want);
    if (packed == NULL) return ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
    int rc = lacc_array_to_buffer(ctx, a, packed, want);
    ok = rc == LACC_OK && write_all(f, packed, (size_t)want);
    free(packed);
    if (rc != LACC_OK) return rc;
  }
  return ok ? LACC_OK : LACC_ERR_ARG;
}

int lacc_array_save_npy(lacc_ctx *ctx, lacc_array *a, const char *path) {
  ctx_clear(ctx);
  if (a->type->has_sum)
    return ctx_error(ctx, LACC_ERR_TYPE, "save: %s holds a sum type, which .npy cannot hold "
                     "(scalars and tuples of scalars)", a->type->sig);
  int rc = array_host(a);
  if (rc != LACC_OK) return rc;
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (tmp == NULL) return ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
  snprintf(tmp, n + 16, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd >= 0) fchmod(fd, 0644);   /* mkstemp's 0600 would be the saved file's mode */
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  if (f == NULL) {
    if (fd >= 0) close(fd);
    rc = ctx_error(ctx, LACC_ERR_ARG, "save: cannot write beside %s", path);
    free(tmp);
    return rc;
  }
  rc = write_npy(ctx, a, f);
  if (fclose(f) != 0 && rc == LACC_OK) rc = LACC_ERR_ARG;
  if (rc == LACC_OK && rename(tmp, path) != 0) rc = LACC_ERR_ARG;
  if (rc != LACC_OK) {
    unlink(tmp);
    if (lacc_errcode(ctx) == LACC_OK) ctx_error(ctx, rc, "save: cannot write %s", path);
    rc = lacc_errcode(ctx);
  }
  free(tmp);
  return rc;
}
