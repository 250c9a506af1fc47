/* run.c: the driver: a program taken through the stages, in order, to a backend.
 *
 * Owns: programs (lacc_program_*), lacc_run and lacc_explain: the phases in order —
 * sharing recovery (with every awhile's condition and body, nested), simplification,
 * then for a compiled backend fusion, lowering to a plan and the backend's build of
 * its kernels — and the backend table: the reference interpreter ("interp"), the
 * compiled CPU backend ("cpu") or an OpenCL device ("opencl", "opencl:<device>"),
 * whose plans the one executor (kir/exec.c) runs; what a run holds while it lasts (its
 * program, arguments and used arrays: see hold_begin).
 * Must not: implement a stage itself; no stage calls back into it.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "kir/backend.h"
#include "base/vec.h"
#include "base/settings.h"
#include "base/tune.h"
#include "memo.h"

typedef enum { B_INTERP, B_CPU, B_OPENCL } backend_kind;  /* the backend a program is for */

/* A program ready to run: its AST and, on a compiled backend, its plan (with its
 * kernels: plan.code, and its loops' nested plans). */
struct lacc_program {
  int refs;                    /* the host's, and each run's while it lasts */
  lacc_ctx *ctx;
  backend_kind backend;
  int nparams;
  ast_arena ast;
  int planned;                 /* plan valid */
  kplan plan;
  char *device;                /* opencl: the device asked for (NULL: the default) */
  const lacc_node **params;    /* each parameter's node (type, rank, layout) */
  const lacc_node **uses;      /* the lacc_acc_use nodes, one per array (runs hold them) */
  int nuses, ucap;
  lacc_program *shared;        /* a live program of the same shape whose plan this one
                                  runs (retained), binding its own arrays; or NULL */
  lacc_val *consts;            /* with shared: its plan's table of constants with this
                                  program's own values, or NULL where they are the same */
  kplan view;                  /* with consts: the shared plan, run with them */
  int sharers;                 /* the programs whose `shared` this one is (of its refs) */
  int detached;                /* its AST and plan no longer hold the graph (detach) */
  int kept;                    /* 1: in the context's kept list (one of its refs), 2: was */
  memo_entry *memo;            /* this program's entry in the context's table, or NULL */
};

/* The plan a program runs: its own, or that of the program of its shape it found, with
 * its own constants where they differ (a copy of the plan's header taken at each run:
 * the plan's owner may have detached it since). */
static kplan *plan_of(lacc_program *p) {
  if (p->shared == NULL) return &p->plan;
  if (p->consts == NULL) return &p->shared->plan;
  p->view = p->shared->plan;
  p->view.consts = p->consts;
  return &p->view;
}

/* The backend table: each compiled backend's operations. */
static const backend_ops *ops_of(backend_kind b) {
  return b == B_OPENCL ? &opencl_backend : &cpu_backend;
}

/* What backend b's kernels for `device` can run (lowering asks): its table's, and
 * cpu_like where the device is a CPU. */
static kcaps caps_of(lacc_ctx *ctx, backend_kind b, const char *device) {
  const backend_ops *ops = ops_of(b);
  kcaps c = ops->caps;
  if (!c.cpu_like && ops->device_is_cpu != NULL) c.cpu_like = ops->device_is_cpu(ctx, device);
  return c;
}

/* The backend a name asks for; for "opencl:<device>" also the device (malloc'd). */
static int pick_backend(lacc_ctx *ctx, const char *backend, backend_kind *out, char **device) {
  *device = NULL;
  char configured[SETTING_MAX];
  if (backend == NULL && setting_text("LACC_BACKEND", configured, sizeof configured))
    backend = configured;
  if (backend == NULL || *backend == '\0' || strcmp(backend, "cpu") == 0) {
    *out = B_CPU;
    return LACC_OK;
  }
  if (strcmp(backend, "interp") == 0) {
    *out = B_INTERP;
    return LACC_OK;
  }
  if (strncmp(backend, "opencl", 6) == 0 && (backend[6] == '\0' || backend[6] == ':')) {
    *out = B_OPENCL;
    if (backend[6] == ':' && backend[7] != '\0') {
      *device = strdup(backend + 7);
      if (*device == NULL) return err_oom(ctx);
    }
    return LACC_OK;
  }
  return ctx_error(ctx, LACC_ERR_BACKEND, "run: unknown backend '%s' (expected \"cpu\", "
                   "\"opencl\" or \"interp\")", backend);
}

