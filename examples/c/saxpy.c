/* Embedding lacc in a C program through its C API (core/include/lacc.h): a saxpy and a
 * dot product over arrays the program fills, built as a graph of nodes, run on the cpu
 * backend (or the one named by argv[1]: "interp", "cpu", "opencl"), read back.
 * Build in the checkout: cc -Icore/include examples/c/saxpy.c -Lbuild -llacc -Wl,-rpath,build;
 * from an installed rock: cc examples/c/saxpy.c $(pkg-config --cflags --libs lacc) */
#include <stdio.h>
#include <stdlib.h>
#include "lacc.h"

static int fail(lacc_ctx *ctx, const char *what) {
  fprintf(stderr, "%s: %s\n", what, lacc_errmsg(ctx));
  return 1;
}

int main(int argc, char **argv) {
  const char *backend = argc > 1 ? argv[1] : "cpu";
  enum { N = 1000 };
  lacc_ctx *ctx = lacc_ctx_new();
  if (ctx == NULL) return 1;
  int64_t n = N;
  lacc_array *x = lacc_array_new(ctx, "f32", 1, &n), *y = lacc_array_new(ctx, "f32", 1, &n);
  if (x == NULL || y == NULL) return fail(ctx, "arrays");
  /* unboxed scalars: leaf 0 is a plain float buffer */
  float *xd = lacc_array_leaf_data(x, 0), *yd = lacc_array_leaf_data(y, 0);
  for (int i = 0; i < N; i++) {
    xd[i] = (float)i;
    yd[i] = 1.0f;
  }

  /* saxpy: zipWith (\a b -> 2.5 * a + b) x y, then its sum */
  lacc_node *a = lacc_exp_var(ctx, "f32", "saxpy.c"), *b = lacc_exp_var(ctx, "f32", "saxpy.c");
  lacc_node *k = lacc_exp_const_f(ctx, "f32", 2.5, "saxpy.c");
  lacc_node *ka_args[2] = { k, a };
  lacc_node *ka = lacc_exp_op(ctx, "mul", 2, ka_args, "saxpy.c");
  lacc_node *sum_args[2] = { ka, b };
  lacc_node *body = lacc_exp_op(ctx, "add", 2, sum_args, "saxpy.c");
  lacc_node *params[2] = { a, b };
  lacc_node *f = lacc_lam(ctx, 2, params, body, "saxpy.c");
  lacc_node *ux = lacc_acc_use(ctx, x, "saxpy.c"), *uy = lacc_acc_use(ctx, y, "saxpy.c");
  lacc_node *map_args[3] = { f, ux, uy };
  lacc_node *saxpy = lacc_acc_op(ctx, "map", 3, map_args, "saxpy.c");

  lacc_node *p = lacc_exp_var(ctx, "f32", "saxpy.c"), *q = lacc_exp_var(ctx, "f32", "saxpy.c");
  lacc_node *pq[2] = { p, q };
  lacc_node *plus = lacc_exp_op(ctx, "add", 2, pq, "saxpy.c");
  lacc_node *g = lacc_lam(ctx, 2, pq, plus, "saxpy.c");
  lacc_node *zero = lacc_exp_const_f(ctx, "f32", 0, "saxpy.c");
  lacc_node *fold_args[3] = { g, zero, saxpy };
  lacc_node *total = lacc_acc_op(ctx, "fold", 3, fold_args, "saxpy.c");
  if (saxpy == NULL || total == NULL) return fail(ctx, "building the program");

  /* both results from one run: the saxpy is computed once and shared */
  lacc_node *roots[2] = { saxpy, total };
  lacc_array *out[2] = { NULL, NULL };
  if (lacc_run(ctx, backend, 2, roots, out) != LACC_OK) return fail(ctx, "run");
  double s3 = 0, sum = 0;
  if (lacc_array_get_f(ctx, out[0], 0, 3, &s3) != LACC_OK ||
      lacc_array_get_f(ctx, out[1], 0, 0, &sum) != LACC_OK)
    return fail(ctx, "reading the results");
  /* 2.5 * (0 + ... + 999) + 1000 = 1249750: every partial sum is a multiple of 0.5 below
   * 2^23, exact in f32 in any order */
  printf("saxpy[4] = %.1f (expected 8.5); sum = %.1f (expected 1249750.0) on %s\n", s3, sum,
         backend);
  int ok = s3 == 8.5 && sum == 1249750.0;

  lacc_array_release(out[0]);
  lacc_array_release(out[1]);
  lacc_node *all[] = { a, b, k, ka, body, f, ux, uy, saxpy, p, q, plus, g, zero, total };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  lacc_array_release(x);
  lacc_array_release(y);
  lacc_ctx_release(ctx);
  return ok ? 0 : 1;
}
