/* kabi.h: the kernel ABI, written once: the types every generated C function is
 * compiled against (emit_c.c prints them as source, LACC_KABI_SOURCE) and the cpu
 * backend calls through (cpu/launch.c declares them, LACC_KABI_DECLARE), so the two cannot
 * disagree.
 *
 *   void lacc_f<k>(const lacc_kslot *S, lacc_krt *rt, int64_t p0, p1, p2, p3, int64_t *out)
 *
 * S: every slot's buffers, extents and size; rt->fail(rt, element, check, values, n)
 * records a failed check; rt->K: the program's constants.
 * Must not: grow fields the OpenCL prelude (emit_c.c) lacks an equivalent for.
 */
#ifndef LACC_KABI_H
#define LACC_KABI_H

#define LACC_KABI(X) \
  X(typedef struct { void **buf; const int64_t *ext; int64_t size; } lacc_kslot;) \
  X(typedef struct lacc_krt lacc_krt;) \
  X(typedef union { int64_t i; uint64_t u; double d; float f; } lacc_kval;) \
  X(struct lacc_krt { void (*fail)(lacc_krt *, int64_t, int, const int64_t *, int); const lacc_kval *K; };)

#define LACC_KABI_DECLARE(...) __VA_ARGS__
#define LACC_KABI_STRING(...) #__VA_ARGS__ "\n"
#define LACC_KABI_SOURCE LACC_KABI(LACC_KABI_STRING)

#endif
