-- Generated from core/include/lacc.h by tools/gen_cdef.sh: do not edit.
return [[
enum { LACC_VERSION_MAJOR = 0, LACC_VERSION_MINOR = 1, LACC_VERSION_PATCH = 0 };
enum lacc_limit {
  LACC_MAX_RANK = 8,
  LACC_MAX_ELEMS_LOG2 = 40,
  LACC_MAX_ARGS = 16,
  LACC_MAX_ZIP = LACC_MAX_ARGS - 1,
  LACC_MAX_FIELDS = 729,
  LACC_MAX_CONSTRUCTORS = 4096,
  LACC_MAX_NESTING = 64,
  LACC_MAX_NAME = 63,
  LACC_MAX_DEPTH = 2000,
  LACC_MAX_STENCIL_RANK = 3,
  LACC_MAX_WINDOW = 9
};
typedef enum lacc_status {
  LACC_OK = 0,
  LACC_ERR_TYPE = 1,
  LACC_ERR_ARG = 2,
  LACC_ERR_MEMORY = 3,
  LACC_ERR_BOUNDS = 4,
  LACC_ERR_DIVZERO = 5,
  LACC_ERR_SHAPE = 6,
  LACC_ERR_SCOPE = 7,
  LACC_ERR_BACKEND = 8,
  LACC_ERR_INTERRUPTED = 9
} lacc_status;
typedef struct lacc_ctx lacc_ctx;
typedef struct lacc_array lacc_array;
typedef struct lacc_node lacc_node;
typedef struct lacc_stats {
  int kernels;
  int intermediates;
  int lets;
} lacc_stats;
typedef enum lacc_scalar {
  LACC_BOOL, LACC_I8, LACC_I16, LACC_I32, LACC_I64, LACC_U8, LACC_U16, LACC_U32, LACC_U64,
  LACC_F32, LACC_F64
} lacc_scalar;
typedef struct lacc_view {
  void *data;
  int64_t size;
  int64_t cols;
  int32_t rank, scalar;
  int32_t readable, writable;
} lacc_view;
typedef struct lacc_transfers {
  int64_t uploads, downloads;
  int64_t bytes_up, bytes_down;
} lacc_transfers;
typedef struct lacc_devmem {
  int64_t pooled, buffers, limit;
  int64_t made, reused;
} lacc_devmem;
typedef struct lacc_tiers {
  int64_t interp, fast, opt;
  int64_t fast_builds, builds, failed;
} lacc_tiers;
typedef struct lacc_tuning_row {
  const char *name;
  double value;
  const char *unit, *what;
} lacc_tuning_row;
int lacc_abi_version(void);
lacc_ctx *lacc_ctx_new(void);
void lacc_ctx_release(lacc_ctx *ctx);
const char *lacc_errmsg(const lacc_ctx *ctx);
int lacc_errcode(const lacc_ctx *ctx);
int64_t lacc_ctx_bytes(const lacc_ctx *ctx);
void lacc_ctx_transfers(const lacc_ctx *ctx, lacc_transfers *out);
lacc_array *lacc_array_new(lacc_ctx *ctx, const char *type, int rank, const int64_t *extents);
void lacc_array_retain(lacc_array *a);
void lacc_array_release(lacc_array *a);
int lacc_array_discard(lacc_ctx *ctx, lacc_array *a);
lacc_ctx *lacc_array_ctx(const lacc_array *a);
const char *lacc_array_type(const lacc_array *a);
int lacc_array_rank(const lacc_array *a);
int64_t lacc_array_extent(const lacc_array *a, int dim);
int64_t lacc_array_size(const lacc_array *a);
int lacc_array_nleaves(const lacc_array *a);
const char *lacc_array_leaf_type(const lacc_array *a, int leaf);
void *lacc_array_leaf_data(lacc_array *a, int leaf);
int64_t lacc_type_bytes(lacc_ctx *ctx, const char *type);
lacc_array *lacc_array_from_buffer(lacc_ctx *ctx, const char *type, int rank,
                                   const int64_t *extents, const void *data, int64_t bytes);
int lacc_array_to_buffer(lacc_ctx *ctx, lacc_array *a, void *out, int64_t bytes);
int64_t lacc_type_leaf_bytes(lacc_ctx *ctx, const char *type);
lacc_array *lacc_array_from_leaves(lacc_ctx *ctx, const char *type, int rank,
                                   const int64_t *extents, const void *data, int64_t bytes);
int lacc_array_to_leaves(lacc_ctx *ctx, lacc_array *a, void *out, int64_t bytes);
void *lacc_array_data(lacc_array *a);
const void *lacc_array_data_read(lacc_array *a);
void *lacc_array_bytes(lacc_ctx *ctx, lacc_array *a, int64_t off, int64_t n, int write);
const lacc_view *lacc_array_view(lacc_array *a);
lacc_array *lacc_array_load_npy(lacc_ctx *ctx, const char *path);
int lacc_array_save_npy(lacc_ctx *ctx, lacc_array *a, const char *path);
int lacc_array_write_png(lacc_ctx *ctx, lacc_array *a, const char *path);
lacc_array *lacc_array_read_png(lacc_ctx *ctx, const char *path);
int lacc_array_get_i(lacc_ctx *ctx, const lacc_array *a, int leaf, int64_t i, int64_t *out);
int lacc_array_get_f(lacc_ctx *ctx, const lacc_array *a, int leaf, int64_t i, double *out);
int lacc_array_set_i(lacc_ctx *ctx, lacc_array *a, int leaf, int64_t i, int64_t v);
int lacc_array_set_f(lacc_ctx *ctx, lacc_array *a, int leaf, int64_t i, double v);
typedef enum lacc_value_kind {
  LACC_VALUE_BOOL,
  LACC_VALUE_INT,
  LACC_VALUE_UINT,
  LACC_VALUE_FLOAT,
  LACC_VALUE_OTHER
} lacc_value_kind;
typedef struct lacc_value {
  int32_t kind;
  int64_t i;
  double f;
  const char *name;
} lacc_value;
int lacc_array_set_value(lacc_ctx *ctx, lacc_array *a, int leaf, int64_t i, const lacc_value *v);
lacc_node *lacc_exp_const_value(lacc_ctx *ctx, const char *type, const lacc_value *v,
                                const char *where);
lacc_node *lacc_exp_const_i(lacc_ctx *ctx, const char *type, int64_t v, const char *where);
lacc_node *lacc_exp_const_f(lacc_ctx *ctx, const char *type, double v, const char *where);
lacc_node *lacc_exp_var(lacc_ctx *ctx, const char *type, const char *where);
lacc_node *lacc_exp_op(lacc_ctx *ctx, const char *op, int nargs, lacc_node *const *args,
                       const char *where);
lacc_node *lacc_exp_prj(lacc_ctx *ctx, int field, lacc_node *tuple, const char *where);
lacc_node *lacc_exp_cast(lacc_ctx *ctx, const char *type, lacc_node *x, const char *where);
lacc_node *lacc_exp_bitcast(lacc_ctx *ctx, const char *type, lacc_node *x, const char *where);
lacc_node *lacc_exp_jvp(lacc_ctx *ctx, lacc_node *e, int n, lacc_node *const *vars,
                        lacc_node *const *tangents, const char *where);
int lacc_exp_reads(const lacc_node *e, const lacc_node *a);
int lacc_exp_is_zero(const lacc_node *e);
int lacc_exp_uses(const lacc_node *e, const lacc_node *x);
int lacc_acc_depends(const lacc_node *e, int from, const lacc_node *x);
int lacc_exp_sites(const lacc_node *e, const lacc_node *a, lacc_node **out, lacc_node **index,
                   int cap);
int lacc_exp_is_op(const lacc_node *e, const char *op, const lacc_node *x, const lacc_node *y);
int lacc_exp_is_position(const lacc_node *idx, const lacc_node *v);
int lacc_exp_index_dims(const lacc_node *idx, const lacc_node *v, int rank, int *dims,
                        int64_t *consts, lacc_node **conds);
int64_t lacc_exp_dims_used(const lacc_node *e, const lacc_node *v);
lacc_node *lacc_exp_con(lacc_ctx *ctx, const char *type, int con, int nargs,
                        lacc_node *const *args, const char *where);
lacc_node *lacc_lam(lacc_ctx *ctx, int nparams, lacc_node *const *params, lacc_node *body,
                    const char *where);
lacc_node *lacc_acc_use(lacc_ctx *ctx, lacc_array *a, const char *where);
lacc_node *lacc_acc_op(lacc_ctx *ctx, const char *op, int nargs, lacc_node *const *args,
                       const char *where);
lacc_node *lacc_acc_param(lacc_ctx *ctx, int index, const char *type, int rank,
                          const char *layout, const char *where);
lacc_node *lacc_acc_rebind(lacc_ctx *ctx, lacc_node *n, int narrays, lacc_array *const *from,
                           lacc_array *const *to, int nnodes, lacc_node *const *from_node,
                           lacc_node *const *to_node);
void lacc_node_retain(lacc_node *n);
void lacc_node_release(lacc_node *n);
const char *lacc_node_type(const lacc_node *n);
int lacc_node_rank(const lacc_node *n);
const char *lacc_node_level(const lacc_node *n);
char *lacc_layout(lacc_ctx *ctx, const char *type, const char *strategy);
char *lacc_devices(lacc_ctx *ctx);
void lacc_device_memory(lacc_devmem *out);
void lacc_tier_counts(lacc_tiers *out);
int lacc_tuning(int i, lacc_tuning_row *out);
int lacc_set_layout(lacc_ctx *ctx, const char *strategy);
const char *lacc_array_layout(const lacc_array *a);
int lacc_config_set(lacc_ctx *ctx, const char *name, const char *value);
char *lacc_config_get(lacc_ctx *ctx);
int lacc_run(lacc_ctx *ctx, const char *backend, int nroots, lacc_node *const *roots,
             lacc_array **out);
typedef void (*lacc_progress_fn)(void *ud, double fraction);
void lacc_set_progress(lacc_ctx *ctx, lacc_progress_fn fn, void *ud, double after);
void lacc_interrupt(lacc_ctx *ctx);
int lacc_set_option(lacc_ctx *ctx, const char *name, int value);
char *lacc_explain(lacc_ctx *ctx, int nroots, lacc_node *const *roots, lacc_stats *stats);
char *lacc_explain_on(lacc_ctx *ctx, const char *backend, int nroots, lacc_node *const *roots,
                      lacc_stats *stats);
void lacc_string_free(char *s);
typedef struct lacc_program lacc_program;
lacc_program *lacc_program_new(lacc_ctx *ctx, const char *backend, int nparams, int nroots,
                               lacc_node *const *roots);
int lacc_program_run(lacc_ctx *ctx, lacc_program *p, int nargs, lacc_array *const *args,
                     lacc_array **out);
int lacc_program_nresults(const lacc_program *p);
void lacc_program_release(lacc_program *p);
]]