/* A program of one shape that only the programs sharing it hold (its host has freed it,
 * no run of its own is under way) lets go of its graph and the arrays it was built over:
 * they would otherwise live as long as any program of its shape. Its AST keeps copies of
 * the places its plan's messages name. Left as it is where that fails (out of memory). */
static void detach(lacc_program *p) {
  ast_places m;
  if (p->detached || !p->planned || !kplan_detachable(&p->plan)) return;
  lacc_ctx *ctx = p->ctx;   /* a release keeps the error the host is yet to read */
  int code = ctx->errcode;
  char msg[LACC_ERRMAX];
  snprintf(msg, sizeof msg, "%s", ctx->errmsg);
  if (ast_detach(&p->ast, &m) != LACC_OK) {
    ctx_clear(ctx);
    if (code != 0) ctx_error(ctx, code, "%s", msg);
    return;
  }
  kplan_detach(&p->plan, &m);
  p->detached = 1;
}

static void drop_kept(lacc_ctx *ctx) {
  void *v[TUNE_MEMO_KEEP + 1];
  int n = memo_take_kept(ctx, v);
  for (int i = 0; i < n; i++) {
    lacc_program *p = v[i];
    p->kept = 2;
    lacc_program_release(p);   /* the last one frees the context */
  }
}

/* A program of one shape that nothing holds any more stays, detached, among the
 * context's last TUNE_MEMO_KEEP: a program of its shape built after the collector took
 * this one (a loop of lacc.run over new arrays, each turn of a distributed loop) still
 * finds its plan. 1: kept. */
static int keep(lacc_program *p) {
  lacc_ctx *ctx = p->ctx;
  if (p->memo == NULL || p->kept != 0 || ctx->kept.dropping) return 0;
  detach(p);   /* (its graph's nodes hold the context too) */
  size_t bytes = p->ast.bytes + p->plan.mem_bytes;
  /* not where only kept programs and this one hold the context: its host is gone */
  if (!p->detached || ctx->refs <= ctx->kept.n + 1 || bytes > (size_t)TUNE_MEMO_KEEP_BYTES ||
      memo_keep(ctx, p, bytes) != LACC_OK)
    return 0;
  p->refs = 1;
  p->kept = 1;
  ctx->kept.drop = drop_kept;
  for (lacc_program *old; (old = memo_evict(ctx)) != NULL;) {
    old->kept = 2;
    lacc_program_release(old);
  }
  return 1;
}

void lacc_program_release(lacc_program *p) {
  if (p == NULL) return;
  if (--p->refs > 0) {
    if (p->refs == p->sharers + (p->kept == 1) && p->memo != NULL) detach(p);
    return;
  }
  if (keep(p)) return;
  if (p->memo != NULL) memo_remove(p->ctx, p->memo);
  if (p->shared != NULL) p->shared->sharers--;
  lacc_program_release(p->shared);
  free(p->consts);
  if (p->planned) {
    exec_release(ops_of(p->backend), &p->plan);
    kplan_free(&p->plan);
  }
  free(p->device);
  free(p->params);
  free(p->uses);
  ast_free(&p->ast);
  lacc_ctx_release(p->ctx);
  free(p);
}

int lacc_program_nresults(const lacc_program *p) { return p->ast.nroots; }

/* Each parameter's node into params (NULL: only checked) of an AST of nparams
 * parameters; a parameter node of another program (a compiled function's argument or
 * awhile's array used outside the function that received it) is an error. The loops'
 * nested ASTs are checked against their own parameters. */
