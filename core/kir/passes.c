/* passes.c: the kernel IR's passes after lowering, in order, as one table.
 *
 * Owns: which passes run and in what order, their switches, each step's checks counted
 * before and after them, the verifier between passes (LACC_VERIFY=1; the test suite sets
 * it) and the dump after one (LACC_DUMP=<pass>, `lower` for the IR as lowered, `all` for
 * every one).
 * Must not: transform the IR itself: each pass is its own file's (passes.h).
 */
#include <string.h>
#include "kir/passes.h"
#include "base/settings.h"

typedef struct {
  const char *name;               /* LACC_DUMP=name prints the IR after it */
  const char *setting;            /* its switch (on unless set to 0), NULL: none */
  int (*each)(kplan *P, kfn *F);  /* a pass of one function at a time, */
  int (*whole)(kplan *P);         /* or of the whole plan */
} kpass;

/* The order matters: folding first leaves hoist.c only the checks it cannot prove, and
 * folding again removes the versioned loops' checks; ranges.c merges what is left; the
 * tiles are judged on the code the checks left (docs/architecture.md prints this table). */
static const kpass passes[] = {
  { "fold",   "LACC_BOUNDS", pass_fold,   NULL },
  { "hoist",  "LACC_BOUNDS", pass_hoist,  NULL },
  { "refold", "LACC_BOUNDS", pass_fold,   NULL },
  { "ranges", "LACC_BOUNDS", pass_ranges, NULL },
  { "tiles",  NULL,          NULL,        pass_tiles },
  { "gtiles", NULL,          NULL,        pass_gtiles },
};
enum { NPASSES = sizeof passes / sizeof passes[0] };

/* The pass LACC_DUMP names ("lower", a pass, "all"), into want; 0 when none is named. */
static int dump_wanted(char *want, size_t cap) {
  if (!setting_text("LACC_DUMP", want, cap)) return 0;
  int known = strcmp(want, "lower") == 0 || strcmp(want, "all") == 0;
  for (int i = 0; i < NPASSES && !known; i++) known = strcmp(want, passes[i].name) == 0;
  if (!known)
    warn_once("setting LACC_DUMP", "ignoring LACC_DUMP=%.31s: expected lower, fold, hoist, "
              "refold, ranges, tiles, gtiles or all", want);
  return known;
}

/* After the lowering or a pass: the dump asked for (dump: LACC_DUMP's pass, or NULL),
 * then the verifier's word. */
static int after(lacc_ctx *ctx, const kplan *P, const char *name, const char *dump, int verify) {
  if (dump != NULL && (strcmp(dump, "all") == 0 || strcmp(dump, name) == 0))
    kir_dump(P, name, stderr);
  char why[256];
  if (verify && kir_verify(P, why, sizeof why) != 0)
    return ctx_error(ctx, LACC_ERR_BACKEND, "internal error: the kernel IR after %s is "
                     "malformed (LACC_VERIFY): %s", name, why);
  return LACC_OK;
}

static int run_pass(const kpass *p, kplan *P) {
  if (p->whole != NULL) return p->whole(P);
  int rc = LACC_OK;
  for (int f = 0; f < P->nfns && rc == LACC_OK; f++) rc = p->each(P, &P->fns[f]);
  return rc;
}

int kir_passes(lacc_ctx *ctx, kplan *P) {
  int verify = setting_switch("LACC_VERIFY", 0);
  char want[32];
  const char *dump = dump_wanted(want, sizeof want) ? want : NULL;
  int rc = after(ctx, P, "lower", dump, verify);
  if (rc == LACC_OK && plan_count_checks(P, 0) != LACC_OK) return err_oom(ctx);
  for (int i = 0; i < NPASSES && rc == LACC_OK; i++) {
    const kpass *p = &passes[i];
    if (p->setting != NULL && !setting_switch(p->setting, 1)) continue;
    rc = run_pass(p, P);
    if (rc == LACC_ERR_MEMORY) return err_oom(ctx);
    if (rc != LACC_OK) return ctx_error(ctx, rc, "%s: malformed kernel function", p->name);
    rc = after(ctx, P, p->name, dump, verify);
  }
  if (rc == LACC_OK && plan_count_checks(P, 1) != LACC_OK) return err_oom(ctx);
  return rc;
}
