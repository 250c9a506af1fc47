/* saxpy on OpenCL, written by hand as a competent user would for PoCL: the inputs and
 * the output in device buffers made once, one kernel whose work-items each take a
 * contiguous chunk (one element each on a GPU), timed to clFinish; the checksum (the f64
 * sum of z) read back untimed. Inputs as bench/c/saxpy.c. Row: OpenCL. */
#include "clcommon.h"

static const char *src =
  "__kernel void saxpy(float a, __global const float *x, __global const float *y,\n"
  "                    __global float *z, long n) {\n"
  "  long c = get_global_id(0), m = get_global_size(0);\n"
  "  long lo = n * c / m, hi = n * (c + 1) / m;\n"
  "  for (long i = lo; i < hi; i++) z[i] = a * x[i] + y[i];\n"
  "}\n";

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  size_t bytes = (size_t)n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
  if (!x || !y || !z) return 1;
  for (long i = 0; i < n; i++) {
    x[i] = u16(i + 1, C1);
    y[i] = u24(i + 1, C2);
  }
  clb b = cl_setup("saxpy", "OpenCL", src);
  cl_mem dx = cl_buffer(&b, bytes, x), dy = cl_buffer(&b, bytes, y), dz = cl_buffer(&b, bytes, NULL);
  cl_kernel k = cl_kernel_of(&b, "saxpy");
  float a = 2.5f;
  cl_long nl = n;
  cl_check(clSetKernelArg(k, 0, sizeof a, &a), "arg");
  cl_check(clSetKernelArg(k, 1, sizeof dx, &dx), "arg");
  cl_check(clSetKernelArg(k, 2, sizeof dy, &dy), "arg");
  cl_check(clSetKernelArg(k, 3, sizeof dz, &dz), "arg");
  cl_check(clSetKernelArg(k, 4, sizeof nl, &nl), "arg");
  size_t items = cl_items(&b, n);
  double ms;
  int reps;
  MEASURE(ms, reps, (cl_run(&b, k, items), cl_done(&b)));
  cl_read(&b, dz, bytes, z);
  double s = 0;
  for (long i = 0; i < n; i++) s += (double)z[i];
  RESULT("saxpy", "OpenCL", ms, s, reps);
  return 0;
}
