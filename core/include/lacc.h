/* lacc.h: the public C ABI of liblacc.
 *
 * Owns: the contract between the core and every host (Lua 5.4 module, LuaJIT FFI,
 * C programs). Opaque handles, status codes, plain C types only; no Lua symbol.
 * The LuaJIT cdef (lua/lacc/cdef.lua) is generated from this file: keep it free of
 * macros other than the include guard and LACC_ABI_VERSION.
 *
 * Conventions: a function that builds something returns NULL on failure and leaves a
 * message in the context (lacc_errmsg); a function that returns int returns 0 (LACC_OK)
 * or a lacc_status. Types cross the ABI as signature strings: "f32", "(f32,i64)",
 * "()" for the unit tuple. Indices are 0-based here; the Lua surface is 1-based.
 */
#ifndef LACC_H
#define LACC_H

#include <stdint.h>

#define LACC_ABI_VERSION 1

/* lacc's version: the one source of it (the Lua module's lacc._VERSION and lacc.version
 * read it; the rockspecs are checked against it). */
enum { LACC_VERSION_MAJOR = 0, LACC_VERSION_MINOR = 1, LACC_VERSION_PATCH = 0 };

/* The core's limits (docs/guide.md, Limits): past one, the error says which. An enum so
 * that the LuaJIT cdef carries them; both bindings give them to Lua as core.limits. */
enum lacc_limit {
  LACC_MAX_RANK = 8,                    /* dimensions of an array */
  LACC_MAX_ELEMS_LOG2 = 40,             /* elements of an array: at most 2^40 */
  LACC_MAX_ARGS = 16,                   /* arguments of one operation or function, values
                                         * of one tuple expression, results of one run */
  LACC_MAX_ZIP = LACC_MAX_ARGS - 1,     /* arrays of one map: its node holds the function too */
  LACC_MAX_FIELDS = 729,                /* fields of a tuple type: a rank-3 stencil's 9x9x9
                                         * window is one tuple */
  /* Constructors of a sum: a match takes the value and one alternative per constructor,
   * so it alone may take more than LACC_MAX_ARGS arguments. */
  LACC_MAX_CONSTRUCTORS = 4096,
  LACC_MAX_NESTING = 64,                /* levels of an element type's nesting */
  LACC_MAX_NAME = 63,                   /* characters of a type's or constructor's name */
  LACC_MAX_DEPTH = 2000,                /* levels of an expression, array combinators too */
  LACC_MAX_STENCIL_RANK = 3,            /* rank of a stencil's arrays */
  LACC_MAX_WINDOW = 9                   /* a stencil's window per dimension (odd, from 1) */
};

typedef enum lacc_status {
  LACC_OK = 0,
  LACC_ERR_TYPE = 1,     /* ill-typed program, caught when a node is built */
  LACC_ERR_ARG = 2,      /* bad argument to an API call */
  LACC_ERR_MEMORY = 3,   /* allocation failed or size out of range */
  LACC_ERR_BOUNDS = 4,   /* index out of bounds at run time */
  LACC_ERR_DIVZERO = 5,  /* integer division by zero at run time */
  LACC_ERR_SHAPE = 6,    /* shape mismatch at run time (reshape, ...) */
  LACC_ERR_SCOPE = 7,    /* a scalar value was used outside the function it belongs to */
  LACC_ERR_BACKEND = 8,  /* unknown or unavailable backend */
  LACC_ERR_INTERRUPTED = 9  /* the run was stopped: lacc_interrupt, or SIGINT */
} lacc_status;

typedef struct lacc_ctx lacc_ctx;
typedef struct lacc_array lacc_array;
typedef struct lacc_node lacc_node;

typedef struct lacc_stats {
  int kernels;        /* kernels a backend launches for the program */
  int intermediates;  /* arrays materialised that are not results */
  int lets;           /* let bindings after sharing recovery (both levels) */
} lacc_stats;

/* The storage of an array of a scalar type as it stands, for hosts that read and write
 * elements without a call (LuaJIT's FFI). The record stays at one address for the
 * array's life and lacc keeps it current: data (row-major, C's types) may be read while
 * readable is 1 and written while writable is 1 (its values are on the host, no device
 * holds a copy, no run is reading the array). Otherwise ask lacc_array_data_read or
 * lacc_array_data, which make it so where they can. scalar: a lacc_scalar. */
