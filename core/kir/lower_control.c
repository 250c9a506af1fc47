/* lower_control.c: acond and awhile in a plan.
 *
 * Owns: acond (a test step, each branch's steps behind a guard, a select) and awhile
 * (its inputs materialised, then one step holding the condition's and the body's nested
 * plans, lowered here from the ASTs sharing recovery nested in the program's).
 * Must not: run anything: the executor runs the guards, selects and loops.
 */
#include "kir/lower.h"

/* ---- acond: a test step, each branch's steps behind a guard, a select */

int lw_bool_step(lower *L, const lacc_node *t, step_kind kind) {
  const lacc_type *b = type_parse(L->ctx, "bool");
  if (b == NULL) oom(L);
  int st = lw_new_step(L, kind, t, 0);
  int out = lw_new_slot(L, SLOT_KERNEL, b, 0, lw_out_plan(L, b));
  L->P->steps[st].out = out;
  L->P->steps[st].fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_BODY);
  return out;
}

static int step_test(lower *L, const lacc_node *t, const aenv *env) {
  int out = lw_bool_step(L, t, SK_TEST);
  int i = lw_var(L, S_I64);
  lw_k_for(L, i, 0, 1, 1);
  L->key = i;
  lw_store_elem(L, out, i, lw_lower_exp(L, t->kids[0], NULL, env));
  k_end(L);
  return out;
}

static int new_guard(lower *L, int slot, int want) {
  kplan *P = L->P;
  lw_grow(L, (void **)&P->guards, &P->gcap, P->nguards, sizeof *P->guards);
  P->guards[P->nguards] = (pguard){ slot, want, L->guard };
  return P->nguards++;
}

/* A copy of slot src in the layout results are made in. */
static int step_copy(lower *L, const lacc_node *t, int src) {
  const pslot *ps = &L->P->slots[src];
  int r = ps->rank, st = lw_new_step(L, SK_MAP, t, r);
  int out = lw_new_slot(L, SLOT_KERNEL, ps->type, r, lw_out_plan(L, ps->type));
  L->P->steps[st].out = out;
  L->P->steps[st].fn[SF_SHAPE] = lw_new_fn(L, FN_SHAPE);
  int *ext = lw_slot_ext(L, src);
  for (int d = 0; d < r; d++) {
    kinst *in = lw_emit(L, KO_OUT);
    in->a = ext[d];
    in->imm.i = d;
  }
  L->P->steps[st].fn[SF_BODY] = lw_new_fn(L, FN_BODY);
  int i = lw_var(L, S_I64);
  lw_k_for(L, i, 0, 1, 1);
  L->key = i;
  lw_store_elem(L, out, i, lw_load_elem(L, src, i));
  k_end(L);
  return out;
}

/* A branch materialised behind its guard, in the results' layout (both branches of an
 * acond must share one, as their consumers read either). */
static int plan_branch(lower *L, lacc_node *t, const aenv *env, int guard) {
  int saved = L->guard;
  L->guard = guard;
  int s = lw_plan_manifest(L, t, env);
  if (L->P->slots[s].plan != lw_out_plan(L, L->P->slots[s].type)) s = step_copy(L, t, s);
  L->guard = saved;
  return s;
}

int lw_step_acond(lower *L, lacc_node *t, const aenv *env) {
  int test = step_test(L, t, env);
  int a = plan_branch(L, t->kids[1], env, new_guard(L, test, 1));
  int b = plan_branch(L, t->kids[2], env, new_guard(L, test, 0));
  int st = lw_new_step(L, SK_SELECT, t, t->rank);
  int out = lw_new_slot(L, SLOT_KERNEL, t->type, t->rank, lw_out_plan(L, t->type));
  pstep *s = &L->P->steps[st];
  s->out = out;
  s->sel_test = test;
  s->sel_then = a;
  s->sel_else = b;
  lw_use_slot(L, test);
  lw_use_slot(L, a);
  lw_use_slot(L, b);
  return out;
}

/* ---- awhile: its inputs materialised, then one step that runs the condition and the
 * body (plans nested in this one, of the loop's arrays and the arrays read from outside).
 * A loop of several arrays is one K_AWHILE node per array, sharing one `loop`: the first
 * lowered makes the step, with a slot for each array; the others take theirs (behind the
 * same guard: behind another, the loop runs there again). */

static int while_made(lower *L, const lacc_node *t) {
  for (int k = 0; k < L->P->nsteps; k++) {
    const pstep *s = &L->P->steps[k];
    if (s->kind == SK_WHILE && s->node->loop == t->loop && s->guard == L->guard &&
        t->field < s->nloop_out)
      return s->loop_out[t->field];
  }
  return -1;
}

int lw_step_while(lower *L, lacc_node *t, const aenv *env) {
  int made = while_made(L, t);
  if (made >= 0) return made;
  int n = t->nkids, m = t->nparams;
  int *in = ints(L, n), *outs = ints(L, m);
  layout_strategy *st = lw_alloc(L, sizeof *st * (size_t)n);
  for (int i = 0; i < n; i++) {
    in[i] = lw_plan_manifest(L, t->kids[i], env);
    /* the loop's arrays stay in the layout results are made in */
    st[i] = i < m ? L->ctx->layout : L->P->slots[in[i]].plan->strategy;
  }
  int k = lw_new_step(L, SK_WHILE, t, t->rank);
  pstep *s = &L->P->steps[k];
  s->loop_in = in;
  s->nloop_in = n;
  for (int i = 0; i < 2; i++) {
    /* the condition's and the body's ASTs, nested in this one, planned in turn */
    s->loop[i] = calloc(1, sizeof *s->loop[i]);
    if (s->loop[i] == NULL) oom(L);
    if (lower_plan(L->ctx, &t->loop[i], &L->P->caps, st, s->loop[i]) != LACC_OK)
      oom(L);
    s = &L->P->steps[k];
  }
  for (int i = 0; i < m; i++) {
    const lacc_node *x = t->kids[i];
    outs[i] = lw_new_slot(L, SLOT_KERNEL, x->type, x->rank, lw_out_plan(L, x->type));
  }
  s = &L->P->steps[k];
  s->loop_out = outs;
  s->nloop_out = m;
  s->out = outs[0];
  for (int i = 0; i < n; i++) lw_use_slot(L, in[i]);
  return outs[t->field];
}

/* ---- sortperm and sortkeys: the keys materialised, then a step with no kernel (exec.c
 * sorts them with base/sort.c) */
int lw_step_sort(lower *L, lacc_node *t, const aenv *env) {
  int in = lw_plan_manifest(L, t->kids[0], env);
  int k = lw_new_step(L, SK_SORT, t, t->rank);
  L->P->steps[k].sort_in = in;
  L->P->steps[k].sort_keys = t->kind == K_SORTKEYS;
  L->P->steps[k].out = lw_new_slot(L, SLOT_KERNEL, t->type, t->rank, lw_out_plan(L, t->type));
  lw_use_slot(L, in);
  return L->P->steps[k].out;
}
