/* tune.h: every threshold and size that steers one of lacc's choices, in one table.
 *
 * Owns: the values, their units and what each decides, for both backends, the tiers and
 * the builds; lacc_tuning() (config.c) hands the table out (lacc.tuning() in Lua), and
 * the guide's table of them is checked against it (spec/surface/docs_spec.lua).
 * Must not: hold settings a user changes (LACC_* variables: base/settings.c) or limits of
 * the language (lacc.h).
 *
 * X(name, value, unit, what): integers become the enum constants TUNE_<name>, the real
 * numbers static constants TUNE_<name>. A new tuning is one row here. */
#ifndef LACC_TUNE_H
#define LACC_TUNE_H

/* Chunks: a run stops (lacc_interrupt, SIGINT) and reports progress only between chunks;
 * 2^14 elements take microseconds of simple code, milliseconds of heavy code, and a chunk
 * costs about as much as a few elements. Partials: their memory is one element each. A
 * permute onto few targets: the threads would contend for the same cache lines. Code past
 * OPT_SOURCE takes an optimising compiler minutes; past MAX_SOURCE a program is refused,
 * not left to hang (the measurements behind these: docs/design.md, Measurements). */
#define LACC_TUNE_INTS(X) \
  X(CPU_GRAIN, 4096, "elements", \
    "cpu: the least work of a chunk of a parallel loop (below it, no thread hand-off)") \
  X(CPU_CHUNK_MOST, 1 << 14, "elements", "cpu: the most elements of a chunk") \
  X(PART_GRAIN, 32768, "elements", \
    "a row at least twice this long is folded or scanned in parallel partials") \
  X(PARTS_MOST, 1 << 16, "partials", "the most partials a row is cut into") \
  X(PERMUTE_SPREAD, 1 << 16, "targets", \
    "a permute onto fewer targets scatters into private copies or in order, not atomically") \
  X(CL_CPU_GRAIN, 4096, "elements", "opencl, a CPU device: the least work of a work-item") \
  X(CL_GPU_ITEMS, 1 << 22, "work-items", "opencl, a GPU: the most work-items of a launch") \
  X(CL_CHUNK_MOST, 1 << 18, "elements", "opencl: the most elements of a work-item's chunk") \
  X(CL_BATCH_WORK, 1 << 22, "elements", \
    "opencl: the most elements of one launch (the host looks between launches)") \
  X(CL_GROUP_CHUNK, 256, "elements", "opencl, a GPU: a fold's chunk before its work-group tree") \
  X(CL_GROUP_PARTS, 1 << 16, "partials", "opencl, a GPU: the most chunks of a fold's row") \
  X(INTERP_WORK, 8192, "input elements", \
    "auto tier: the most a run without code may read and go to the interpreter") \
  X(OPT_SOURCE, 2 << 20, "bytes", "generated code past this is compiled without optimisation") \
  X(MAX_SOURCE, 16 << 20, "bytes", "generated code past this is refused") \
  X(FOLD_STRIP, 256, "elements", \
    "cpu-like: a row fold's strip, its elements first computed into lane arrays, then folded") \
  X(LANE_BYTES, 128, "bytes", \
    "cpu-like: a commutative fold's per-lane accumulators (two 512-bit vectors' worth)") \
  X(TILE_BYTES, 256, "bytes", \
    "cpu-like: a contraction tile's accumulators over an element's fields (8 256-bit registers)") \
  X(TILE_LANES_MOST, 64, "outputs", "cpu-like: the most outputs of a contraction tile") \
  X(TILE_WIDE_BYTES, 256, "bytes", \
    "cpu, AVX-512: a contraction tile's outputs a row (4 registers; 6 rows a tile)") \
  X(TILE_STREAM_BYTES, 1024, "bytes", "cpu-like: a tile's accumulators where its elements stream") \
  X(TILE_STREAM_LANES_MOST, 256, "outputs", "cpu-like: the most outputs of a streaming tile") \
  X(TILE_FIELDS, 4, "fields", "cpu-like: the most fields of a tuple a tile folds") \
  X(TILE_STRIDED_ROW, 8, "elements", \
    "cpu: rows this short fold in tiles whose lanes read apart (longer: folds without lanes)") \
  X(HFUSE_MOST, 8, "folds", "the most sibling folds (or permutes) one loop computes (horizontal fusion)") \
  X(POOL_SPIN_US, 100, "us", \
    "cpu: how long a worker (and a caller waiting for its job) spins before it sleeps") \
  X(MEMO_KEEP, 32, "programs", \
    "programs of recent shapes kept, without their arrays, for programs of their shape built later") \
  X(MEMO_KEEP_BYTES, 8 << 20, "bytes", \
    "the most memory (their ASTs and plans, about) the programs kept for their shapes hold")

/* The paces are the development machine's: the interpreter's and tcc's code's time an
 * element, and the gain of gcc -O3's code over tcc's on the benchmarks (docs/design.md, Measurements). */
#define LACC_TUNE_REALS(X) \
  X(FAST_BUILD_S, 0.03, "s", \
    "auto tier: the interpreter's budget for a run, and its time after which a build pays") \
  X(INTERP_PER, 200e-9, "s an element", \
    "auto tier: the interpreter's pace before a program measured its own") \
  X(FAST_PER, 5e-9, "s an element", \
    "auto tier: the fast tier's pace before a program measured its own") \
  X(OPT_GAIN, 3.0, "times", \
    "auto tier: how much faster the optimised build runs than the fast tier's, assumed") \
  X(WATCH_S, 0.01, "s", \
    "auto tier: how often a fast-tier run weighs its pace against cc's build")

#define LACC_TUNE_ENUM(name, value, unit, what) TUNE_##name = (value),
enum { LACC_TUNE_INTS(LACC_TUNE_ENUM) };
#undef LACC_TUNE_ENUM

#define LACC_TUNE_REAL(name, value, unit, what) static const double TUNE_##name = (value);
LACC_TUNE_REALS(LACC_TUNE_REAL)
#undef LACC_TUNE_REAL

#endif
