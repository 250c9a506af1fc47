/* test_core.c: unit tests of the core through the public C API, without Lua.
 * Covers sharing recovery (the paper's example, long chains), typing errors, the
 * interpreter's run-time errors, values of one context used in another, what a run holds
 * (its program and arguments, dropped or written from a progress callback), invalid
 * constructor tags written by the host, programs of one shape kept after they were freed,
 * the interning of types and the kernel IR
 * verifier (kir/verify.c) on functions broken by hand. Prints
 * "N passed, N failed" last.
 */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lacc.h"
#include "base/sha256.h"
#include "base/text.h"
#include <limits.h>
#include "kir/passes.h"

static int passed, failed;

static void check(int ok, const char *what) {
  if (ok) passed++;
  else {
    failed++;
    printf("FAIL: %s\n", what);
  }
}

static lacc_node *ci(lacc_ctx *c, const char *t, int64_t v) { return lacc_exp_const_i(c, t, v, "test"); }

static lacc_node *op2(lacc_ctx *c, const char *op, lacc_node *a, lacc_node *b) {
  lacc_node *args[2] = { a, b };
  return lacc_exp_op(c, op, 2, args, "test");
}

static lacc_node *unit(lacc_ctx *c, lacc_node *e) { return lacc_acc_op(c, "unit", 1, &e, "test"); }

static int64_t run_i(lacc_ctx *c, lacc_node *acc, int *rc) {
  lacc_array *out = NULL;
  int64_t v = 0;
  *rc = lacc_run(c, "interp", 1, &acc, &out);
  if (*rc == LACC_OK) {
    lacc_array_get_i(c, out, 0, 0, &v);
    lacc_array_release(out);
  }
  return v;
}

/* let inc = (+) 1 in let nine = let three = inc 2 in (*) three three in (-) (inc nine) nine */
static void test_seed_example(void) {
  lacc_ctx *c = lacc_ctx_new();
  lacc_node *one = ci(c, "i32", 1), *two = ci(c, "i32", 2);
  lacc_node *three = op2(c, "add", two, one);
  lacc_node *nine = op2(c, "mul", three, three);
  lacc_node *ten = op2(c, "add", nine, one);
  lacc_node *res = op2(c, "sub", ten, nine);
  lacc_node *u = unit(c, res);
  lacc_stats st;
  char *text = lacc_explain(c, 1, &u, &st);
  check(text != NULL && st.lets == 3, "seed example has three lets");
  lacc_string_free(text);
  int rc;
  check(run_i(c, u, &rc) == 1 && rc == LACC_OK, "seed example evaluates to 1");
  lacc_node *all[] = { one, two, three, nine, ten, res, u };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  lacc_ctx_release(c);
}

/* x = x + x, 60 times, inside a lambda: linear with sharing, 2^60 without. */
static void test_chain(void) {
  lacc_ctx *c = lacc_ctx_new();
  lacc_node *x = lacc_exp_var(c, "i64", "test");
  lacc_node *cur = x;
  lacc_node_retain(cur);
  for (int i = 0; i < 60; i++) {
    lacc_node *next = op2(c, "add", cur, cur);
    lacc_node_release(cur);
    cur = next;
  }
  lacc_node *f = lacc_lam(c, 1, &x, cur, "test");
  int64_t ext = 3;
  lacc_array *a = lacc_array_new(c, "i64", 1, &ext);
  for (int i = 0; i < 3; i++) lacc_array_set_i(c, a, 0, i, i + 1);
  lacc_node *use = lacc_acc_use(c, a, "tags.c:7");
  lacc_node *margs[2] = { f, use };
  lacc_node *m = lacc_acc_op(c, "map", 2, margs, "test");
  clock_t t0 = clock();
  lacc_stats st;
  char *text = lacc_explain(c, 1, &m, &st);
  lacc_array *out = NULL;
  int rc = lacc_run(c, "interp", 1, &m, &out);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  check(text != NULL && st.lets == 59, "60 self-additions give 59 lets (the last sum is used once)");
  check(rc == LACC_OK && secs < 1.0, "60 self-additions run in well under a second");
  int64_t v = 0;
  if (out != NULL) lacc_array_get_i(c, out, 0, 2, &v);
  check(v == (int64_t)(3ULL << 60), "3 * 2^60");
  lacc_string_free(text);
  lacc_array_release(out);
  lacc_array_release(a);
  lacc_node *all[] = { x, cur, f, use, m };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  lacc_ctx_release(c);
}

static lacc_array *vec_i64(lacc_ctx *c, int64_t a, int64_t b, int64_t d) {
  int64_t ext = 3;
  lacc_array *v = lacc_array_new(c, "i64", 1, &ext);
  lacc_array_set_i(c, v, 0, 0, a);
  lacc_array_set_i(c, v, 0, 1, b);
  lacc_array_set_i(c, v, 0, 2, d);
  return v;
}

/* The elements of program p run on the cpu backend, into got[3]: whether they are a, b, d. */
static int gives(lacc_ctx *c, lacc_node *p, int64_t a, int64_t b, int64_t d) {
  lacc_array *out = NULL;
  int64_t got[3] = { 0, 0, 0 };
  int rc = p != NULL ? lacc_run(c, "cpu", 1, &p, &out) : -1;
  if (rc != LACC_OK) printf("run failed: %s\n", p != NULL ? lacc_errmsg(c) : "no program");
  for (int i = 0; rc == LACC_OK && i < 3; i++) lacc_array_get_i(c, out, 0, i, &got[i]);
  lacc_array_release(out);
  return rc == LACC_OK && got[0] == a && got[1] == b && got[2] == d;
}

static lacc_node *zip_op(lacc_ctx *c, const char *op, lacc_node *xs, lacc_node *ys) {
  lacc_node *u = lacc_exp_var(c, "i64", "test"), *v = lacc_exp_var(c, "i64", "test");
  lacc_node *body = op2(c, op, u, v), *ps[2] = { u, v };
  lacc_node *f = lacc_lam(c, 2, ps, body, "test");
  lacc_node *args[3] = { f, xs, ys };
  lacc_node *z = lacc_acc_op(c, "map", 3, args, "test");
  lacc_node *all[] = { u, v, body, f };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  return z;
}

