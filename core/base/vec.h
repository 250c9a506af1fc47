/* vec.h: the one growable array of the core.
 *
 * Owns: growing a heap array by doubling. Every stage that collects an unknown number of
 * things (nodes, entries, arrays, buffers) grows it through vec_reserve, so the
 * doubling, the overflow bound and the failure path are written once.
 * Must not: report errors itself: the caller says what ran out (ctx_error or its own).
 */
#ifndef LACC_VEC_H
#define LACC_VEC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Makes *vp (a pointer to an array of elements of `size` bytes, *cap of them) hold at
 * least `need` elements, doubling from `first`; new elements are zeroed. 0, or -1 when
 * memory ran out (the array and *cap unchanged). */
static inline int vec_reserve(void *vp, int *cap, int need, int first, size_t size) {
  if (need <= *cap) return 0;
  int c = *cap > 0 ? *cap : first;
  while (c < need) {
    if (c > INT32_MAX / 2) return -1;
    c *= 2;
  }
  void *old;
  memcpy(&old, vp, sizeof old);
  char *v = realloc(old, size * (size_t)c);
  if (v == NULL) return -1;
  memset(v + size * (size_t)*cap, 0, size * (size_t)(c - *cap));
  memcpy(vp, &v, sizeof v);
  *cap = c;
  return 0;
}

#endif
