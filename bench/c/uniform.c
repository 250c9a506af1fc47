/* random: n uniform f32 numbers in [0, 1) into a new array (lacc.random.uniform({n}, 42,
 * "f32")). Three rows:
 *   C              : the bandwidth reference: a loop writing n floats (a Weyl sequence,
 *                    ((u32)i * 0x9E3779B9 >> 8) * 2^-24, so the values are spread over
 *                    [0, 1) as uniform ones are) into a preallocated output reused by every
 *                    run (the usual C)
 *   C_fresh_output : the same loop into an output malloc'd each run (freed untimed), as
 *                    lacc.run returns a new array: adds the first-touch page faults
 *   C_philox       : Philox4x32-10 by hand, lacc's numbers bit for bit (element p is word
 *                    p mod 4 of the block at counter (p / 4, 0, 0, 0) under the key (seed,
 *                    0), as (word >> 8) * 2^-24), one block per 4 elements, OpenMP, into
 *                    the preallocated output. Checked first against Random123's known
 *                    answer (counter 0, key 0 -> 6627e8d5 e169c58d bc57ac4c 9b00dbd8).
 * Checks (a row that fails prints NA): every value in [0, 1), and the mean within 6 standard
 * errors of 1/2. Checksum: the mean, the f64 sum of the output over n (equal for C_philox
 * and the lacc rows, which compute the same numbers; within about 1e-4 for other streams). */
#include "common.h"
#include <stdint.h>

#define SEED 42u

static void weyl(float *out, long n) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; i++) out[i] = (float)(((uint32_t)i * 0x9E3779B9u) >> 8) * 0x1p-24f;
}

static inline void philox(uint32_t k0, uint32_t k1, uint32_t *c0, uint32_t *c1, uint32_t *c2,
                          uint32_t *c3) {
  uint32_t a = *c0, b = *c1, c = *c2, d = *c3;
  for (int r = 0; r < 10; r++) {
    if (r > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    uint64_t p0 = (uint64_t)0xD2511F53u * a, p1 = (uint64_t)0xCD9E8D57u * c;
    uint32_t na = (uint32_t)(p1 >> 32) ^ b ^ k0, nc = (uint32_t)(p0 >> 32) ^ d ^ k1;
    b = (uint32_t)p1, d = (uint32_t)p0, a = na, c = nc;
  }
  *c0 = a, *c1 = b, *c2 = c, *c3 = d;
}

static inline float unit(uint32_t w) { return (float)(w >> 8) * 0x1p-24f; }

static void uniform(float *out, long n, uint64_t seed) {
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  long full = n / 4;
#pragma omp parallel for simd schedule(static)
  for (long b = 0; b < full; b++) {
    uint32_t w0 = (uint32_t)b, w1 = (uint32_t)((uint64_t)b >> 32), w2 = 0, w3 = 0;
    philox(k0, k1, &w0, &w1, &w2, &w3);
    out[4 * b] = unit(w0), out[4 * b + 1] = unit(w1), out[4 * b + 2] = unit(w2), out[4 * b + 3] = unit(w3);
  }
  if (full * 4 < n) {
    uint32_t w[4] = { (uint32_t)full, (uint32_t)((uint64_t)full >> 32), 0, 0 };
    philox(k0, k1, &w[0], &w[1], &w[2], &w[3]);
    for (long p = 4 * full; p < n; p++) out[p] = unit(w[p - 4 * full]);
  }
}

/* "" when every value is in [0, 1) and the mean near 1/2, else what is wrong; *mean. */
static const char *check(const float *out, long n, double *mean) {
  double s = 0;
  for (long i = 0; i < n; i++) {
    if (!(out[i] >= 0.0f && out[i] < 1.0f)) return "a value outside [0, 1)";
    s += (double)out[i];
  }
  *mean = s / (double)n;
  return fabs(*mean - 0.5) <= 6 * 0.28867513459481287 / sqrt((double)n) ? "" : "the mean is not near 1/2";
}

static void report(const char *row, const float *out, long n, double ms, int reps) {
  double mean;
  const char *bad = check(out, n, &mean);
  if (*bad) printf("NA random %s %s\n", row, bad), fflush(stdout);
  else RESULT("random", row, ms, mean, reps);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  size_t bytes = (size_t)n * sizeof(float);
  float *out = malloc(bytes);
  if (!out) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) out[i] = 0.0f;
  double ms;
  int reps;
  MEASURE(ms, reps, weyl(out, n));
  report("C", out, n, ms, reps);
  float *fresh = NULL;
  double mean = 0;
  const char *bad = "";
  MEASURE_AFTER(ms, reps, (fresh = malloc(bytes), weyl(fresh, n)),
                (bad = check(fresh, n, &mean), free(fresh)));
  if (*bad) printf("NA random C_fresh_output %s\n", bad), fflush(stdout);
  else RESULT("random", "C_fresh_output", ms, mean, reps);
  uint32_t kat[4] = { 0, 0, 0, 0 };
  philox(0, 0, &kat[0], &kat[1], &kat[2], &kat[3]);
  if (kat[0] != 0x6627e8d5u || kat[1] != 0xe169c58du || kat[2] != 0xbc57ac4cu || kat[3] != 0x9b00dbd8u) {
    printf("NA random C_philox Philox4x32-10 misses the known answer: %08x %08x %08x %08x\n",
           kat[0], kat[1], kat[2], kat[3]);
  } else {
    MEASURE(ms, reps, uniform(out, n, SEED));
    report("C_philox", out, n, ms, reps);
  }
  fflush(stdout);
  free(out);
  return 0;
}
