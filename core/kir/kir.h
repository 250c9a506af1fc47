/* kir.h: the kernel IR and the execution plan shared by the lowering and the backends.
 *
 * Owns: the imperative form every backend prints (C and OpenCL C): functions
 * of typed scalar variables with structured control flow and loads/stores of layout
 * buffers; and the plan: which arrays are materialised (slots), in which order the
 * kernels run (steps), and the run-time checks a kernel may raise.
 * Must not: depend on a backend; lower.c builds it, emit_c.c prints it, exec.c runs it
 * through a backend's operations (backend.h).
 */
#ifndef LACC_KIR_H
#define LACC_KIR_H

#include "ast/ast.h"

/* What the backend a plan is for can run: lowering asks this, never which backend it is
 * (each backend's table holds its own: kir/backend.h). */
typedef struct {
  int cpu_like;          /* the kernels run on a CPU (the cpu backend, or an OpenCL CPU
                            device): code shapes for vector units and caches (strips, lane
                            tiles) are chosen */
  int work_groups;       /* work-group functions: fold trees (FN_GROUP), contraction tiles
                            (FN_GTILE) */
  int lane_segments;     /* a long segment of a commutative fold in per-lane accumulators */
  int private_scatter;   /* a permute into private copies of its targets, then merged */
  const char *sort_where;  /* where a sort step runs, for explain (NULL: on the host) */
  int wide_tile_most;      /* cpu-like: the largest scalar (bytes) whose contraction tiles
                              take 8 rows where the CPU has AVX-512 (lower_tile.c); 0 none
                              (PoCL's f64 tiles ran 1.5x slower so: 4 there) */
  int wide_tile_rows;      /* and such a tile's rows and bytes of outputs a row: 0, the */
  int wide_tile_bytes;     /* cpu backend's 6 and TUNE_TILE_WIDE_BYTES (lower_tile.c) */
  int tile_group_bytes;    /* cpu-like: a full contraction tile's lanes in loops of this
                              many bytes each (one vector), 0: one loop (lower_tile.c) */
  int tile_parts;          /* a tile's rows split into chunks, their partials combined in
                              order (FN_TILE's p1 < 0, FN_TCOMBINE), where tiles are few */
} kcaps;

/* ---- instructions: three-address code over variables declared at function level */

/* What an operation's fields are (kop_flags): it writes dst (KF_DST), reads a or b
 * (KF_A, KF_B: variables), addresses slot and buf (KF_SLOT), reads args[] (KF_ARGS),
 * opens a block that KO_END closes (KF_OPEN), stands in the prologue only (KF_PRO). */
enum { KF_DST = 1, KF_A = 2, KF_B = 4, KF_SLOT = 8, KF_ARGS = 16, KF_OPEN = 32, KF_PRO = 64 };

