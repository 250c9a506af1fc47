/* lower.c: the fused AST into a plan of kernels in the kernel IR.
 *
 * Owns: the walk over the AST that materialises what fusion marked (plan_acc: lets,
 * variables, each kind of step) and lower_plan, the entry point. The concerns live
 * beside it: lower_ir.c (instructions, slots), lower_elem.c (layouts), lower_scalar.c
 * (scalar code), lower_pull.c (delayed arrays), lower_fold.c (maps, strips, folds),
 * lower_scan.c, lower_push.c (push arrays, stencils, permute), lower_control.c (acond,
 * awhile), plan.c (memory).
 * Must not: decide what fuses (fusion.c marks that), print a language or run anything.
 * Values are lists of variables, one per leaf of the flattened type.
 */
#include "kir/lower.h"

/* ---- planning: walk the AST, materialise what fusion marked */

static void plan_kids(lower *L, lacc_node *t, const aenv *env) {
  for (int i = 0; i < t->nkids; i++) {
    lacc_node *k = t->kids[i];
    if (node_level_of(k->kind) != L_ACC) continue;
    const aenv *d;
    lw_plan_acc(L, k, env, &d);
  }
}

/* t materialised in slot s. */
static int placed(lower *L, const lacc_node *t, int s) {
  lw_set_slot(L, t, s);
  return s;
}

/* Whether the folds of the group that would write b pull everything between b and them
 * (fusion may have materialised a map in between: then each step as usual). */
static int pulls_from(const lacc_node *t) {
  if (t->kind == K_AVAR || t->kind == K_USE || t->kind == K_PARAM) return 1;
  if (t->manifest) return 0;
  if (t->kind == K_ALET) return pulls_from(t->kids[0]) && pulls_from(t->kids[1]);
  for (int i = 1; i < t->nkids; i++)
    if (node_level_of(t->kids[i]->kind) == L_ACC && !pulls_from(t->kids[i])) return 0;
  return 1;
}

static int writes_let(const lacc_node *b) {
  if ((b->kind != K_MAP && b->kind != K_GENERATE) || b->hwrite == NULL || !b->manifest) return 0;
  const lacc_node *a = b->hwrite;
  for (const lacc_node *m = a->hlead != NULL ? a->hlead : a; m != NULL; m = m->hnext)
    if (!pulls_from(fold_input(m))) return 0;
  return 1;
}

/* The term a let's bound term b stands for, through the lets it is made of. */
static lacc_node *let_term(lacc_node *b) {
  while (b->kind == K_ALET) b = b->kids[1];
  return b;
}

/* The environment of a let's body: its bound term b planned (materialised: its slot;
 * else delayed). A materialised map that a fold of the body also reads element for
 * element (hfuse.c: hwrite) is written by that fold's loop, planned here. */
static const aenv *let_body_env(lower *L, lacc_node *b, const aenv *env) {
  lacc_node *t = let_term(b);
  if (writes_let(t)) {   /* b's own lets first, then t, written by the folds' loop */
    const aenv *tenv = env;
    for (lacc_node *l = b; l->kind == K_ALET; l = l->kids[1]) tenv = let_body_env(L, l->kids[0], tenv);
    plan_kids(L, t, tenv);
    /* what the folds read besides the map (arrays their elements read), in the body */
    const aenv *body = lw_a_push(L, env, t, tenv, -1);
    for (lacc_node *m = t->hwrite->hlead != NULL ? t->hwrite->hlead : t->hwrite; m != NULL;
         m = m->hnext)
      plan_kids(L, m, body);
    return lw_a_push(L, env, NULL, NULL, lw_step_folds_writing(L, t, tenv, env));
  }
  const aenv *bd;
  int s = lw_plan_acc(L, b, env, &bd);
  return s >= 0 ? lw_a_push(L, env, NULL, NULL, s) : lw_a_push(L, env, bd->node, bd->env, -1);
}

/* Whether scalar code e reads an array (a map's function that does is left to its own
 * step: the fold's would have to read that array too). */
static int reads_arrays(const lacc_node *e) {
  if (node_level_of(e->kind) == L_ACC) return 1;
  for (int i = 0; i < e->nkids; i++)
    if (reads_arrays(e->kids[i])) return 1;
  return 0;
}

/* A map of one array, the results of a fold it alone reads (argmin's index of the
 * (value, index) pairs, mean's division): computed in the fold's step, each result
 * mapped as it is stored, instead of written, then read again by a step of its own.
 * Returns the step's output, or -1 where it does not apply. LACC_FOLD_MAP=0: never. */
static int fold_then_map(lower *L, lacc_node *t, const aenv *env) {
  lacc_node *a = t->kids[t->nkids - 1];
  if (t->nkids != 2 || (a->kind != K_FOLD && a->kind != K_FOLD1) || a->hlead != NULL ||
      a->hwrite != NULL || a->hscan != NULL || reads_arrays(t->kids[0]) ||
      !setting_switch("LACC_FOLD_MAP", 1))
    return -1;
  plan_kids(L, a, env);
  L->then.map = t;
  L->then.env = env;
  L->then.slot = -1;
  int s = lw_step_fold(L, a, env);
  L->then.map = NULL;
  L->then.slot = -1;
  return s;
}

