/* none.c: the OpenCL backend's entry points when lacc is built without it (see have.h).
 *
 * Owns: the answers of a build without OpenCL: no devices, no device memory, and an
 * error for programs asked to run on OpenCL.
 * Must not: be compiled into a build that has the backend (it is empty then).
 */
#include "have.h"
#include "launch.h"

#ifndef LACC_HAVE_OPENCL
#include <stdlib.h>
#include <string.h>

static int none_compile(lacc_ctx *ctx, const char *spec, kplan *P) {
  (void)spec;
  (void)P;
  return ctx_error(ctx, LACC_ERR_BACKEND, "opencl: this lacc was built without OpenCL (no "
                   "OpenCL headers at build time: install opencl-headers and rebuild)");
}

static void none_release(kplan *P) { (void)P; }

/* Never reached: no plan compiles for this backend. */
static void *none_begin(lacc_ctx *ctx, const kplan *P) {
  (void)P;
  ctx_error(ctx, LACC_ERR_BACKEND, "opencl: this lacc was built without OpenCL");
  return NULL;
}

const backend_ops opencl_backend = {
  .name = "opencl",
  .caps = CL_CAPS,
  .compile = none_compile,
  .release = none_release,
  .begin = none_begin,
};

char *lacc_devices(lacc_ctx *ctx) {
  char *s = calloc(1, 1);
  if (s == NULL) err_oom(ctx);
  return s;
}

void lacc_device_memory(lacc_devmem *out) { memset(out, 0, sizeof *out); }
#else
/* the backend is built: nothing here (a translation unit must declare something) */
typedef int lacc_opencl_is_built;
#endif
