/* explain.c: the closed AST as text for people.
 *
 * Owns: printing. Variables are named by their binding depth (a0, a1 for arrays,
 * x0, x1 for scalars) so the de Bruijn structure stays visible but readable.
 * Must not: change the AST, or know of plans (kir/explain_plan.c prints those after it).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ast/ast.h"
#include "base/text.h"

typedef struct {
  text t;
  int adepth, edepth;   /* binders in scope */
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  text_vput(&b->t, fmt, ap);
  va_end(ap);
}

static void indent(buf *b, int d) { put(b, "\n%*s", 2 * d, ""); }

static void exp_print(buf *b, const lacc_node *e);
static void case_alts(buf *b, const lacc_node *c, const char *outer, int *first);

static void infix(buf *b, const lacc_node *e, const char *op) {
  put(b, "(");
  exp_print(b, e->kids[0]);
  put(b, " %s ", op);
  exp_print(b, e->kids[1]);
  put(b, ")");
}

static const char *infix_symbol(prim_op p) {
  switch (p) {
  case P_ADD: return "+";
  case P_SUB: return "-";
  case P_MUL: return "*";
  case P_DIV: return "/";
  case P_IDIV: return "//";
  case P_MOD: return "%";
  case P_EQ: return "==";
  case P_NE: return "~=";
  case P_LT: return "<";
  case P_LE: return "<=";
  case P_GT: return ">";
  case P_GE: return ">=";
  case P_LAND: return "and";
  case P_LOR: return "or";
  default: return NULL;
  }
}

static void call(buf *b, const char *name, const lacc_node *e, int from) {
  put(b, "%s(", name);
  for (int i = from; i < e->nkids; i++) {
    if (i > from) put(b, ", ");
    exp_print(b, e->kids[i]);
  }
  put(b, ")");
}

static void lam_print(buf *b, const lacc_node *l) {
  put(b, "(\\");
  for (int p = 0; p < l->nparams; p++) put(b, "%sx%d", p ? " " : "", b->edepth + p);
  put(b, " -> ");
  b->edepth += l->nparams;
  exp_print(b, l->kids[0]);
  b->edepth -= l->nparams;
  put(b, ")");
}

/* The alternatives of a case, with merged inner cases flattened into patterns such as
 * Left(Just x2): one tag test for all of them. */
static void case_alts(buf *b, const lacc_node *c, const char *outer, int *first) {
  const lacc_type *t = c->kids[0]->type;
  for (int k = 1; k < c->nkids; k++) {
    const lacc_node *alt = c->kids[k];
    char pat[512];
    int base = b->edepth;
    int len = snprintf(pat, sizeof pat, "%s%s", outer, t->cnames[k - 1]);
    b->edepth += alt->nparams;
    const lacc_node *body = alt->kids[0];
    if (body->kind == K_CASE && body->merged) {
      snprintf(pat + len, sizeof pat - (size_t)len, "(");
      char inner[600];
      snprintf(inner, sizeof inner, "%s", pat);
      case_alts(b, body, inner, first);
      b->edepth = base;
      continue;
    }
    for (int p = 0; p < alt->nparams && len < (int)sizeof pat - 16; p++)
      len += snprintf(pat + len, sizeof pat - (size_t)len, " x%d", base + p);
    for (const char *o = outer; *o; o++)
      if (*o == '(' && len < (int)sizeof pat - 2) pat[len++] = ')', pat[len] = '\0';
    put(b, "%s%s -> ", *first ? "" : "; ", pat);
    *first = 0;
    exp_print(b, body);
    b->edepth = base;
  }
}

