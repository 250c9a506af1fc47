/* nodes.h: every node kind and every scalar primitive, each defined once.
 *
 * Owns: the two tables (NODEDEF, PRIMDEF) and what is generated from them: the node_kind
 * and prim_op enums, and the declarations of the lookups over them (kinds: nodes.c;
 * primitives: prim.c). As LuaJIT's IRDEF in lj_ir.h, a kind or a primitive is added by
 * one line here; the stages that handle it still add their cases.
 * Must not: rename entries (explain prints the names; the surfaces in lua/lacc/ call
 * operations by them) or reorder them (no behaviour change is wanted from a new order).
 * Included by base/internal.h, which the stages include.
 */
#ifndef LACC_NODES_H
#define LACC_NODES_H

typedef enum { L_EXP, L_ACC, L_LAM } node_level;

/* The flags of a node kind. */
enum {
  NF_OP = 1,      /* built by name: lacc_exp_op at the scalar level, lacc_acc_op at the array */
  NF_AST = 2,     /* only in the closed AST (sharing.c makes it) */
  NF_WIDE = 4,    /* takes a value and one function per constructor: may pass LACC_MAX_ARGS */
  NF_Z = 8,       /* takes a start value (fold, scanl, scanr) */
  NF_SCAN = 16,   /* along the innermost dimension, keeping the rank */
  NF_RIGHT = 32,  /* from the end of the row; f(x, acc) */
  NF_PUSH = 64    /* a push array along the innermost dimension */
};

/* Its arguments are not a fixed number. */
#define ARITY_ANY (-1)

/* _(ENUM, name, level, arity, flags). name: what kind_name gives (explain's text, the
 * errors) and, for NF_OP, the operation's name. level: node_level_of (L_ prefixed).
 * arity: the arguments its constructor takes when fixed (awhile's node then keeps what
 * its condition and body read as kids), else ARITY_ANY. */
#define NODEDEF(_) \
  /* scalar level */ \
  _(CONST,       "const",       EXP, 0,         0) \
  _(VAR,         "var",         EXP, 0,         0) \
  _(PRIM,        "prim",        EXP, ARITY_ANY, 0) \
  _(TUPLE,       "tuple",       EXP, ARITY_ANY, NF_OP) \
  _(PRJ,         "prj",         EXP, 1,         0) \
  _(CAST,        "cast",        EXP, 1,         0) \
  _(COND,        "cond",        EXP, 3,         NF_OP) \
  _(INDEX,       "index",       EXP, 2,         NF_OP) \
  _(SHAPE,       "shape",       EXP, 1,         NF_OP) \
  _(SIZE,        "size",        EXP, 1,         NF_OP) \
  _(ITERATE,     "iterate",     EXP, 3,         NF_OP) \
  _(WHILE,       "while",       EXP, 3,         NF_OP) \
  _(CON,         "con",         EXP, ARITY_ANY, 0) \
  _(CASE,        "case",        EXP, ARITY_ANY, NF_OP | NF_WIDE) \
  _(LAM,         "lam",         LAM, ARITY_ANY, 0) \
  /* array level */ \
  _(USE,         "use",         ACC, 0,         0) \
  _(UNIT,        "unit",        ACC, 1,         NF_OP) \
  _(GENERATE,    "generate",    ACC, 2,         NF_OP) \
  _(MAP,         "map",         ACC, ARITY_ANY, NF_OP) \
  _(FOLD,        "fold",        ACC, 3,         NF_OP | NF_Z) \
  _(FOLD1,       "fold1",       ACC, 2,         NF_OP) \
  _(BACKPERMUTE, "backpermute", ACC, 3,         NF_OP) \
  _(RESHAPE,     "reshape",     ACC, 2,         NF_OP) \
  _(SCANL,       "scanl",       ACC, 3,         NF_OP | NF_SCAN | NF_Z) \
  _(SCANL1,      "scanl1",      ACC, 2,         NF_OP | NF_SCAN) \
  _(SCANR,       "scanr",       ACC, 3,         NF_OP | NF_SCAN | NF_RIGHT | NF_Z) \
  _(SCANR1,      "scanr1",      ACC, 2,         NF_OP | NF_SCAN | NF_RIGHT) \
  /* its argument, materialised (fusion stops here) */ \
  _(COMPUTE,     "compute",     ACC, 1,         NF_OP) \
  /* combine, defaults, index function, source */ \
  _(PERMUTE,     "permute",     ACC, 4,         NF_OP) \
  _(APPEND,      "append",      ACC, 2,         NF_OP | NF_PUSH) \
  _(INTERLEAVE,  "interleave",  ACC, 2,         NF_OP | NF_PUSH) \
  /* f, xs [, constant]; field: stencil_spec */ \
  _(STENCIL,     "stencil",     ACC, ARITY_ANY, NF_OP) \
  /* c (a bool expression), then-array, else-array */ \
  _(ACOND,       "acond",       ACC, 3,         NF_OP) \
  /* the initial arrays, then the arrays its condition and body read from outside \
     (sub: cond, bodies, variables, those arrays; nparams: how many arrays the loop has, \
     field: which of them this node is; cval.u: the loop's name) */ \
  _(AWHILE,      "awhile",      ACC, ARITY_ANY, NF_OP) \
  /* an argument of a compiled program (field: its index) */ \
  _(PARAM,       "param",       ACC, 0,         0) \
  /* the stable ascending order of each row of u32 or u64 keys: i64 positions, 1-based \
     (lacc.sort and its relatives map their keys to such radix keys first) */ \
  _(SORTPERM,    "sortperm",    ACC, 1,         NF_OP) \
  /* the same keys, each row sorted (lacc.sort of numbers turns them back into values) */ \
  _(SORTKEYS,    "sortkeys",    ACC, 1,         NF_OP) \
  /* only in the closed AST */ \
  _(ELET,        "let",         EXP, 2,         NF_AST) \
  _(EVAR,        "var",         EXP, 0,         NF_AST) \
  _(ALET,        "let",         ACC, 2,         NF_AST) \
  _(AVAR,        "avar",        ACC, 0,         NF_AST) \
  _(RESULTS,     "results",     ACC, ARITY_ANY, NF_AST)