/* lacc_acc_rebind: a program over other arrays and programs, the original unchanged. */
static void test_rebind(void) {
  lacc_ctx *c = lacc_ctx_new();
  lacc_array *a = vec_i64(c, 1, 2, 3), *b = vec_i64(c, 10, 20, 30), *e = vec_i64(c, 5, 5, 5);
  int64_t one = 1;
  lacc_array *f = lacc_array_new(c, "f64", 1, &one);
  lacc_node *ua = lacc_acc_use(c, a, "test"), *ub = lacc_acc_use(c, b, "test");
  lacc_node *ue = lacc_acc_use(c, e, "test");
  lacc_node *twice = zip_op(c, "add", ua, ua);               /* a + a, one use of a */
  lacc_node *p = zip_op(c, "mul", twice, ue);               /* (a + a) * e */
  lacc_node *q = lacc_acc_rebind(c, p, 1, &a, &b, 0, NULL, NULL);
  check(gives(c, q, 100, 200, 300), "rebind: (a + a) * e over b instead of a");
  check(gives(c, p, 10, 20, 30), "rebind: the original program still reads a");
  lacc_node *d = zip_op(c, "sub", ua, ub);                  /* a - b */
  lacc_array *from[2] = { a, b }, *to[2] = { b, a };
  lacc_node *swapped = lacc_acc_rebind(c, d, 2, from, to, 0, NULL, NULL);
  check(gives(c, swapped, 9, 18, 27), "rebind: a and b swapped at once (b - a, not a - a)");
  lacc_node *tw_b = zip_op(c, "add", ub, ub);               /* b + b, a program */
  lacc_node *pn = lacc_acc_rebind(c, p, 0, NULL, NULL, 1, &twice, &tw_b);
  check(gives(c, pn, 100, 200, 300), "rebind: the program a + a replaced by b + b");
  lacc_node *both = lacc_acc_rebind(c, d, 1, &b, &e, 1, &ua, &twice);   /* (a + a) - e */
  check(gives(c, both, -3, -1, 1), "rebind: an array and a program at once");
  lacc_node *same = lacc_acc_rebind(c, p, 1, &b, &e, 0, NULL, NULL);
  check(same == NULL && strstr(lacc_errmsg(c), "not read by the graph") != NULL,
        "rebind: an array the program does not read is an error (it was read some other way)");
  lacc_node *s2 = zip_op(c, "add", twice, ua);              /* (a + a) + a */
  lacc_node *kept = lacc_acc_rebind(c, s2, 1, &a, &b, 1, &twice, &twice);
  check(gives(c, kept, 12, 24, 36), "rebind: a program kept whole is not walked ((a + a) + b)");
  lacc_node *bad = lacc_acc_rebind(c, p, 1, &a, &f, 0, NULL, NULL);
  check(bad == NULL && strstr(lacc_errmsg(c), "differ in element type or rank") != NULL,
        "rebind: an array of another type is an error");
  lacc_node *badn = lacc_acc_rebind(c, p, 0, NULL, NULL, 1, &twice, &ua);
  check(badn != NULL && gives(c, badn, 5, 10, 15), "rebind: a program replaced by a use");
  lacc_node *all[] = { ua, ub, ue, twice, p, q, d, swapped, tw_b, pn, both, same, s2, kept, badn };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (all[i] != NULL) lacc_node_release(all[i]);
  lacc_array *arrs[] = { a, b, e, f };
  for (size_t i = 0; i < sizeof arrs / sizeof *arrs; i++) lacc_array_release(arrs[i]);
  lacc_ctx_release(c);
}

/* A discarded array's memory goes at once though a program holds it; the program can no
 * longer run, but a rebinding still finds the array in it (lacc.mpi's loop turns). */
static void test_discard(void) {
  lacc_ctx *c = lacc_ctx_new();
  lacc_array *a = vec_i64(c, 1, 2, 3), *b = vec_i64(c, 10, 20, 30);
  lacc_node *ua = lacc_acc_use(c, a, "test");
  lacc_node *p = zip_op(c, "add", ua, ua);                  /* a + a */
  int64_t held = lacc_ctx_bytes(c), v = 0;
  check(lacc_array_discard(c, a) == LACC_OK, "discard: an array a program holds");
  check(lacc_ctx_bytes(c) == held - 24, "discard: its 24 bytes go at once");
  check(lacc_array_discard(c, a) == LACC_OK, "discard: twice is once");
  check(lacc_array_get_i(c, a, 0, 0, &v) != LACC_OK && strstr(lacc_errmsg(c), "released") != NULL,
        "discard: its elements cannot be read");
  check(lacc_array_set_i(c, a, 0, 0, 5) != LACC_OK && strstr(lacc_errmsg(c), "released") != NULL,
        "discard: nor written");
  check(lacc_array_extent(a, 0) == 3 && strcmp(lacc_array_type(a), "i64") == 0,
        "discard: its type and shape stay");
  lacc_array *out = NULL;
  check(lacc_run(c, "cpu", 1, &p, &out) != LACC_OK && strstr(lacc_errmsg(c), "released") != NULL,
        "discard: a program reading it does not run");
  check(lacc_run(c, "interp", 1, &p, &out) != LACC_OK, "discard: nor on the interpreter");
  lacc_node *q = lacc_acc_rebind(c, p, 1, &a, &b, 0, NULL, NULL);
  check(gives(c, q, 20, 40, 60), "discard: the program rebound to another array runs");
  int64_t two = 2;   /* a bool array whose buffer was handed out: its tags are not checked */
  lacc_array *flags = lacc_array_new(c, "bool", 1, &two);
  check(lacc_array_leaf_data(flags, 0) != NULL, "discard: a bool array's buffer handed out");
  lacc_node *uf = lacc_acc_use(c, flags, "test"), *x = lacc_exp_var(c, "bool", "test");
  lacc_node *nx = lacc_exp_op(c, "lnot", 1, &x, "test"), *fn = lacc_lam(c, 1, &x, nx, "test");
  lacc_node *margs[2] = { fn, uf }, *negated = lacc_acc_op(c, "map", 2, margs, "test");
  check(lacc_array_discard(c, flags) == LACC_OK && lacc_run(c, "cpu", 1, &negated, &out) != LACC_OK &&
        strstr(lacc_errmsg(c), "released") != NULL, "discard: an exposed array's run refused, no read");
  lacc_node *made[] = { uf, x, nx, fn, negated };
  for (size_t i = 0; i < sizeof made / sizeof *made; i++) lacc_node_release(made[i]);
  lacc_array_release(flags);
  lacc_node_release(q);
  lacc_node_release(p);
  lacc_node_release(ua);
  lacc_array_release(a);
  lacc_array_release(b);
  check(lacc_ctx_bytes(c) == 0, "discard: nothing held once all are released");
  lacc_ctx_release(c);
}

