/* png.c: a rank-2 array written as a PNG image, through libpng's simplified API.
 *
 * Owns: which element types are pixels (u8, f32, f64 grey; tuples of 3 or 4 of them RGB
 * and RGBA; floats clamped to [0, 1] and scaled to 0..255) and the conversion of a row
 * of elements into bytes.
 * Must not: compute anything about programs; it reads a host array through its layout.
 */
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include "base/internal.h"

static int channel_ok(scalar_kind k) { return k == S_U8 || k == S_F32 || k == S_F64; }

static uint8_t to_byte(scalar_kind k, lacc_val v) {
  if (k == S_U8) return (uint8_t)v.u;
  double d = k == S_F32 ? (double)v.f : v.d;
  if (!(d > 0)) return 0;   /* NaN too */
  if (d >= 1) return 255;
  return (uint8_t)(d * 255.0 + 0.5);
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
  if (px == NULL) return ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
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
  if (!png_image_write_to_file(&img, path, 0, px, 0, NULL))
    rc = ctx_error(ctx, LACC_ERR_ARG, "write_png: %s: %s", path, img.message);
  png_image_free(&img);
  free(px);
  return rc;
}
