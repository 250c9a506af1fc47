/* exec.h: the OpenCL backend (opencl/exec.c): its operations are `opencl_backend`
 * (kir/backend.h), which the core's driver finds in its backend table. */
#ifndef LACC_CL_EXEC_H
#define LACC_CL_EXEC_H

#include "kir/backend.h"

typedef struct clprog clprog;

#endif
