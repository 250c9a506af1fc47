/* exec.h: the OpenCL backend's entry points (opencl/exec.c). */
#ifndef LACC_CL_EXEC_H
#define LACC_CL_EXEC_H

#include "../core/kir.h"

typedef struct clprog clprog;

/* The plan's kernels built for the device named by spec (see clrt_pick). */
int cl_compile(lacc_ctx *ctx, const char *spec, const kplan *P, clprog **out);
void cl_release(clprog *cp);
/* Run a plan on its device: inputs are uploaded (once: the device copy stays with the
 * host array), intermediates stay on the device, results are host arrays
 * out[0..nresults-1] whose values are read back when the host first needs them. */
int cl_exec(lacc_ctx *ctx, const kplan *P, clprog *cp, lacc_array *const *params,
            lacc_array **out);

#endif
