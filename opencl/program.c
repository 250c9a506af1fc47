/* program.c: a plan's OpenCL program, and what explain says of it.
 *
 * Owns: the device a plan runs on, the paths its folds and contractions take there
 * (work-group trees and tiles, the cpu backend's lane tiles on a CPU device, lacc's own
 * f32 exp and log), the build of its one kernel (through clrt.c's caches), its constants
 * on the device; and explain's account of how the device runs each step (the choices of
 * launch.c's runners, as rules of the sizes a run meets).
 * Must not: hold a run's arrays or launch kernels (launch.c), or lower or print code.
 */
#include "have.h"
#ifdef LACC_HAVE_OPENCL
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "program.h"
#include "kir/backend.h"
#include "base/settings.h"
#include "base/text.h"
#include "base/vec.h"

static void cl_release(clprog *cp) {
  if (cp == NULL) return;
  if (cp->k != NULL) CL.ReleaseKernel(cp->k);
  free(cp->bufs);
  if (cp->K != NULL) CL.ReleaseMemObject(cp->K);
  if (cp->prog != NULL) CL.ReleaseProgram(cp->prog);
  if (cp->q != NULL) CL.ReleaseCommandQueue(cp->q);
  free(cp);
}

/* Whether the plan computes with f64 anywhere (devices without cl_khr_fp64 refuse). */
static int uses_f64(const kplan *P) {
  for (int k = 0; k < P->nfns; k++)
    for (int v = 0; v < P->fns[k].nvars; v++)
      if (P->fns[k].vt[v] == S_F64) return 1;
  for (int s = 0; s < P->nslots; s++)
    for (int b = 0; b < P->slots[s].plan->nbufs; b++)
      if (P->slots[s].plan->buf_kind[b] == S_F64) return 1;
  return 0;
}

/* The device spec names (see clrt_pick), the runtime loaded first. */
static int pick(lacc_ctx *ctx, const char *spec, int *dev) {
  int rc = clrt_load(ctx);
  return rc == LACC_OK ? clrt_pick(ctx, spec, dev) : rc;
}

static int device_of(lacc_ctx *ctx, const char *spec, clprog *cp) {
  /* the runtime's contexts and program cache live as long as the process: so must the
   * library that holds them (a Lua state that closes would unload it) */
  lib_pin();
  int rc = pick(ctx, spec, &cp->dev);
  if (rc == LACC_OK) rc = clrt_device(ctx, cp->dev, &cp->id, &cp->context);
  if (rc == LACC_OK) rc = clrt_queue(ctx, cp->dev, &cp->q);
  cp->info = clrt_info_of(cp->dev);
  return rc;
}

/* Work-items of a fold's work-group: LACC_GROUP, or fewer where the device or the
 * kernel allows fewer; fewer than two and folds do without. */
static int group_size(lacc_ctx *ctx, clprog *cp) {
  size_t most = 0;
  cl_int err = CL.GetKernelWorkGroupInfo(cp->k, cp->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof most,
                                         &most, NULL);
  if (err != CL_SUCCESS) return clrt_fail(ctx, "clGetKernelWorkGroupInfo", err, "lacc_main");
  if (most > cp->info->max_work_group) most = cp->info->max_work_group;
  cp->group_size = most < LACC_GROUP ? most : LACC_GROUP;
  cp->groups = cp->groups && cp->group_size >= 2;
  cp->tiles = cp->tiles && cp->group_size == LACC_GROUP;
  return LACC_OK;
}

static int env_on(const char *name) { return setting_switch(name, 0); }

/* LACC_VERBOSE: the folds that will run in tiles (lane tiles where a CPU device takes
 * them: rows long enough, else as if there were none). */
static void report_tiles(const kplan *P, const clprog *cp) {
  for (int s = 0; s < P->nsteps; s++) {
    const pstep *st = &P->steps[s];
    const char *at = st->node->where != NULL ? st->node->where : "?";
    if (st->kind != SK_FOLD) continue;
    if (cp->lane_tiles && st->fn[SF_TILE] >= 0)
      fprintf(stderr, "lacc: opencl: the fold at %s runs in tiles of %d outputs, one per "
              "vector lane, a chunk of tiles a work-item\n", at, st->tile_lanes);
    else if (cp->tiles && st->fn[SF_GTILE] >= 0)
      fprintf(stderr, "lacc: opencl: the fold at %s runs in %dx%d work-group tiles, its "
              "operands staged in local memory\n", at, LACC_GTILE, LACC_GTILE);
  }
}

/* The ways of running folds the device takes (before the kernel's own limits: local
 * memory, work-group size). */