static int find_params(lacc_ctx *ctx, int nparams, const lacc_node **params,
                       const lacc_node *t) {
  if (t->kind == K_PARAM) {
    if (t->field < 0 || t->field >= nparams)
      return ctx_error(ctx, LACC_ERR_SCOPE, "an array parameter made at %s is used outside "
                       "the function that received it", t->where != NULL ? t->where : "?");
    if (params != NULL) params[t->field] = t;
  }
  for (int i = 0; i < t->nkids; i++)
    if (node_level_of(t->kids[i]->kind) == L_ACC &&
        find_params(ctx, nparams, params, t->kids[i]) != LACC_OK)
      return ctx->errcode;
  for (int i = 0; t->kind == K_AWHILE && t->loop != NULL && i < 2; i++)
    if (find_params(ctx, t->loop[i].nparams, NULL, t->loop[i].root) != LACC_OK)
      return ctx->errcode;
  return LACC_OK;
}

/* Each array the program uses (lacc_acc_use), once: what a run holds besides its
 * arguments. An awhile's condition and body get theirs as the loop's kids. */
static int find_uses(lacc_program *p, const lacc_node *t) {
  if (t->kind == K_USE) {
    for (int i = 0; i < p->nuses; i++)
      if (p->uses[i]->array == t->array) return LACC_OK;
    if (vec_reserve(&p->uses, &p->ucap, p->nuses + 1, 4, sizeof *p->uses) != 0)
      return err_oom(p->ctx);
    p->uses[p->nuses++] = t;
  }
  for (int i = 0; i < t->nkids; i++)
    if (find_uses(p, t->kids[i]) != LACC_OK) return p->ctx->errcode;
  return LACC_OK;
}

/* Each input slot of the plan bound to its array's place among a run's arrays (the
 * arguments, then the uses): a program that shares the plan binds its own there. */
static void bind_inputs(lacc_program *p) {
  for (int s = 0; s < p->plan.nslots; s++) {
    pslot *ps = &p->plan.slots[s];
    for (int u = 0; ps->kind == SLOT_INPUT && u < p->nuses; u++)
      if (p->uses[u]->array == ps->array) ps->param = p->nparams + u;
  }
}

/* The shared plan's table of constants with p's own values (kc: p's constants the key
 * left out) into p->consts, or NULL where every value is the plan's. */
static int own_consts(lacc_program *p, const kplan *P, const memo_consts *kc) {
  int differ = 0;
  for (int s = 0; s < P->nconsts; s++) {
    int k = P->ksrc[s].k;
    if (k > kc->n)   /* (the key holds every place: never) */
      return ctx_error(p->ctx, LACC_ERR_BACKEND, "internal error: a plan found again reads "
                       "constants its program lacks (memo.c)");
    if (k > 0 && kc->v[k - 1].u != P->consts[s].u) differ = 1;
  }
  if (!differ) return LACC_OK;
  p->consts = malloc(sizeof *p->consts * (size_t)P->nconsts);
  if (p->consts == NULL) return err_oom(p->ctx);
  for (int s = 0; s < P->nconsts; s++)
    p->consts[s] = P->ksrc[s].k > 0 ? kc->v[P->ksrc[s].k - 1] : P->consts[s];
  return LACC_OK;
}

/* The phases after sharing recovery: simplification, the parameters found, and on a
 * compiled backend fusion, lowering and the backend's build of the kernels, unless a
 * live program of the same shape (memo.c) has done them: the program (a run's, or a
 * compiled function's: lacc.mpi compiles one for each distributed program it meets)
 * then runs that one's plan and kernels over its own arrays, and on a backend that
 * reads the constants at each run, with its own constants (a time step, a coefficient,
 * a rank's offset) where the plan did not depend on their values. */
