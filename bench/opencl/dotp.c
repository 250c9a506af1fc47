/* Dot product on OpenCL, written by hand as a competent user would for PoCL: each
 * work-item folds a contiguous chunk with eight lanes (float8), its partial read back and
 * the partials summed on the host, inside the timed run. Inputs as bench/c/dotp.c (0 or
 * 1: every order of summation gives the same, exact result). Row: OpenCL. */
#include "clcommon.h"

static const char *src =
  "__kernel void dotp(__global const float *x, __global const float *y, __global float *part,\n"
  "                  long n) {\n"
  "  long c = get_global_id(0), m = get_global_size(0);\n"
  "  long lo = n * c / m, hi = n * (c + 1) / m;\n"
  "  float8 acc = (float8)(0.0f);\n"
  "  long i = lo;\n"
  "  for (; i + 8 <= hi; i += 8) acc += vload8(0, x + i) * vload8(0, y + i);\n"
  "  float s = acc.s0 + acc.s1 + acc.s2 + acc.s3 + acc.s4 + acc.s5 + acc.s6 + acc.s7;\n"
  "  for (; i < hi; i++) s += x[i] * y[i];\n"
  "  part[c] = s;\n"
  "}\n";

static float dot_run(clb *b, cl_kernel k, size_t items, cl_mem dp, float *part) {
  cl_run(b, k, items);
  cl_read(b, dp, items * sizeof *part, part);
  float r = 0;
  for (size_t c = 0; c < items; c++) r += part[c];
  return r;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  size_t bytes = (size_t)n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes);
  if (!x || !y) return 1;
  for (long i = 0; i < n; i++) {
    x[i] = b01(i + 1, C1);
    y[i] = b01(i + 1, C2);
  }
  clb b = cl_setup("dotp", "OpenCL", src);
  size_t items = b.is_cpu ? cl_items(&b, n) : (n < 65536 ? (size_t)n : 65536);
  float *part = malloc(items * sizeof *part);
  if (part == NULL) return 1;
  cl_mem dx = cl_buffer(&b, bytes, x), dy = cl_buffer(&b, bytes, y);
  cl_mem dp = cl_buffer(&b, items * sizeof *part, NULL);
  cl_kernel k = cl_kernel_of(&b, "dotp");
  cl_long nl = n;
  cl_check(clSetKernelArg(k, 0, sizeof dx, &dx), "arg");
  cl_check(clSetKernelArg(k, 1, sizeof dy, &dy), "arg");
  cl_check(clSetKernelArg(k, 2, sizeof dp, &dp), "arg");
  cl_check(clSetKernelArg(k, 3, sizeof nl, &nl), "arg");
  double ms;
  int reps;
  float r = 0;
  MEASURE(ms, reps, r = dot_run(&b, k, items, dp, part));
  RESULT("dotp", "OpenCL", ms, (double)r, reps);
  return 0;
}