static void choose_paths(clprog *cp) {
  /* GPUs fold in work-groups; LACC_CL_TREE=1 makes any device do so (to test it on a
   * CPU device) */
  cp->groups = !cp->info->is_cpu || env_on("LACC_CL_TREE");
  /* contractions run in tiles whose operands are staged in local memory, on every
   * device (LACC_CL_TILES=0 turns them off): faster on PoCL's CPU device too (docs/design.md, Measurements) */
  cp->tiles = setting_switch("LACC_CL_TILES", 1);
  /* on a CPU device the cpu backend's tiles, where a fold has them, before work-group
   * tiles (docs/design.md, Measurements; LACC_CL_LANE_TILES=0 turns them off) */
  cp->lane_tiles = cp->info->is_cpu && setting_switch("LACC_CL_LANE_TILES", 1);
  /* on a CPU device f32 exp and log (and with f64 the rest of base/ownmath.h's set) are
   * the prelude's straight-line code, which the device compiler vectorises: PoCL's
   * built-ins kept Black-Scholes' loop scalar (LACC_CL_OWN_MATH=0: the built-ins, as on a
   * GPU) */
  cp->own_math = cp->info->is_cpu && setting_switch("LACC_CL_OWN_MATH", 1);
}

static void cl_release(clprog *cp);

/* The plan's kernels built for the device named by spec (see clrt_pick): P->code. */
int cl_compile(lacc_ctx *ctx, const char *spec, kplan *P) {
  clprog *cp = ctx_alloc(ctx, sizeof *cp);
  if (cp == NULL) return ctx->errcode;
  int rc = device_of(ctx, spec, cp);
  /* LACC_CL_NO_FP64=1 and LACC_CL_NO_I64_ATOMICS=1 run as on a device without them (to
   * test those paths on any device) */
  cp->fp64 = rc == LACC_OK && cp->info->fp64 && !env_on("LACC_CL_NO_FP64");
  cp->i64_atomics = rc == LACC_OK && cp->info->int64_atomics && !env_on("LACC_CL_NO_I64_ATOMICS");
  if (rc == LACC_OK && uses_f64(P) && !cp->fp64)
    rc = ctx_error(ctx, LACC_ERR_BACKEND, "opencl: the program uses f64, which device '%s' "
                   "does not support (no cl_khr_fp64)", cp->info->name);
  if (rc == LACC_OK) choose_paths(cp);
  /* the local words are declared for every launch of the kernel: half the device's
   * local memory at most */
  if ((cp->groups || cp->tiles) && (int64_t)LACC_GROUP * P->group_words * 8 > cp->info->local_mem / 2)
    cp->groups = cp->tiles = 0;
  char *src = rc == LACC_OK ? emit_cl(P, (cp->groups ? CL_TREES : 0) | (cp->tiles ? CL_TILES : 0))
                           : NULL;
  if (rc == LACC_OK && src == NULL) rc = err_oom(ctx);
  if (rc == LACC_OK) {
    /* LACC_CL_OPTIONS: more build options (e.g. -cl-opt-disable: faster builds). -w: the
     * generated code may compare a value with itself and so on, as the Lua code did; the
     * compiler's warnings about it would only be noise on the user's stderr. */
    const char *more = getenv("LACC_CL_OPTIONS");
    char opts[512];
    snprintf(opts, sizeof opts, "-w -cl-fp32-correctly-rounded-divide-sqrt%s%s%s%s %.300s",
             cp->fp64 ? " -D LACC_FP64" : "", cp->i64_atomics ? " -D LACC_I64_ATOMICS" : "",
             cp->own_math ? " -D LACC_OWN_MATH" : "",
             setting_switch("LACC_CONTRACT", 0) ? " -D LACC_CONTRACT" : "", more != NULL ? more : "");
    rc = clrt_build(ctx, cp->dev, src, opts, &cp->prog);
  }
  free(src);
  if (rc == LACC_OK) {
    cl_int err;
    cp->k = CL.CreateKernel(cp->prog, "lacc_main", &err);
    if (err != CL_SUCCESS) rc = clrt_fail(ctx, "clCreateKernel", err, "lacc_main");
  }
  if (rc == LACC_OK && (cp->groups || cp->tiles)) rc = group_size(ctx, cp);
  if (rc == LACC_OK && verbose()) report_tiles(P, cp);
  int cap = 0;   /* of cp->bufs */
  for (int s = 0; rc == LACC_OK && s < P->nslots; s++)
    for (int b = 0; rc == LACC_OK && b < P->slots[s].plan->nbufs; b++) {
      int written = 0;
      if (!cl_kernel_buffer(P, s, b, &written)) continue;
      if (vec_reserve(&cp->bufs, &cap, 2 * cp->nbufs + 2, 16, sizeof *cp->bufs) != 0) {
        rc = err_oom(ctx);
        break;
      }
      cp->bufs[2 * cp->nbufs] = s;
      cp->bufs[2 * cp->nbufs + 1] = b;
      cp->nbufs++;
    }
  if (rc == LACC_OK) {
    /* at least one word: a zero-sized buffer is an error */
    size_t n = P->nconsts > 0 ? (size_t)P->nconsts : 1;
    uint64_t *bits = calloc(n, sizeof *bits);
    cl_int err = CL_SUCCESS;
    if (bits == NULL) rc = err_oom(ctx);
    for (int i = 0; bits != NULL && i < P->nconsts; i++) bits[i] = P->consts[i].u;
    if (bits != NULL)
      cp->K = CL.CreateBuffer(cp->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              n * sizeof *bits, bits, &err);
    if (bits != NULL && err != CL_SUCCESS) rc = clrt_fail(ctx, "clCreateBuffer", err, "constants");
    free(bits);
  }
  if (rc != LACC_OK) {
    cl_release(cp);
    return rc;
  }
  P->code = cp;
  return LACC_OK;
}

