/* hostfn.h: evaluating a kernel-IR function on the host (kir/hostfn.c). */
#ifndef LACC_HOSTFN_H
#define LACC_HOSTFN_H

#include "kir/kir.h"

/* Reads element i of buffer buf of slot into *bits (zero-extended); LACC_OK or an error. */
typedef int (*hostfn_load)(void *arg, int slot, int buf, int64_t i, uint64_t *bits);

/* The failure a function recorded: the one of the smallest key, as kernels keep it. */
typedef struct {
  int failed;
  int64_t key;
  int check;
  int64_t vals[16];
} hostfn_fail;

/* Runs function fn of P (no element loops: a shape function) with extents E (slot s at
 * E[s * LACC_MAX_RANK]); its KO_OUT values go to out. */
int hostfn_run(lacc_ctx *ctx, const kplan *P, int fn, const int64_t *E, hostfn_load load,
               void *arg, int64_t *out, hostfn_fail *fail);

#endif
