/* npy.c: arrays in NumPy's .npy format (versions 1.0, 2.0 and 3.0, as NumPy reads).
 *
 * Owns: the header (magic, version, the Python dict literal with descr, fortran_order and
 * shape), the dtypes lacc has (b1, i1-i8, u1-u8, f4, f8, either byte order; a structured
 * dtype of those for a tuple), and the files: a load checks the header's shape and the
 * file's size before it allocates, then reads straight into the array's buffers; a save
 * writes a temporary file beside the target and renames it, so a failed save leaves the
 * old file as it was. That replacement (file_replace_open/close) is png.c's write_png's
 * too: the temporary has a short name of its own, so that any name that fits NAME_MAX can
 * be written, and the mode the target had (a new file: what open(O_CREAT, 0666) gives
 * under the umask). Every file error names the function, the file and the system's reason.
 * Must not: know the Lua surface, or hold sum types (they have no packed form: bulk.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

enum { NPY_MAX_HEADER = 1 << 20, NPY_MAX_FIELDS = LACC_MAX_FIELDS };

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

/* A quoted Python string into out: at most cap - 1 characters, longer ones an error unless
 * cut (then the first cap - 1, as a field name for messages: NumPy allows any length). */
static int parse_str_cut(hparse *P, char *out, size_t cap, int cut) {
  skip_ws(P);
  char q = *P->at;
  if (q != '\'' && q != '"') return herr(P, "expected a string");
  size_t n = 0;
  for (P->at++; *P->at != q; P->at++) {
    if (*P->at == '\0' || *P->at == '\\' || (n + 1 >= cap && !cut)) return herr(P, "bad string");
    if (n + 1 < cap) out[n++] = *P->at;
  }
  P->at++;
  out[n] = '\0';
  return 1;
}

static int parse_str(hparse *P, char *out, size_t cap) { return parse_str_cut(P, out, cap, 0); }

/* An extent; one past int64 is an error of its own (strtoll would clamp it). */
static int parse_int(hparse *P, int dim, int64_t *out) {
  skip_ws(P);
  char *end;
  errno = 0;
  long long v = strtoll(P->at, &end, 10);
  if (end == P->at || v < 0) return herr(P, "expected an extent");
  if (*end == 'L') end++;   /* Python 2 wrote longs so: (2L,) */
  if (errno == ERANGE) {
    ctx_error(P->ctx, LACC_ERR_MEMORY, "load: %s: extent %d of the shape does not fit in 64 "
              "bits", P->path, dim);
    return 0;
  }
  P->at = end;
  *out = (int64_t)v;
  return 1;
}

/* The shape by array.c's rule (shape_size), so that the allocation cannot fail on it
 * unnamed. */
static int shape_fits(hparse *P, const int64_t *ext, int rank) {
  char prefix[LACC_ERRMAX];
  snprintf(prefix, sizeof prefix, "load: %.900s", P->path);
  int64_t size;
  return shape_size(P->ctx, prefix, rank, ext, &size) == LACC_OK;
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
    if (!expect(P, '(') || !parse_str_cut(P, name, sizeof name, 1) || !expect(P, ',')) return 0;
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
    if (!parse_int(P, *rank + 1, &ext[*rank])) return 0;
    (*rank)++;
    skip_ws(P);
    if (*P->at == ',') P->at++;
  }
  P->at++;
  return shape_fits(P, ext, *rank);
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

/* 1 when n bytes were read; 0 at the end of the file; -1 on a read error, errno set (a
 * directory opens for reading and fails here with EISDIR). */
static int read_exact(FILE *f, void *p, size_t n) {
  if (n == 0 || fread(p, 1, n, f) == n) return 1;
  return ferror(f) ? -1 : 0;
}

static int read_error(lacc_ctx *ctx, const char *path, int err) {
  return ctx_error(ctx, LACC_ERR_ARG, "load: cannot read %s: %s", path, strerror(err));
}