/* ---- the launch choices (program.h), for launch.c's runners and for explain */

int cl_fold_has(const clprog *cp, const pstep *st, fold_way way) {
  switch (way) {
  case FOLD_LANE_TILES: return cp->lane_tiles && st->fn[SF_TILE] >= 0;
  case FOLD_GROUP_TILES: return cp->tiles && st->fn[SF_GTILE] >= 0;
  case FOLD_GROUP_TREE: return cp->groups && st->fn[SF_GROUP] >= 0 && !st->ordered;
  case FOLD_PARTS: return !st->ordered;
  default: return 1;
  }
}

fold_way cl_fold_way(const clprog *cp, const pstep *st, const fold_sizes *z) {
  int lanes = cl_fold_has(cp, st, FOLD_LANE_TILES) && z->J >= st->tile_lanes && !z->serial;
  if (!lanes && cl_fold_has(cp, st, FOLD_GROUP_TILES) && !z->serial && z->R >= LACC_GROUP && z->n > 0)
    return FOLD_GROUP_TILES;
  int few = z->R < z->units && !z->serial;   /* too few rows for a work-item each */
  if (few && cl_fold_has(cp, st, FOLD_GROUP_TREE) && z->n / TUNE_CL_GROUP_CHUNK >= (int64_t)cp->group_size)
    return FOLD_GROUP_TREE;
  if (few && cl_fold_has(cp, st, FOLD_PARTS) && z->n >= 2 * TUNE_PART_GRAIN) return FOLD_PARTS;
  return lanes ? FOLD_LANE_TILES : FOLD_ROWS;
}

int cl_scan_parts(const pstep *st, int64_t R, int64_t n, int64_t units, int serial) {
  return R < units && n >= 2 * TUNE_PART_GRAIN && !st->ordered && !serial;
}

int cl_permute_spread(const clprog *cp, const pstep *st, int64_t targets, int wide, int serial) {
  int many = !cp->info->is_cpu || targets >= TUNE_PERMUTE_SPREAD;   /* few: the cores contend */
  return st->atomic && many && !serial && (!wide || cp->i64_atomics);
}

/* ---- explain: how this device runs each step (the ways cl_fold_has and the other
 * choices above allow, as rules of the sizes a run meets) */

static void describe_fold(text *b, const clprog *cp, const pstep *st) {
  int lanes = cl_fold_has(cp, st, FOLD_LANE_TILES);
  if (cl_fold_has(cp, st, FOLD_GROUP_TILES))
    text_put(b, "    %d outputs or more%s: %dx%d work-group tiles, operands staged in local "
             "memory\n", LACC_GROUP, lanes ? " (rows shorter than the lane tiles')" : "", LACC_GTILE,
             LACC_GTILE);
  if (cl_fold_has(cp, st, FOLD_GROUP_TREE))
    text_put(b, "    fewer rows than compute units, %d elements or more each: chunks of %d, a "
             "work-item each, combined in order by a work-group tree in local memory\n",
             TUNE_CL_GROUP_CHUNK * (int)cp->group_size, TUNE_CL_GROUP_CHUNK);
  if (cl_fold_has(cp, st, FOLD_PARTS))
    text_put(b, "    %sfewer rows than compute units, %d elements or more each: chunk partials, "
             "then one work-item combines them in order\n",
             cl_fold_has(cp, st, FOLD_GROUP_TREE) ? "else " : "", 2 * TUNE_PART_GRAIN);
  if (lanes)
    text_put(b, "    %srows of %d outputs or more: the cpu backend's tiles, one output per "
             "vector lane, a chunk of tiles a work-item\n",
             cl_fold_has(cp, st, FOLD_PARTS) ? "otherwise " : "", st->tile_lanes);
  text_put(b, "    %sa work-item's rows in order%s\n", lanes || cl_fold_has(cp, st, FOLD_PARTS) ?
           "otherwise: " : "", st->ordered ? " (an ordered fold)" : "");
}