static int prepare(lacc_program *p) {
  simplify_ast(&p->ast);
  int rc = find_params(p->ctx, p->nparams, p->params, p->ast.root);
  if (rc == LACC_OK) rc = find_uses(p, p->ast.root);
  if (rc != LACC_OK || p->backend == B_INTERP) return rc;
  size_t len = 0;
  memo_consts kc = { 0 };
  memo_consts *kcp = ops_of(p->backend)->consts_at_run ? &kc : NULL;
  char *key = memo_key(p->ctx, &p->ast, p->nparams, p->uses, p->nuses, (int)p->backend,
                       p->device, kcp, &len);
  lacc_program *same = key != NULL ? memo_find(p->ctx, key, len, kcp) : NULL;
  if (same != NULL) {
    free(key);
    rc = kcp != NULL ? own_consts(p, &same->plan, kcp) : LACC_OK;
    free(kc.v);
    if (rc != LACC_OK) return rc;
    same->refs++;
    same->sharers++;
    if (same->kept == 1) memo_touch(p->ctx, same);
    p->shared = same;
    return LACC_OK;
  }
  free(kc.v);
  hfuse_mark(&p->ast, p->ctx->hfuse);
  fusion_mark(&p->ast, p->ctx->fusion);
  hfuse_maps(&p->ast, p->ctx->hfuse);
  p->planned = 1;
  kcaps caps = caps_of(p->ctx, p->backend, p->device);
  rc = lower_plan(p->ctx, &p->ast, &caps, NULL,
                  &p->plan);
  if (rc == LACC_OK) rc = exec_compile(p->ctx, ops_of(p->backend), p->device, &p->plan);
  if (rc == LACC_OK) bind_inputs(p);
  if (rc == LACC_OK && key != NULL)
    p->memo = memo_add(p->ctx, key, len, p, &p->ast, &p->plan);
  else free(key);
  return rc;
}

static lacc_program *program_alloc(lacc_ctx *ctx, backend_kind b, int nparams) {
  lacc_program *p = ctx_alloc(ctx, sizeof *p);
  if (p == NULL) return NULL;
  p->params = ctx_alloc(ctx, sizeof *p->params * (size_t)(nparams > 0 ? nparams : 1));
  if (p->params == NULL) {
    free(p);
    return NULL;
  }
  ctx_retain(ctx);
  p->refs = 1;
  p->ctx = ctx;
  p->nparams = nparams;
  p->backend = b;
  return p;
}

/* Release p, keeping the error that made it fail. */
static lacc_program *failed(lacc_program *p) {
  lacc_ctx *ctx = p->ctx;
  int code = ctx->errcode ? ctx->errcode : LACC_ERR_MEMORY;
  char msg[LACC_ERRMAX];
  snprintf(msg, sizeof msg, "%s", ctx->errmsg);
  lacc_program_release(p);
  ctx_error(ctx, code, "%s", msg);
  return NULL;
}

lacc_program *lacc_program_new(lacc_ctx *ctx, const char *backend, int nparams, int nroots,
                               lacc_node *const *roots) {
  ctx_clear(ctx);
  backend_kind b = B_CPU;
  char *device = NULL;
  if (pick_backend(ctx, backend, &b, &device) != LACC_OK) return NULL;
  const backend_ops *ops = b != B_INTERP ? ops_of(b) : NULL;
  int unavailable = ops != NULL && ops->available != NULL && !ops->available();
  lacc_program *p = program_alloc(ctx, unavailable ? B_INTERP : b, nparams);
  if (p == NULL) {
    free(device);
    return NULL;
  }
  p->device = device;
  if (sharing_recover(ctx, nroots, roots, &p->ast) != LACC_OK) return failed(p);
  return prepare(p) == LACC_OK ? p : failed(p);
}

static int check_args(lacc_ctx *ctx, const lacc_program *p, int nargs,
                      lacc_array *const *args) {
  if (nargs != p->nparams)
    return ctx_error(ctx, LACC_ERR_ARG, "compiled program: expected %d arrays, got %d",
                     p->nparams, nargs);
  for (int i = 0; i < nargs; i++) {
    const lacc_node *t = p->params[i];
    const lacc_array *a = args[i];
    if (a == NULL || a->ctx != ctx)
      return ctx_error(ctx, LACC_ERR_ARG, "compiled program: argument %d is not an array of "
                       "this Lua state", i + 1);
    if (t == NULL) continue;   /* unused by the program */
    if (a->type != t->type || a->rank != t->rank || a->plan->strategy != (layout_strategy)t->cval.i)
      return ctx_error(ctx, LACC_ERR_TYPE, "compiled program: argument %d is rank %d %s, "
                       "expected rank %d %s (at %s)", i + 1, a->rank, a->type->sig, t->rank,
                       t->type->sig, t->where != NULL ? t->where : "?");
  }
  return LACC_OK;
}

