/* internal.h: the objects every part of the core shares, and base/'s entry points.
 *
 * Owns: the context, element types and values, layouts, host arrays, the node (graph
 * and AST share one struct; the node and primitive tables are nodes.h), the wording of
 * run errors, the awhile loop. Each part adds a header of its own stages
 * (front/front.h, ast/ast.h, kir/kir.h). Only the file that owns a structure (named
 * beside it) allocates or mutates it.
 */
#ifndef LACC_INTERNAL_H
#define LACC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "lacc.h"
#include "base/tune.h"

/* Largest element count: keeps every byte size and index computation far from overflow.
 * The other limits are public (lacc.h). */
#define LACC_MAX_ELEMS ((int64_t)1 << LACC_MAX_ELEMS_LOG2)
/* Iterations of a fold over a fused producer (a contraction): no index may wrap. */
#define LACC_MAX_SPACE ((int64_t)1 << 62)
#define LACC_ERRMAX 1024
/* Generated code past LACC_OPT_SOURCE takes an optimising compiler minutes (docs/design.md, Measurements): it
 * is compiled without optimisation. Past LACC_MAX_SOURCE a program is refused rather
 * than left to hang. */
#define LACC_OPT_SOURCE ((size_t)TUNE_OPT_SOURCE)
#define LACC_MAX_SOURCE ((size_t)TUNE_MAX_SOURCE)

/* ---- scalars and values (type.c) ---- */
typedef enum {
  S_BOOL, S_I8, S_I16, S_I32, S_I64, S_U8, S_U16, S_U32, S_U64, S_F32, S_F64, S_NSCALAR
} scalar_kind;

/* One scalar value: ints sign- or zero-extended into i/u, f32 kept in f. */
typedef union {
  int64_t i;
  uint64_t u;
  double d;
  float f;
} lacc_val;

/* ---- element types (type.c): interned per context, so equal types are equal pointers */
typedef enum { T_SCALAR, T_TUPLE, T_SUM } type_kind;

/* The *_RADIX strategies force the mixed-radix tag encoding (for measuring it against
 * bit-packed tags); otherwise tags are bit-packed whenever that fits the tag's width. */
typedef enum {
  LAYOUT_UNBOXED, LAYOUT_RTU, LAYOUT_COMPACT, LAYOUT_RTU_RADIX, LAYOUT_COMPACT_RADIX,
  LAYOUT_NSTRATEGIES
} layout_strategy;

typedef struct lacc_type {
  type_kind kind;
  scalar_kind scalar;          /* T_SCALAR */
  int n;                       /* T_TUPLE: fields; T_SUM: constructors */
  const struct lacc_type **fields;  /* T_SUM: each constructor's payload, a tuple */
  char **cnames;               /* T_SUM: constructor names */
  char *name;                  /* T_SUM: the nominal name, NULL for a structural variant */
  int has_sum;                 /* a sum occurs in it */
  int nleaves;                 /* leaves of a flattened value: scalars, and for each sum a
                                  u32 constructor index followed by every payload's leaves */
  uint64_t choices;            /* sums add, products multiply (saturating) */
  int packed_bits;             /* width of a bit-packed combined tag */
  struct layout_plan *plans[LAYOUT_NSTRATEGIES];  /* per strategy (layout.c), on demand */
  char *sig;                   /* canonical signature, also the intern key */
  uint64_t hash;               /* of sig */
  struct lacc_type *next;      /* the next type in its intern bucket */
} lacc_type;