/* A loop of two arrays through the C API: awhile(a, k, x, y, cond, body_x, body_y) adds
 * k to each element of x and one to k while k < 3; awhile(loop, 1) is the counter. */
static void test_awhile_arrays(void) {
  lacc_ctx *c = lacc_ctx_new();
  int64_t ext = 2;
  lacc_array *a = lacc_array_new(c, "i64", 1, &ext);
  lacc_array_set_i(c, a, 0, 0, 10);
  lacc_array_set_i(c, a, 0, 1, 20);
  lacc_node *k0 = ci(c, "i64", 0), *k1 = ci(c, "i64", 1), *k2 = ci(c, "i64", 2);
  lacc_node *k3 = ci(c, "i64", 3);
  lacc_node *init[2] = { lacc_acc_use(c, a, "test"), unit(c, k0) };
  lacc_node *x = lacc_acc_param(c, 0, "i64", 1, NULL, "test");
  lacc_node *y = lacc_acc_param(c, 0, "i64", 0, NULL, "test");
  lacc_node *unit_ix = lacc_exp_op(c, "tuple", 0, NULL, "test");
  lacc_node *ix[2] = { y, unit_ix };
  lacc_node *now = lacc_exp_op(c, "index", 2, ix, "test");   /* y ! () */
  lacc_node *lt = op2(c, "lt", now, k3), *cond = unit(c, lt);
  lacc_node *e = lacc_exp_var(c, "i64", "test");
  lacc_node *sum = op2(c, "add", e, now), *f = lacc_lam(c, 1, &e, sum, "test");
  lacc_node *margs[2] = { f, x };
  lacc_node *bx = lacc_acc_op(c, "map", 2, margs, "test");
  lacc_node *next = op2(c, "add", now, k1), *by = unit(c, next);
  lacc_node *args[7] = { init[0], init[1], x, y, cond, bx, by };
  lacc_node *loop = lacc_acc_op(c, "awhile", 7, args, "test");
  lacc_node *pick[2] = { loop, k1 }, *bad[2] = { loop, k2 };
  lacc_node *count = loop != NULL ? lacc_acc_op(c, "awhile", 2, pick, "test") : NULL;
  lacc_node *none = loop != NULL ? lacc_acc_op(c, "awhile", 2, bad, "test") : NULL;
  check(loop != NULL && count != NULL, "a loop of two arrays and its second array build");
  check(none == NULL && strstr(lacc_errmsg(c), "index of one of its arrays") != NULL,
        "awhile(loop, 2) of a loop of two arrays is an error");
  lacc_array *a2 = lacc_array_new(c, "i64", 1, &ext);
  lacc_node *rb = loop != NULL ? lacc_acc_rebind(c, loop, 1, &a, &a2, 0, NULL, NULL) : NULL;
  check(loop != NULL && rb == NULL && strstr(lacc_errmsg(c), "rebind: a loop reading") != NULL,
        "a loop is not rebound to other initial arrays (an error: build it anew)");
  lacc_array_release(a2);
  const char *backends[2] = { "interp", "cpu" };
  for (int b = 0; b < 2 && loop != NULL && count != NULL; b++) {
    lacc_node *roots[2] = { loop, count };
    lacc_array *out[2] = { NULL, NULL };
    int rc = lacc_run(c, backends[b], 2, roots, out);
    int64_t v0 = 0, v1 = 0, k = 0;
    if (rc == LACC_OK) {
      lacc_array_get_i(c, out[0], 0, 0, &v0);
      lacc_array_get_i(c, out[0], 0, 1, &v1);
      lacc_array_get_i(c, out[1], 0, 0, &k);
    }
    /* k = 0, 1, 2 added: 10 + 3, 20 + 3 */
    check(rc == LACC_OK && v0 == 13 && v1 == 23 && k == 3, backends[b]);
    lacc_array_release(out[0]);
    lacc_array_release(out[1]);
  }
  lacc_node *all[] = { k0, k1, k2, k3, init[0], init[1], x, y, unit_ix, now, lt, cond, e, sum, f,
                       bx, next, by, loop, count, none };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (all[i] != NULL) lacc_node_release(all[i]);
  lacc_array_release(a);
  lacc_ctx_release(c);
}

static void test_type_error(void) {
  lacc_ctx *c = lacc_ctx_new();
  lacc_node *a = ci(c, "i32", 1);
  lacc_node *b = lacc_exp_const_f(c, "f32", 1.5, "test");
  lacc_node *bad = op2(c, "add", a, b);
  check(bad == NULL && lacc_errcode(c) == LACC_ERR_TYPE, "add of i32 and f32 is a type error");
  check(strstr(lacc_errmsg(c), "add") && strstr(lacc_errmsg(c), "i32") &&
            strstr(lacc_errmsg(c), "f32") && strstr(lacc_errmsg(c), "test"),
        "type error names operation, types and place");
  lacc_node_release(a);
  lacc_node_release(b);
  lacc_ctx_release(c);
}

static void test_divzero(void) {
  lacc_ctx *c = lacc_ctx_new();
  lacc_node *a = ci(c, "i32", 7), *z = ci(c, "i32", 0);
  lacc_node *d = op2(c, "idiv", a, z);
  lacc_node *u = unit(c, d);
  int rc;
  run_i(c, u, &rc);
  check(rc == LACC_ERR_DIVZERO && strstr(lacc_errmsg(c), "division by zero"),
        "integer division by zero is reported");
  lacc_node *m = ci(c, "i32", INT32_MIN), *neg = ci(c, "i32", -1);
  lacc_node *q = op2(c, "idiv", m, neg), *uq = unit(c, q);
  check(run_i(c, uq, &rc) == INT32_MIN && rc == LACC_OK, "INT32_MIN // -1 wraps");
  lacc_node *all[] = { a, z, d, u, m, neg, q, uq };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  lacc_ctx_release(c);
}

/* An image written by lacc_array_write_png and read back with libpng: every pixel, in
 * RGB (a tuple of u8) and grey (f32, clamped and rounded). */
