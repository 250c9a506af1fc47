/* sort.c: the stable ascending order of each row of radix keys (lacc.sort, argsort and
 * sort_by_key map their elements to such keys: floats with their bits flipped, signed
 * integers with the sign bit flipped, tuples one key at a time).
 *
 * Owns: a least-significant-digit radix sort, 8 bits a pass, of u32 or u64 keys carrying
 * their 32-bit positions: per pass each chunk of a row counts its digits, the counts are
 * summed in (digit, chunk) order and each chunk scatters its elements in order, so equal
 * keys keep their order and the result is the same for any number of chunks or threads.
 * A pass whose digit is the same for the whole row is skipped. Short rows are sorted by
 * insertion, many rows in parallel, one row at a time; a long row is cut into chunks that
 * run in parallel. Where only the sorted keys are wanted (sortkeys) the passes move the
 * keys alone. Rows of 2^32 elements or more are an error.
 * Must not: know the backends: the parallel for is given (sort_parallel).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "base/sort.h"

enum {
  SHORT_ROW = 32,             /* rows this short: insertion sort */
  CHUNK_MIN = 1 << 16,        /* elements per chunk of a long row, at least */
  CHUNKS_MAX = 64,
  ROWS_PER_JOB = 64           /* short or middling rows: this many per parallel job */
};

typedef struct {
  int wide;                   /* keys are u64 (else u32) */
  int64_t n;                  /* elements of the row */
  int64_t nchunks, chunk;     /* the row's chunks, and the elements of each but the last */
  const void *ka;             /* the keys as the last pass left them (the row's own at first) */
  void *kb;                   /* where this pass puts them */
  const uint32_t *ia;         /* their positions (NULL: the identity, before any pass) */
  uint32_t *ib;
  int shift;                  /* this pass's digit */
  int positions;              /* carry the positions (else only the keys are wanted) */
  int64_t *hist;              /* nchunks x 256 counts, then each chunk's next place per digit */
} radix;

static uint64_t key_at(const void *k, int wide, int64_t i) {
  return wide ? ((const uint64_t *)k)[i] : ((const uint32_t *)k)[i];
}

static void chunk_range(const radix *r, int64_t c, int64_t *lo, int64_t *hi) {
  *lo = c * r->chunk;
  *hi = c == r->nchunks - 1 ? r->n : *lo + r->chunk;
}

static void count_chunk(void *arg, int64_t c) {
  const radix *r = arg;
  int64_t lo, hi, h[256];
  chunk_range(r, c, &lo, &hi);
  memset(h, 0, sizeof h);
  if (r->wide) {
    const uint64_t *k = r->ka;
    for (int64_t i = lo; i < hi; i++) h[(k[i] >> r->shift) & 255]++;
  } else {
    const uint32_t *k = r->ka;
    for (int64_t i = lo; i < hi; i++) h[(k[i] >> r->shift) & 255]++;
  }
  memcpy(r->hist + c * 256, h, sizeof h);
}

/* The positions of the first pass are the elements' own (ia NULL). One loop per key
 * width and per kind of position keeps the tests out of the loop that moves the data. */
static void scatter32(const radix *r, int64_t lo, int64_t hi, int64_t *next) {
  const uint32_t *k = r->ka, *ia = r->ia;
  uint32_t *kb = r->kb, *ib = r->ib;
  int sh = r->shift;
  if (!r->positions) {
    for (int64_t i = lo; i < hi; i++) {
      uint32_t key = k[i];
      kb[next[(key >> sh) & 255]++] = key;
    }
  } else if (ia == NULL) {
    for (int64_t i = lo; i < hi; i++) {
      uint32_t key = k[i];
      int64_t to = next[(key >> sh) & 255]++;
      kb[to] = key;
      ib[to] = (uint32_t)i;
    }
  } else {
    for (int64_t i = lo; i < hi; i++) {
      uint32_t key = k[i];
      int64_t to = next[(key >> sh) & 255]++;
      kb[to] = key;
      ib[to] = ia[i];
    }
  }
}

static void scatter64(const radix *r, int64_t lo, int64_t hi, int64_t *next) {
  const uint64_t *k = r->ka;
  const uint32_t *ia = r->ia;
  uint64_t *kb = r->kb;
  uint32_t *ib = r->ib;
  int sh = r->shift;
  if (!r->positions) {
    for (int64_t i = lo; i < hi; i++) {
      uint64_t key = k[i];
      kb[next[(key >> sh) & 255]++] = key;
    }
    return;
  }
  for (int64_t i = lo; i < hi; i++) {
    uint64_t key = k[i];
    int64_t to = next[(key >> sh) & 255]++;
    kb[to] = key;
    ib[to] = ia != NULL ? ia[i] : (uint32_t)i;
  }
}