/* _(ENUM, name, fields): the operations, defined once; name is what LACC_DUMP prints. */
#define KIR_OPS(_) \
  _(CONST,      "const",      KF_DST)                 /* dst = imm (dst's type) */ \
  _(MOV,        "mov",        KF_DST | KF_A)          /* dst = a */ \
  _(PRIM,       "prim",       KF_DST | KF_A)          /* dst = prim(a [, b] [, args[0]]) on a's \
                                                         type; integer division is total (0 on 0); \
                                                         b is read when the primitive has two \
                                                         operands or more, args[0] for three */ \
  _(CAST,       "cast",       KF_DST | KF_A)          /* dst = a converted with val_cast semantics */ \
  _(TOBITS,     "tobits",     KF_DST | KF_A)          /* dst (u64) = the bits of a */ \
  _(FROMBITS,   "frombits",   KF_DST | KF_A)          /* dst = the value whose bits are a (u64) */ \
  _(LOAD,       "load",       KF_DST | KF_A | KF_SLOT) /* dst = S[slot].buf[buf][a] (dst has the \
                                                          buffer's kind) */ \
  _(STORE,      "store",      KF_A | KF_B | KF_SLOT)  /* S[slot].buf[buf][a] = b */ \
  _(EXTENT,     "extent",     KF_DST | KF_SLOT)       /* dst = S[slot].ext[imm.i] */ \
  _(OUT,        "out",        KF_A)                   /* out[imm.i] = a (shape functions) */ \
  _(IF,         "if",         KF_A | KF_OPEN)         /* if (a) { */ \
  _(ELSE,       "else",       0)                      /* } else { */ \
  _(END,        "end",        0)                      /* } */ \
  _(FOR,        "for",        KF_DST | KF_A | KF_B | KF_OPEN) /* for (dst = a; dst + imm.i <= b; \
                                                                 dst += imm.i) { */ \
  _(LOOP,       "loop",       KF_OPEN)                /* for (;;) { */ \
  _(BREAKIFNOT, "breakifnot", KF_A)                   /* if (!a) break; */ \
  _(FAIL,       "fail",       KF_ARGS)                /* report check `check` at element a (or \
                                                         -1) with the values args[0..nargs-1] */ \
  _(RETURN,     "return",     0)                      /* leave the function (after a FAIL in a \
                                                         prologue: the shapes are wrong, and \
                                                         nothing after may assume them right) */ \
  _(KCONST,     "kconst",     KF_DST | KF_PRO)        /* dst = the program constant K[imm.i] */ \
  _(LGET,       "lget",       KF_DST | KF_A | KF_B)   /* dst = a[b], a a lane array */ \
  _(LSET,       "lset",       KF_DST | KF_A | KF_B)   /* dst[a] = b, dst a lane array */ \
  _(ALOAD,      "aload",      KF_DST | KF_A | KF_SLOT) /* dst = S[slot].buf[buf][a], read \
                                                          atomically */ \
  _(CAS,        "cas",        KF_DST | KF_A | KF_B | KF_SLOT | KF_ARGS) /* dst (bool) = \
                    compare-and-swap of S[slot].buf[buf][a] from args[0] to b, comparing bits */ \
  /* work-group functions only (FN_GROUP, OpenCL): */ \
  _(LMSTORE,    "lmstore",    KF_A | KF_B)            /* the work-group's local word a = b (u64) */ \
  _(LMLOAD,     "lmload",     KF_DST | KF_A)          /* dst (u64) = the work-group's local word a */ \
  _(BARRIER,    "barrier",    0)                      /* every work-item of the group arrives \
                                                         before any goes on */

typedef enum {
#define KOP_ENUM(e, name, fields) KO_##e,
  KIR_OPS(KOP_ENUM)
#undef KOP_ENUM
} kop;
/* how many (outside kop: switches over kop need not name it) */
enum {
#define KOP_ONE(e, name, fields) + 1
  KO_NOPS = 0 KIR_OPS(KOP_ONE)
#undef KOP_ONE
};

static inline unsigned kop_flags(kop op) {
  switch (op) {
#define KOP_FLAGS(e, name, fields) case KO_##e: return fields;
  KIR_OPS(KOP_FLAGS)
#undef KOP_FLAGS
  default: return 0;
  }
}

typedef struct {
  kop op;
  int dst, a, b;
  prim_op prim;
  lacc_val imm;
  int slot, buf;
  int check;
  int nargs;
  int *args;
  int unroll;        /* KO_FOR: copies of the body per trip the C compiler is asked for
                        (0: its choice); a loop of a few cheap operations per element */
  int cl_unroll;     /* KO_FOR: the same, of the OpenCL C compiler only: a tile's lanes,
                        every one, so that PoCL keeps the lane arrays in vector registers
                        (gcc does so unasked) */
  int expect;        /* KO_IF: the arm the test is expected to take (1 then, -1 else, 0
                        no guess), told to the OpenCL C compiler only: a fold's test that
                        keeps its accumulator (min, max, argmin) then stays a branch, as
                        gcc keeps it, rather than selects chained through the accumulator
                        (PoCL's argmin loop took twice as long so) */
} kinst;

typedef struct {
  kinst *v;
  int n, cap;
} klist;

/* The variable an instruction writes (a lane array for KO_LSET), or -1. */
static inline int kinst_def(const kinst *in) { return kop_flags(in->op) & KF_DST ? in->dst : -1; }

/* Every function has the same C signature:
 *   void f(const lacc_kslot *S, lacc_krt *rt, int64_t p0, p1, p2, p3, int64_t *out)
 * p0..p3 are variables 0..3. Roles say what the executor passes. */