/* ---- context (ctx.c) ---- */
struct lacc_ctx {
  int refs;
  int errcode;
  char errmsg[LACC_ERRMAX];
  struct {                     /* interned types: a hash table keyed by signature */
    lacc_type **bucket;
    size_t nbuckets, n;        /* nbuckets: 0 or a power of two */
  } types;
  int64_t bytes;               /* array memory held */
  uint64_t next_id;
  uint64_t next_mark;           /* generations for graph walks (sharing.c) */
  layout_strategy layout;        /* for arrays made now (lacc_set_layout) */
  int fusion, hfuse, sharing;    /* optimisation switches (lacc_set_option), default on */
  int explain_source;            /* lacc_explain appends the generated C (2: OpenCL C) */
  struct memo_entry **memo;      /* live programs by shape (memo.c): buckets, or NULL */
  struct {                       /* programs of recent shapes kept after they were freed
                                    (memo.c, run.c): oldest first */
    struct { void *value; size_t bytes; } *e;   /* each, and the memory it holds (about) */
    size_t total;                /* the memory all of them hold */
    int n;
    int dropping;                /* being released: only they held the context */
    void (*drop)(struct lacc_ctx *ctx);   /* releases them (run.c) */
  } kept;
  lacc_transfers moved;          /* copies between host and devices, for lacc_transfers */
  struct {                       /* lacc_set_progress, and the run being reported */
    lacc_progress_fn fn;
    void *ud;
    double after;
    int depth, step, nsteps, reported;
    struct timespec start, last;
  } progress;
  struct {                       /* the run in progress, for lacc_interrupt (interrupt.c) */
    _Atomic int stop;            /* set from any thread; cleared as the outermost run starts */
    int depth;                   /* runs nested in it (awhile's programs) */
    unsigned long sigints;       /* SIGINTs seen by then */
    int (*yield)(void *);        /* stop to run again on other code (tier.c): better code
                                    is ready, or the interpreter's time is up */
    void *yield_arg;
    _Atomic int yielded;         /* the run stopped so (set from any thread) */
  } run;
};