/* Returns the slot of a materialised term, or -1 with *delayed set to its closure. */
int lw_plan_acc(lower *L, lacc_node *t, const aenv *env, const aenv **delayed) {
  *delayed = NULL;
  switch (t->kind) {
  case K_USE:
    return placed(L, t, lw_input_slot(L, t->array));
  case K_PARAM:
    return placed(L, t, lw_param_slot(L, t));
  case K_AVAR: {
    const aenv *e = lw_a_lookup(env, t->field);
    if (e->slot < 0) *delayed = e;
    return e->slot;
  }
  case K_ALET:
    return lw_plan_acc(L, t->kids[1], let_body_env(L, t->kids[0], env), delayed);
  case K_ACOND:
    return placed(L, t, lw_step_acond(L, t, env));
  case K_AWHILE:
    return placed(L, t, lw_step_while(L, t, env));
  case K_SORTPERM: case K_SORTKEYS:
    return placed(L, t, lw_step_sort(L, t, env));
  default: break;
  }
  lacc_node *lead = (t->kind == K_FOLD || t->kind == K_FOLD1) ? (t->hlead != NULL ? t->hlead : t)
                    : is_scan(t->kind) ? t->hscan : NULL;
  if (lead != NULL && lead->hscan != NULL) {   /* a fold and a scan over the same rows */
    int s = lw_slot_of(L, t);
    if (s >= 0) {   /* planned with its partner */
      if (!is_scan(t->kind)) lw_fold_reached(L, t, env, s);
      return s;
    }
    for (lacc_node *m = lead; m != NULL; m = m->hnext) plan_kids(L, m, env);
    plan_kids(L, lead->hscan, env);
    if (lw_step_fold_scan(L, lead, lead->hscan, is_scan(t->kind) ? NULL : t, env) == 0)
      return lw_slot_of(L, t);
  }
  if ((t->kind == K_FOLD || t->kind == K_FOLD1) && (t->hlead != NULL || t->hwrite != NULL)) {
    int s = lw_slot_of(L, t);
    if (s >= 0) {   /* planned with its group, or where the map it writes is */
      lw_fold_reached(L, t, env, s);
      return s;
    }
    if (t->hlead != NULL) {
      for (lacc_node *m = t->hlead; m != NULL; m = m->hnext) plan_kids(L, m, env);
      return lw_step_folds(L, t, env);
    }
  }
  if (t->kind == K_PERMUTE && t->hlead != NULL) {
    int s = lw_slot_of(L, t);
    if (s >= 0) return s;   /* planned with its group */
    for (lacc_node *m = t->hlead; m != NULL; m = m->hnext) plan_kids(L, m, env);
    return lw_step_permutes(L, t, env);
  }
  if (t->kind == K_MAP && t->manifest && t->hlead != NULL) {
    int s = lw_slot_of(L, t);
    if (s >= 0) return s;   /* planned with its group */
    for (lacc_node *m = t->hlead; m != NULL; m = m->hnext) plan_kids(L, m, env);
    return lw_step_maps(L, t, env);
  }
  if (t->kind == K_MAP && t->manifest) {
    int s = fold_then_map(L, t, env);
    if (s >= 0) return placed(L, t, s);
  }
  plan_kids(L, t, env);
  if (!t->manifest) {
    *delayed = lw_a_push(L, NULL, t, env, -1);
    return -1;
  }
  int s = t->kind == K_FOLD || t->kind == K_FOLD1 ? lw_step_fold(L, t, env)
        : is_scan(t->kind)                         ? lw_step_scan(L, t, env)
        : t->kind == K_PERMUTE                     ? lw_step_permute(L, t, env)
        : t->kind == K_APPEND || t->kind == K_INTERLEAVE ? lw_step_push(L, t, env)
        : t->kind == K_STENCIL                     ? lw_step_stencil(L, t, env)
                                                   : lw_step_map(L, t, env);
  return placed(L, t, s);
}

int lw_plan_manifest(lower *L, lacc_node *t, const aenv *env) {
  const aenv *d;
  int s = lw_plan_acc(L, t, env, &d);
  return s >= 0 ? s : lw_step_map(L, d->node, d->env);
}

static int plan_results(lower *L, lacc_node *t, const aenv *env) {
  if (t->kind == K_ALET) return plan_results(L, t->kids[1], let_body_env(L, t->kids[0], env));
  kplan *P = L->P;
  P->nresults = t->nkids;
  P->results = malloc(sizeof *P->results * (size_t)(t->nkids ? t->nkids : 1));
  if (P->results == NULL) oom(L);
  for (int i = 0; i < t->nkids; i++) {
    int s = lw_plan_manifest(L, t->kids[i], env);
    P->results[i] = s;
    P->slots[s].result = 1;
  }
  return LACC_OK;
}

int lower_plan(lacc_ctx *ctx, const ast_arena *ast, const kcaps *caps,
               const layout_strategy *layouts, kplan *P) {
  kplan_init(P, ctx);
  P->caps = *caps;
  lower *L = calloc(1, sizeof *L);
  if (L == NULL) return err_oom(ctx);
  L->ctx = ctx;
  L->layouts = layouts;
  L->P = P;
  L->guard = -1;
  int rc = LACC_OK;
  if (setjmp(L->oom) == 0) {
    plan_results(L, ast->root, NULL);
    rc = kir_passes(ctx, P);
  } else {
    rc = ctx->errcode ? ctx->errcode : err_oom(ctx);
  }
  free(L->loads);
  free(L->placed);
  free(L);
  return rc;
}
