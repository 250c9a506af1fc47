/* png.c: rank-2 arrays as PNG images, through libpng: written with its simplified API,
 * read with the full one (the simplified API would convert 16-bit samples to linear light).
 *
 * Owns: which element types are pixels (u8, f32, f64 grey; tuples of 3 or 4 of them RGB
 * and RGBA; floats clamped to [0, 1] and scaled to 0..255) and the conversion of a row
 * of elements into bytes; what a PNG read gives (u8 or u16 grey, tuples of 2, 3 or 4 of
 * them for grey+alpha, RGB and RGBA; palettes expanded). A write goes to a temporary
 * renamed over the target (npy.c's file_replace_open/close, as save's does): libpng's own
 * png_image_write_to_file truncates the target first and removes it when a write fails,
 * which on a full disk deleted the image that was there.
 * Must not: compute anything about programs; it reads a host array through its layout.
 * Without libpng (have_png.h) this file is empty and png_none.c answers.
 */
#include "base/have_png.h"

#ifdef LACC_HAVE_PNG
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/internal.h"

/* npy.c's (save and write_png are their only users) */
FILE *file_replace_open(lacc_ctx *ctx, const char *what, const char *path, char **tmp);
int file_replace_close(lacc_ctx *ctx, const char *what, const char *path, FILE *f, char *tmp,
                       int rc, int err);

static int channel_ok(scalar_kind k) { return k == S_U8 || k == S_F32 || k == S_F64; }

static uint8_t to_byte(scalar_kind k, lacc_val v) {
  if (k == S_U8) return (uint8_t)v.u;
  double d = k == S_F32 ? (double)v.f : v.d;
  if (!(d > 0)) return 0;   /* NaN too */
  if (d >= 1) return 255;
  return (uint8_t)(d * 255.0 + 0.5);
}

/* The image into a replacement of path. A failed write of libpng's stdio shows as the
 * stream's error, with errno its reason; else libpng's message says what went wrong. */
static int write_image(lacc_ctx *ctx, png_image *img, const uint8_t *px, const char *path) {
  char *tmp;
  FILE *f = file_replace_open(ctx, "write_png", path, &tmp);
  if (f == NULL) return lacc_errcode(ctx);
  errno = 0;
  int ok = png_image_write_to_stdio(img, f, 0, px, 0, NULL);
  int err = ok ? 0 : ferror(f) ? errno : 0;
  if (!ok && err == 0)
    ctx_error(ctx, LACC_ERR_ARG, "write_png: cannot write %s: %s", path, img->message);
  png_image_free(img);
  return file_replace_close(ctx, "write_png", path, f, tmp, ok ? LACC_OK : LACC_ERR_ARG, err);
}

int lacc_array_write_png(lacc_ctx *ctx, lacc_array *a, const char *path) {
  ctx_clear(ctx);
  if (a->ctx != ctx)
    return ctx_error(ctx, LACC_ERR_ARG, "write_png: the array belongs to another Lua state");
  const lacc_type *t = a->type;
  int channels = t->kind == T_SCALAR ? 1 : t->kind == T_TUPLE ? t->n : 0;
  int ok = a->rank == 2 && (channels == 1 || channels == 3 || channels == 4) && !t->has_sum;
  for (int c = 0; ok && c < channels; c++) ok = channel_ok(type_leaf(t, c));
  if (!ok)
    return ctx_error(ctx, LACC_ERR_TYPE, "write_png: expected a rank-2 array of u8, f32 or f64 "
                     "(grey) or of a tuple of 3 or 4 of them (RGB, RGBA), got rank %d %s",
                     a->rank, t->sig);
  int64_t h = a->extent[0], w = a->extent[1];
  if (h < 1 || w < 1 || h > 0x7fffffff / 4 || w > 0x7fffffff / 4)
    return ctx_error(ctx, LACC_ERR_SHAPE, "write_png: an image of %lld x %lld pixels cannot be "
                     "written", (long long)h, (long long)w);
  int rc = array_host(a);
  if (rc != LACC_OK) return rc;
  uint8_t *px = malloc((size_t)(h * w * channels));
  if (px == NULL) return err_oom(ctx);
  lacc_val v[4];
  for (int64_t i = 0; i < h * w; i++) {
    array_load(a, i, v);
    for (int c = 0; c < channels; c++) px[i * channels + c] = to_byte(type_leaf(t, c), v[c]);
  }
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = (png_uint_32)w;
  img.height = (png_uint_32)h;
  img.format = channels == 1 ? PNG_FORMAT_GRAY : channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
  rc = write_image(ctx, &img, px, path);
  free(px);
  return rc;
}