/* What a run holds until it ends: the program, its arguments and the arrays it uses,
 * retained and marked busy. The host runs code during a run (progress callbacks, the
 * finalisers its collector calls from them): freeing any of these then only drops the
 * host's reference, and writing one is refused (array.c). The arguments are copied, and
 * the results kept here until the end, so the host may reuse its own buffers meanwhile. */
typedef struct {
  lacc_program *p;
  int n;                       /* held[0..n-1]: arguments, then uses */
  lacc_array **held, **out;    /* out: nroots results, one allocation with held */
} run_hold;

static int hold_begin(lacc_ctx *ctx, lacc_program *p, int nargs, lacc_array *const *args,
                      run_hold *h) {
  h->p = p;
  h->n = nargs + p->nuses;
  h->held = malloc(sizeof *h->held * (size_t)(h->n + p->ast.nroots + 1));
  if (h->held == NULL) return err_oom(ctx);
  h->out = h->held + h->n;
  for (int i = 0; i < h->n; i++) {
    h->held[i] = i < nargs ? args[i] : p->uses[i - nargs]->array;
    lacc_array_retain(h->held[i]);
    array_busy(h->held[i], 1);
  }
  p->refs++;
  return LACC_OK;
}

/* The elements of the arrays a run reads (-1 when it reads none: its work is not known
 * before it runs), and their longest extent. */
static int64_t hold_work(const run_hold *h, int64_t *span) {
  int64_t w = 0;
  *span = 1;
  for (int i = 0; i < h->n; i++) {
    w += h->held[i]->size;
    for (int d = 0; d < h->held[i]->rank; d++)
      if (h->held[i]->extent[d] > *span) *span = h->held[i]->extent[d];
  }
  return h->n > 0 ? w : -1;
}

static void hold_end(run_hold *h) {
  for (int i = 0; i < h->n; i++) {
    array_busy(h->held[i], -1);
    lacc_array_release(h->held[i]);
  }
  free(h->held);
  lacc_program_release(h->p);
}

/* Run a program on its backend (the backend's own run where it has one: the cpu
 * backend's tiers choose the code for the run's arrays); no checks of the arguments. */
static int program_exec(lacc_ctx *ctx, lacc_program *p, const run_hold *h, lacc_array **out) {
  lacc_array *const *args = h->held;
  if (p->backend == B_INTERP) return interp_run(ctx, &p->ast, args, out);
  const backend_ops *ops = ops_of(p->backend);
  if (ops->run != NULL) {
    int64_t span, work = hold_work(h, &span);
    return ops->run(ctx, ops, plan_of(p), &p->ast, work, span, args, out);
  }
  return exec_plan(ctx, ops, plan_of(p), args, out);
}

/* Tags written through raw pointers (lacc_array_leaf_data) are checked before any
 * backend reads them: the interpreter would index past its constructors, the compiled
 * backends take some other constructor. */
static int check_tags(lacc_ctx *ctx, const run_hold *h, int nargs) {
  char what[LACC_ERRMAX];
  for (int i = 0; i < h->n; i++) {
    if (!h->held[i]->exposed) continue;
    const lacc_node *u = i < nargs ? NULL : h->p->uses[i - nargs];
    if (u == NULL) snprintf(what, sizeof what, "run: argument %d", i + 1);
    else snprintf(what, sizeof what, "run: the array used at %.900s",
                  u->where != NULL ? u->where : "?");
    int rc = array_check_tags(ctx, h->held[i], what);
    if (rc != LACC_OK) return rc;
  }
  return LACC_OK;
}

int lacc_program_run(lacc_ctx *ctx, lacc_program *p, int nargs, lacc_array *const *args,
                     lacc_array **out) {
  ctx_clear(ctx);
  if (p->ctx != ctx) return ctx_error(ctx, LACC_ERR_ARG, "program belongs to another context");
  int rc = check_args(ctx, p, nargs, args);
  run_hold h;
  if (rc == LACC_OK) rc = hold_begin(ctx, p, nargs, args, &h);
  if (rc != LACC_OK) return rc;
  rc = check_tags(ctx, &h, nargs);
  if (rc == LACC_OK) rc = program_exec(ctx, p, &h, h.out);
  if (rc == LACC_OK) memcpy(out, h.out, sizeof *out * (size_t)p->ast.nroots);
  hold_end(&h);
  return rc;
}

