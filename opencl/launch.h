/* launch.h: the OpenCL backend (opencl/launch.c): its operations are `opencl_backend`
 * (kir/backend.h), which the core's driver finds in its backend table. */
#ifndef LACC_CL_LAUNCH_H
#define LACC_CL_LAUNCH_H

#include "kir/backend.h"

typedef struct clprog clprog;

/* What the backend's kernels can run, with or without OpenCL built in (none.c): the same
 * plans, so explain says the same. */
#define CL_CAPS { .work_groups = 1, .wide_tile_most = 4, .wide_tile_rows = 8, \
                  .wide_tile_bytes = 128, \
                  .sort_where = "on the device (count, scan and scatter kernels per 8-bit digit)" }

#endif
