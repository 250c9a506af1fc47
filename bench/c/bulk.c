/* The references of the bulk benchmark (issue 20), n f32 (4n bytes): memcpy into a buffer
 * already touched; into fresh memory (malloc, copy, free: the page faults a new object of
 * that size pays, such as a Lua string); fwrite of the bytes to a new file and fread of
 * them back (the page cache: what .npy save and load do besides their header). */
#include "common.h"
#include <unistd.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000;
  size_t bytes = (size_t)n * 4;
  policy p = get_policy();
  float *src = malloc(bytes), *dst = malloc(bytes);
  if (src == NULL || dst == NULL) return 1;
  for (long k = 0; k < n; k++) src[k] = u24(k + 1, C1);
  memcpy(dst, src, bytes);
  double t[64];
  for (int fresh = 0; fresh < 2; fresh++) {
    int reps = 0;
    double sum = 0;
    for (int i = 0; i < p.warmup + p.reps && reps < 64; i++) {
      double t0 = now_s();
      float *d = fresh ? malloc(bytes) : dst;
      if (d == NULL) return 1;
      memcpy(d, src, bytes);
      sum = d[n / 2];
      if (fresh) free(d);
      double dt = now_s() - t0;
      if (i >= p.warmup) t[reps++] = dt;
    }
    RESULT("bulk", fresh ? "C_fresh" : "C", 1e3 * median(t, reps), sum, reps);
  }
  char path[] = "/tmp/lacc-bulk-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  for (int rd = 0; rd < 2; rd++) {
    int reps = 0;
    double sum = 0;
    for (int i = 0; i < p.warmup + p.reps && reps < 64; i++) {
      double t0 = now_s();
      FILE *f = fopen(path, rd ? "rb" : "wb");
      if (f == NULL) return 1;
      size_t got = rd ? fread(dst, 1, bytes, f) : fwrite(src, 1, bytes, f);
      if (fclose(f) != 0 || got != bytes) return 1;
      sum = dst[n / 2];
      double dt = now_s() - t0;
      if (i >= p.warmup) t[reps++] = dt;
    }
    RESULT("bulk", rd ? "C_fread" : "C_fwrite", 1e3 * median(t, reps), sum, reps);
  }
  unlink(path);
  free(src);
  free(dst);
  return 0;
}
