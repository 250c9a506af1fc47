/* Sort of n keys (built with -DSORT_U32, -DSORT_F32 or -DSORT_I64: the benchmarks sort_u32,
 * sort_f32, sort_i64). Keys from the 1-based index k through murmur3's 32-bit finaliser
 * fmix32 (a bijection of u32, so the u32 and i64 keys are distinct):
 *   u32: fmix32(k)
 *   f32: (float)(int32_t)fmix32(k) * 2^-31     (in [-1, 1]: signs and exponents vary)
 *   i64: (int64_t)(fmix32(k) << 32 | fmix32(~k))
 * Two rows, both an out-of-place LSD radix sort (8-bit digits, so 4 passes for 32-bit keys,
 * 8 for 64-bit ones) into a preallocated output, OpenMP threads each owning a static block:
 *   C    : per pass, each thread counts the digits of its block (the first pass's counts
 *          come from one read of the input that counts every digit at once and finds the
 *          digits every key shares, whose passes are skipped, as lacc's sort skips them);
 *          the counts of all threads give each (thread, digit) its output offset, so the
 *          scatter of each block is stable. Float and signed keys are flipped on the fly
 *          into unsigned radix order (f32: all bits of a negative number, the sign bit of
 *          the others; i64: the sign bit).
 *   C_wc : the same with software write-combining in the scatter: each thread gathers 64
 *          bytes per digit in a buffer in L1 and writes them out together.
 * Checks (a row that fails prints NA): the output is in order (compared as numbers of the
 * key type) and holds the input's keys (the sums of the keys' bits and of their squares,
 * mod 2^64, are the input's); C_wc's output is C's byte for byte. Checksum: the f64 sum
 * of the sorted keys at the 1001 positions floor((n - 1) j / 1000), j = 0..1000 (0-based),
 * in that order, as every row of the benchmark computes it. */
#include "common.h"
#include <stdint.h>
#include <omp.h>

#if defined(SORT_F32)
#define BENCH "sort_f32"
typedef uint32_t ukey;
#define PASSES 4
static inline ukey to_radix(ukey u) { return u ^ ((ukey) - (int32_t)(u >> 31) | 0x80000000u); }
#elif defined(SORT_I64)
#define BENCH "sort_i64"
typedef uint64_t ukey;
#define PASSES 8
static inline ukey to_radix(ukey u) { return u ^ 0x8000000000000000ull; }
#else
#define BENCH "sort_u32"
typedef uint32_t ukey;
#define PASSES 4
static inline ukey to_radix(ukey u) { return u; }
#endif

static inline uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

/* The bits of key k (1-based). */
static inline ukey key_bits(long k) {
  uint32_t h = fmix32((uint32_t)k);
#if defined(SORT_F32)
  float f = (float)(int32_t)h * 0x1p-31f;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#elif defined(SORT_I64)
  return (uint64_t)h << 32 | fmix32(~(uint32_t)k);
#else
  return h;
#endif
}

/* The key as a number of its type, and as an f64. */
static inline double key_value(ukey u) {
#if defined(SORT_F32)
  float f;
  memcpy(&f, &u, sizeof f);
  return (double)f;
#elif defined(SORT_I64)
  return (double)(int64_t)u;
#else
  return (double)u;
#endif
}

static inline int key_le(ukey a, ukey b) {
#if defined(SORT_F32)
  float x, y;
  memcpy(&x, &a, sizeof x);
  memcpy(&y, &b, sizeof y);
  return x <= y;
#elif defined(SORT_I64)
  return (int64_t)a <= (int64_t)b;
#else
  return a <= b;
#endif
}

#define WC (64 / (int)sizeof(ukey)) /* keys per 64-byte write-combining line */

/* The radix sort of src[0..n) into out (tmp: scratch of n keys). cnt: threads * PASSES *
 * 256 counters. wc: write-combining scatter. */
