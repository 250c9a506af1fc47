/* explain_plan.c: a plan as text for people, after its program's AST.
 *
 * Owns: the kernel blocks of `explain`: per step what it computes, the term it pulls
 * (a<k> are materialised arrays), acond's guards and selects, awhile's nested plans
 * indented under it, the inputs, and when given the generated source.
 * Must not: change the plan, or print the AST itself (ast/explain.c does).
 */
#include <stdlib.h>
#include <string.h>
#include "kir/kir.h"
#include "base/text.h"

/* Kernels of a plan (an acond's select only picks an array, a sort runs lacc's own
 * radix sort, a check only tests a shape; an awhile's are those of its condition and
 * body). */
int plan_kernels(const kplan *P) {
  int n = 0;
  for (int k = 0; k < P->nsteps; k++) {
    const pstep *st = &P->steps[k];
    if (st->kind == SK_WHILE) n += plan_kernels(st->loop[0]) + plan_kernels(st->loop[1]);
    else n += st->kind != SK_SELECT && st->kind != SK_SORT && !st->check_only;
  }
  return n;
}

static void put_indented(text *b, const char *s, int spaces) {
  for (const char *line = s; *line;) {
    const char *end = strchr(line, '\n');
    int len = end != NULL ? (int)(end - line) : (int)strlen(line);
    text_put(b, "%*s%.*s\n", spaces, "", len, line);
    line += len + (end != NULL);
  }
}

/* An awhile step: its inputs, then the condition's and the body's explanations. */
static void while_print(text *b, lacc_ctx *ctx, const pstep *st) {
  int m = st->nloop_out;
  text_put(b, "awhile: a%d", st->loop_out[0]);
  for (int i = 1; i < m; i++) text_put(b, ", a%d", st->loop_out[i]);
  text_put(b, " from a%d", st->loop_in[0]);
  for (int i = 1; i < m; i++) text_put(b, ", a%d", st->loop_in[i]);
  if (st->nloop_in > m) text_put(b, ", reading");
  for (int i = m; i < st->nloop_in; i++) text_put(b, " a%d", st->loop_in[i]);
  if (m == 1)
    text_put(b, " (at %s); in the condition and body, param 1 is the loop's array%s\n",
             st->node->where != NULL ? st->node->where : "?",
             st->nloop_in > 1 ? ", params 2.. what it reads" : "");
  else
    text_put(b, " (at %s); in the condition and body, params 1..%d are the loop's arrays%s\n",
             st->node->where != NULL ? st->node->where : "?", m,
             st->nloop_in > m ? ", the rest what it reads" : "");
  static const char *const names[2] = { "condition", "body" };
  for (int i = 0; i < 2; i++) {
    char *sub = explain_plan(ctx, &st->node->loop[i], st->loop[i], NULL, NULL);
    text_put(b, "  %s:\n", names[i]);
    if (sub != NULL) put_indented(b, sub, 4);
    else b->oom = 1;
    free(sub);
  }
}