typedef enum lacc_scalar {
  LACC_BOOL, LACC_I8, LACC_I16, LACC_I32, LACC_I64, LACC_U8, LACC_U16, LACC_U32, LACC_U64,
  LACC_F32, LACC_F64
} lacc_scalar;
typedef struct lacc_view {
  void *data;
  int64_t size;        /* elements */
  int64_t cols;        /* the last extent (1 at rank 0) */
  int32_t rank, scalar;
  int32_t readable, writable;
} lacc_view;

/* Copies between the host and devices since the context was made: the OpenCL backend
 * keeps arrays on its device across runs and reads one back only when the host needs
 * its values. */
typedef struct lacc_transfers {
  int64_t uploads, downloads;   /* arrays copied to a device, back to the host */
  int64_t bytes_up, bytes_down;
} lacc_transfers;

/* The opencl backend's device-memory pool, process-wide (lacc_device_memory): bytes and
 * buffers it holds now, its bound (LACC_CL_POOL_MB), and the buffers of arrays made on
 * devices and taken from it so far. */
typedef struct lacc_devmem {
  int64_t pooled, buffers, limit;
  int64_t made, reused;
} lacc_devmem;

/* The cpu backend's tiers, process-wide (lacc_tier_counts): runs of programs on the
 * interpreter, on the fast tier's kernels and on the optimised ones; fast-tier builds,
 * optimised builds finished in the background, and background builds that failed. */
typedef struct lacc_tiers {
  int64_t interp, fast, opt;
  int64_t fast_builds, builds, failed;
} lacc_tiers;

/* One of the thresholds and sizes that steer lacc's choices (lacc_tuning): its name,
 * value, unit and what it decides. */
typedef struct lacc_tuning_row {
  const char *name;
  double value;
  const char *unit, *what;
} lacc_tuning_row;

int lacc_abi_version(void);

/* A context belongs to one thread at a time (one per Lua state). Handles made in a
 * context keep it alive; using a handle with another context is an error. */
lacc_ctx *lacc_ctx_new(void);
void lacc_ctx_release(lacc_ctx *ctx);
const char *lacc_errmsg(const lacc_ctx *ctx);
int lacc_errcode(const lacc_ctx *ctx);
/* Bytes of array memory the context holds now (for the host's garbage collector). */
int64_t lacc_ctx_bytes(const lacc_ctx *ctx);
void lacc_ctx_transfers(const lacc_ctx *ctx, lacc_transfers *out);

/* Host arrays: struct-of-arrays, one buffer per scalar leaf of the element type. */
lacc_array *lacc_array_new(lacc_ctx *ctx, const char *type, int rank, const int64_t *extents);
void lacc_array_retain(lacc_array *a);
void lacc_array_release(lacc_array *a);
/* Releases a's element memory now (refused while a run reads it). a itself stays, with
 * its type and shape, for the programs that hold it (a rebinding still finds it there),
 * but its elements are gone: reading or writing them, or running a program that reads
 * a, is an error. For a host's loop: last turn's arrays are dead once this turn's exist,
 * and their memory, recycled now, is the next turn's, still in the caches. */
int lacc_array_discard(lacc_ctx *ctx, lacc_array *a);
lacc_ctx *lacc_array_ctx(const lacc_array *a);
const char *lacc_array_type(const lacc_array *a);
int lacc_array_rank(const lacc_array *a);
int64_t lacc_array_extent(const lacc_array *a, int dim);
int64_t lacc_array_size(const lacc_array *a);
int lacc_array_nleaves(const lacc_array *a);
/* Scalar type name of leaf k ("f32", ...), NULL when k is out of range. */
const char *lacc_array_leaf_type(const lacc_array *a, int leaf);
/* Leaf k's host buffer: NULL where leaves share buffers (rtu, compact) or k is out of
 * range, and NULL with an error in the array's context when its values could not be read
 * back from a device or a run is reading the array. The pointer may be written to until
 * the array is next used by a run; for writes after that, ask for it again. A sum's tag
 * buffer may be written with anything: the array's tags are checked before each run. */
void *lacc_array_leaf_data(lacc_array *a, int leaf);
/* Packed bytes: an element's scalars in order, native endianness, no padding (a tuple as
 * NumPy's packed structured dtype; a bool one byte, 0 or 1). Types with a sum have none.
 * lacc_type_bytes: bytes of one element, or -1 with an error. */