static void test_png(void) {
  lacc_ctx *c = lacc_ctx_new();
  int64_t ext[2] = { 3, 5 };
  lacc_array *rgb = lacc_array_new(c, "(u8,u8,u8)", 2, ext);
  lacc_array *grey = lacc_array_new(c, "f32", 2, ext);
  const double levels[5] = { -1.0, 0.0, 0.5, 0.999, 7.0 };   /* 0, 0, 128, 255, 255 */
  for (int i = 0; i < 15; i++) {
    for (int ch = 0; ch < 3; ch++) lacc_array_set_i(c, rgb, ch, i, (i * 17 + ch * 80) % 256);
    lacc_array_set_f(c, grey, 0, i, levels[i % 5]);
  }
  char path[64];
  snprintf(path, sizeof path, "/tmp/lacc-test-%ld.png", (long)clock());
  int ok = 1;
  for (int pass = 0; pass < 2; pass++) {
    ok = ok && lacc_array_write_png(c, pass ? grey : rgb, path) == LACC_OK;
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    ok = ok && png_image_begin_read_from_file(&img, path);
    img.format = pass ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    unsigned char buf[3 * 15];
    ok = ok && img.width == 5 && img.height == 3 && png_image_finish_read(&img, NULL, buf, 0, NULL);
    for (int i = 0; ok && i < 15; i++) {
      if (pass) {
        const unsigned char want[5] = { 0, 0, 128, 255, 255 };
        ok = buf[i] == want[i % 5];
      } else {
        for (int ch = 0; ch < 3; ch++) ok = ok && buf[3 * i + ch] == (i * 17 + ch * 80) % 256;
      }
    }
    png_image_free(&img);
  }
  remove(path);
  check(ok, "write_png: RGB and grey images read back pixel for pixel");
  lacc_array *bad = lacc_array_new(c, "i32", 2, ext);
  check(lacc_array_write_png(c, bad, path) == LACC_ERR_TYPE, "write_png refuses i32 elements");
  lacc_array_release(rgb);
  lacc_array_release(grey);
  lacc_array_release(bad);
  lacc_ctx_release(c);
}

/* Two contexts stand for two Lua states: nothing of one may be used by the other, and
 * each refusal is an error in the context that was asked, which keeps working. */
static void test_other_context(void) {
  lacc_ctx *a = lacc_ctx_new(), *b = lacc_ctx_new();
  int64_t ext[1] = { 4 };
  lacc_array *arr = lacc_array_new(a, "i32", 1, ext);
  for (int i = 0; i < 4; i++) lacc_array_set_i(a, arr, 0, i, i + 1);
  lacc_node *u = lacc_acc_use(b, arr, "test");
  check(u == NULL && lacc_errcode(b) == LACC_ERR_ARG && strstr(lacc_errmsg(b), "another"),
        "use of another context's array is an error");
  int64_t v = 0;
  check(lacc_array_get_i(b, arr, 0, 0, &v) == LACC_ERR_ARG, "get from another context's array");
  check(lacc_array_set_i(b, arr, 0, 0, 9) == LACC_ERR_ARG, "set of another context's array");
  check(lacc_array_write_png(b, arr, "/tmp/lacc-never.png") == LACC_ERR_ARG,
        "write_png of another context's array");
  lacc_node *ka = ci(a, "i32", 1), *kb = ci(b, "i32", 2);
  lacc_node *mixed = op2(b, "add", kb, ka);
  check(mixed == NULL && strstr(lacc_errmsg(b), "another"), "an operand of another context");
  lacc_node *ua = unit(a, ka);
  lacc_array *out = NULL;
  check(lacc_run(b, "interp", 1, &ua, &out) == LACC_ERR_ARG && out == NULL,
        "running another context's program");
  lacc_node *p0 = lacc_acc_param(b, 0, "i32", 1, NULL, "test");
  lacc_program *prog = lacc_program_new(b, "interp", 1, 1, &p0);   /* the identity */
  check(prog != NULL && lacc_program_run(b, prog, 1, &arr, &out) == LACC_ERR_ARG,
        "a compiled program given another context's array");
  lacc_array *mine = lacc_array_new(b, "i32", 1, ext);
  for (int i = 0; mine != NULL && i < 4; i++) lacc_array_set_i(b, mine, 0, i, 10);
  check(prog != NULL && lacc_program_run(b, prog, 1, &mine, &out) == LACC_OK &&
            lacc_array_get_i(b, out, 0, 3, &v) == LACC_OK && v == 10,
        "the context still runs programs after the refusals");
  if (out != NULL) lacc_array_release(out);
  check(lacc_array_get_i(a, arr, 0, 3, &v) == LACC_OK && v == 4, "the owner still reads its array");
  lacc_program_release(prog);
  lacc_node *all[] = { ka, kb, ua, p0 };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  lacc_array_release(mine);
  lacc_array_release(arr);
  lacc_ctx_release(a);
  lacc_ctx_release(b);
}

/* ---- runs hold what they use (issue 25) */

typedef struct {
  lacc_ctx *c;
  lacc_array *arg, *junk;
  lacc_program *prog;
  int64_t n;
  int calls, set_rc;
  void *leaf;
  lacc_view during;             /* the argument's view record in the first progress call */
} run_probe;

/* The first progress call drops the host's references to the running program and its
 * argument, tries to write the argument, and allocates an array of the argument's size
 * (freed large buffers are recycled: it would get the argument's memory) full of -1. */
static void drop_during_run(void *ud, double fraction) {
  (void)fraction;
  run_probe *h = ud;
  if (h->calls++ > 0) return;
  h->during = *lacc_array_view(h->arg);
  h->set_rc = lacc_array_set_f(h->c, h->arg, 0, 0, 5);
  h->leaf = lacc_array_leaf_data(h->arg, 0);
  lacc_array_release(h->arg);
  h->arg = NULL;
  lacc_program_release(h->prog);
  h->prog = NULL;
  h->junk = lacc_array_new(h->c, "f64", 1, &h->n);
  double *d = h->junk != NULL ? lacc_array_leaf_data(h->junk, 0) : NULL;
  for (int64_t i = 0; d != NULL && i < h->n; i++) d[i] = -1;
}