int lacc_run(lacc_ctx *ctx, const char *backend, int nroots, lacc_node *const *roots,
             lacc_array **out) {
  lacc_program *p = lacc_program_new(ctx, backend, 0, nroots, roots);
  if (p == NULL) return ctx->errcode;
  int rc = lacc_program_run(ctx, p, 0, NULL, out);
  lacc_program_release(p);
  return rc;
}

int lacc_set_option(lacc_ctx *ctx, const char *name, int value) {
  if (strcmp(name, "fusion") == 0) ctx->fusion = value != 0;
  else if (strcmp(name, "hfuse") == 0) ctx->hfuse = value != 0;
  else if (strcmp(name, "sharing") == 0) ctx->sharing = value != 0;
  else if (strcmp(name, "source") == 0) ctx->explain_source = value != 0;
  else if (strcmp(name, "source_opencl") == 0) ctx->explain_source = value != 0 ? 2 : 0;
  else return ctx_error(ctx, LACC_ERR_ARG,
                        "unknown option '%s' (expected fusion, hfuse, sharing, source or "
                        "source_opencl)", name);
  return LACC_OK;
}

char *lacc_explain(lacc_ctx *ctx, int nroots, lacc_node *const *roots, lacc_stats *stats) {
  return lacc_explain_on(ctx, NULL, nroots, roots, stats);
}

char *lacc_explain_on(lacc_ctx *ctx, const char *backend, int nroots, lacc_node *const *roots,
                      lacc_stats *stats) {
  ctx_clear(ctx);
  backend_kind bk = B_CPU;
  char *device = NULL;
  if (backend != NULL && pick_backend(ctx, backend, &bk, &device) != LACC_OK) return NULL;
  int interp = bk == B_INTERP;
  if (interp) bk = B_CPU;   /* the interpreter runs no kernels: the cpu's shown */
  ast_arena ast;
  if (sharing_recover(ctx, nroots, roots, &ast) != LACC_OK) {
    free(device);
    return NULL;
  }
  simplify_ast(&ast);
  hfuse_mark(&ast, ctx->hfuse);
  fusion_mark(&ast, ctx->fusion);
  hfuse_maps(&ast, ctx->hfuse);
  kplan P;
  char *s = NULL, *src = NULL, *launch = NULL;
  kcaps caps = caps_of(ctx, bk, device);
  int rc = lower_plan(ctx, &ast, &caps, NULL, &P);
  const backend_ops *ops = ops_of(bk);
  /* the interpreter's explain shows the cpu's kernels but not the code they start on */
  if (rc == LACC_OK && !interp && ops->describe != NULL &&
      (ops->available == NULL || ops->available())) {
    launch = ops->describe(ctx, device, &P);
    if (launch == NULL) rc = ctx->errcode;
  }
  if (rc == LACC_OK) {
    if (ctx->explain_source) src = ctx->explain_source == 2 ? emit_cl(&P, 0) : emit_c(&P);
    s = explain_plan(ctx, &ast, &P, launch, src);
    if (stats != NULL) {
      memset(stats, 0, sizeof *stats);
      stats->kernels = plan_kernels(&P);
      stats->lets = ast.lets;
      for (int k = 0; k < P.nsteps; k++) {   /* every array a step writes, not returned */
        const pstep *st = &P.steps[k];
        if (st->kind == SK_SELECT) continue;
        stats->intermediates += !P.slots[st->out].result;
        for (int i = 0; i < st->nsib; i++) stats->intermediates += !P.slots[st->sib_out[i]].result;
        if (st->wout >= 0) stats->intermediates += !P.slots[st->wout].result;
      }
    }
  }
  free(launch);
  free(src);
  free(device);
  kplan_free(&P);
  ast_free(&ast);
  return s;
}

void lacc_string_free(char *s) { free(s); }