/* ---- graph and AST nodes: one kind enum for both (graph.c builds, sharing.c converts) */
typedef enum {
#define NODE_ENUM(e, name, level, arity, flags) K_##e,
  NODEDEF(NODE_ENUM)
#undef NODE_ENUM
  K_NKINDS
} node_kind;

const char *kind_name(node_kind k);
node_level node_level_of(node_kind k);
int node_arity(node_kind k);           /* ARITY_ANY when not fixed */
int node_has(node_kind k, int flag);   /* one of the NF_ flags */
/* The kind of the operation called name (an NF_OP kind, of either level): 1, or 0. */
int node_lookup(const char *name, node_kind *out);
int is_scan(node_kind k);
int scan_right(node_kind k);     /* scanr, scanr1: from the end; f(x, acc) */
int scan_with_z(node_kind k);    /* scanl, scanr: start value, one more element */

/* The flags of a primitive. */
enum {
  PF_BOOL = 1,    /* its result is bool, whatever its operands */
  PF_CMP = 2,     /* a comparison of two values of any one scalar type */
  PF_DIV = 4      /* on integers, a zero divisor is an error (LACC_ERR_DIVZERO) */
};

/* _(ENUM, name, arity, operands, flags). name: the operation's name (lacc_exp_op) and
 * what errors and explain print. operands: the class of scalar types it accepts, NUM
 * (not bool), INT, FLOAT, BOOL or ANY (prim.c); two operands are of one type. */