static void test_run_holds_args(void) {
  lacc_ctx *c = lacc_ctx_new();
  run_probe h = { .c = c, .n = 1 << 20 };
  h.arg = lacc_array_new(c, "f64", 1, &h.n);
  double *d = lacc_array_leaf_data(h.arg, 0);
  for (int64_t i = 0; d != NULL && i < h.n; i++) d[i] = (double)i;
  lacc_node *p0 = lacc_acc_param(c, 0, "f64", 1, NULL, "test");
  lacc_node *x = lacc_exp_var(c, "f64", "test");
  lacc_node *two = lacc_exp_const_f(c, "f64", 2, "test");
  lacc_node *body = op2(c, "mul", x, two);
  lacc_node *f = lacc_lam(c, 1, &x, body, "test");
  lacc_node *margs[2] = { f, p0 };
  lacc_node *m = lacc_acc_op(c, "map", 2, margs, "test");
  h.prog = lacc_program_new(c, "cpu", 1, 1, &m);
  lacc_set_progress(c, drop_during_run, &h, 0);
  lacc_array *out = NULL, *arg = h.arg;
  const lacc_view *v = lacc_array_view(h.arg);
  check(v != NULL && v->data == d && v->size == h.n && v->cols == h.n && v->rank == 1 &&
        v->scalar == LACC_F64 && v->readable && v->writable, "a new array's view");
  int rc = h.prog != NULL ? lacc_program_run(c, h.prog, 1, &arg, &out) : -1;
  lacc_set_progress(c, NULL, NULL, 0);
  check(rc == LACC_OK && h.calls > 0, "a run with a progress callback that drops its arguments");
  check(h.set_rc == LACC_ERR_ARG && h.leaf == NULL,
        "writes to a running program's argument are refused");
  int ok = out != NULL;
  for (int64_t i = 0; ok && i < h.n; i += 4099) {
    double v = 0;
    ok = lacc_array_get_f(c, out, 0, i, &v) == LACC_OK && v == 2.0 * (double)i;
  }
  check(ok, "the run reads its argument as it was, though the host dropped it");
  check(h.during.readable && !h.during.writable, "a running program's argument: read only");
  v = out != NULL ? lacc_array_view(out) : NULL;
  check(v != NULL && v->readable && v->writable, "a cpu run's result may be written at once");
  check(lacc_array_view(h.junk) != NULL && lacc_array_view(h.junk)->writable,
        "an array made during a run may be written");
  lacc_array *pairs = lacc_array_new(c, "(i32,f64)", 1, &h.n);
  check(pairs != NULL && lacc_array_view(pairs) == NULL, "a tuple array has no view");
  lacc_array_release(pairs);
  lacc_array_release(out);
  lacc_array_release(h.junk);
  lacc_array_release(h.arg);
  lacc_program_release(h.prog);
  lacc_node *all[] = { p0, x, two, body, f, m };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  check(lacc_ctx_bytes(c) == 0, "the argument's memory goes when the run ends");
  lacc_ctx_release(c);
}

/* map (+ k) over t (its function's nodes released, t kept) */
static lacc_node *map_added(lacc_ctx *c, lacc_node *t, int64_t k) {
  lacc_node *x = lacc_exp_var(c, "i64", "test");
  lacc_node *kk = ci(c, "i64", k);
  lacc_node *body = op2(c, "add", x, kk);
  lacc_node *f = lacc_lam(c, 1, &x, body, "test");
  lacc_node *margs[2] = { f, t };
  lacc_node *m = lacc_acc_op(c, "map", 2, margs, "test:map");
  lacc_node *all[] = { x, kk, body, f };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  return m;
}

/* n maps (+ k) in a chain over a use of a, run on the cpu backend and released: the
 * program of its shape stays among the context's kept ones; element i (0-based, a being
 * 0, 1, 2, ...) is i + n k. */
static int run_added(lacc_ctx *c, lacc_array *a, int n, int64_t k) {
  lacc_node *t = lacc_acc_use(c, a, "test:use");
  for (int i = 0; t != NULL && i < n; i++) {
    lacc_node *m = map_added(c, t, k);
    lacc_node_release(t);
    t = m;
  }
  lacc_array *out = NULL;
  int ok = t != NULL && lacc_run(c, "cpu", 1, &t, &out) == LACC_OK;
  const lacc_view *v = ok ? lacc_array_view(out) : NULL;
  const lacc_view *va = lacc_array_view(a);
  ok = v != NULL && va != NULL && v->size == va->size;
  for (int64_t i = 0; ok && i < v->size; i++) ok = ((const int64_t *)v->data)[i] == i + n * k;
  lacc_array_release(out);
  lacc_node_release(t);
  return ok;
}

static lacc_array *iota(lacc_ctx *c, int64_t n) {
  lacc_array *a = lacc_array_new(c, "i64", 1, &n);
  int64_t *d = a != NULL ? lacc_array_leaf_data(a, 0) : NULL;
  for (int64_t i = 0; d != NULL && i < n; i++) d[i] = i;
  return a;
}

/* Programs of one shape kept after they were freed (run.c, memo.c): they keep their
 * plans, not their arrays; more shapes than are kept evict the oldest; the context goes
 * with its last handle though they remain (AddressSanitizer's leak check: make check-asan). */
static void test_kept_shapes(void) {
  lacc_ctx *c = lacc_ctx_new();
  lacc_array *big = iota(c, 1 << 20);
  check(run_added(c, big, 1, 7), "a program over a use, run and freed");
  lacc_array_release(big);
  check(lacc_ctx_bytes(c) == 0, "a kept program holds none of its arrays");
  int ok = 1;
  for (int64_t n = 0; n < 5; n++) {
    lacc_array *a = iota(c, n * 3 + 1);
    ok = ok && run_added(c, a, 1, 7);
    lacc_array_release(a);
  }
  check(ok, "programs of a kept shape run over their own arrays and extents");
  ok = 1;
  for (int64_t k = 0; k < 80; k++) {   /* more shapes than are kept: the oldest go */
    lacc_array *a = iota(c, 5 + k % 3);
    ok = ok && run_added(c, a, 1, k) && run_added(c, a, 1, k);
    lacc_array_release(a);
  }
  check(ok, "many shapes, each run twice");
  check(lacc_ctx_bytes(c) == 0, "no array kept with them");
  lacc_ctx_release(c);
  /* programs of many nodes: the kept ones' memory bound (TUNE_MEMO_KEEP_BYTES) evicts
   * them before their count does; each still right when run again */
  c = lacc_ctx_new();
  ok = 1;
  lacc_array *three = iota(c, 3);
  for (int round = 0; round < 2; round++)
    for (int64_t k = 0; k < 12; k++) ok = ok && run_added(c, three, 600, k);
  lacc_array_release(three);
  check(ok, "programs of 600 maps each, more than the kept memory holds");
  lacc_ctx_release(c);
  /* the host lets go of the context before its last program: nothing is kept then */
  c = lacc_ctx_new();
  lacc_array *a = iota(c, 9);
  lacc_node *u = lacc_acc_use(c, a, "test:use");
  lacc_node *x = lacc_exp_var(c, "i64", "test");
  lacc_node *body = op2(c, "mul", x, x);
  lacc_node *f = lacc_lam(c, 1, &x, body, "test");
  lacc_node *margs[2] = { f, u };
  lacc_node *m = lacc_acc_op(c, "map", 2, margs, "test:map");
  lacc_program *p = lacc_program_new(c, "cpu", 0, 1, &m);
  lacc_array *out = NULL;
  int rc = p != NULL ? lacc_program_run(c, p, 0, NULL, &out) : -1;
  int64_t v = 0;
  check(rc == LACC_OK && lacc_array_get_i(c, out, 0, 8, &v) == LACC_OK && v == 64,
        "a program run, then its context released first");
  lacc_node *all[] = { u, x, body, f, m };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  lacc_array_release(out);
  lacc_array_release(a);
  lacc_ctx_release(c);
  lacc_program_release(p);   /* the context goes with it (the leak check) */
}