/* The chunk's next places in a local array: stores through the key and position
 * pointers then cannot be taken to change them, and the compiler keeps them in
 * registers (docs/design.md, Measurements). */
static void scatter_chunk(void *arg, int64_t c) {
  const radix *r = arg;
  int64_t lo, hi, next[256];
  memcpy(next, r->hist + c * 256, sizeof next);
  chunk_range(r, c, &lo, &hi);
  if (r->wide) scatter64(r, lo, hi, next);
  else scatter32(r, lo, hi, next);
}

static void run_chunks(radix *r, sort_chunk_fn fn, sort_parallel par) {
  if (par != NULL && r->nchunks > 1) par(r->nchunks, fn, r);
  else for (int64_t c = 0; c < r->nchunks; c++) fn(r, c);
}

/* The counts become each chunk's first place per digit, in (digit, chunk) order; 0 when
 * every element has one digit (the pass would change nothing). */
static int places(radix *r) {
  int64_t at = 0;
  for (int d = 0; d < 256; d++) {
    int64_t total = 0;
    for (int64_t c = 0; c < r->nchunks; c++) total += r->hist[c * 256 + d];
    if (total == r->n) return 0;
    for (int64_t c = 0; c < r->nchunks; c++) {
      int64_t cnt = r->hist[c * 256 + d];
      r->hist[c * 256 + d] = at;
      at += cnt;
    }
  }
  return 1;
}

/* Scratch for one row of up to n elements: two key buffers, two position buffers, from
 * the arrays' allocator (a sort run again finds them mapped already: fresh pages cost
 * more than the passes). */
typedef struct {
  void *k[2];
  uint32_t *i[2];
  int64_t *hist;
  size_t kbytes, ibytes;
} scratch;

static int scratch_get(scratch *s, int64_t n, int wide, int64_t nchunks, int positions) {
  memset(s, 0, sizeof *s);
  s->kbytes = (size_t)n * (wide ? 8 : 4) + 8;
  s->ibytes = (size_t)n * 4 + 4;
  s->k[0] = buffer_take(s->kbytes);
  s->k[1] = buffer_take(s->kbytes);
  if (positions) {
    s->i[0] = buffer_take(s->ibytes);
    s->i[1] = buffer_take(s->ibytes);
  }
  s->hist = malloc((size_t)nchunks * 256 * sizeof *s->hist);
  return s->k[0] && s->k[1] && (!positions || (s->i[0] && s->i[1])) && s->hist;
}

static void scratch_free(scratch *s) {
  for (int b = 0; b < 2; b++) {
    if (s->k[b] != NULL) buffer_give(s->k[b], s->kbytes);
    if (s->i[b] != NULL) buffer_give(s->i[b], s->ibytes);
  }
  free(s->hist);
}

/* One row of n keys: its positions (1-based) into out, or (out NULL) its keys in order
 * into out_keys. */
static void radix_row(const void *keys, int wide, int64_t n, int64_t nchunks, scratch *s,
                      sort_parallel par, int64_t *out, void *out_keys) {
  radix r = { .wide = wide, .n = n, .nchunks = nchunks, .ka = keys, .ia = NULL,
              .hist = s->hist, .positions = out != NULL };
  r.chunk = (n + nchunks - 1) / nchunks;
  int buf = 0;
  for (r.shift = 0; r.shift < (wide ? 64 : 32); r.shift += 8) {
    run_chunks(&r, count_chunk, par);
    if (!places(&r)) continue;
    r.kb = s->k[buf];
    r.ib = s->i[buf];
    run_chunks(&r, scatter_chunk, par);
    r.ka = r.kb;
    r.ia = r.ib;
    buf = 1 - buf;
  }
  if (out == NULL) {
    memcpy(out_keys, r.ka, (size_t)n * (wide ? 8 : 4));
    return;
  }
  for (int64_t i = 0; i < n; i++) out[i] = (r.ia != NULL ? (int64_t)r.ia[i] : i) + 1;
}

/* A short row: insertion sort of the positions, stable (only a strictly larger key moves). */
static void insertion_row(const void *keys, int wide, int64_t n, int64_t *out) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = key_at(keys, wide, i);
    int64_t j = i;
    while (j > 0 && key_at(keys, wide, out[j - 1] - 1) > k) {
      out[j] = out[j - 1];
      j--;
    }
    out[j] = i + 1;
  }
}

typedef struct {
  const char *keys;           /* all rows */
  int wide;
  int64_t rows, n;
  int64_t *out;               /* the positions, or NULL: */
  char *out_keys;             /* the keys in order */
  atomic_int failed;          /* a job could not get its scratch memory */
} rows_job;