#define PRIMDEF(_) \
  _(ADD,      "add",      2, NUM,   0) \
  _(SUB,      "sub",      2, NUM,   0) \
  _(MUL,      "mul",      2, NUM,   0) \
  _(DIV,      "div",      2, FLOAT, 0) \
  _(IDIV,     "idiv",     2, NUM,   PF_DIV) \
  _(MOD,      "mod",      2, NUM,   PF_DIV) \
  _(QUOT,     "quot",     2, INT,   PF_DIV) \
  _(REM,      "rem",      2, INT,   PF_DIV) \
  _(POW,      "pow",      2, FLOAT, 0) \
  _(NEG,      "neg",      1, NUM,   0) \
  _(ABS,      "abs",      1, NUM,   0) \
  _(SIGNUM,   "signum",   1, NUM,   0) \
  _(MIN,      "min",      2, NUM,   0) \
  _(MAX,      "max",      2, NUM,   0) \
  _(EQ,       "eq",       2, ANY,   PF_BOOL | PF_CMP) \
  _(NE,       "ne",       2, ANY,   PF_BOOL | PF_CMP) \
  _(LT,       "lt",       2, ANY,   PF_BOOL | PF_CMP) \
  _(LE,       "le",       2, ANY,   PF_BOOL | PF_CMP) \
  _(GT,       "gt",       2, ANY,   PF_BOOL | PF_CMP) \
  _(GE,       "ge",       2, ANY,   PF_BOOL | PF_CMP) \
  _(LAND,     "land",     2, BOOL,  PF_BOOL) \
  _(LOR,      "lor",      2, BOOL,  PF_BOOL) \
  _(LNOT,     "lnot",     1, BOOL,  PF_BOOL) \
  _(BAND,     "band",     2, INT,   0) \
  _(BOR,      "bor",      2, INT,   0) \
  _(BXOR,     "bxor",     2, INT,   0) \
  _(BNOT,     "bnot",     1, INT,   0) \
  _(SHL,      "shl",      2, INT,   0) \
  _(SHR,      "shr",      2, INT,   0) \
  _(SQRT,     "sqrt",     1, FLOAT, 0) \
  _(EXP,      "exp",      1, FLOAT, 0) \
  _(LOG,      "log",      1, FLOAT, 0) \
  _(SIN,      "sin",      1, FLOAT, 0) \
  _(COS,      "cos",      1, FLOAT, 0) \
  _(TAN,      "tan",      1, FLOAT, 0) \
  _(ASIN,     "asin",     1, FLOAT, 0) \
  _(ACOS,     "acos",     1, FLOAT, 0) \
  _(ATAN,     "atan",     1, FLOAT, 0) \
  _(ATAN2,    "atan2",    2, FLOAT, 0) \
  _(FLOOR,    "floor",    1, FLOAT, 0) \
  _(CEIL,     "ceil",     1, FLOAT, 0) \
  _(ROUND,    "round",    1, FLOAT, 0) \
  _(TRUNCATE, "truncate", 1, FLOAT, 0) \
  _(ISNAN,    "isnan",    1, FLOAT, PF_BOOL) \
  _(ISINF,    "isinf",    1, FLOAT, PF_BOOL) \
  _(ISFINITE, "isfinite", 1, FLOAT, PF_BOOL) \
  _(SINH,     "sinh",     1, FLOAT, 0) \
  _(COSH,     "cosh",     1, FLOAT, 0) \
  _(TANH,     "tanh",     1, FLOAT, 0) \
  _(ASINH,    "asinh",    1, FLOAT, 0) \
  _(ACOSH,    "acosh",    1, FLOAT, 0) \
  _(ATANH,    "atanh",    1, FLOAT, 0) \
  _(LOG2,     "log2",     1, FLOAT, 0) \
  _(LOG10,    "log10",    1, FLOAT, 0) \
  _(LOG1P,    "log1p",    1, FLOAT, 0) \
  _(EXPM1,    "expm1",    1, FLOAT, 0) \
  _(CBRT,     "cbrt",     1, FLOAT, 0) \
  _(HYPOT,    "hypot",    2, FLOAT, 0) \
  _(ROUNDEVEN, "round_even", 1, FLOAT, 0) \
  _(IPOW,     "ipow",     2, INT,   0) \
  _(FMA,      "fma",      3, FLOAT, 0) \
  _(EXP2,     "exp2",     1, FLOAT, 0) \
  _(TAPE_LIMIT, "tape_limit", 3, INT, 0)   /* lacc's own: x, failing when have > limit */

typedef enum {
#define PRIM_ENUM(e, name, arity, operands, flags) P_##e,
  PRIMDEF(PRIM_ENUM)
#undef PRIM_ENUM
  P_NPRIMS
} prim_op;

const char *prim_name(prim_op p);
int prim_arity(prim_op p);
int prim_lookup(const char *name, prim_op *out);
int prim_has(prim_op p, int flag);     /* one of the PF_ flags */

#endif
