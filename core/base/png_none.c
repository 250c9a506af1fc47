/* png_none.c: write_png and read_png when lacc is built without libpng (see have_png.h).
 *
 * Owns: the error of a build without PNG support.
 * Must not: be compiled into a build that has libpng (it is empty then).
 */
#include "base/have_png.h"

#ifndef LACC_HAVE_PNG
#include "base/internal.h"

static int no_png(lacc_ctx *ctx, const char *what) {
  return ctx_error(ctx, LACC_ERR_BACKEND, "%s: this lacc was built without PNG support (no "
                   "libpng headers at build time: install libpng-dev and rebuild)", what);
}

int lacc_array_write_png(lacc_ctx *ctx, lacc_array *a, const char *path) {
  (void)a;
  (void)path;
  ctx_clear(ctx);
  return no_png(ctx, "write_png");
}

lacc_array *lacc_array_read_png(lacc_ctx *ctx, const char *path) {
  (void)path;
  ctx_clear(ctx);
  no_png(ctx, "read_png");
  return NULL;
}
#else
/* PNG support is built: nothing here (a translation unit must declare something) */
typedef int lacc_png_is_built;
#endif