typedef enum {
  FN_SHAPE,      /* out[] = the step's extents (a fold adds the inner extent last) */
  FN_BODY,       /* elements p0 <= i < p1 of a map-like step */
  FN_SEG,        /* fold segments p0 <= o < p1, each sequentially in order */
  FN_PART,       /* fold segment p0, elements p1 <= j < p2, into partial slot at p3 */
  FN_COMBINE,    /* fold segment p0 from partials 0 <= c < p1; scan: partials become
                    each chunk's carry-in */
  FN_CHUNK,      /* scan segment p0, elements p1 <= j < p2, chunk p3 (its carry-in) */
  FN_SCATTER,    /* permute source elements p0 <= i < p1 into the output */
  FN_TILE,       /* cpu only: fold tiles p0 <= t < p1 (lower_tile.c): LW neighbouring
                    outputs of one output row, one per vector lane; with kcaps.tile_parts
                    the rows' elements p2 <= k < p3, and p1 < 0: one chunk of tile p0 */
  FN_GROUP,      /* OpenCL only: fold segment p0 from partials 0 <= c < p1 (p1 >= p3) by
                    one work-group of p3 work-items, p2 this one: each folds its share in
                    order, then the shares combine pairwise in local memory, in order */
  FN_GTILE,      /* OpenCL only: a contraction's outputs in work-groups of LACC_GTILE x
                    LACC_GTILE, work-group p0, work-item p1 of LACC_GROUP, the operands
                    staged in local memory (lower_gtile.c) */
  FN_TCOMBINE    /* cpu only: fold outputs p0 <= o < p1 from the chunks 0 <= c < p2 of
                    the FN_TILE chunks of few tiles of long rows (lower_tile.c) */
} fn_role;

/* An FN_GTILE function's variables, for the pass that stages its operands after bounds.c
 * (lower_gtile.c): the work-item's place in its tile, the row and column it computes
 * (whether they exist), the contraction's index (the block's first and the element's)
 * and its extent, and three markers (MOVs of 0 into these variables): where the
 * staging goes, and the element's code. */
/* KO_FAIL's check of a cpu tile whose hoisted test failed (hoist.c): no error, but the
 * executor folds the step's rows in its plain loop instead (launch.c), which checks
 * and reports as the interpreter does; reported with the largest key, after any other. */
enum { CHECK_UNTILED = -2 };

/* The most gathers of a strided tile's element (pstep's tile_gathers) where its rows are
 * longer than TUNE_TILE_STRIDED_ROW (argmin's pairs: 1; lower_tile.c, launch.c). */
enum { TILE_STRIDED_GATHERS = 2 };

typedef struct kgtile {
  int ti, tj, inq, inj, kb, kk, k, K, mark_stage, mark_from, mark_to;
} kgtile;
#define LACC_GTILE 16          /* LACC_GTILE * LACC_GTILE == LACC_GROUP */

typedef struct kfn {
  fn_role role;
  int step;
  klist pro;               /* loop-invariant prologue: extents, shapes */
  klist body;
  scalar_kind *vt;         /* variable types */
  int nvars, vcap;
  int *lanes;              /* lanes[i], lanes[i + 1]: a variable that is an array of
                              that many lanes (per-lane accumulators the C compiler
                              keeps in vector registers) */
  int nlanes, lcap;
  int *facts;              /* triples v, hi, off: 0 <= v <= hi + off (off 0 or -1)
                              wherever v is defined, by construction (bounds.c proves
                              checks with them); a parameter's hold in the body */
  int nfacts, fcap;
  int tile_lane;           /* FN_TILE: the variable of its lanes' main loop */
  kgtile *gtile;           /* FN_GTILE: its variables (plan arena), else NULL */
} kfn;

/* ---- the plan */
typedef enum { SLOT_INPUT, SLOT_PARAM, SLOT_KERNEL, SLOT_PARTIAL } slot_kind;

typedef struct {
  slot_kind kind;
  lacc_array *array;       /* SLOT_INPUT (retained by the AST) */
  int param;               /* SLOT_PARAM: the parameter; SLOT_INPUT: where the driver
                              bound it, its place among a run's arrays (the arguments,
                              then the program's uses: a plan shared by programs of one
                              shape binds each one's own), else -1 (`array`) */
  const lacc_type *type;
  int rank;
  const layout_plan *plan;
  int last_use;            /* step after which an intermediate can be released */
  int result;              /* returned to the caller */
} pslot;