/* One step's block. */
static void step_print(text *b, lacc_ctx *ctx, const kplan *P, const pstep *st, int *n) {
  const pslot *out = &P->slots[st->out];
  if (st->kind == SK_SELECT) {
    text_put(b, "select: a%d = a%d ? a%d : a%d\n", st->out, st->sel_test, st->sel_then,
             st->sel_else);
    return;
  }
  if (st->guard >= 0)
    text_put(b, "if a%d is %s:\n", P->guards[st->guard].slot,
             P->guards[st->guard].want ? "true" : "false");
  if (st->check_only) {   /* lower_fold.c: empty_check_step */
    text_put(b, "check: %s's rows are not empty, here where it comes alone (it was "
             "computed with its siblings) (at %s)\n", kind_name(st->node->kind),
             st->node->where != NULL ? st->node->where : "?");
    return;
  }
  if (st->kind == SK_WHILE) {
    while_print(b, ctx, st);
    return;
  }
  if (st->kind == SK_SORT) {
    text_put(b, "sort: a%d = %s of each row of a%d (%s keys), a radix sort %s (at %s)\n",
             st->out, st->sort_keys ? "the keys in order" : "the stable order",
             st->sort_in, P->slots[st->sort_in].type->sig,
             P->caps.sort_where != NULL ? P->caps.sort_where : "on the host",
             st->node->where != NULL ? st->node->where : "?");
    return;
  }
  if (st->nsib > 0) {   /* a group of sibling folds or maps (hfuse.c) */
    text_put(b, "kernel %d: a%d", ++*n, st->out);
    for (int i = 0; i < st->nsib; i++) text_put(b, ", a%d", st->sib_out[i]);
    text_put(b, " = %s", kind_name(st->node->kind));
    for (int i = 0; i < st->nsib; i++) text_put(b, ", %s", kind_name(st->sib_kind != NULL ? st->sib_kind[i] : st->node->kind));
    text_put(b, " (%s), rank %d %s (at %s)\n",
             st->kind == SK_PERMUTE ? "one scatter pass, each target computed once"
                                    : "one pass over the same rows",
             out->rank, out->type->sig, st->node->where != NULL ? st->node->where : "?");
  } else {
    text_put(b, "kernel %d: a%d = %s, rank %d %s%s (at %s)\n", ++*n, st->out,
             kind_name(st->node->kind), out->rank, out->type->sig,
             out->result ? "" : ", intermediate", st->node->where != NULL ? st->node->where : "?");
  }
  if (st->then != NULL)
    text_put(b, "  then the map at %s of each result, as it is stored (one kernel, not two)\n",
             st->then->where != NULL ? st->then->where : "?");
  if (st->wout >= 0)
    text_put(b, "  writes a%d too, rank %d %s, each element as it folds it (one pass, not two)\n",
             st->wout, P->slots[st->wout].rank, P->slots[st->wout].type->sig);
  if (st->hscan >= 0)
    text_put(b, "  folded in a%d's loop (the scan's), each row folded then scanned, where both "
             "go row by row (one pass over the rows, not two)\n", P->steps[st->hscan].out);
  if (st->hfold >= 0)
    text_put(b, "  its loop folds a%d's rows too, each row folded then scanned, where both go "
             "row by row\n", P->steps[st->hfold].out);
  const char *why = st->hwhy != NULL ? st->hwhy : st->node->hwhy;
  if ((st->kind == SK_FOLD || st->kind == SK_SCAN) && why != NULL)
    text_put(b, "  not in one pass with a fold over the same rows: %s\n", why);
  if (st->kind == SK_PERMUTE && why != NULL)
    text_put(b, "  not in one pass with a permute of the same index function: %s\n", why);
  text_put(b, "  pulls ");
  for (const char *c = st->desc != NULL ? st->desc : ""; *c; c++)
    if (!(*c == ' ' && (c == st->desc || c[-1] == '('))) text_put(b, "%c", *c);
  text_put(b, "\n");
  if (st->node->kind == K_STENCIL && stencil_composed(st->node->field))
    text_put(b, "  two stencils along different dimensions in one pass: the first one's values "
             "computed where the second reads them, not stored\n");
  if (st->group > 0)
    text_put(b, "  %d neighbouring elements an iteration, computing once what they share "
             "(a grouped producer)\n", st->group);
  if (st->kind == SK_FOLD && st->fn[SF_TILE] >= 0 && st->tile_least < st->tile_lanes)
    text_put(b, "  rows of any length: in tiles of %d outputs (a row's last, fewer, in tiles of "
             "half as many while they fill one), one output per vector lane, %d rows a tile\n",
             st->tile_lanes, st->tile_rows);
  else if (st->kind == SK_FOLD && st->fn[SF_TILE] >= 0)
    text_put(b, "  rows of %d outputs or more: in tiles of that many, one output per vector lane, "
             "%d rows a tile\n", st->tile_lanes, st->tile_rows);
  if (st->kind == SK_FOLD && st->fn[SF_TCOMBINE] >= 0)
    text_put(b, "  fewer tiles than twice the threads, of long rows (%d elements or more): each "
             "tile's rows in chunks on every thread, the chunks' results combined in order\n",
             2 * (int)TUNE_PART_GRAIN);
  if (st->kind == SK_FOLD && st->fn[SF_TILE] >= 0 && st->tile_strided)
    text_put(b, "  the lanes read rows apart (%d gather%s): tiles only where rows have at most %d "
             "elements%s\n", st->tile_gathers, st->tile_gathers == 1 ? "" : "s",
             (int)TUNE_TILE_STRIDED_ROW,
             st->lanes || st->tile_gathers > TILE_STRIDED_GATHERS ? "" : " or the plain loop folds one element at a time");
  if (st->checks > 0)
    text_put(b, "  checks per element: %d of %d left, %d tested once before their loop, "
             "%d proved\n", st->checks_left, st->checks, st->checks_hoisted,
             st->checks - st->checks_left - st->checks_hoisted);
}

char *explain_plan(lacc_ctx *ctx, const ast_arena *ast, const kplan *P, const char *launch,
                   const char *source) {
  text b = { 0 };
  char *head = explain_ast(ctx, ast);
  if (head == NULL) return NULL;
  int nk = plan_kernels(P);
  text_put(&b, "%s-- %d kernel%s\n", head, nk, nk == 1 ? "" : "s");
  free(head);
  for (int k = 0, n = 0; k < P->nsteps; k++) step_print(&b, ctx, P, &P->steps[k], &n);
  for (int s = 0; s < P->nslots; s++)
    if (P->slots[s].kind == SLOT_INPUT || P->slots[s].kind == SLOT_PARAM)
      text_put(&b, "input a%d: rank %d %s\n", s, P->slots[s].rank, P->slots[s].type->sig);
  if (launch != NULL) text_put(&b, "%s", launch);
  if (source != NULL) text_put(&b, "-- generated C\n%s", source);
  return text_finish(ctx, &b);
}