int64_t lacc_type_bytes(lacc_ctx *ctx, const char *type);
/* A new array of `type` and shape from `bytes` bytes of packed elements (exactly the
 * array's size times the element's bytes), copied; a bool byte other than 0 reads as 1. */
lacc_array *lacc_array_from_buffer(lacc_ctx *ctx, const char *type, int rank,
                                   const int64_t *extents, const void *data, int64_t bytes);
/* a's elements, packed, copied into out (`bytes` must be exactly their size). */
int lacc_array_to_buffer(lacc_ctx *ctx, lacc_array *a, void *out, int64_t bytes);
/* The leaves form, which every type has: as packed bytes for a type without a sum; with
 * a sum, each element's leaves in order, a sum's being a u32 constructor index (0-based)
 * and then every alternative's leaves (the inactive ones zero). lacc.mpi sends arrays of
 * sums so. lacc_type_leaf_bytes: bytes of one element, or -1 with an error.
 * lacc_array_from_leaves checks each constructor index (an error names the element). */
int64_t lacc_type_leaf_bytes(lacc_ctx *ctx, const char *type);
lacc_array *lacc_array_from_leaves(lacc_ctx *ctx, const char *type, int rank,
                                   const int64_t *extents, const void *data, int64_t bytes);
int lacc_array_to_leaves(lacc_ctx *ctx, lacc_array *a, void *out, int64_t bytes);
/* The storage of an array of a scalar type: its elements as C stores them, in row-major
 * order; valid, for reads and writes, as lacc_array_leaf_data's pointer is. NULL with an
 * error in the array's context for other types. */
void *lacc_array_data(lacc_array *a);
/* The same for reading only (a copy of the array on a device stays in use). */
const void *lacc_array_data_read(lacc_array *a);
/* Bytes [off, off + n) of that storage (for writing when write is 1): a pointer to byte
 * off, or NULL with an error (another type, a range outside the array's bytes). */
void *lacc_array_bytes(lacc_ctx *ctx, lacc_array *a, int64_t off, int64_t n, int write);
/* The array's view record (above); NULL for types other than scalars. */
const lacc_view *lacc_array_view(lacc_array *a);
/* NumPy's .npy files (versions 1.0 to 3.0, C order, either byte order; dtypes b1, i1-i8,
 * u1-u8, f4, f8 and structured dtypes of them, which are tuples). A load is a new array
 * (NULL with an error for a file lacc cannot hold); a save writes version 1.0 (2.0 for a
 * header past 64 KiB) in native order through a temporary file renamed over path. */
lacc_array *lacc_array_load_npy(lacc_ctx *ctx, const char *path);
int lacc_array_save_npy(lacc_ctx *ctx, lacc_array *a, const char *path);
/* A rank-2 array (rows, columns) as a PNG image at path: elements u8, f32 or f64 are grey
 * levels, tuples of 3 or 4 of them RGB or RGBA; floats are clamped to [0, 1]. */
int lacc_array_write_png(lacc_ctx *ctx, lacc_array *a, const char *path);
/* A PNG image as a rank-2 array (rows, columns) of its samples as stored: u8 (u16 for
 * 16-bit images) grey, tuples of 2, 3, 4 of them for grey+alpha, RGB, RGBA; palettes are
 * expanded to RGB (RGBA with transparency) and grey below 8 bits to u8. */
lacc_array *lacc_array_read_png(lacc_ctx *ctx, const char *path);
/* Element access by linear index and leaf; integers as int64 bit patterns
 * (u64 values above INT64_MAX come back negative), floats and bools as doubles. */
int lacc_array_get_i(lacc_ctx *ctx, const lacc_array *a, int leaf, int64_t i, int64_t *out);
int lacc_array_get_f(lacc_ctx *ctx, const lacc_array *a, int leaf, int64_t i, double *out);
/* Setters fail for a constructor index that names no constructor, and while a run is
 * reading the array (from a progress callback). */
int lacc_array_set_i(lacc_ctx *ctx, lacc_array *a, int leaf, int64_t i, int64_t v);
int lacc_array_set_f(lacc_ctx *ctx, lacc_array *a, int leaf, int64_t i, double v);