/* SK_TEST computes an acond's condition into a rank-0 bool slot; SK_SELECT (no
 * functions) makes its output slot the array of the branch taken. SK_WHILE (no
 * functions) runs an awhile's condition and body, programs of their own. SK_SORT (no
 * functions) puts the stable order of each row of slot sort_in's keys, or the keys
 * sorted, in its output (base/sort.c, on the backend's threads). */
typedef enum { SK_MAP, SK_FOLD, SK_SCAN, SK_PERMUTE, SK_TEST, SK_SELECT, SK_WHILE, SK_SORT } step_kind;

/* A step's functions, by what each does for it (pstep.fn). */
typedef enum {
  SF_SHAPE,      /* FN_SHAPE: the step's extents */
  SF_BODY,       /* FN_BODY, or a fold's FN_SEG: every element or segment */
  SF_PART,       /* fold, scan: FN_PART, a chunk of a segment into a partial */
  SF_COMBINE,    /* fold, scan: FN_COMBINE, the partials of a segment */
  SF_CHUNK,      /* scan: FN_CHUNK, a chunk from its carry-in */
  SF_SCATTER,    /* permute: FN_SCATTER, in order */
  SF_ASCATTER,   /* permute: FN_SCATTER with compare-and-swap (atomic) */
  SF_PSCATTER,   /* permute (cpu): into private copies of the targets (partial), copy c at
                    c * (targets + LACC_PRIVATE_GAP), */
  SF_PMERGE,     /* then the copies merged */
  SF_GROUP,      /* fold on OpenCL: FN_GROUP */
  SF_GTILE,      /* fold on OpenCL: FN_GTILE */
  SF_TILE,       /* fold on the cpu: FN_TILE */
  SF_TCOMBINE,   /* fold on the cpu: FN_TCOMBINE, the outputs from FN_TILE's chunks */
  SF_HROWS,      /* scan: FN_SEG, rows p0 <= o < p1, each folded by the fold step hfold's
                    row code, then scanned (run in place of both where both go row by row) */
  SF_COUNT
} step_fn;

/* A step runs only if its guard chain holds: slot's bool == want, then the parent's. */
typedef struct {
  int slot, want, parent;
} pguard;

typedef struct {
  step_kind kind;
  const lacc_node *node;   /* the AST node it computes (explain, messages) */
  int out, partial;        /* slots */
  int fn[SF_COUNT];        /* its functions by what each does for it, -1 where none */
  int tile_lanes;          /* fold on the cpu backend with an SF_TILE: its LW, the least
                              outputs a row for which it pays (tile_least), */
  int tile_least;
  int tile_rows;           /* and how many outer rows a tile takes */
  int group;               /* map: elements written an iteration, sharing their common work
                              (a grouped producer: lower_group.c), or 0 */
  int with_z;              /* fold: an empty row folds to the start value (no fold1) */
  const lacc_node *empty;  /* fold: the node an empty row is an error of (the first fold1) */
  int empty_later;         /* fold: a group that runs before its first fold1 would alone
                              (a member with a start value comes first): 1 while lowering
                              has not reached that fold1 (the error is raised here, as
                              empty), 2 once a check step at its place reports it (the
                              group then folds empty rows, its fold1s' results unused),
                              0 when nothing came between (lower.c: lw_fold_reached) */
  int hscan, hfold;        /* fold: the scan step that folds its rows in SF_HROWS where
                              both go row by row (the executor skips the fold then), and
                              that scan: the fold step; -1 (hfuse.c: hscan) */
  int check_only;          /* a step that only tests a condition and reports its error
                              (explain prints it apart, not as a kernel) */
  int lanes;               /* fold: commutative, its partials use per-lane accumulators */
  int tile_strided;        /* fold: its SF_TILE's lanes read apart (each its own row), */
  int tile_gathers;        /* in that many loads */
  int atomic;              /* permute: SF_ASCATTER updates targets with compare-and-swap */
  int ordered;             /* fold/scan: rows only in order (no chunks: a float min/max
                              scan, or fold with the accumulator second) */
  int guard;               /* index into the plan's guards, -1: always runs */
  int sel_test, sel_then, sel_else;  /* SK_SELECT: slots */
  int sort_in;             /* SK_SORT: the keys' slot */
  int sort_keys;           /* SK_SORT: the sorted keys (sortkeys), else the positions */
  int *loop_in, nloop_in;  /* SK_WHILE: the initial arrays' slots, then what the loop reads */
  const lacc_node *then;    /* fold: a map of its results, applied to each as it is stored
                              (the step's output is the map's; lower.c) */
  int *loop_out, nloop_out;  /* SK_WHILE: the slots of the loop's arrays (out: the first) */
  struct kplan *loop[2];   /* SK_WHILE: the condition's and the body's plans (owned), of
                              node->loop[0] and [1] */
  int rank;                /* of the output */
  int nsib;                /* fold: sibling folds computed in the same loops (hfuse.c): */
  int *sib_out, *sib_partial;  /* their outputs and partials (plan arena), each as out's */
  node_kind *sib_kind;     /* fold: and their kinds (explain; maps: NULL, all maps) */
  int wout;                /* fold: a map the loop also writes, element by element, of its
                              input's shape (hfuse.c: hwrite), else -1; */
  int wext;                /* where the shape function gives that map's extents: 0, its
                              input's, or past them (a flattened map of its own rank) */
  char *desc;              /* what the kernel pulls, as a term (explain) */
  const char *hwhy;        /* fold: why lowering kept it apart from its group (explain;
                              else node->hwhy, hfuse.c's reason, if any) */
  int checks, checks_left; /* distinct checks in its loops before and after bounds.c, */
  int checks_hoisted;      /* and those hoist.c tests once before their loop */
} pstep;

