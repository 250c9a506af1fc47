/* plan.c: a plan's memory.
 *
 * Owns: the plan's arrays and its arena (kplan_alloc: IR arguments and lowering
 * scratch, freed with the plan), and freeing a plan with the plans nested in it
 * (awhile); a plan made to outlive the graph its AST borrowed from (kplan_detach).
 * Must not: know what a plan means (lower*.c build it, exec.c runs it).
 */
#include <stdlib.h>
#include <string.h>
#include "kir/kir.h"

/* ---- plan memory */

typedef struct kblock {
  struct kblock *next;
  size_t used, cap;
  max_align_t data[];
} kblock;

void *kplan_alloc(kplan *P, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  if (n == 0) n = sizeof(max_align_t);
  kblock *b = P->mem;
  if (b == NULL || b->used + n > b->cap) {
    size_t cap = n > 65536 ? n : 65536;
    b = malloc(sizeof *b + cap);
    if (b == NULL) return NULL;
    b->next = P->mem;
    b->used = 0;
    b->cap = cap;
    P->mem = b;
    P->mem_bytes += sizeof *b + cap;
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

int kplan_init(kplan *P, lacc_ctx *ctx) {
  memset(P, 0, sizeof *P);
  P->ctx = ctx;
  return LACC_OK;
}

void kplan_free(kplan *P) {
  for (int i = 0; i < P->nfns; i++) {
    free(P->fns[i].pro.v);
    free(P->fns[i].body.v);
    free(P->fns[i].vt);
    free(P->fns[i].lanes);
    free(P->fns[i].facts);
  }
  free(P->fns);
  free(P->slots);
  for (int i = 0; i < P->nsteps; i++) {
    free(P->steps[i].desc);
    if (P->steps[i].kind == SK_WHILE)
      for (int j = 0; j < 2 && P->steps[i].loop[j] != NULL; j++) {
        kplan_free(P->steps[i].loop[j]);
        free(P->steps[i].loop[j]);
      }
  }
  free(P->steps);
  free(P->checks);
  free(P->results);
  free(P->guards);
  free(P->consts);
  free(P->ksrc);
  while (P->mem != NULL) {
    kblock *n = P->mem->next;
    free(P->mem);
    P->mem = n;
  }
  memset(P, 0, sizeof *P);
}

int kplan_detachable(const kplan *P) {
  for (int k = 0; k < P->nsteps; k++)
    if (P->steps[k].kind == SK_WHILE) return 0;
  for (int s = 0; s < P->nslots; s++)
    if (P->slots[s].kind == SLOT_INPUT && P->slots[s].param < 0) return 0;
  return 1;
}

void kplan_detach(kplan *P, const ast_places *m) {
  for (int s = 0; s < P->nslots; s++)
    if (P->slots[s].kind == SLOT_INPUT) P->slots[s].array = NULL;
  for (int c = 0; c < P->nchecks; c++) P->checks[c].where = ast_place_of(m, P->checks[c].where);
}