static void exp_print(buf *b, const lacc_node *e) {
  char v[64];
  switch (e->kind) {
  case K_CONST: put(b, "%s", val_format(e->type->scalar, e->cval, v, sizeof v));
    if (e->type->scalar != S_BOOL) put(b, ":%s", e->type->sig);
    break;
  case K_EVAR: put(b, "x%d", b->edepth - 1 - e->field); break;
  case K_AVAR: put(b, "a%d", b->adepth - 1 - e->field); break;
  case K_PRIM: {
    const char *sym = infix_symbol(e->prim);
    if (sym != NULL && e->nkids == 2) infix(b, e, sym);
    else call(b, prim_name(e->prim), e, 0);
    break;
  }
  case K_TUPLE: call(b, "", e, 0); break;
  case K_PRJ: exp_print(b, e->kids[0]); put(b, "[%d]", e->field + 1); break;
  case K_CAST:
    put(b, "%s<%s>", e->field ? "bitcast" : "cast", e->type->sig);
    call(b, "", e, 0);
    break;
  case K_COND: call(b, "cond", e, 0); break;
  case K_INDEX: exp_print(b, e->kids[0]); put(b, " ! "); exp_print(b, e->kids[1]); break;
  case K_SHAPE: call(b, "shape", e, 0); break;
  case K_SIZE: call(b, "size", e, 0); break;
  case K_ITERATE: case K_WHILE:
    put(b, "%s(", kind_name(e->kind));
    for (int i = 0; i < 3; i++) {
      if (i) put(b, ", ");
      if (e->kids[i]->kind == K_LAM) lam_print(b, e->kids[i]);
      else exp_print(b, e->kids[i]);
    }
    put(b, ")");
    break;
  case K_ELET:
    put(b, "let x%d = ", b->edepth);
    exp_print(b, e->kids[0]);
    put(b, " in ");
    b->edepth++;
    exp_print(b, e->kids[1]);
    b->edepth--;
    break;
  case K_LAM: lam_print(b, e); break;
  case K_CON: call(b, e->type->cnames[e->field], e, 0); break;
  case K_CASE: {
    int first = 1;
    put(b, "case ");
    exp_print(b, e->kids[0]);
    put(b, " of {");
    case_alts(b, e, "", &first);
    put(b, "}");
    break;
  }
  default: put(b, "<%s>", kind_name(e->kind));
  }
}

static void acc_print(buf *b, const lacc_node *a, int d) {
  switch (a->kind) {
  case K_ALET:
    put(b, "let a%d = ", b->adepth);
    acc_print(b, a->kids[0], d + 1);
    b->adepth++;
    put(b, " in");
    indent(b, d);
    acc_print(b, a->kids[1], d);
    b->adepth--;
    return;
  case K_AVAR: exp_print(b, a); return;
  case K_USE: {
    put(b, "use %s[", a->type->sig);
    for (int i = 0; i < a->array->rank; i++)
      put(b, "%s%lld", i ? "," : "", (long long)a->array->extent[i]);
    put(b, "]");
    return;
  }
  case K_PARAM: put(b, "param %d %s rank %d", a->field + 1, a->type->sig, a->rank); return;
  case K_RESULTS:
    for (int i = 0; i < a->nkids; i++) {
      if (i) indent(b, d);
      if (a->nkids > 1) put(b, "result %d: ", i + 1);
      acc_print(b, a->kids[i], d);
    }
    return;
  default: break;
  }
  put(b, "%s", kind_name(a->kind));
  /* a loop of several arrays: which of them this node is */
  if (a->kind == K_AWHILE && a->nparams > 1) put(b, "[%d of %d]", a->field + 1, a->nparams);
  for (int i = 0; i < a->nkids; i++) {
    const lacc_node *k = a->kids[i];
    node_level l = node_level_of(k->kind);
    if (l == L_ACC && (k->kind == K_AVAR || k->kind == K_USE || k->kind == K_PARAM)) {
      put(b, " ");
      acc_print(b, k, d + 1);
    } else if (l == L_ACC) {
      indent(b, d + 1);
      put(b, "(");
      acc_print(b, k, d + 1);
      put(b, ")");
    } else {
      put(b, " ");
      exp_print(b, k);
    }
  }
}

char *explain_ast(lacc_ctx *ctx, const ast_arena *ast) {
  buf b = { 0 };
  acc_print(&b, ast->root, 0);
  put(&b, "\n");
  if (b.t.oom || b.t.s == NULL) {
    free(b.t.s);
    err_oom(ctx);
    return NULL;
  }
  return b.t.s;
}
