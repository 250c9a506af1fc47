/* Shared by the hand-written OpenCL baselines (issue 26's reference rows): the device
 * (LACC_DEVICE's rule: a 1-based index or part of a name, else the first GPU, else the
 * first device), a context and an in-order queue, a program built from source with
 * -cl-fast-relaxed-math left off (lacc's kernels keep IEEE results too), every call
 * checked. The row prints NA and exits 0 when there is no OpenCL device. Timing and
 * inputs come from ../c/common.h, so the rows see the C rows' inputs and policy. */
#ifndef BENCH_CLCOMMON_H
#define BENCH_CLCOMMON_H
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <ctype.h>
#include "../c/common.h"

typedef struct {
  cl_device_id dev;
  cl_context ctx;
  cl_command_queue q;
  cl_program prog;
  cl_uint units;
  int is_cpu;
} clb;

static void cl_check(cl_int err, const char *what) {
  if (err == CL_SUCCESS) return;
  fprintf(stderr, "%s failed: OpenCL error %d\n", what, (int)err);
  exit(1);
}

static int contains_nocase(const char *s, const char *part) {
  size_t n = strlen(part);
  for (; *s; s++) {
    size_t i = 0;
    while (i < n && s[i] && tolower((unsigned char)s[i]) == tolower((unsigned char)part[i])) i++;
    if (i == n) return 1;
  }
  return n == 0;
}

/* The device, or NA and exit when there is none. */
static cl_device_id pick_device(const char *bench, const char *row) {
  cl_platform_id plats[16];
  cl_uint np = 0;
  cl_device_id all[64], gpu = NULL;
  int n = 0;
  if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) np = 0;
  for (cl_uint p = 0; p < np; p++) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, (cl_uint)(64 - n), all + n, &nd) != CL_SUCCESS) continue;
    n += (int)nd;
  }
  if (n == 0) {
    printf("NA %s %s no OpenCL device\n", bench, row);
    exit(0);
  }
  const char *want = getenv("LACC_DEVICE");
  for (int i = 0; i < n && want != NULL && *want; i++) {
    char name[256] = "";
    clGetDeviceInfo(all[i], CL_DEVICE_NAME, sizeof name, name, NULL);
    if ((isdigit((unsigned char)*want) && atoi(want) == i + 1) || contains_nocase(name, want)) return all[i];
  }
  for (int i = 0; i < n && gpu == NULL; i++) {
    cl_device_type t = 0;
    clGetDeviceInfo(all[i], CL_DEVICE_TYPE, sizeof t, &t, NULL);
    if (t & CL_DEVICE_TYPE_GPU) gpu = all[i];
  }
  return gpu != NULL ? gpu : all[0];
}

static clb cl_setup(const char *bench, const char *row, const char *src) {
  clb b;
  cl_int err;
  b.dev = pick_device(bench, row);
  cl_device_type t = 0;
  cl_check(clGetDeviceInfo(b.dev, CL_DEVICE_TYPE, sizeof t, &t, NULL), "clGetDeviceInfo");
  b.is_cpu = (t & CL_DEVICE_TYPE_CPU) != 0;
  cl_check(clGetDeviceInfo(b.dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof b.units, &b.units, NULL),
           "clGetDeviceInfo");
  b.ctx = clCreateContext(NULL, 1, &b.dev, NULL, NULL, &err);
  cl_check(err, "clCreateContext");
  b.q = clCreateCommandQueue(b.ctx, b.dev, 0, &err);
  cl_check(err, "clCreateCommandQueue");
  b.prog = clCreateProgramWithSource(b.ctx, 1, &src, NULL, &err);
  cl_check(err, "clCreateProgramWithSource");
  err = clBuildProgram(b.prog, 1, &b.dev, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(b.prog, b.dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "build failed:\n%s\n", log);
    exit(1);
  }
  return b;
}

static cl_kernel cl_kernel_of(clb *b, const char *name) {
  cl_int err;
  cl_kernel k = clCreateKernel(b->prog, name, &err);
  cl_check(err, name);
  return k;
}

static cl_mem cl_buffer(clb *b, size_t bytes, const void *from) {
  cl_int err;
  cl_mem m = clCreateBuffer(b->ctx, CL_MEM_READ_WRITE | (from ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                            (void *)from, &err);
  cl_check(err, "clCreateBuffer");
  return m;
}

/* Work-items for n elements: on a CPU device a few per compute unit, each a contiguous
 * chunk (PoCL vectorises a work-item's loop); on a GPU one element each. */
static size_t cl_items(const clb *b, long n) {
  if (!b->is_cpu) return (size_t)n;
  size_t c = (size_t)b->units * 8;
  return (size_t)n < c ? (size_t)n : c;
}

static void cl_run(clb *b, cl_kernel k, size_t items) {
  cl_check(clEnqueueNDRangeKernel(b->q, k, 1, NULL, &items, NULL, 0, NULL, NULL), "launch");
}

static void cl_done(clb *b) { cl_check(clFinish(b->q), "clFinish"); }

static void cl_read(clb *b, cl_mem m, size_t bytes, void *to) {
  cl_check(clEnqueueReadBuffer(b->q, m, CL_TRUE, 0, bytes, to, 0, NULL, NULL), "clEnqueueReadBuffer");
}

#endif