/* A host language's value, checked against a scalar type by the calls below with the
 * same rules and words on every binding: a boolean only for bool; a number (any kind)
 * for f32 and f64; an integral number for the integer types (wrapped to the type's width,
 * as C converts); anything else an error naming `name`, the host's name of the value's
 * type ("string", "table", ...), which the binding gives for every value. */
typedef enum lacc_value_kind {
  LACC_VALUE_BOOL,    /* i: 0 or 1 */
  LACC_VALUE_INT,     /* i: an integer (the host's integer type, or a 64-bit box) */
  LACC_VALUE_UINT,    /* i: the bits of an unsigned 64-bit integer past 2^63 */
  LACC_VALUE_FLOAT,   /* f: a floating-point number (integral ones fit integer types) */
  LACC_VALUE_OTHER    /* not a number or a boolean */
} lacc_value_kind;
typedef struct lacc_value {
  int32_t kind;
  int64_t i;
  double f;
  const char *name;
} lacc_value;
/* Element i (linear) of leaf `leaf` set from v, or the error (as lacc_array_set_i). */
int lacc_array_set_value(lacc_ctx *ctx, lacc_array *a, int leaf, int64_t i, const lacc_value *v);
/* A constant of scalar `type` from v (the words say "constant: ... (at where)"). */
lacc_node *lacc_exp_const_value(lacc_ctx *ctx, const char *type, const lacc_value *v,
                                const char *where);

/* Graph nodes. `where` is the host's source place ("file.lua:12"), copied.
 * Scalar level (Exp): */
lacc_node *lacc_exp_const_i(lacc_ctx *ctx, const char *type, int64_t v, const char *where);
lacc_node *lacc_exp_const_f(lacc_ctx *ctx, const char *type, double v, const char *where);
lacc_node *lacc_exp_var(lacc_ctx *ctx, const char *type, const char *where);
/* op: a primitive name ("add", "lt", "sqrt", "cond", "tuple", "index", ...); see
 * docs/core.md for the list, arities and typing rules. */
lacc_node *lacc_exp_op(lacc_ctx *ctx, const char *op, int nargs, lacc_node *const *args,
                       const char *where);
lacc_node *lacc_exp_prj(lacc_ctx *ctx, int field, lacc_node *tuple, const char *where);
lacc_node *lacc_exp_cast(lacc_ctx *ctx, const char *type, lacc_node *x, const char *where);
/* x's bits read as `type`, a number type of x's width (i32, u32, f32; i64, u64, f64; ...). */
lacc_node *lacc_exp_bitcast(lacc_ctx *ctx, const char *type, lacc_node *x, const char *where);
/* Forward-mode derivative: the derivative of scalar expression e along tangents[i] given
 * for vars[i] (variables, or any node of e treated as one, such as an array read; a NULL
 * tangent is zero), an expression of e's type built from e's own nodes (zero where e does
 * not depend on them; integer and bool values are constants). NULL with the context's
 * error where e depends on a tangent through what has no rule (a loop, a match). */
lacc_node *lacc_exp_jvp(lacc_ctx *ctx, lacc_node *e, int n, lacc_node *const *vars,
                        lacc_node *const *tangents, const char *where);
/* 1 when expression or function e, or the functions and scalar arguments of array node e,
 * read an element of array a (its shape and size do not count). */
int lacc_exp_reads(const lacc_node *e, const lacc_node *a);
/* 1 when expression e is a constant zero of a scalar type (+0 or -0 for floats): a
 * derivative lacc_exp_jvp found not to depend on its variables. */
int lacc_exp_is_zero(const lacc_node *e);
/* 1 when expression e depends on node x (x among the nodes it is built of, arrays'
 * own inputs aside; past a few thousand nodes the answer is 1). */
int lacc_exp_uses(const lacc_node *e, const lacc_node *x);
/* 1 when node x is one of e's kids from index from on, or among the nodes they are built
 * of at any level (an awhile's kids past its first arrays are what its condition and
 * body read from outside the loop); past a few thousand nodes the answer is 1. */
int lacc_acc_depends(const lacc_node *e, int from, const lacc_node *x);
/* The element reads of array a (its "index" nodes) in expression e, or in the functions
 * and scalar arguments of array node e, each once, into out, and each read's index
 * expression into index: how many (at most cap), or -1 past cap. The nodes are e's own
 * (not retained). */
int lacc_exp_sites(const lacc_node *e, const lacc_node *a, lacc_node **out, lacc_node **index,
                   int cap);