#define SUM3 "S<A(i32)|B(i32,i32)|C>"

/* map (\s -> case s of A x -> x; B x y -> x + y; C -> 100) */
static lacc_node *sum3_total(lacc_ctx *c, lacc_node *xs, lacc_node **keep) {
  lacc_node *x = lacc_exp_var(c, "i32", "test"), *y = lacc_exp_var(c, "i32", "test");
  lacc_node *x2 = lacc_exp_var(c, "i32", "test");
  lacc_node *fa = lacc_lam(c, 1, &x, x, "test");
  lacc_node *xy[2] = { x2, y };
  lacc_node *add = op2(c, "add", x2, y);
  lacc_node *fb = lacc_lam(c, 2, xy, add, "test");
  lacc_node *hundred = ci(c, "i32", 100);
  lacc_node *fc = lacc_lam(c, 0, NULL, hundred, "test");
  lacc_node *s = lacc_exp_var(c, SUM3, "test");
  lacc_node *cargs[4] = { s, fa, fb, fc };
  lacc_node *cs = lacc_exp_op(c, "case", 4, cargs, "test");
  lacc_node *f = lacc_lam(c, 1, &s, cs, "test");
  lacc_node *margs[2] = { f, xs };
  lacc_node *m = lacc_acc_op(c, "map", 2, margs, "test");
  lacc_node *made[] = { x, y, x2, fa, add, fb, hundred, fc, s, cs, f };
  for (size_t i = 0; i < sizeof made / sizeof *made; i++) keep[i] = made[i];
  return m;
}

static void test_bad_tags(void) {
  lacc_ctx *c = lacc_ctx_new();
  int64_t n = 3;
  const char *layouts[] = { "unboxed", "rtu", "compact" };
  for (int l = 0; l < 3; l++) {
    lacc_set_layout(c, layouts[l]);
    lacc_array *a = lacc_array_new(c, SUM3, 1, &n);
    check(a != NULL && lacc_array_set_i(c, a, 0, 1, 3) == LACC_ERR_ARG &&
              strstr(lacc_errmsg(c), "not a constructor index"),
          "set_i of a tag past the constructors");
    check(lacc_array_set_i(c, a, 0, 1, -1) == LACC_ERR_ARG, "set_i of a negative tag");
    check(lacc_array_set_f(c, a, 0, 1, 1.5) == LACC_ERR_ARG, "set_f of a fractional tag");
    int64_t v = -1;
    check(lacc_array_set_i(c, a, 0, 1, 2) == LACC_OK &&
              lacc_array_get_i(c, a, 0, 1, &v) == LACC_OK && v == 2, "set_i of a valid tag");
    lacc_array_release(a);
  }
  /* unboxed hands out the tag buffer: a bad tag written there is found before a run */
  lacc_set_layout(c, "unboxed");
  lacc_array *a = lacc_array_new(c, SUM3, 1, &n);
  for (int64_t i = 0; a != NULL && i < n; i++) lacc_array_set_i(c, a, 0, i, 2);
  uint8_t *tags = a != NULL ? lacc_array_leaf_data(a, 0) : NULL;
  check(tags != NULL, "the unboxed tag buffer is handed out");
  if (tags != NULL) tags[1] = 9;
  lacc_node *keep[2][11];
  lacc_node *use = lacc_acc_use(c, a, "tags.c:7");
  lacc_node *m = sum3_total(c, use, keep[0]);
  lacc_node *p0 = lacc_acc_param(c, 0, SUM3, 1, "unboxed", "test");
  lacc_node *mp = sum3_total(c, p0, keep[1]);
  const char *backends[] = { "interp", "cpu" };
  for (int b = 0; b < 2; b++) {
    lacc_array *out = NULL;
    int rc = lacc_run(c, backends[b], 1, &m, &out);
    check(rc == LACC_ERR_ARG && out == NULL && strstr(lacc_errmsg(c), "constructor index 9") &&
              strstr(lacc_errmsg(c), "tags.c:7"), "a run of a used array with a bad raw tag");
    lacc_program *p = lacc_program_new(c, backends[b], 1, 1, &mp);
    rc = p != NULL ? lacc_program_run(c, p, 1, &a, &out) : -1;
    check(rc == LACC_ERR_ARG && strstr(lacc_errmsg(c), "argument 1"),
          "a compiled program given an argument with a bad raw tag");
    if (tags != NULL) tags[1] = 1;   /* B 0 0 */
    int64_t v = -1;
    rc = p != NULL ? lacc_program_run(c, p, 1, &a, &out) : -1;
    check(rc == LACC_OK && lacc_array_get_i(c, out, 0, 0, &v) == LACC_OK && v == 100,
          "the same array runs once its tags are right");
    if (rc == LACC_OK) lacc_array_release(out);
    if (tags != NULL) tags[1] = 9;
    lacc_program_release(p);
  }
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 11; i++) lacc_node_release(keep[k][i]);
  lacc_node *all[] = { use, m, p0, mp };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  lacc_array_release(a);
  lacc_ctx_release(c);
}

/* Types are interned in a hash table: equal signatures give the same type, different
 * ones different types, and the 20,000th new type costs what the first did. */
static double make_types(lacc_ctx *c, int from, int to, const char **sig0) {
  clock_t t0 = clock();
  for (int i = from; i < to; i++) {
    char sig[64];
    snprintf(sig, sizeof sig, "T%d<A|B(i32,f%d)>", i, i % 2 ? 32 : 64);
    lacc_node *v = lacc_exp_var(c, sig, "test");
    if (v == NULL) return -1;
    if (i == 0) *sig0 = lacc_node_type(v);
    lacc_node_release(v);
  }
  return (double)(clock() - t0) / CLOCKS_PER_SEC;
}

