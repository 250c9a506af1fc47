/* Shared by the hand-written C baselines: wall-clock timing, the median of repetitions,
 * the benchmark inputs (the same formulas as bench/lacc/common.lua, bench/numpy/common.py
 * and bench/luajit/common.lua), and the RESULT line the driver reads. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static long env_long(const char *name, long dflt) {
  const char *s = getenv(name);
  return s && *s ? atol(s) : dflt;
}

/* Input generators: k is the 1-based element index. Written as in every other row:
 * all operations are exact or rounded once, so each row sees the very same inputs. */
#define C1 0.6180339887498949
#define C2 0.7548776662466927
#define C3 0.5698402909980532

static inline double frac_k(long k, double c) {
  double d = (double)k * c;
  return d - floor(d);
}
/* Uniform in [0, 1) with 24 bits. */
static inline float u24(long k, double c) { return (float)frac_k(k, c); }
/* Uniform in [0, 1) with 16 bits (so 2.5 * x is exact in f32). */
static inline float u16(long k, double c) { return (float)(floor(65536.0 * frac_k(k, c)) / 65536.0); }
/* 0 or 1: dot products of these are integers that f32 sums exactly in any order (while
 * the sum stays below 2^24; about n / 4, so up to n of about 64M). */
static inline float b01(long k, double c) { return (float)floor(2.0 * frac_k(k, c)); }

/* Repetition policy shared by all rows: BENCH_WARMUP warm-up runs, then BENCH_REPS timed
 * runs, fewer (at least 3) when one run would overrun BENCH_ROW_BUDGET seconds. */
typedef struct { int warmup, reps; double budget; } policy;

static policy get_policy(void) {
  policy p;
  p.warmup = (int)env_long("BENCH_WARMUP", 1);
  p.reps = (int)env_long("BENCH_REPS", 7);
  const char *b = getenv("BENCH_ROW_BUDGET");
  p.budget = b && *b ? atof(b) : 30.0;
  if (p.reps < 1) p.reps = 1;
  return p;
}

static int reps_for(policy p, double first_s) {
  int r = p.reps;
  if (first_s > 0 && first_s * r > p.budget) {
    r = (int)(p.budget / first_s);
    if (r < 3) r = 3;
    if (r > p.reps) r = p.reps;
  }
  return r;
}

#define RESULT(bench, row, ms, checksum, reps) \
  printf("RESULT %s %s %.4f %.17g %d\n", bench, row, ms, checksum, reps), fflush(stdout)

/* MEASURE_AFTER(ms_out, reps_out, body, after): runs body warm-up + reps times, each
 * followed by after (untimed); ms_out = the median of the timed runs in ms. */
#define MEASURE_AFTER(ms_out, reps_out, body, after)                      \
  do {                                                                    \
    policy pol_ = get_policy();                                           \
    double first_ = 0;                                                    \
    for (int w_ = 0; w_ < pol_.warmup; w_++) {                            \
      double t0_ = now_s();                                               \
      body;                                                               \
      first_ = now_s() - t0_;                                             \
      after;                                                              \
    }                                                                     \
    int n_ = reps_for(pol_, first_);                                      \
    double ts_[256];                                                      \
    if (n_ > 256) n_ = 256;                                               \
    for (int r_ = 0; r_ < n_; r_++) {                                     \
      double t0_ = now_s();                                               \
      body;                                                               \
      ts_[r_] = now_s() - t0_;                                            \
      after;                                                              \
    }                                                                     \
    ms_out = 1e3 * median(ts_, n_);                                       \
    reps_out = n_;                                                        \
  } while (0)

#define MEASURE(ms_out, reps_out, body) MEASURE_AFTER(ms_out, reps_out, body, (void)0)

#endif
