/* Inclusive prefix sum of n i32 on OpenCL, written by hand as a competent user would for
 * PoCL: the two-pass scan of bench/c/scan.c in three kernels on one queue (each
 * work-item sums its chunk; one work-item scans the chunk sums; each work-item scans its
 * chunk from its offset), into an output buffer made once, timed to clFinish. Inputs as
 * bench/c/scan.c; the checksum (y[n - 1] + y[n / 2]) read back untimed. Row: OpenCL. */
#include "clcommon.h"

static const char *src =
  "__kernel void sums(__global const int *x, __global long *off, long n) {\n"
  "  long c = get_global_id(0), m = get_global_size(0);\n"
  "  long lo = n * c / m, hi = n * (c + 1) / m;\n"
  "  long s = 0;\n"
  "  for (long i = lo; i < hi; i++) s += x[i];\n"
  "  off[c + 1] = s;\n"
  "}\n"
  "__kernel void offsets(__global long *off, long m) {\n"
  "  off[0] = 0;\n"
  "  for (long c = 1; c <= m; c++) off[c] += off[c - 1];\n"
  "}\n"
  "__kernel void scan(__global const int *x, __global int *y, __global const long *off,\n"
  "                   long n) {\n"
  "  long c = get_global_id(0), m = get_global_size(0);\n"
  "  long lo = n * c / m, hi = n * (c + 1) / m;\n"
  "  int acc = (int)off[c];\n"
  "  for (long i = lo; i < hi; i++) {\n"
  "    acc += x[i];\n"
  "    y[i] = acc;\n"
  "  }\n"
  "}\n";

static void scan_run(clb *b, cl_kernel k1, cl_kernel k2, cl_kernel k3, size_t items) {
  size_t one = 1;
  cl_run(b, k1, items);
  cl_check(clEnqueueNDRangeKernel(b->q, k2, 1, NULL, &one, NULL, 0, NULL, NULL), "launch");
  cl_run(b, k3, items);
  cl_done(b);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 50000000L;
  size_t bytes = (size_t)n * sizeof(int);
  int *x = malloc(bytes);
  if (!x) return 1;
  for (long i = 0; i < n; i++) x[i] = (int)floor(16.0 * frac_k(i + 1, C1)) - 8;
  clb b = cl_setup("scan", "OpenCL", src);
  /* on a GPU, many short chunks (one scan of their sums by one work-item stays cheap) */
  size_t items = b.is_cpu ? cl_items(&b, n) : (n < 16384 ? (size_t)n : 16384);
  cl_mem dx = cl_buffer(&b, bytes, x), dy = cl_buffer(&b, bytes, NULL);
  cl_mem doff = cl_buffer(&b, (items + 1) * sizeof(cl_long), NULL);
  cl_kernel k1 = cl_kernel_of(&b, "sums"), k2 = cl_kernel_of(&b, "offsets"), k3 = cl_kernel_of(&b, "scan");
  cl_long nl = n, ml = (cl_long)items;
  cl_check(clSetKernelArg(k1, 0, sizeof dx, &dx), "arg");
  cl_check(clSetKernelArg(k1, 1, sizeof doff, &doff), "arg");
  cl_check(clSetKernelArg(k1, 2, sizeof nl, &nl), "arg");
  cl_check(clSetKernelArg(k2, 0, sizeof doff, &doff), "arg");
  cl_check(clSetKernelArg(k2, 1, sizeof ml, &ml), "arg");
  cl_check(clSetKernelArg(k3, 0, sizeof dx, &dx), "arg");
  cl_check(clSetKernelArg(k3, 1, sizeof dy, &dy), "arg");
  cl_check(clSetKernelArg(k3, 2, sizeof doff, &doff), "arg");
  cl_check(clSetKernelArg(k3, 3, sizeof nl, &nl), "arg");
  double ms;
  int reps;
  MEASURE(ms, reps, scan_run(&b, k1, k2, k3, items));
  int *y = malloc(bytes);
  if (!y) return 1;
  cl_read(&b, dy, bytes, y);
  RESULT("scan", "OpenCL", ms, (double)y[n - 1] + (double)y[n / 2], reps);
  return 0;
}
