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

/* ---- the launch choices: one function each, called by the runner (launch.c) with a
 * run's sizes and by explain (cl_describe) for the ways a step may take */

/* The ways a fold step runs, in the order the runner prefers them. */
typedef enum {
  FOLD_LANE_TILES,   /* the cpu backend's tiles (FN_TILE), a chunk of tiles a work-item */
  FOLD_GROUP_TILES,  /* LACC_GTILE x LACC_GTILE work-group tiles (FN_GTILE) */
  FOLD_GROUP_TREE,   /* chunk partials combined by a work-group tree (FN_GROUP) */
  FOLD_PARTS,        /* chunk partials combined by one work-item (FN_COMBINE) */
  FOLD_ROWS,         /* a work-item's rows in order */
  FOLD_NWAYS
} fold_way;

/* The sizes a fold run meets: R outputs of n elements each, J outputs a row, the device's
 * compute units (units), one work-item for everything (serial: a run whose checks must
 * report in order). */
typedef struct {
  int64_t R, n, J, units;
  int serial;
} fold_sizes;

/* Whether step st's kernel and the device have `way` at all (explain lists these). */
int cl_fold_has(const clprog *cp, const pstep *st, fold_way way);
/* The way a fold of these sizes runs. */
fold_way cl_fold_way(const clprog *cp, const pstep *st, const fold_sizes *z);
/* Whether a scan of R rows of n elements each splits its rows into chunks. */
int cl_scan_parts(const pstep *st, int64_t R, int64_t n, int64_t units, int serial);
/* Whether a permute onto `targets` scatters with compare-and-swap over many work-items
 * (wide: 64-bit elements, which need the device's 64-bit atomics), else in order. */
int cl_permute_spread(const clprog *cp, const pstep *st, int64_t targets, int wide, int serial);

/* The backend table's operations program.c owns (kir/backend.h says what each does). */
int cl_compile(lacc_ctx *ctx, const char *spec, kplan *P);
void cl_release_code(kplan *P);
char *cl_describe(lacc_ctx *ctx, const char *spec, const kplan *P);
int cl_is_cpu(lacc_ctx *ctx, const char *spec);

#endif