static void radix_sort(const ukey *src, ukey *out, ukey *tmp, long n, size_t *cnt, int wc) {
  int active[PASSES], npass = 0;
#pragma omp parallel
  {
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    long lo = n * t / T, hi = n * (t + 1) / T;
    size_t *mine = cnt + (size_t)t * PASSES * 256;
    memset(mine, 0, PASSES * 256 * sizeof *mine);
    /* every digit of the block at once: the first pass's counts, and which digits vary */
    for (long i = lo; i < hi; i++) {
      ukey k = to_radix(src[i]);
      for (int p = 0; p < PASSES; p++) mine[p * 256 + ((k >> (8 * p)) & 255)]++;
    }
#pragma omp barrier
#pragma omp single
    {
      for (int p = 0; p < PASSES; p++) {
        int skip = 0;
        for (int d = 0; d < 256 && !skip; d++) {
          size_t tot = 0;
          for (int u = 0; u < T; u++) tot += cnt[((size_t)u * PASSES + p) * 256 + d];
          if (tot == (size_t)n) skip = 1;
        }
        if (!skip) active[npass++] = p;
      }
    } /* implicit barrier */
    if (npass == 0) memcpy(out + lo, src + lo, (size_t)(hi - lo) * sizeof *out);
    /* ping-pong so that the last pass writes out */
    const ukey *s = src;
    ukey *d = npass % 2 ? out : tmp;
    ukey buf[256 * WC] __attribute__((aligned(64)));
    int fill[256];
    for (int q = 0; q < npass; q++) {
      int p = active[q], shift = 8 * p;
      size_t *c = mine + p * 256;
      if (q > 0) {
        memset(c, 0, 256 * sizeof *c);
        for (long i = lo; i < hi; i++) c[(to_radix(s[i]) >> shift) & 255]++;
#pragma omp barrier
      }
      size_t off[256], run = 0;
      for (int g = 0; g < 256; g++)
        for (int u = 0; u < T; u++) {
          if (u == t) off[g] = run;
          run += cnt[((size_t)u * PASSES + p) * 256 + g];
        }
      if (!wc) {
        for (long i = lo; i < hi; i++) {
          ukey k = s[i];
          d[off[(to_radix(k) >> shift) & 255]++] = k;
        }
      } else {
        memset(fill, 0, sizeof fill);
        for (long i = lo; i < hi; i++) {
          ukey k = s[i];
          int g = (int)((to_radix(k) >> shift) & 255);
          buf[g * WC + fill[g]] = k;
          if (++fill[g] == WC) {
            memcpy(d + off[g], buf + g * WC, 64);
            off[g] += WC;
            fill[g] = 0;
          }
        }
        for (int g = 0; g < 256; g++)
          if (fill[g]) memcpy(d + off[g], buf + g * WC, (size_t)fill[g] * sizeof(ukey));
      }
#pragma omp barrier
      s = d;
      d = d == out ? tmp : out;
    }
  }
}

/* "" when out is in order and holds src's keys, else what is wrong. */
static const char *check(const ukey *src, const ukey *out, long n) {
  uint64_t s1 = 0, s2 = 0, o1 = 0, o2 = 0;
  for (long i = 0; i < n; i++) {
    uint64_t a = src[i], b = out[i];
    s1 += a, s2 += a * a, o1 += b, o2 += b * b;
    if (i > 0 && !key_le(out[i - 1], out[i])) return "the output is not in order";
  }
  return s1 == o1 && s2 == o2 ? "" : "the output does not hold the input's keys";
}

static double sample_sum(const ukey *out, long n) {
  double s = 0;
  for (long j = 0; j <= 1000; j++) s += key_value(out[(n - 1) * j / 1000]);
  return s;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000000L;
  size_t bytes = (size_t)n * sizeof(ukey);
  ukey *src = malloc(bytes), *out = malloc(bytes), *tmp = malloc(bytes), *out2 = malloc(bytes);
  size_t *cnt = malloc((size_t)omp_get_max_threads() * PASSES * 256 * sizeof *cnt);
  if (!src || !out || !tmp || !out2 || !cnt) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) {
    src[i] = key_bits(i + 1);
    out[i] = tmp[i] = out2[i] = 0;
  }
  double ms;
  int reps;
  MEASURE(ms, reps, radix_sort(src, out, tmp, n, cnt, 0));
  const char *bad = check(src, out, n);
  if (*bad) printf("NA %s C %s\n", BENCH, bad);
  else RESULT(BENCH, "C", ms, sample_sum(out, n), reps);
  MEASURE(ms, reps, radix_sort(src, out2, tmp, n, cnt, 1));
  bad = check(src, out2, n);
  if (!*bad && memcmp(out, out2, bytes) != 0) bad = "the output differs from the C row's";
  if (*bad) printf("NA %s C_wc %s\n", BENCH, bad);
  else RESULT(BENCH, "C_wc", ms, sample_sum(out2, n), reps);
  fflush(stdout);
  free(src);
  free(out);
  free(tmp);
  free(out2);
  free(cnt);
  return 0;
}