/* 1 when e is primitive op ("add", "max", ...) of x and y, in either order. */
int lacc_exp_is_op(const lacc_node *e, const char *op, const lacc_node *x, const lacc_node *y);
/* 1 when index expression idx is position v itself (a generate's index variable; for
 * rank 2 and more, the tuple of its projections), maybe through +c and -c. */
int lacc_exp_is_position(const lacc_node *idx, const lacc_node *v);
/* Whether index expression idx (of an array of rank `rank`) is, component by component,
 * a dimension of position v (dims[k], 0-based) or an integer constant (dims[k] = -1,
 * consts[k] its value): 1, or 0. With conds (NULL: not asked), a component may also be
 * a broadcast of dimension dims[k]: index 0 where the bool expression conds[k] holds,
 * the position where it does not (array arithmetic on shapes known when the program
 * runs); conds[k] is NULL for the others. The nodes are idx's own (not retained). */
int lacc_exp_index_dims(const lacc_node *idx, const lacc_node *v, int rank, int *dims,
                        int64_t *consts, lacc_node **conds);
/* The dimensions of position v (a generate's index variable) expression e depends on, as
 * bits (bit d: dimension d, 0-based); -1 when it cannot tell. */
int64_t lacc_exp_dims_used(const lacc_node *e, const lacc_node *v);
/* A value of sum type `type` made with constructor number con (0-based) from its fields.
 * Matching is lacc_exp_op "case": the scrutinee, then one function per constructor
 * taking that constructor's fields. */
lacc_node *lacc_exp_con(lacc_ctx *ctx, const char *type, int con, int nargs,
                        lacc_node *const *args, const char *where);
/* A function of nparams variables (made by lacc_exp_var) with a scalar body. */
lacc_node *lacc_lam(lacc_ctx *ctx, int nparams, lacc_node *const *params, lacc_node *body,
                    const char *where);
/* Array level (Acc): op is a combinator name ("map", "fold", ...; docs/core.md). */
lacc_node *lacc_acc_use(lacc_ctx *ctx, lacc_array *a, const char *where);
lacc_node *lacc_acc_op(lacc_ctx *ctx, const char *op, int nargs, lacc_node *const *args,
                       const char *where);
/* Array argument `index` of a program (lacc_program_new), of the given element type, rank
 * and layout ("compact", "rtu", "unboxed"; NULL: "compact"). */
lacc_node *lacc_acc_param(lacc_ctx *ctx, int index, const char *type, int rank,
                          const char *layout, const char *where);
/* A copy of the graph n in which every use of the array from[i] reads to[i] instead (i <
 * narrays), and every program from_node[i] is to_node[i] (i < nnodes), each of the same
 * element type and rank, at once (the replacements are not walked); what leads to none
 * of them is shared with n. An error for an awhile whose outside arrays would change
 * (build such a program anew). */
lacc_node *lacc_acc_rebind(lacc_ctx *ctx, lacc_node *n, int narrays, lacc_array *const *from,
                           lacc_array *const *to, int nnodes, lacc_node *const *from_node,
                           lacc_node *const *to_node);
void lacc_node_retain(lacc_node *n);
void lacc_node_release(lacc_node *n);
/* Element type signature; rank for array nodes, -1 for scalar nodes and functions. */
const char *lacc_node_type(const lacc_node *n);
int lacc_node_rank(const lacc_node *n);
/* "exp", "acc" or "lam". */
const char *lacc_node_level(const lacc_node *n);

/* The struct-of-arrays layout of an element type under a strategy ("unboxed", "rtu",
 * "compact"; NULL: "compact"), as lines of text (malloc'd; free with lacc_string_free):
 *   strategy S | choices N | tag BITS ENCODING (one per tag) | field BITS TYPE,TYPE,...
 *   | bits N | minimum N
 * Sum types are written Name<Con(t1,t2)|Con2|...> (nominal) or <t1|t2|...> (structural). */
char *lacc_layout(lacc_ctx *ctx, const char *type, const char *strategy);
/* The OpenCL devices, one line each (malloc'd; free with lacc_string_free): 1-based
 * index, name, vendor, "cpu" or "gpu", compute units, global memory in bytes, 1 if it
 * has f64, its OpenCL version, separated by tabs. An empty text when there is no
 * OpenCL; NULL with an error only when the loader fails in an unexpected way. */
