/* The Halide peer rows (issue 45): conv2d (the 5x5 binomial blur) and blur (the 3x3 box
 * blur) of bench/c/conv2d.c and bench/c/blur.c, the same inputs (common.h), clamped edges
 * (BoundaryConditions::repeat_edge), Halide 14's JIT for the host (compiled before the
 * timing), HL_NUM_THREADS threads, into an output allocated once (as the C rows). Rows:
 *   Halide           : direct: each output the weighted sum of its whole window, inlined;
 *                      strips of 32 rows in parallel, x vectorised
 *   Halide_separable : a horizontal pass, then a vertical pass over its results, scheduled
 *                      as Halide's apps/blur schedules its CPU blur (store_at the strip,
 *                      compute_at the row: a sliding window of rows of the horizontal pass
 *                      kept in cache), strips of 32 rows rather than apps/blur's 8 (each
 *                      strip recomputes the window's extra rows: 4 for the 5x5)
 * Checksum: the f64 sum of the output. Usage: halide BENCH ROW W */
// Halide.h first: common.h's input constants are macros (C1, C2) that Halide's templates
// use as names
#include "Halide.h"

#include "../c/common.h"

using namespace Halide;

static const int B5[5] = { 1, 4, 6, 4, 1 };

static Func build(const std::string &bench, bool separable, Buffer<float> &in, int strip, int vec) {
  Var x("x"), y("y"), yi("yi");
  Func c = BoundaryConditions::repeat_edge(in), out("out");
  bool conv = bench == "conv2d";
  int r = conv ? 2 : 1;
  if (!separable) {
    // the window's terms in the C row's order (rows, then columns)
    Expr s;
    for (int di = -r; di <= r; di++)
      for (int dj = -r; dj <= r; dj++) {
        Expr t = c(x + dj, y + di);
        if (conv) t = (float)(B5[di + r] * B5[dj + r]) * t;
        s = s.defined() ? s + t : t;
      }
    out(x, y) = s / (conv ? 256.0f : 9.0f);
    out.split(y, y, yi, strip).parallel(y).vectorize(x, vec);
    return out;
  }
  Func h("h");
  Expr sh, sv;
  for (int d = -r; d <= r; d++) {
    Expr t = c(x + d, y);
    if (conv) t = (float)B5[d + r] * t;
    sh = sh.defined() ? sh + t : t;
  }
  h(x, y) = sh;
  for (int d = -r; d <= r; d++) {
    Expr t = h(x, y + d);
    if (conv) t = (float)B5[d + r] * t;
    sv = sv.defined() ? sv + t : t;
  }
  out(x, y) = sv / (conv ? 256.0f : 9.0f);
  out.split(y, y, yi, strip).parallel(y).vectorize(x, vec);
  h.store_at(out, y).compute_at(out, yi).vectorize(x, vec);
  return out;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: halide BENCH ROW W\n");
    return 2;
  }
  std::string bench = argv[1], row = argv[2];
  int w = atoi(argv[3]);
  if (bench != "conv2d" && bench != "blur") {
    printf("NA %s %s no Halide row (conv2d and blur only)\n", bench.c_str(), row.c_str());
    return 0;
  }
  bool separable = row.find("separable") != std::string::npos;
  long n = (long)w * w;
  std::vector<float> xs((size_t)n);
  for (long k = 0; k < n; k++) xs[(size_t)k] = bench == "conv2d" ? u16(k + 1, C1) : u24(k + 1, C1);
  Buffer<float> in(xs.data(), w, w), out(w, w);  // (x, y) = (column, row): row-major
  out.fill(0.0f);
  Target t = get_jit_target_from_environment();
  int vec = t.natural_vector_size<float>();
  // ShiftInwards tails need an extent of at least the split (small BENCH_SCALE)
  if (vec > w) vec = w;
  int strip = w < 32 ? w : 32;
  Pipeline p(build(bench, separable, in, strip, vec));
  p.compile_jit(t);
  double ms;
  int reps;
  MEASURE(ms, reps, p.realize(out));
  double cs = 0;
  for (int y = 0; y < w; y++)
    for (int x = 0; x < w; x++) cs += out(x, y);
  // Halide 14's header has no version macro; the build links libHalide14
  printf("RESULT %s %s %.4f %.17g %d halide14 %s strips32 vec%d %sT\n", bench.c_str(), row.c_str(), ms, cs, reps,
         separable ? "separable" : "direct", vec,
         getenv("HL_NUM_THREADS") ? getenv("HL_NUM_THREADS") : "?");
  return 0;
}
