/* program.h: a plan's OpenCL program (program.c), shared with the runs (launch.c). */
#ifndef LACC_CL_PROGRAM_H
#define LACC_CL_PROGRAM_H

#include "clrt.h"
#include "launch.h"

struct clprog {
  int dev;
  const clrt_info *info;
  cl_context context;
  cl_device_id id;
  cl_command_queue q;
  cl_program prog;
  cl_kernel k;             /* lacc_main: every function of the plan behind a switch */
  int *bufs;               /* its buffer arguments: slot, buffer pairs */
  int nbufs;
  cl_mem K;                /* the program's constants */
  int fp64, i64_atomics;   /* what the device offers that kernels use */
  int groups;              /* folds combine partials in a work-group (FN_GROUP) */
  int tiles;               /* contractions run in work-group tiles (FN_GTILE) */
  int lane_tiles;          /* a CPU device: folds run in the cpu backend's tiles (FN_TILE) */
  int own_math;            /* a CPU device: f32 exp and log are lacc's (LACC_OWN_MATH) */
  size_t group_size;       /* the work-items of either */
};

/* The backend table's operations program.c owns (kir/backend.h says what each does). */
int cl_compile(lacc_ctx *ctx, const char *spec, kplan *P);
void cl_release_code(kplan *P);
char *cl_describe(lacc_ctx *ctx, const char *spec, const kplan *P);
int cl_is_cpu(lacc_ctx *ctx, const char *spec);

#endif