void ctx_retain(lacc_ctx *ctx);
int ctx_error(lacc_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ctx_clear(lacc_ctx *ctx);
void *ctx_alloc(lacc_ctx *ctx, size_t n);   /* calloc; error "out of memory" on failure */
/* Progress of the outermost run of a context (ctx.c): begin/end around a plan's steps,
 * at(step) before each, tick(ctx, share of the step done) from the running thread. */
void progress_begin(lacc_ctx *ctx, int nsteps);
void progress_at(lacc_ctx *ctx, int step);
void progress_tick(void *ctx, double step_done);
void progress_end(lacc_ctx *ctx, int done);
/* Interruption (interrupt.c): begin/end around every run of a plan or the interpreter
 * (nested runs count); stopped(ctx) says whether lacc_interrupt or a SIGINT asked the
 * run to stop (any thread may ask, e.g. pool workers before each chunk, as a pool_fn's
 * stop test); interrupted(ctx) sets its error and returns LACC_ERR_INTERRUPTED. */
void run_begin(lacc_ctx *ctx);
void run_end(lacc_ctx *ctx);
int run_stopped(void *ctx);
int run_interrupted(lacc_ctx *ctx);
/* Keeps this library mapped for the life of the process (ctx.c): process-wide state
 * lives in it (the thread pool, kernel caches, OpenCL contexts); whether that worked. */
int lib_pin(void);
/* LACC_VERBOSE is set (not empty, not "0"): first builds of kernels are reported on stderr. */
int verbose(void);
double seconds_since(const struct timespec *t0);

/* Frees every type interned in ctx (when the context goes). */
void types_free(lacc_ctx *ctx);
const lacc_type *type_scalar(lacc_ctx *ctx, scalar_kind k);
const lacc_type *type_tuple(lacc_ctx *ctx, int n, const lacc_type *const *fields);
const lacc_type *type_parse(lacc_ctx *ctx, const char *sig);  /* NULL + error if bad */
const lacc_type *type_shape(lacc_ctx *ctx, int rank);          /* (), i64, (i64,i64) ... */
/* A sum: name NULL for a structural variant; payloads are tuple types. */
const lacc_type *type_sum(lacc_ctx *ctx, const char *name, int n, const char *const *cnames,
                          const lacc_type *const *payloads);
int type_is_shape(const lacc_type *t, int *rank);
int type_leaf_offset(const lacc_type *t, int field);           /* first leaf of a field */
scalar_kind type_leaf(const lacc_type *t, int leaf);
const char *scalar_name(scalar_kind k);
size_t scalar_size(scalar_kind k);
int scalar_is_int(scalar_kind k);
int scalar_is_signed(scalar_kind k);
int scalar_is_float(scalar_kind k);
int scalar_bits(scalar_kind k);
/* Normalise a value to its scalar kind (wrap ints, round f32). */
lacc_val val_cast(scalar_kind to, scalar_kind from, lacc_val v);
/* A value's bits, zero-extended to 64 (floats' IEEE encoding), and back (layout.c). */
uint64_t val_bits(scalar_kind k, lacc_val v);
lacc_val val_of_bits(scalar_kind k, uint64_t bits);
lacc_val val_load(scalar_kind k, const void *base, int64_t i);
void val_store(scalar_kind k, void *base, int64_t i, lacc_val v);
/* Print a value in Lua's style into buf; returns buf. */
char *val_format(scalar_kind k, lacc_val v, char *buf, size_t size);

/* ---- layouts (layout.c) ---- */
/* How values of a type are stored: nbufs arrays of buf_kind elements. Without sums
 * (and for unboxed) buffer k holds value leaf k; rtu and compact store one combined
 * tag and raw-bit slots that leaves of different alternatives share. */
typedef struct layout_plan {
  layout_strategy strategy;
  int nbufs;
  scalar_kind *buf_kind;
  int *leaf_buf;               /* per value leaf: its buffer, -1 when it lives in the tag */
  int tag_buf;                 /* the combined tag's buffer, -1 if none */
  int raw;                     /* buffers hold bits: leaves are bit-cast in and out */
  int packed;                  /* combined tag bit-packed rather than mixed radix */
} layout_plan;

int layout_lookup(const char *name, layout_strategy *out);
const char *layout_name(layout_strategy st);
const layout_plan *layout_plan_of(lacc_ctx *ctx, const lacc_type *t, layout_strategy st);
void layout_plan_free(layout_plan *p);
void layout_store(const layout_plan *p, const lacc_type *t, void **bufs, int64_t i,
                  const lacc_val *leaves);
/* Bits of a sum's widest alternative's packed tag (its constructor sits above them). */
int layout_payload_bits(const lacc_type *t);
void layout_load(const layout_plan *p, const lacc_type *t, void *const *bufs, int64_t i,
                 lacc_val *leaves);

/* ---- host arrays (array.c) ---- */

/* A copy of an array's buffers held elsewhere (an OpenCL device), made and owned by the
 * backend that made it: fetch fills the host buffers from it, drop lets go of it. The
 * core only calls these; it never looks inside. */
typedef struct array_mirror array_mirror;
typedef struct {
  int (*fetch)(array_mirror *m, lacc_array *a);
  void (*drop)(array_mirror *m);
} mirror_ops;
struct array_mirror {
  const mirror_ops *ops;
};

struct lacc_array {
  int refs;
  lacc_ctx *ctx;
  const lacc_type *type;
  const layout_plan *plan;
  int rank;
  int64_t extent[LACC_MAX_RANK];
  int64_t size;
  int64_t bytes;
  void **buf;                  /* plan->nbufs buffers of size elements */
  array_mirror *mirror;        /* a copy on a device, or NULL */
  int host_stale;              /* buf is not written yet: the mirror holds the values */
  int busy;                    /* runs reading it now: host writes are refused (run.c) */
  int exposed;                 /* a tag leaf's buffer was handed out (lacc_array_leaf_data):
                                  its tags are checked before each run */
  lacc_view view;              /* kept current by view_sync (array.c) */
  int discarded;               /* its elements released (lacc_array_discard) */
};

lacc_array *array_alloc(lacc_ctx *ctx, const lacc_type *t, int rank, const int64_t *extent);
/* Scratch memory from the arrays' allocator (large buffers recycled, not cleared): for
 * work that needs big temporaries (a sort's passes); give back with its size. */
void *buffer_take(size_t bytes);
void buffer_give(void *p, size_t bytes);
lacc_array *array_alloc_plan(lacc_ctx *ctx, const lacc_type *t, int rank, const int64_t *extent,
                             const layout_plan *plan);
/* Like array_alloc_plan, for an output every element of which is written before it is
 * read: its memory may hold an earlier array's bytes. */
lacc_array *array_alloc_out(lacc_ctx *ctx, const lacc_type *t, int rank, const int64_t *extent,
                            const layout_plan *plan);
void array_load(const lacc_array *a, int64_t i, lacc_val *leaves);
/* a in the layout plan: a itself, retained, when it is already; else a copy. */
lacc_array *array_relayout(lacc_ctx *ctx, lacc_array *a, const layout_plan *plan);
void array_store(lacc_array *a, int64_t i, const lacc_val *leaves);
/* Make a's host buffers hold its values (fetched from its mirror when they are stale).
 * Everything that reads buf on the host calls it first; array_load does not. */
int array_host(lacc_array *a);
/* a's host buffers are about to change: its mirror is dropped (after array_host). */
void array_host_written(lacc_array *a);
/* A run starts (+1) or ends (-1) reading a: host writes are refused meanwhile. */
void array_busy(lacc_array *a, int d);
/* m becomes a's mirror (the old one is dropped); stale: only m holds the values. */
void array_set_mirror(lacc_array *a, array_mirror *m, int stale);
/* Before a run reads a: when raw pointers to its tags were handed out, every element's
 * constructor indices are checked; an invalid one is an error naming what (the argument
 * or the place of the array). */
int array_check_tags(lacc_ctx *ctx, lacc_array *a, const char *what);

/* ---- node kinds and primitives: generated from their tables */
#include "base/nodes.h"

/* A graph node (shared by identity, refcounted) or an AST node (a tree, owned by
 * its ast_arena). Fields unused by a kind stay zero. */
struct lacc_node {
  node_kind kind;
  int refs;                    /* graph only */
  lacc_ctx *ctx;
  const lacc_type *type;       /* element type (acc), value type (exp), result (lam) */
  int rank;                    /* acc: rank; exp/lam: -1 */
  prim_op prim;
  int field;                   /* K_PRJ field; K_CON constructor; K_EVAR/K_AVAR de Bruijn
                                  index; K_PARAM the parameter's index; K_CAST 1 for a
                                  bitcast */
  int nparams;                 /* K_LAM */
  lacc_val cval;               /* K_CONST: the value; graph K_PARAM: its layout (.i, a
                                  layout_strategy) */
  lacc_array *array;           /* K_USE */
  char *where;
  uint64_t id;                 /* graph: stable name */
  int depth;                   /* longest path to a leaf, bounded by LACC_MAX_DEPTH */
  int nkids;
  struct lacc_node **kids;     /* K_LAM: params first, body last */
  struct lacc_node **sub;      /* K_AWHILE: condition, body, the loop's variable, then the
                                  arrays read from outside (kids 1..): nkids + 2 graph
                                  nodes (graph: retained; AST: borrowed) */
  struct ast_arena *loop;      /* AST K_AWHILE: the condition and the body, two closed
                                  ASTs whose parameters are the node's kids (sharing.c;
                                  owned by the enclosing arena's `nested`) */
  /* Marks of one stage each, on AST nodes: written by that stage only, before the
   * stages that read them run (the driver's order: run.c). */
  int merged;                  /* K_CASE decided by its enclosing case's tag test: written
                                  by simplify.c; read by lowering and explain */
  int manifest;                /* array term materialised by its own kernel: written by
                                  fusion.c; read by lowering */
  struct lacc_node *hlead;     /* folds computed in one loop (hfuse.c): the group's first
                                  member (itself on the first), NULL alone; */
  struct lacc_node *hnext;     /* the next member; */
  const char *hwhy;            /* a fold left alone though a sibling reads the same rows:
                                  why (explain); */
  struct lacc_node *hwrite;    /* a let-bound map: the fold (a group's first) whose loop
                                  also writes it; that fold: the map (hfuse.c); read by
                                  fusion, lowering and explain */
  struct lacc_node *hscan;     /* a scan: the fold (a group's first) over the same rows
                                  whose row loop it may share; that fold: the scan
                                  (hfuse.c); read by lowering */
  int kindex;                  /* K_CONST: 1 + its place among the constants whose values
                                  memo.c's key leaves out (a plan found by that key reads
                                  them from the program's own table), else 0: written by
                                  memo.c; read by lowering */
  int value_read;              /* K_CONST: a stage after the key decided something by its
                                  value (hfuse.c, lowering: node_value_read), so a plan
                                  runs only programs of that value: read by memo.c */
  /* Scratch of a walk over the graph, valid while mark equals the generation the walk
   * took from ctx->next_mark: sharing recovery (one conversion) and awhile_build
   * (awhile.c) use it; nothing keeps a value in it past its walk. */
  int tmp;
  uint64_t mark;
};

/* A stage after memo.c's key (hfuse, lowering) decides by constant n's value: marked so
 * that the plan is shared only by programs whose constant there has that value. (Casts
 * away the const of a stage that only reads the AST otherwise: the mark is memo.c's.) */
static inline void node_value_read(const lacc_node *n) {
  if (n->kind == K_CONST) ((lacc_node *)n)->value_read = 1;
}

/* ---- errors of runs, worded once (errors.c); each returns its code.
 * The error in ctx after node failed to allocate its result: a shape or size error gets
 * the node's combinator and place. */
int node_alloc_error(lacc_ctx *ctx, const lacc_node *node);
/* LACC_OK, or the error for a program whose generated code (len bytes of `lang`, for
 * `backend`) is past LACC_MAX_SOURCE. */
int source_size_check(lacc_ctx *ctx, const char *backend, const char *lang, size_t len);
/* ix: 0-based indices, shape: the array's extents, rank of each. */
int err_index(lacc_ctx *ctx, int rank, const int64_t *ix, const int64_t *shape,
              const char *where);
int err_backpermute(lacc_ctx *ctx, const char *where);
int err_permute(lacc_ctx *ctx, const char *where);
int err_divzero(lacc_ctx *ctx, const char *prim, const char *where);
int err_reshape(lacc_ctx *ctx, int64_t have, int64_t want, const char *where);
int err_fold1_empty(lacc_ctx *ctx, const char *where);
int err_tape(lacc_ctx *ctx, int64_t have, int64_t limit, const char *where);
int err_oom(lacc_ctx *ctx);
/* How a host value (lacc_value) goes into a scalar of kind k: *out as S_I64 or S_F64
 * (*from), or the error in the words of an element write, or of a constant at `where`
 * when as_const (values.c). */
int value_route(lacc_ctx *ctx, scalar_kind k, const lacc_value *v, int as_const,
                const char *where, lacc_val *out, scalar_kind *from);
int err_too_large(lacc_ctx *ctx, const char *what, const char *where);
int err_shape_extent(lacc_ctx *ctx, const char *prefix, int64_t extent, int dim);
int err_shape_size(lacc_ctx *ctx, const char *prefix);
/* The elements of an array of `rank` extents (*size), checked as every array is: no
 * negative extent, at most 2^40 elements, no product formed past that (array.c). An
 * error's text starts with prefix (NULL: none). */
int shape_size(lacc_ctx *ctx, const char *prefix, int rank, const int64_t *ext, int64_t *size);
int err_extent(lacc_ctx *ctx, const char *what, int64_t extent, int64_t dim,
               const char *where);
/* K_STENCIL's field: the boundary (low 4 bits), the window size of dimension d in bits
 * 4 + 4d, and bit 16 set where lacc.stencil made it of two stencils along different
 * dimensions (explain says so). */
typedef enum { B_CLAMP, B_MIRROR, B_WRAP, B_CONSTANT } boundary_kind;
static inline boundary_kind stencil_boundary(int spec) { return (boundary_kind)(spec & 15); }
static inline int stencil_window(int spec, int d) { return (spec >> (4 + 4 * d)) & 15; }
static inline int stencil_composed(int spec) { return (spec >> 16) & 1; }

/* An awhile loop (base/loop.c): runs the condition (which == 0: one rank-0 bool array)
 * or the body (which == 1: the loop's next arrays, as many as it has) of arguments args
 * (the loop's arrays, then what it reads from outside); the runner is the interpreter or
 * the executor of plans. */
typedef int (*loop_runner)(void *ud, int which, lacc_array *const *args, lacc_array **out);
/* The loop: its m initial arrays args[0..m-1], the arrays it reads args[m..n-1]; state:
 * the layouts the loop's arrays are kept in (NULL, or an entry NULL: as they come);
 * out: its m results. */
int awhile_run(lacc_ctx *ctx, loop_runner run, void *ud, int m, const layout_plan *const *state,
               int n, lacc_array *const *args, lacc_array **out);

/* Layouts of element types (layout.c): text for lacc_layout. */
char *layout_describe(lacc_ctx *ctx, const lacc_type *t, const char *strategy);

/* Scalar primitive semantics, shared by the interpreter and constant folding (prim.c).
 * Returns 0, or LACC_ERR_DIVZERO. */
int prim_eval(prim_op p, scalar_kind arg, int nargs, const lacc_val *x, lacc_val *out);
uint64_t prim_ipow(uint64_t x, uint64_t n, int neg);   /* ipow on 64 bits (prim.c) */
/* Result type of a primitive, or NULL with an error in ctx. */
const lacc_type *prim_result_type(lacc_ctx *ctx, prim_op p, int nargs,
                                  const lacc_type *const *args, const char *where);

#endif