/* ---- reading: the pixels as they are stored (no gamma or colour conversion), palettes
 * and grey levels below 8 bits expanded, 16-bit samples in native order. libpng reports
 * errors by longjmp to the setjmp in read_rows, which only it may reach. */

typedef struct {
  FILE *f;
  int err;   /* errno of a failed read of f, else 0 (libpng's message is the reason) */
  char msg[200];
} png_reader;

static void on_error(png_structp png, png_const_charp msg) {
  png_reader *r = png_get_error_ptr(png);
  r->err = ferror(r->f) ? errno : 0;   /* libpng's read of f failed just now */
  snprintf(r->msg, sizeof r->msg, "%s", msg);
  png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

/* The decoded image into *px (malloc'd) and its layout; 0 with r->msg set on failure. */
static int read_rows(FILE *f, png_reader *r, unsigned char **px, uint32_t *h, uint32_t *w,
                     int *channels, int *depth) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, r, on_error, on_warning);
  png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
  unsigned char *volatile data = NULL;
  png_bytep *volatile rows = NULL;
  if (png == NULL || info == NULL) {
    snprintf(r->msg, sizeof r->msg, "out of memory");
    png_destroy_read_struct(png != NULL ? &png : NULL, NULL, NULL);
    return 0;
  }
  if (setjmp(png_jmpbuf(png))) {
    free(data);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
  }
  png_init_io(png, f);
  png_set_sig_bytes(png, 8);
  png_read_info(png, info);
  png_set_expand(png);   /* palette to RGB, tRNS to alpha, grey below 8 bits to 8 */
  if (png_get_bit_depth(png, info) == 16) png_set_swap(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  *h = png_get_image_height(png, info);
  *w = png_get_image_width(png, info);
  *channels = png_get_channels(png, info);
  *depth = png_get_bit_depth(png, info);
  size_t rb = png_get_rowbytes(png, info);
  data = malloc(rb * *h + 1);
  rows = malloc(sizeof *rows * (*h + 1));
  if (data == NULL || rows == NULL) png_error(png, "out of memory");
  for (uint32_t y = 0; y < *h; y++) rows[y] = data + rb * y;
  png_read_image(png, rows);
  png_read_end(png, NULL);
  free(rows);
  png_destroy_read_struct(&png, &info, NULL);
  *px = data;
  return 1;
}

lacc_array *lacc_array_read_png(lacc_ctx *ctx, const char *path) {
  ctx_clear(ctx);
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    ctx_error(ctx, LACC_ERR_ARG, "read_png: cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  unsigned char sig[8];
  size_t got = fread(sig, 1, 8, f);
  int err = got != 8 && ferror(f) ? errno : 0;   /* a directory opens, then fails here */
  if (got != 8 || png_sig_cmp(sig, 0, 8) != 0) {
    fclose(f);
    if (err != 0) ctx_error(ctx, LACC_ERR_ARG, "read_png: cannot read %s: %s", path, strerror(err));
    else ctx_error(ctx, LACC_ERR_ARG, "read_png: %s is not a PNG file", path);
    return NULL;
  }
  png_reader r = { .f = f };
  unsigned char *px = NULL;
  uint32_t h = 0, w = 0;
  int channels = 0, depth = 0;
  int ok = read_rows(f, &r, &px, &h, &w, &channels, &depth);
  fclose(f);
  if (!ok && r.err != 0) {
    ctx_error(ctx, LACC_ERR_ARG, "read_png: cannot read %s: %s", path, strerror(r.err));
    return NULL;
  }
  if (!ok) {
    ctx_error(ctx, LACC_ERR_ARG, "read_png: %s: %s", path, r.msg);
    return NULL;
  }
  const char *s = depth == 16 ? "u16" : "u8";
  char sig_text[32];
  if (channels == 1) snprintf(sig_text, sizeof sig_text, "%s", s);
  else if (channels == 2) snprintf(sig_text, sizeof sig_text, "(%s,%s)", s, s);
  else if (channels == 3) snprintf(sig_text, sizeof sig_text, "(%s,%s,%s)", s, s, s);
  else snprintf(sig_text, sizeof sig_text, "(%s,%s,%s,%s)", s, s, s, s);
  int64_t ext[2] = { h, w };
  int64_t bytes = (int64_t)h * w * channels * (depth / 8);
  lacc_array *a = lacc_array_from_buffer(ctx, sig_text, 2, ext, px, bytes);
  free(px);
  return a;
}
#endif