static void test_interning(void) {
  lacc_ctx *c = lacc_ctx_new();
  const char *sig0 = NULL;
  double first = make_types(c, 0, 10000, &sig0), second = make_types(c, 10000, 20000, &sig0);
  check(first >= 0 && second >= 0, "20,000 distinct types");
#ifdef __SANITIZE_ADDRESS__
  /* AddressSanitizer's allocator gets slower as memory is held (its quarantine): only a
   * cost that grows with the number of types (a list scanned per type) is caught here */
  double slack = 10, most = 20;
#else
  double slack = 3, most = 2;
#endif
  if (!(second < slack * first + 0.05 && first < most))
    printf("  types: first 10,000 in %.3f s, next 10,000 in %.3f s\n", first, second);
  check(second < slack * first + 0.05 && first < most,
        "a new type costs the same however many exist");
  lacc_node *a = lacc_exp_var(c, "T0< A | B( i32 , f64 ) >", "test");
  lacc_node *b = lacc_exp_var(c, "T1<A|B(i32,f64)>", "test");
  check(a != NULL && lacc_node_type(a) == sig0, "an equal type is the same type");
  check(b != NULL && lacc_node_type(b) != sig0 && strcmp(lacc_node_type(b), sig0) != 0,
        "a different type is a different type");
  lacc_node_release(a);
  lacc_node_release(b);
  lacc_ctx_release(c);
}

/* ---- the hash that seals cache files: FIPS 180-4 and RFC 4231 test vectors */

static int hex_is(const unsigned char *d, const char *hex) {
  char got[65];
  for (int i = 0; i < 32; i++) snprintf(got + 2 * i, 3, "%02x", d[i]);
  return strcmp(got, hex) == 0;
}

