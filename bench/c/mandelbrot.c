/* Mandelbrot on a w x w grid over [-2, 1) x [-1.5, 1.5), f32, at most 255 iterations;
 * an i32 count per pixel. Pixel (i, j) (0-based row, column) has c = (-2 + j dx,
 * -1.5 + i dx), dx = floor(3 * 2^20 / w) / 2^20, so j dx is exact in f32 and c is the
 * same in every row. z starts at 0; while n < 255 and |z|^2 <= 4: z = z^2 + c, n++.
 * The checksum is the sum of the counts. Rows are dynamically scheduled (work varies). */
#include <stdint.h>
#include "common.h"

static void mandel(int32_t *out, long w, float dx) {
#pragma omp parallel for schedule(dynamic, 4)
  for (long i = 0; i < w; i++) {
    float ci = -1.5f + (float)i * dx;
    for (long j = 0; j < w; j++) {
      float cr = -2.0f + (float)j * dx;
      float zr = 0.0f, zi = 0.0f;
      int32_t n = 0;
      for (;;) {
        float zr2 = zr * zr, zi2 = zi * zi;
        if (!(n < 255 && zr2 + zi2 <= 4.0f)) break;
        zi = 2.0f * zr * zi + ci;
        zr = zr2 - zi2 + cr;
        n++;
      }
      out[i * w + j] = n;
    }
  }
}

int main(int argc, char **argv) {
  long w = argc > 1 ? atol(argv[1]) : 1024;
  float dx = (float)((double)((3L << 20) / w) / 1048576.0);
  int32_t *out = calloc((size_t)(w * w), sizeof *out);
  if (!out) return 1;
  double ms;
  int reps;
  MEASURE(ms, reps, mandel(out, w, dx));
  double s = 0;
  for (long i = 0; i < w * w; i++) s += out[i];
  RESULT("mandelbrot", "C", ms, s, reps);
  free(out);
  return 0;
}
