/* What one small run costs on the OpenCL device itself, written by hand: one kernel of
 * one work-item that adds to a word, then a blocking read of the word (the least a run
 * whose result the host reads can do). Two rows of the overhead table: calls back to back
 * (each timed sample 2000 calls, as bench/lacc/overhead.lua times lacc's warm calls), and
 * a single call after a pause of 2 ms (as the other benches time one call each, after a
 * collection: the device's threads may have gone to sleep). The floor under lacc's
 * opencl rows of small inputs (nearest at 3,000). */
#include <time.h>
#include "clcommon.h"

static const char *src =
  "__kernel void bump(__global long *w) { w[0] += 1; }\n";

static long call(clb *b, cl_kernel k, cl_mem w) {
  long v = 0;
  cl_run(b, k, 1);
  cl_read(b, w, sizeof v, &v);
  return v;
}

static void pause_ms(long ms) {
  struct timespec t = { 0, ms * 1000000L };
  nanosleep(&t, NULL);
}

int main(void) {
  clb b = cl_setup("overhead", "kernel_read_by_hand_opencl", src);
  long zero = 0, v = 0;
  cl_mem w = cl_buffer(&b, sizeof zero, &zero);
  cl_kernel k = cl_kernel_of(&b, "bump");
  cl_check(clSetKernelArg(k, 0, sizeof w, &w), "arg");
  enum { INNER = 2000 };
  double ms;
  int reps;
  MEASURE(ms, reps, for (int i = 0; i < INNER; i++) v = call(&b, k, w));
  printf("RESULT overhead kernel_read_by_hand_opencl %.4f %.17g %d one kernel and a read of 8 "
         "bytes, hand-written OpenCL, calls back to back\n", ms / INNER, (double)v, reps);
  MEASURE_AFTER(ms, reps, v = call(&b, k, w), pause_ms(2));
  printf("RESULT overhead single_by_hand_opencl %.4f %.17g %d the same, one call after a "
         "pause of 2 ms\n", ms, (double)v, reps);
  fflush(stdout);
  return 0;
}