/* Where sibling i's extents are in what step st's shape function gave (a permute group's
 * members have their own, each its rank's extents then its source's size: lower_push.c). */
static inline const int64_t *step_sib_ext(const pstep *st, const int64_t *ext, int i) {
  return st->kind == SK_PERMUTE ? ext + (i + 1) * (st->rank + 1) : ext;
}

/* A permute group's member m's slot (m < 0: the step's own). */
static inline int step_member_slot(const pstep *st, int m) {
  return m <= 0 ? st->out : st->sib_out[m - 1];
}

/* Whether a permute step's members' extents agree (one pass for all of them), else the
 * executors run it once per member, with that member's bit of the mask. */
static inline int step_members_agree(const pstep *st, const int64_t *ext) {
  for (int i = 0; i < st->nsib; i++)
    for (int d = 0; d <= st->rank; d++)
      if (step_sib_ext(st, ext, i)[d] != ext[d]) return 0;
  return 1;
}

typedef enum {
  CK_INDEX, CK_BACKPERMUTE, CK_PERMUTE, CK_DIVZERO, CK_RESHAPE, CK_EXTENT,
  CK_SIZE,       /* a delayed array's element count past LACC_MAX_ELEMS */
  CK_EMPTY,      /* a fold1's rows empty (a check step: pstep.empty_later) */
  CK_TAPE        /* a pullback's tape of loop states past grad_mb (tape_limit) */
} check_kind;

typedef struct {
  check_kind kind;
  const char *where;
  const char *what;        /* the primitive or combinator named in the message */
  int rank;
} pcheck;

/* A constant of the plan's table: the AST constant it is (its kindex: memo.c's key left
 * its value out, so a program of another value there may run this plan with its own
 * table), 0 for one made by lowering (of values the key holds, or that lowering read:
 * node_value_read); read: the C printed for the plan depends on its value (a shift count
 * written into the code: emit_c.c), so no other value may run it. */
typedef struct {
  int k;
  int read;
} kconst_src;

typedef struct kplan {
  lacc_ctx *ctx;
  pslot *slots;
  int nslots, scap;
  pstep *steps;
  int nsteps, stcap;
  kfn *fns;
  int nfns, fcap;
  pcheck *checks;
  int nchecks, ccap;
  int *results;
  int nresults;
  pguard *guards;
  int nguards, gcap;
  lacc_val *consts;        /* constants of the program, passed at run time so that the
                              kernels' source (and the compile cache) does not vary */
  int nconsts, kcap;
  kconst_src *ksrc;        /* where each constant came from (nconsts of them) */
  int kscap;
  int nparams;
  kcaps caps;              /* of the backend it is for (awhile's nested plans too) */
  void *code;              /* the backend's kernels for it (backend.h: compile, release) */
  int group_words;         /* local words per work-item FN_GROUP functions need */
  struct kblock *mem;      /* arena for IR arguments and lowering scratch */
  size_t mem_bytes;        /* its blocks' memory */
} kplan;

