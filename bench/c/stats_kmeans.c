/* stats_kmeans (issue 44): one k-means step on n 2-D points (f32 arrays x, y) and 16
 * centres, in one pass: OpenMP over the points, each thread finding each point's nearest
 * centre (squared distances, the first centre winning a tie) and adding the point into
 * its own per-centre sums of x and y and count (16 floats, 16 floats, 16 ints), then the
 * threads' partial sums merged. Outputs into preallocated arrays. Inputs: x_k =
 * floor(64 frac(k C1)) / 4, y_k = floor(64 frac(k C2)) / 4 (k 1-based: multiples of 1/4 in
 * [0, 16)), centre c = 4a + b + 1 (a, b in 0 .. 3) at (4b + 2.125, 4a + 1.875): every
 * squared distance is exact in f32 (FMA contraction changes nothing), no point is as near
 * two centres, and every per-centre sum is exact in any order. Checks (a row that fails
 * prints NA): the counts add up to n, and all 48 results equal a plain loop's that finds
 * each point's centre from its cell (per axis, the nearest of the four). Checksum: the sum
 * over centres c (1-based) of c (sum x + 2 sum y + 3 count). */
#include "common.h"

#define K 16

static void kmeans_step(const float *x, const float *y, long n, const float *cx, const float *cy, float *sx,
                        float *sy, int *cnt) {
  for (int c = 0; c < K; c++) sx[c] = 0.0f, sy[c] = 0.0f, cnt[c] = 0;
#pragma omp parallel
  {
    float px[K] = { 0 }, py[K] = { 0 };
    int pc[K] = { 0 };
#pragma omp for schedule(static)
    for (long i = 0; i < n; i++) {
      float xi = x[i], yi = y[i];
      float dx = xi - cx[0], dy = yi - cy[0], bd = dx * dx + dy * dy;
      int best = 0;
      for (int c = 1; c < K; c++) {
        dx = xi - cx[c], dy = yi - cy[c];
        float d = dx * dx + dy * dy;
        if (d < bd) bd = d, best = c;
      }
      px[best] += xi;
      py[best] += yi;
      pc[best]++;
    }
#pragma omp critical
    for (int c = 0; c < K; c++) sx[c] += px[c], sy[c] += py[c], cnt[c] += pc[c];
  }
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000L;
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  float cx[K], cy[K], sx[K], sy[K];
  int cnt[K];
  if (!x || !y) return 1;
#pragma omp parallel for schedule(static)
  for (long k = 1; k <= n; k++) {
    x[k - 1] = (float)(floor(64.0 * frac_k(k, C1)) / 4.0);
    y[k - 1] = (float)(floor(64.0 * frac_k(k, C2)) / 4.0);
  }
  for (int c = 0; c < K; c++) cx[c] = 4.0f * (float)(c % 4) + 2.125f, cy[c] = 4.0f * (float)(c / 4) + 1.875f;
  double wx[K] = { 0 }, wy[K] = { 0 };
  long wc[K] = { 0 };
  for (long i = 0; i < n; i++) {
    long bx = (long)floor(((double)x[i] - 0.125) / 4.0), by = (long)floor(((double)y[i] + 0.125) / 4.0);
    bx = bx < 0 ? 0 : bx > 3 ? 3 : bx;
    by = by < 0 ? 0 : by > 3 ? 3 : by;
    wx[4 * by + bx] += (double)x[i], wy[4 * by + bx] += (double)y[i], wc[4 * by + bx]++;
  }
  double ms;
  int reps;
  MEASURE(ms, reps, kmeans_step(x, y, n, cx, cy, sx, sy, cnt));
  double cs = 0;
  long total = 0;
  for (int c = 0; c < K; c++) {
    if ((double)sx[c] != wx[c] || (double)sy[c] != wy[c] || (long)cnt[c] != wc[c]) {
      printf("NA stats_kmeans C centre %d: sums %.9g, %.9g and count %d, not %.17g, %.17g and %ld\n", c + 1,
             sx[c], sy[c], cnt[c], wx[c], wy[c], wc[c]), fflush(stdout);
      return 0;
    }
    total += cnt[c];
    cs += (double)(c + 1) * ((double)sx[c] + 2.0 * (double)sy[c] + 3.0 * (double)cnt[c]);
  }
  if (total != n) printf("NA stats_kmeans C the counts add up to %ld, not %ld\n", total, n), fflush(stdout);
  else RESULT("stats_kmeans", "C", ms, cs, reps);
  free(x);
  free(y);
  return 0;
}