/* Rows [c * ROWS_PER_JOB, ...) one after another, each on this thread. */
static void rows_chunk(void *arg, int64_t c) {
  rows_job *J = arg;
  int64_t lo = c * ROWS_PER_JOB, hi = lo + ROWS_PER_JOB < J->rows ? lo + ROWS_PER_JOB : J->rows;
  size_t kw = J->wide ? 8 : 4;
  scratch s;
  int ok = J->n <= SHORT_ROW || scratch_get(&s, J->n, J->wide, 1, J->out != NULL);
  if (!ok) {
    scratch_free(&s);
    atomic_store(&J->failed, 1);
    return;
  }
  for (int64_t row = lo; row < hi; row++) {
    size_t at = (size_t)row * (size_t)J->n;
    const void *k = J->keys + at * kw;
    if (J->n <= SHORT_ROW) {
      int64_t pos[SHORT_ROW], *o = J->out != NULL ? J->out + at : pos;
      insertion_row(k, J->wide, J->n, o);
      if (J->out == NULL)
        for (int64_t i = 0; i < J->n; i++) {
          if (J->wide) ((uint64_t *)(void *)J->out_keys)[at + i] = ((const uint64_t *)k)[o[i] - 1];
          else ((uint32_t *)(void *)J->out_keys)[at + i] = ((const uint32_t *)k)[o[i] - 1];
        }
    } else {
      radix_row(k, J->wide, J->n, 1, &s, NULL, J->out != NULL ? J->out + at : NULL,
                J->out_keys != NULL ? J->out_keys + at * kw : NULL);
    }
  }
  if (J->n > SHORT_ROW) scratch_free(&s);
}

lacc_array *sort_rows(lacc_ctx *ctx, lacc_array *keys, sort_parallel par, int want_keys) {
  const lacc_type *t = keys->type;
  if (t->kind != T_SCALAR || (t->scalar != S_U32 && t->scalar != S_U64) || keys->rank < 1) {
    ctx_error(ctx, LACC_ERR_TYPE, "sortperm: expected keys of u32 or u64 of rank 1 or more");
    return NULL;
  }
  int64_t n = keys->extent[keys->rank - 1];
  if (n >= (int64_t)1 << 32) {
    ctx_error(ctx, LACC_ERR_SHAPE, "sort: a row of %lld elements: rows of 2^32 elements or "
              "more cannot be sorted", (long long)n);
    return NULL;
  }
  if (array_host(keys) != LACC_OK) return NULL;
  const lacc_type *ot = want_keys ? t : type_scalar(ctx, S_I64);
  const layout_plan *plan = layout_plan_of(ctx, ot, ctx->layout);
  /* every element is written: recycled memory need not be cleared */
  lacc_array *out = plan != NULL ? array_alloc_out(ctx, ot, keys->rank, keys->extent, plan) : NULL;
  if (out == NULL) return NULL;
  if (keys->size == 0) return out;
  int wide = t->scalar == S_U64;
  int64_t rows = keys->size / n;
  rows_job J = { keys->buf[0], wide, rows, n, want_keys ? NULL : out->buf[0],
                 want_keys ? out->buf[0] : NULL, 0 };
  atomic_init(&J.failed, 0);
  if (n < CHUNK_MIN) {   /* rows sorted side by side, each on one thread */
    int64_t jobs = (rows + ROWS_PER_JOB - 1) / ROWS_PER_JOB;
    if (par != NULL && jobs > 1) par(jobs, rows_chunk, &J);
    else for (int64_t c = 0; c < jobs; c++) rows_chunk(&J, c);
  } else {               /* long rows one at a time, each in parallel chunks */
    int64_t nchunks = n / CHUNK_MIN < CHUNKS_MAX ? n / CHUNK_MIN : CHUNKS_MAX;
    scratch s;
    if (!scratch_get(&s, n, wide, nchunks, !want_keys)) {
      atomic_store(&J.failed, 1);
    } else {
      size_t kw = wide ? 8 : 4;
      for (int64_t row = 0; row < rows; row++)
        radix_row((const char *)keys->buf[0] + (size_t)row * (size_t)n * kw, wide, n, nchunks,
                  &s, par, J.out != NULL ? J.out + row * n : NULL,
                  J.out_keys != NULL ? J.out_keys + (size_t)row * (size_t)n * kw : NULL);
    }
    scratch_free(&s);
  }
  if (atomic_load(&J.failed)) {
    lacc_array_release(out);
    err_oom(ctx);
    return NULL;
  }
  return out;
}
