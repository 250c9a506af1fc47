/* none.c: the OpenCL backend's entry points when lacc is built without it (see have.h).
 *
 * Owns: the answers of a build without OpenCL: no devices, and an error for programs
 * asked to run on OpenCL.
 * Must not: be compiled into a build that has the backend (it is empty then).
 */
#include "have.h"
#include "exec.h"

#ifndef LACC_HAVE_OPENCL
#include <stdlib.h>

int cl_compile(lacc_ctx *ctx, const char *spec, const kplan *P, clprog **out) {
  (void)spec;
  (void)P;
  *out = NULL;
  return ctx_error(ctx, LACC_ERR_BACKEND, "opencl: this lacc was built without OpenCL (no "
                   "OpenCL headers at build time: install opencl-headers and rebuild)");
}

void cl_release(clprog *cp) { (void)cp; }

int cl_exec(lacc_ctx *ctx, const kplan *P, clprog *cp, lacc_array *const *params,
            lacc_array **out) {
  (void)P;
  (void)cp;
  (void)params;
  (void)out;
  return ctx_error(ctx, LACC_ERR_BACKEND, "opencl: this lacc was built without OpenCL");
}

char *lacc_devices(lacc_ctx *ctx) {
  char *s = calloc(1, 1);
  if (s == NULL) ctx_error(ctx, LACC_ERR_MEMORY, "out of memory");
  return s;
}
#else
/* the backend is built: nothing here (a translation unit must declare something) */
typedef int lacc_opencl_is_built;
#endif