/* Whether lowering reads a user constant of type t and value v from the plan's table at
 * run time (else it writes it into the code: 0, 1, -1, booleans). */
int kir_const_lifted(const lacc_type *t, lacc_val v);

int kplan_init(kplan *P, lacc_ctx *ctx);
void kplan_free(kplan *P);
void *kplan_alloc(kplan *P, size_t n);
/* Whether the plan reads no array by identity: no loops, every input slot bound to its
 * place among a run's arrays (run.c binds them). Such a plan outlives its AST's graph:
 * kplan_detach then points its checks at the places' copies (ast_detach's m) and
 * forgets its input slots' arrays. */
int kplan_detachable(const kplan *P);
void kplan_detach(kplan *P, const ast_places *m);


/* Lowering (lower.c): the AST (after fusion_mark) into a plan for a backend that can
 * run what caps says; its nested ASTs (awhile) into nested plans. layouts: each
 * parameter's layout (NULL: the parameter nodes'). */
int lower_plan(lacc_ctx *ctx, const ast_arena *ast, const kcaps *caps,
               const layout_strategy *layouts, kplan *P);

/* The passes after lowering (passes.c: its table is their order): checks proved and
 * removed or hoisted, tiles kept or dropped; steps' check counts set. Errors go into ctx. */
int kir_passes(lacc_ctx *ctx, kplan *P);

/* C printing (emit_c.c): the whole plan as one translation unit (malloc'd text).
 * Function k is named lacc_f<k>. */
char *emit_c(const kplan *P);
/* Functions lo..hi-1 only, with the prelude: a part of the plan compiled on its own. */
char *emit_c_part(const kplan *P, int lo, int hi);
/* The text every translation unit of emit_c and emit_c_part starts with (the same for
 * every plan, built once; NULL when that ran out of memory). */
const char *emit_c_prefix(void);
/* OpenCL C printing (emit_c.c): one kernel, lacc_main, with the arguments
 *   E (every slot's extents, slot s at E[s * LACC_MAX_RANK]), K (constants' bits),
 *   F (failure record), p0 p1 p2 p3, nch (work-items), which (the function to run),
 *   then the buffers cl_kernel_buffer finds, by slot, then buffer. Shape functions are
 *   left out: the executor runs them on the host; so are FN_GROUP functions unless
 *   groups has CL_TREES and FN_GTILE functions unless it has CL_TILES (with either,
 *   lacc_main holds LACC_GROUP * group_words local words for them). */
#define LACC_GROUP 256         /* the most work-items of an FN_GROUP work-group */
#define LACC_GROUP_TEXT "256"  /* the same, in OpenCL C source */
/* Elements between two private copies of a permute's targets: at least 128 bytes for
 * any element, so that no cache line (nor the pair a prefetcher fetches) is written by
 * two threads. */
#define LACC_PRIVATE_GAP 128
enum { CL_TREES = 1, CL_TILES = 2 };   /* emit_cl's groups: FN_GROUP, FN_GTILE printed */
char *emit_cl(const kplan *P, int groups);
/* Whether function F reads or writes buffer buf of slot (and *written if it writes). */
int kfn_uses_buffer(const kfn *F, int slot, int buf, int *written);
/* Whether any function of P but the shape functions uses buffer buf of slot. */
int cl_kernel_buffer(const kplan *P, int slot, int buf, int *written);

/* The error for check `check` of P failing with values vals (checks.c). */
int plan_check_error(lacc_ctx *ctx, const kplan *P, int check, const int64_t *vals);

/* Text for people (explain.c): the AST and the plan's kernels, then launch (a backend's
 * account of how it runs them) and source if given. */
char *explain_plan(lacc_ctx *ctx, const ast_arena *ast, const kplan *P, const char *launch,
                   const char *source);
int plan_kernels(const kplan *P);

#endif
