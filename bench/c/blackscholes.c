/* Black-Scholes over n options in f32, the CUDA SDK formula with the polynomial CND
 * approximation (as Accelerate's blackscholes example). price = 5 + 32 u, strike =
 * 1 + 128 u, years = 0.25 + 8 u (u = u24(k, C1/C2/C3)); riskfree 0.02, volatility 0.30.
 * The checksum is the f64 sum of call and put. Two rows:
 *   C              : into preallocated outputs reused by every run
 *   C_fresh_output : into newly malloc'd outputs each run (freed untimed), as lacc.run
 *                    must return a new array (see saxpy.c). */
#include "common.h"

#define RISKFREE 0.02f
#define VOLATILITY 0.30f

static inline float cnd(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
              A4 = -1.821255978f, A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267794f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = RSQRT2PI * expf(-0.5f * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
  return d > 0 ? 1.0f - c : c;
}

static void blackscholes(const float *S, const float *X, const float *T, float *call,
                         float *put, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) {
    float s = S[i], x = X[i], t = T[i];
    float sqrtT = sqrtf(t);
    float d1 = (logf(s / x) + (RISKFREE + 0.5f * VOLATILITY * VOLATILITY) * t) / (VOLATILITY * sqrtT);
    float d2 = d1 - VOLATILITY * sqrtT;
    float cndd1 = cnd(d1), cndd2 = cnd(d2);
    float expRT = expf(-RISKFREE * t);
    call[i] = s * cndd1 - x * expRT * cndd2;
    put[i] = x * expRT * (1.0f - cndd2) - s * (1.0f - cndd1);
  }
}

static double sum64(const float *call, const float *put, long n) {
  double s = 0;
  for (long i = 0; i < n; i++) s += (double)call[i] + (double)put[i];
  return s;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000000L;
  size_t bytes = (size_t)n * sizeof(float);
  float *S = malloc(bytes), *X = malloc(bytes), *T = malloc(bytes), *call = malloc(bytes),
        *put = malloc(bytes);
  if (!S || !X || !T || !call || !put) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) {
    S[i] = 5.0f + 32.0f * u24(i + 1, C1);
    X[i] = 1.0f + 128.0f * u24(i + 1, C2);
    T[i] = 0.25f + 8.0f * u24(i + 1, C3);
    call[i] = put[i] = 0.0f;
  }
  double ms, s = 0;
  int reps;
  MEASURE(ms, reps, blackscholes(S, X, T, call, put, n));
  RESULT("blackscholes", "C", ms, sum64(call, put, n), reps);
  float *cf = NULL, *pf = NULL;
  MEASURE_AFTER(ms, reps,
                (cf = malloc(bytes), pf = malloc(bytes), blackscholes(S, X, T, cf, pf, n)),
                (s = sum64(cf, pf, n), free(cf), free(pf)));
  RESULT("blackscholes", "C_fresh_output", ms, s, reps);
  free(S); free(X); free(T); free(call); free(put);
  return 0;
}