static void test_sha256(void) {
  unsigned char d[32];
  sha256_ctx h;
  const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  sha256_init(&h);
  sha256_update(&h, "abc", 3);
  sha256_final(&h, d);
  check(hex_is(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "sha256 abc");
  sha256_init(&h);
  sha256_final(&h, d);
  check(hex_is(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"), "sha256 empty");
  sha256_init(&h);
  for (size_t i = 0; i < strlen(m); i++) sha256_update(&h, m + i, 1);   /* byte by byte */
  sha256_final(&h, d);
  check(hex_is(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"), "sha256 448 bits");
  unsigned char k1[20], k6[131];
  memset(k1, 0x0b, sizeof k1);
  memset(k6, 0xaa, sizeof k6);
  const void *parts[2] = { "Hi ", "There" };
  size_t lens[2] = { 3, 5 };
  hmac_sha256(k1, sizeof k1, 2, parts, lens, d);
  check(hex_is(d, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"), "hmac case 1");
  const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
  parts[0] = m6;
  lens[0] = strlen(m6);
  hmac_sha256(k6, sizeof k6, 1, parts, lens, d);
  check(hex_is(d, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"), "hmac case 6");
  /* whole blocks straight from the input and pieces across blocks, on the rounds this CPU
   * runs (SHA-NI where it has them): the digest Python's hashlib gives these bytes */
  size_t n = 100003;
  unsigned char *buf = malloc(n);
  check(buf != NULL, "sha256 buffer");
  if (buf == NULL) return;
  for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(((uint64_t)i * 2654435761u) >> 13);
  static const size_t steps[] = { 1, 63, 64, 65, 1000, 4096, 7, 128 };
  sha256_init(&h);
  for (size_t at = 0, k = 0; at < n; k++) {
    size_t step = steps[k % (sizeof steps / sizeof *steps)];
    if (step > n - at) step = n - at;
    sha256_update(&h, buf + at, step);
    at += step;
  }
  sha256_final(&h, d);
  check(hex_is(d, "c06f53971c7943fafd45b744804b7c7480642a5f81fdac2c2400537dcbe9c962"),
        "sha256 of 100003 bytes in pieces");
  /* the rounds in use against the portable ones, state for state */
  sha256_init(&h);
  sha256_update(&h, buf, 64 * 7);
  sha256_ctx p;
  sha256_init(&p);
  sha256_portable_blocks(p.h, buf, 7);
  char what[80];
  snprintf(what, sizeof what, "sha256 rounds (%s) agree with the portable ones", sha256_rounds_name());
  check(memcmp(h.h, p.h, sizeof h.h) == 0, what);
  printf("sha256: %s rounds\n", sha256_rounds_name());
  sha256_final(&h, d);
  check(hex_is(d, "ada33cdd084a90ecfd7517b6b8e05fa9bd9a48df6886d3fab1f643d88fc001e7"), "sha256 of 7 blocks");
  free(buf);
}

/* text_put's own conversions (%d %i %u %s %c %%, l, ll, z) against snprintf's, and the
 * formats it leaves to vsnprintf */
static void test_text(void) {
  text t = { 0 };
  char want[512];
  const char *s = "v12 = v3 + v4;";
  text_put(&t, "%d|%i|%u|%ld|%lld|%llu|%zu|%s|%c|%%|%d", INT_MIN, INT_MAX, UINT_MAX, LONG_MIN,
           LLONG_MIN, ULLONG_MAX, (size_t)0, s, 'x', 0);
  snprintf(want, sizeof want, "%d|%i|%u|%ld|%lld|%llu|%zu|%s|%c|%%|%d", INT_MIN, INT_MAX, UINT_MAX,
           LONG_MIN, LLONG_MIN, ULLONG_MAX, (size_t)0, s, 'x', 0);
  size_t at = t.n;
  check(t.s != NULL && strcmp(t.s, want) == 0, "text_put: the plain conversions as snprintf's");
  text_put(&t, "%5d|%-3s|%x|%.3f|%g|%08.3f|%.2s", 42, "a", 255u, 1.5, 0.1, -2.25, "abc");
  snprintf(want, sizeof want, "%5d|%-3s|%x|%.3f|%g|%08.3f|%.2s", 42, "a", 255u, 1.5, 0.1, -2.25, "abc");
  check(t.s != NULL && strcmp(t.s + at, want) == 0, "text_put: widths, flags, %x and floats by vsnprintf");
  at = t.n;
  text_put(&t, "plain text, no conversion");
  check(t.s != NULL && strcmp(t.s + at, "plain text, no conversion") == 0, "text_put: plain text");
  free(t.s);
}

/* fork() while a background build is under way (LACC_TIER=auto starts one at a program's
 * first run): the child's runs of the program that need the optimised kernels finish (its
 * parent's worker threads are not there), and its exit does not wait for them. The child
 * runs under alarm(60), so a hang fails this test instead of stalling the suite. */
static int64_t fork_program_sum(lacc_ctx *c, lacc_program *p, int64_t n) {
  lacc_array *a = lacc_array_new(c, "i64", 1, &n), *out = NULL;
  if (a == NULL) return -1;
  for (int64_t i = 0; i < n; i++) lacc_array_set_i(c, a, 0, i, i);
  int64_t v = -1;
  if (lacc_program_run(c, p, 1, &a, &out) == LACC_OK) lacc_array_get_i(c, out, 0, 0, &v);
  lacc_array_release(out);
  lacc_array_release(a);
  return v;
}

static void test_fork(void) {
  char dir[] = "/tmp/lacc-forkXXXXXX";
  if (mkdtemp(dir) == NULL) {
    check(0, "fork: a cache directory");
    return;
  }
  lacc_ctx *c = lacc_ctx_new();
  int ok = lacc_config_set(c, "tier", "auto") == LACC_OK && lacc_config_set(c, "cache", dir) == LACC_OK;
  lacc_node *x = lacc_exp_var(c, "i64", "test"), *three = ci(c, "i64", 3), *one = ci(c, "i64", 1);
  lacc_node *x3 = op2(c, "mul", x, three), *x31 = op2(c, "add", x3, one);
  lacc_node *f = lacc_lam(c, 1, &x, x31, "test");
  lacc_node *param = lacc_acc_param(c, 0, "i64", 1, NULL, "test");
  lacc_node *margs[2] = { f, param };
  lacc_node *m = lacc_acc_op(c, "map", 2, margs, "test");
  lacc_node *zero = ci(c, "i64", 0);
  lacc_node *a = lacc_exp_var(c, "i64", "test"), *b = lacc_exp_var(c, "i64", "test");
  lacc_node *ab[2] = { a, b };
  lacc_node *apb = op2(c, "add", a, b), *plus = lacc_lam(c, 2, ab, apb, "test");
  lacc_node *fargs[3] = { plus, zero, m };
  lacc_node *sum = lacc_acc_op(c, "fold", 3, fargs, "test");
  lacc_program *p = sum != NULL ? lacc_program_new(c, "cpu", 1, 1, &sum) : NULL;
  ok = ok && p != NULL && fork_program_sum(c, p, 3) == 1 + 4 + 7;   /* queues the build */
#ifdef __SANITIZE_ADDRESS__
  /* AddressSanitizer's allocator is not fork-safe (glibc's is): a thread of the parent
   * inside malloc at the fork leaves the child's next malloc waiting for ever. Under it
   * the fork waits for the build to finish, the threads idle. */
  lacc_tiers t = { 0 };
  for (int i = 0; i < 6000 && t.builds + t.failed == 0; i++) {
    lacc_tier_counts(&t);
    if (t.builds + t.failed == 0) usleep(10000);
  }
#endif
  pid_t pid = ok ? fork() : -1;
  if (pid == 0) {
    alarm(60);
    int64_t n = 3000000;
    _exit(fork_program_sum(c, p, n) == 3 * (n - 1) * n / 2 + n ? 0 : 1);
  }
  int st = -1;
  if (pid > 0) waitpid(pid, &st, 0);
  check(ok && pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
        "fork: the child runs a program whose build its parent had under way");
  lacc_program_release(p);
  lacc_node *all[] = { x, three, one, x3, x31, f, param, m, zero, a, b, apb, plus, sum };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lacc_node_release(all[i]);
  lacc_ctx_release(c);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  check(system(cmd) == 0, "fork: the cache directory removed");
}

/* The verifier passes a well-formed function and names what is wrong in one broken by
 * hand, a rule at a time. */
static int verify_says(const kplan *P, const char *want) {
  char why[256];
  if (kir_verify(P, why, sizeof why) == 0) return want == NULL;
  if (want == NULL || strstr(why, want) == NULL) printf("verify said: %s\n", why);
  return want != NULL && strstr(why, want) != NULL;
}

static void test_verify(void) {
  scalar_kind vt[3] = { S_I64, S_I64, S_BOOL };
  kinst code[5] = {
    { .op = KO_CONST, .dst = 0 },
    { .op = KO_PRIM, .prim = P_LT, .dst = 2, .a = 0, .b = 1 },
    { .op = KO_IF, .a = 2 },
    { .op = KO_MOV, .dst = 1, .a = 0 },
    { .op = KO_END },
  };
  kinst pro[1] = { { .op = KO_KCONST, .dst = 1, .imm = { .i = 0 } } };
  lacc_val consts[1] = { { .i = 5 } };
  kfn F = { .role = FN_BODY, .step = -1, .vt = vt, .nvars = 3, .pro = { pro, 1, 1 },
            .body = { code, 5, 5 } };
  kplan P = { .fns = &F, .nfns = 1, .consts = consts, .nconsts = 1 };
  check(verify_says(&P, NULL), "verify: a well-formed function");
  code[3].a = 7;
  check(verify_says(&P, "body instruction 3: reads a = v7, not a variable"), "verify: a variable");
  code[3].a = 0;
  code[1].b = -1;
  check(verify_says(&P, "reads b = v-1"), "verify: a binary primitive's second operand");
  code[1].b = 1;
  code[4].op = KO_ELSE;
  check(verify_says(&P, "body: 1 blocks left open"), "verify: a block left open");
  code[4].op = KO_BREAKIFNOT;
  code[4].a = 2;
  check(verify_says(&P, "break outside a loop"), "verify: a break outside a loop");
  code[4].op = KO_END;
  code[0].op = KO_KCONST;
  check(verify_says(&P, "a program constant read outside the prologue"), "verify: K in the body");
  code[0].op = KO_CONST;
  pro[0].imm.i = 1;
  check(verify_says(&P, "program constant 1 of 1"), "verify: a constant that is not there");
  pro[0].imm.i = 0;
  code[3].op = KO_LOAD;
  code[3].slot = 0;
  check(verify_says(&P, "slot 0 of 0"), "verify: a slot that is not there");
  code[3].op = KO_MOV;
  check(verify_says(&P, NULL), "verify: well formed again");
}

int main(void) {
  check(lacc_abi_version() == LACC_ABI_VERSION, "abi version");
  test_seed_example();
  test_chain();
  test_awhile_arrays();
  test_rebind();
  test_discard();
  test_type_error();
  test_divzero();
  test_png();
  test_other_context();
  test_run_holds_args();
  test_kept_shapes();
  test_bad_tags();
  test_interning();
  test_sha256();
  test_text();
  test_fork();
  test_verify();
  printf("core: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