static void describe_step(text *b, const clprog *cp, const kplan *P, const pstep *st) {
  (void)P;
  char gpu_rows[96];
  snprintf(gpu_rows, sizeof gpu_rows, "one work-item per element (past %d elements, several each)",
           TUNE_CL_GPU_ITEMS);
  const char *rows = cp->info->is_cpu
    ? "a few work-items per compute unit (more for long arrays), work-groups of one, each a "
      "contiguous chunk (PoCL vectorises a work-item's loop)"
    : gpu_rows;
  switch (st->kind) {
  case SK_FOLD:
    text_put(b, "  a%d (fold):\n", st->out);
    describe_fold(b, cp, st);
    return;
  case SK_SCAN:
    text_put(b, "  a%d (scan): fewer rows than compute units, %d elements or more each: chunk "
             "totals, their scan, each chunk again from its start; otherwise a work-item's "
             "rows in order\n", st->out, 2 * TUNE_PART_GRAIN);
    return;
  case SK_PERMUTE:
    text_put(b, "  a%d (permute): the defaults in %s; then the source scattered ", st->out,
             cp->info->is_cpu ? "chunks" : "one work-item per element");
    if (!cl_permute_spread(cp, st, INT64_MAX, 0, 0)) text_put(b, "in order by one work-item\n");
    else if (cl_permute_spread(cp, st, 1, 0, 0)) text_put(b, "by compare-and-swap over many work-items\n");
    else text_put(b, "by compare-and-swap over many work-items (%d targets or more), else in "
                  "order by one work-item\n", TUNE_PERMUTE_SPREAD);
    return;
  case SK_SORT:
    text_put(b, "  a%d (sort): per 8-bit digit a count, a scan and a scatter kernel; rows of "
             "up to 32 keys by insertion, a work-item each; longer rows in chunks of %s "
             "keys, a work-item each\n", st->out, cp->info->is_cpu ? "65536 or more (at "
             "most 64 a row)" : "1024 or more (at most 4096 a row)");
    return;
  case SK_SELECT:
    return;
  case SK_WHILE:
    for (int i = 0; i < 2; i++) {
      text_put(b, "  a%d (awhile), its %s:\n", st->out, i == 0 ? "condition" : "body");
      for (int k = 0; k < st->loop[i]->nsteps; k++)
        describe_step(b, cp, st->loop[i], &st->loop[i]->steps[k]);
    }
    return;
  default:
    text_put(b, "  a%d (%s): %s\n", st->out, kind_name(st->node->kind), rows);
  }
}

/* For explain: the device spec names, its type, and how it runs each step of P. */
char *cl_describe(lacc_ctx *ctx, const char *spec, const kplan *P) {
  clprog cp;
  memset(&cp, 0, sizeof cp);
  if (pick(ctx, spec, &cp.dev) != LACC_OK) return NULL;
  cp.info = clrt_info_of(cp.dev);
  choose_paths(&cp);
  text b = { 0 };
  text_put(&b, "-- on OpenCL device '%s' (%s, %d compute units)\n", cp.info->name,
           cp.info->is_cpu ? "a CPU device" : "a GPU", cp.info->compute_units);
  if (cp.own_math)
    text_put(&b, "-- f32 exp and log%s: lacc's own straight-line code, which the device "
             "vectorises (LACC_CL_OWN_MATH=0: the device's built-ins)\n",
             cp.info->fp64 ? ", exp2, log2, log10, log1p, expm1, sinh, cosh, tanh, sin, cos, tan, "
                             "atan, atan2 and pow, f64 exp, exp2, log, log2, log10, log1p, expm1, "
                             "sinh, cosh, tanh, sin, cos, tan, atan, atan2 and pow" : "");
  for (int k = 0; k < P->nsteps; k++) describe_step(&b, &cp, P, &P->steps[k]);
  return text_finish(ctx, &b);
}

/* Whether the device spec names is a CPU device (no error: compile reports any). */
int cl_is_cpu(lacc_ctx *ctx, const char *spec) {
  int dev = 0;
  if (pick(ctx, spec, &dev) != LACC_OK) {
    ctx_clear(ctx);
    return 0;
  }
  return clrt_info_of(dev)->is_cpu;
}

void cl_release_code(kplan *P) { cl_release(P->code); }
#else
/* no OpenCL: opencl/none.c holds the table */
typedef int lacc_cl_program_is_not_built;
#endif /* LACC_HAVE_OPENCL */