char *lacc_devices(lacc_ctx *ctx);
void lacc_device_memory(lacc_devmem *out);
void lacc_tier_counts(lacc_tiers *out);
/* The i-th (0-based) tuning into *out: 1, or 0 past the last. */
int lacc_tuning(int i, lacc_tuning_row *out);
/* The strategy for arrays made from now on in this context (default "compact"). */
int lacc_set_layout(lacc_ctx *ctx, const char *strategy);
const char *lacc_array_layout(const lacc_array *a);

/* Settings, process-wide (every context sees them): "threads", "cache", "cache_mb", "cc",
 * "cflags", "verbose", "backend", "device", put before the LACC_* environment variables of
 * the same meaning. A bad value is an error that names the setting; value NULL or "" goes
 * back to the environment's. lacc_config_get: every setting in force, "name=value" lines
 * (malloc'd; free with lacc_string_free). */
int lacc_config_set(lacc_ctx *ctx, const char *name, const char *value);
char *lacc_config_get(lacc_ctx *ctx);

/* Running. backend: "interp", "cpu", "opencl" or "opencl:<device>" (NULL: $LACC_BACKEND,
 * else "cpu"). Results are new arrays written to out[0..nroots-1]; the caller releases
 * them. examples/c/ shows a program on this API, and Lua states in several threads. */
int lacc_run(lacc_ctx *ctx, const char *backend, int nroots, lacc_node *const *roots,
             lacc_array **out);
/* Progress of long runs: fn(ud, fraction) is called on the thread running a program (cpu
 * and opencl backends), first once the run has taken `after` seconds, then at most every
 * 0.2 s, and with 1.0 at its end if it was called before; fraction is the share of the
 * run's steps done (a step's chunks counted as they finish). fn NULL turns it off. */
typedef void (*lacc_progress_fn)(void *ud, double fraction);
void lacc_set_progress(lacc_ctx *ctx, lacc_progress_fn fn, void *ud, double after);
/* Stops the run in progress in ctx at its next chunk (cpu), launch (opencl) or node
 * (interp): it returns LACC_ERR_INTERRUPTED, hands out no result and leaves every array
 * as it was. Safe from the progress callback and from any thread; it asks nothing of a
 * run that starts later. A SIGINT during a run does the same for every run in progress
 * (while runs are in progress, lacc chains its own handler before the host's one, unless
 * SIGINT was ignored or had its default action). */
void lacc_interrupt(lacc_ctx *ctx);

/* Switches of the context: "fusion", "hfuse" (sibling folds and result maps in one loop),
 * "sharing" (optimisations, for ablation; default on), "source" (lacc_explain appends the
 * generated C; default off) and "source_opencl" (appends the OpenCL C instead). */
int lacc_set_option(lacc_ctx *ctx, const char *name, int value);
/* The program after sharing recovery and fusion, then its kernels, as text (malloc'd; free with lacc_string_free). */
char *lacc_explain(lacc_ctx *ctx, int nroots, lacc_node *const *roots, lacc_stats *stats);
/* lacc_explain for a backend named as lacc_run names it ("cpu", "interp", "opencl",
 * "opencl:<device>"; NULL: "cpu", whatever LACC_BACKEND says): for OpenCL the kernels
 * are those of the OpenCL backend, and the text ends with how the device runs each step
 * (its launch shapes, which depend on the device's type). */
char *lacc_explain_on(lacc_ctx *ctx, const char *backend, int nroots, lacc_node *const *roots,
                      lacc_stats *stats);
void lacc_string_free(char *s);

/* A program traced once and optimised once (sharing, fusion, compiled kernels); each
 * lacc_program_run binds nparams arrays to its lacc_acc_param nodes and runs it. A run
 * (lacc_run too) holds its program and arrays until it ends: releasing them meanwhile (from
 * a progress callback) only drops the caller's reference. */
typedef struct lacc_program lacc_program;
lacc_program *lacc_program_new(lacc_ctx *ctx, const char *backend, int nparams, int nroots,
                               lacc_node *const *roots);
int lacc_program_run(lacc_ctx *ctx, lacc_program *p, int nargs, lacc_array *const *args,
                     lacc_array **out);
int lacc_program_nresults(const lacc_program *p);
void lacc_program_release(lacc_program *p);

#endif