/* Magic and version; the header's text (malloc'd) into *text. */
static int read_preamble(lacc_ctx *ctx, FILE *f, const char *path, char **text) {
  unsigned char m[10];
  int r = read_exact(f, m, 8);
  if (r < 0) return read_error(ctx, path, errno);
  if (r == 0 || memcmp(m, "\x93NUMPY", 6) != 0)
    return ctx_error(ctx, LACC_ERR_ARG, "load: %s is not a .npy file (no \\x93NUMPY magic)", path);
  int major = m[6];
  if (major < 1 || major > 3 || m[7] != 0)   /* NumPy writes and reads these three alone */
    return ctx_error(ctx, LACC_ERR_ARG, "load: %s: .npy version %d.%d is not one lacc reads "
                     "(1.0, 2.0 or 3.0)", path, major, m[7]);
  r = read_exact(f, m, major == 1 ? 2 : 4);
  if (r <= 0) goto short_read;
  uint32_t len = (uint32_t)m[0] | (uint32_t)m[1] << 8;
  if (major > 1) len |= (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24;
  if (len > NPY_MAX_HEADER)
    return ctx_error(ctx, LACC_ERR_ARG, "load: %s: a header of %u bytes", path, (unsigned)len);
  *text = malloc((size_t)len + 1);
  if (*text == NULL) return err_oom(ctx);
  r = read_exact(f, *text, len);
  if (r <= 0) {
    int err = errno;
    free(*text);
    *text = NULL;
    errno = err;
    goto short_read;
  }
  (*text)[len] = '\0';
  return LACC_OK;
short_read:
  if (r < 0) return read_error(ctx, path, errno);
  return ctx_error(ctx, LACC_ERR_ARG, "load: %s: the file ends inside its header", path);
}

static int size_mismatch(lacc_ctx *ctx, const char *path, int64_t want, int more) {
  return ctx_error(ctx, LACC_ERR_ARG, "load: %s: the header says %lld bytes of data, the file "
                   "holds %s", path, (long long)want, more ? "more" : "fewer");
}

/* The data's size against what is left of a regular file, before the allocation: a
 * header of a few bytes can ask for 2^40 elements. A pipe's size shows as it is read. */
static int check_data_size(lacc_ctx *ctx, FILE *f, const char *path, int64_t want) {
  struct stat st;
  if (fstat(fileno(f), &st) != 0) return read_error(ctx, path, errno);
  if (!S_ISREG(st.st_mode)) return LACC_OK;
  long at = ftell(f);
  if (at < 0) return read_error(ctx, path, errno);
  int64_t left = (int64_t)st.st_size - at;
  return left == want ? LACC_OK : size_mismatch(ctx, path, want, left > want);
}

/* The data after the header into a new array of h's type and shape: a scalar array's
 * straight into its buffer, a tuple's through a packed copy. */
static lacc_array *read_data(lacc_ctx *ctx, FILE *f, const char *path, const npy_header *h) {
  const lacc_type *t = header_type(ctx, h);
  if (t == NULL) return NULL;
  int64_t eb = lacc_type_bytes(ctx, t->sig), want = eb;
  for (int d = 0; d < h->rank; d++) want *= h->ext[d];   /* parse_shape bounded it */
  if (check_data_size(ctx, f, path, want) != LACC_OK) return NULL;
  const layout_plan *plan = layout_plan_of(ctx, t, ctx->layout);
  lacc_array *a = plan != NULL ? array_alloc_out(ctx, t, h->rank, h->ext, plan) : NULL;
  if (a == NULL) return NULL;
  int direct = t->kind == T_SCALAR;
  unsigned char *packed = direct ? a->buf[0] : malloc((size_t)want + 1);
  if (packed == NULL && want > 0) {
    lacc_array_release(a);
    err_oom(ctx);
    return NULL;
  }
  int r = read_exact(f, packed, (size_t)want), err = errno;
  int extra = r > 0 && fgetc(f) != EOF;   /* the file grew since check_data_size */
  if (r <= 0 || extra) {
    if (!direct) free(packed);
    lacc_array_release(a);
    if (r < 0) read_error(ctx, path, err);
    else size_mismatch(ctx, path, want, extra);
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
    ctx_error(ctx, LACC_ERR_ARG, "load: cannot open %s: %s", path, strerror(errno));
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

/* n bytes; 0 with *err the system's reason when the write fails. */
static int write_all(FILE *f, const void *p, size_t n, int *err) {
  if (n == 0 || fwrite(p, 1, n, f) == n) return 1;
  *err = errno;
  return 0;
}

/* The file's bytes into f: LACC_OK; LACC_ERR_ARG with *err set when a write fails (the
 * caller names the file); another code with the error set. */
static int write_npy(lacc_ctx *ctx, lacc_array *a, FILE *f, int *err) {
  int64_t eb = lacc_type_bytes(ctx, a->type->sig);
  size_t hl;
  char *h = make_header(a, 10, &hl);
  if (h == NULL) return err_oom(ctx);
  int v2 = hl > 65535;
  unsigned char pre[12] = { 0x93, 'N', 'U', 'M', 'P', 'Y', v2 ? 2 : 1, 0 };
  size_t pl = 8;
  if (v2) {   /* the padding was for a 10-byte preamble: 2 more bytes of length */
    free(h);
    h = make_header(a, 12, &hl);
    if (h == NULL) return err_oom(ctx);
    for (int i = 0; i < 4; i++) pre[pl++] = (unsigned char)(hl >> (8 * i));
  } else {
    pre[pl++] = (unsigned char)(hl & 255);
    pre[pl++] = (unsigned char)(hl >> 8);
  }
  int ok = write_all(f, pre, pl, err) && write_all(f, h, hl, err);
  free(h);
  int64_t want = a->size * eb;
  if (ok && a->type->kind == T_SCALAR) {
    ok = write_all(f, a->buf[0], (size_t)want, err);
  } else if (ok && want > 0) {
    unsigned char *packed = malloc((size_t)want);
    if (packed == NULL) return err_oom(ctx);
    int rc = lacc_array_to_buffer(ctx, a, packed, want);
    ok = rc == LACC_OK && write_all(f, packed, (size_t)want, err);
    free(packed);
    if (rc != LACC_OK) return rc;
  }
  return ok ? LACC_OK : LACC_ERR_ARG;
}

/* ---- replacing a file: save here, write_png in png.c */

enum { TEMP_TRIES = 100 };

/* A new file in path's directory, open for writing, created with mode (which the kernel
 * reduces by the umask); its name into *tmp (malloc'd). -1 with errno set when none can be
 * made. The name is short (".lacc-" and 16 hex digits), not path's own with a suffix, which
 * would pass NAME_MAX for a legal name of 250 characters; O_EXCL makes a name already
 * taken (a symbolic link planted under it too) a retry under another name. */
static int open_temp(const char *path, mode_t mode, char **tmp) {
  static atomic_uint serial;
  const char *slash = strrchr(path, '/');
  size_t dl = slash != NULL ? (size_t)(slash - path) + 1 : 0, cap = dl + 32;
  char *name = malloc(cap);
  if (name == NULL) {
    errno = ENOMEM;
    return -1;
  }
  memcpy(name, path, dl);
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) ts.tv_nsec = 0;   /* the serial still differs */
  int fd = -1;
  for (int i = 0; i < TEMP_TRIES && fd < 0; i++) {
    uint64_t x = (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec ^
                 (uint64_t)atomic_fetch_add(&serial, 1) * UINT64_C(0x9e3779b97f4a7c15);
    snprintf(name + dl, cap - dl, ".lacc-%016llx", (unsigned long long)x);
    fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int err = errno;
    free(name);
    errno = err;
    return -1;
  }
  *tmp = name;
  return fd;
}

/* The descriptor to write path's new contents to. A regular file (or none yet) gets a
 * temporary beside it, with the mode the old file had, or what open(O_CREAT, 0666) would
 * give the new one: made with 0666 the kernel applies the umask (and a default ACL), which
 * umask() could only read by setting it, for every thread at once. Anything else that is
 * there (a device, a pipe) is written in place: renamed over, /dev/null would become a
 * plain file. -1 with errno set on failure. */
static int open_replacement(const char *path, char **tmp) {
  struct stat st;
  *tmp = NULL;
  if (stat(path, &st) != 0) return errno == ENOENT ? open_temp(path, 0666, tmp) : -1;
  if (!S_ISREG(st.st_mode)) return open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  /* 0600 until fchmod: another's data is not readable meanwhile; the set-id bits of the
   * old file are not the new one's to have */
  int fd = open_temp(path, 0600, tmp);
  if (fd >= 0 && fchmod(fd, st.st_mode & 0777) != 0) {
    int err = errno;
    (void)close(fd);   /* nothing was written: only fchmod's reason matters */
    (void)unlink(*tmp);
    free(*tmp);
    *tmp = NULL;
    errno = err;
    return -1;
  }
  return fd;
}

static int cannot_write(lacc_ctx *ctx, const char *what, const char *path, int err) {
  return ctx_error(ctx, LACC_ERR_ARG, "%s: cannot write %s: %s", what, path,
                   err != 0 ? strerror(err) : "the write failed");
}

FILE *file_replace_open(lacc_ctx *ctx, const char *what, const char *path, char **tmp) {
  int fd = open_replacement(path, tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  if (f != NULL) return f;
  int err = errno;   /* fdopen's, or open_replacement's: the reason to report */
  if (fd >= 0) (void)close(fd);
  if (*tmp != NULL) (void)unlink(*tmp);
  free(*tmp);
  *tmp = NULL;
  cannot_write(ctx, what, path, err);
  return NULL;
}

int file_replace_close(lacc_ctx *ctx, const char *what, const char *path, FILE *f, char *tmp,
                       int rc, int err) {
  if (rc == LACC_OK && fflush(f) != 0) rc = LACC_ERR_ARG, err = errno;
  /* the data on the disk before the name: after a crash, the old file or the whole new one */
  if (rc == LACC_OK && tmp != NULL && fsync(fileno(f)) != 0) rc = LACC_ERR_ARG, err = errno;
  if (fclose(f) != 0 && rc == LACC_OK) rc = LACC_ERR_ARG, err = errno;
  if (rc == LACC_OK && tmp != NULL && rename(tmp, path) != 0) rc = LACC_ERR_ARG, err = errno;
  /* a temporary that cannot be removed is left: the error below is the one to report */
  if (rc != LACC_OK && tmp != NULL) (void)unlink(tmp);
  free(tmp);
  if (rc == LACC_OK) return LACC_OK;
  if (lacc_errcode(ctx) != LACC_OK) return lacc_errcode(ctx);
  return cannot_write(ctx, what, path, err);
}

int lacc_array_save_npy(lacc_ctx *ctx, lacc_array *a, const char *path) {
  ctx_clear(ctx);
  if (a->type->has_sum)
    return ctx_error(ctx, LACC_ERR_TYPE, "save: %s holds a sum type, which .npy cannot hold "
                     "(scalars and tuples of scalars)", a->type->sig);
  int rc = array_host(a);
  if (rc != LACC_OK) return rc;
  char *tmp;
  FILE *f = file_replace_open(ctx, "save", path, &tmp);
  if (f == NULL) return lacc_errcode(ctx);
  int err = 0;
  rc = write_npy(ctx, a, f, &err);
  return file_replace_close(ctx, "save", path, f, tmp, rc, err);
}
