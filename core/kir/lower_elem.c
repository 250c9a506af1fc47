/* lower_elem.c: one element in and out of a slot, through its layout.
 *
 * Owns: loads and stores of elements as the layout stores them (layout.c's
 * load_rec/store_rec in IR): combined tags decoded with range tests or shifts, raw
 * slots bit-cast, lane arrays, reloads of a match arm's fields inside the arm; row-
 * major index arithmetic (ravel, unravel).
 * Must not: choose layouts (layout.c does) or decide which elements a kernel reads.
 */
#include "kir/lower.h"

/* ---- layouts: one element in and out of a slot (layout.c's store_rec/load_rec) */

static int u64c(lower *L, uint64_t v) {
  lacc_val x = { .u = v };
  return lw_k_const(L, S_U64, x);
}

int lw_from_bits(lower *L, scalar_kind k, int bits) {
  return lw_k_unary(L, KO_FROMBITS, k, bits);
}

/* A variable that is an array of n lanes of kind k. */
int lw_lane_array(lower *L, scalar_kind k, int n) {
  int v = lw_var(L, k);
  kfn *F = fn(L);
  lw_grow(L, (void **)&F->lanes, &F->lcap, F->nlanes + 1, sizeof *F->lanes);
  F->lanes[F->nlanes++] = v;
  F->lanes[F->nlanes++] = n;
  return v;
}

int lw_k_lget(lower *L, int arr, int lane) {
  int d = lw_var(L, vtype(L, arr));
  kinst *in = lw_emit(L, KO_LGET);
  in->dst = d;
  in->a = arr;
  in->b = lane;
  return d;
}

void lw_k_lset(lower *L, int arr, int lane, int v) {
  kinst *in = lw_emit(L, KO_LSET);
  in->dst = arr;
  in->a = lane;
  in->b = v;
}

static void note_load(lower *L, int v, int slot, int buf, int idx, int raw, scalar_kind k) {
  lw_grow(L, (void **)&L->loads, &L->lcap, L->nloads, sizeof *L->loads);
  L->loads[L->nloads++] = (leaf_load){ .var = v, .slot = slot, .buf = buf, .idx = idx, .raw = raw,
                                       .kind = k };
}

/* Leaf variable v read again here, if it was read from a buffer in this function. */
int lw_reload(lower *L, int v) {
  for (int i = L->nloads - 1; i >= 0; i--) {
    const leaf_load *r = &L->loads[i];
    if (r->var != v) continue;
    int x = k_load(L, r->slot, r->buf, r->idx);
    return r->raw ? lw_from_bits(L, r->kind, lw_k_cast(L, S_U64, x)) : lw_k_cast(L, r->kind, x);
  }
  return v;
}

static void load_rec(lower *L, int slot, int idx, const lacc_type *t, int active, int tag,
                     int *pos, int *out) {
  const layout_plan *p = L->P->slots[slot].plan;
  if (t->kind == T_SCALAR) {
    int b = p->leaf_buf[*pos];
    lacc_val z = { .u = 0 };
    int v = b >= 0 ? lw_from_bits(L, t->scalar, lw_k_cast(L, S_U64, k_load(L, slot, b, idx)))
                   : lw_k_const(L, t->scalar, z);
    if (b >= 0 && active >= 0) note_load(L, v, slot, b, idx, 1, t->scalar);
    /* a field of an alternative the element is not keeps whatever bits its slot holds:
     * only that alternative's arm of a match reads it (selecting zero here cost the
     * compact layout a select per leaf per element) */
    out[(*pos)++] = v;
    return;
  }
  if (t->kind == T_TUPLE) {
    int parts[LACC_MAX_ARGS * 4];
    int rest = tag;
    for (int f = t->n - 1; f >= 0; f--) {
      const lacc_type *ft = t->fields[f];
      if (ft->choices <= 1) {
        parts[f] = u64c(L, 0);
      } else if (p->packed) {
        int b = ft->packed_bits;
        parts[f] = b >= 64 ? rest : lw_k_prim(L, P_BAND, rest, u64c(L, ((uint64_t)1 << b) - 1));
        rest = b >= 64 ? u64c(L, 0) : lw_k_prim(L, P_SHR, rest, u64c(L, (uint64_t)b));
      } else {
        parts[f] = lw_k_prim(L, P_REM, rest, u64c(L, ft->choices));
        rest = lw_k_prim(L, P_QUOT, rest, u64c(L, ft->choices));
      }
    }
    for (int f = 0; f < t->n; f++) load_rec(L, slot, idx, t->fields[f], active, parts[f], pos, out);
    return;
  }
  int k, sub;
  if (p->packed) {
    int pb = layout_payload_bits(t);
    k = pb >= 64 ? u64c(L, 0) : lw_k_prim(L, P_SHR, tag, u64c(L, (uint64_t)pb));
    sub = pb >= 64 ? tag : lw_k_prim(L, P_BAND, tag, u64c(L, ((uint64_t)1 << pb) - 1));
  } else {   /* mixed radix: a range test per constructor ("Accelerating Sum Types", section 5.4) */
    k = lw_var(L, S_U64);
    sub = lw_var(L, S_U64);
    uint64_t lo = 0;
    for (int c = 0; c < t->n; c++) {
      uint64_t hi = lo + t->fields[c]->choices;
      if (c + 1 < t->n) k_if(L, lw_k_prim(L, P_LT, tag, u64c(L, hi)));
      lw_k_mov(L, k, u64c(L, (uint64_t)c));
      lw_k_mov(L, sub, lw_k_prim(L, P_SUB, tag, u64c(L, lo)));
      if (c + 1 < t->n) k_else(L);
      lo = hi;
    }
    for (int c = 0; c + 1 < t->n; c++) k_end(L);
  }
  int kk = lw_k_cast(L, S_U32, k);
  lacc_val z = { .u = 0 };
  out[(*pos)++] = active >= 0 ? lw_k_select(L, active, kk, lw_k_const(L, S_U32, z)) : kk;
  for (int c = 0; c < t->n; c++) {
    int act = lw_k_prim(L, P_EQ, k, u64c(L, (uint64_t)c));
    if (active >= 0) act = lw_k_prim(L, P_LAND, act, active);
    load_rec(L, slot, idx, t->fields[c], act, sub, pos, out);
  }
}

int *lw_load_elem(lower *L, int slot, int idx) {
  const pslot *s = &L->P->slots[slot];
  char name[32];
  snprintf(name, sizeof name, " a%d", slot);
  lw_describe(L, name, "");
  const lacc_type *t = s->type;
  const layout_plan *p = s->plan;
  int *out = ints(L, t->nleaves);
  if (!p->raw) {
    for (int k = 0; k < t->nleaves; k++) {
      int b = p->leaf_buf[k];
      lacc_val z = { .u = 0 };
      scalar_kind lk = type_leaf(t, k);
      out[k] = b >= 0 ? lw_k_cast(L, lk, k_load(L, slot, b, idx)) : lw_k_const(L, lk, z);
      if (b >= 0 && t->has_sum) note_load(L, out[k], slot, b, idx, 0, lk);
    }
    return out;
  }
  int tag = p->tag_buf >= 0 ? lw_k_cast(L, S_U64, k_load(L, slot, p->tag_buf, idx)) : u64c(L, 0);
  int pos = 0;
  load_rec(L, slot, idx, t, -1, tag, &pos, out);
  return out;
}

/* Store the active leaves; return the combined tag (u64). */
static int store_rec(lower *L, int slot, int idx, const lacc_type *t, int active,
                     const int *v, int *pos) {
  const layout_plan *p = L->P->slots[slot].plan;
  if (t->kind == T_SCALAR) {
    int b = p->leaf_buf[*pos];
    if (b >= 0) {
      if (active >= 0) k_if(L, active);
      lw_k_store(L, slot, b, idx, bits_of(L, v[*pos]));
      if (active >= 0) k_end(L);
    }
    (*pos)++;
    return u64c(L, 0);
  }
  if (t->kind == T_TUPLE) {
    int tag = u64c(L, 0);
    for (int f = 0; f < t->n; f++) {
      const lacc_type *ft = t->fields[f];
      int sub = store_rec(L, slot, idx, ft, active, v, pos);
      if (ft->choices <= 1) continue;
      if (p->packed)
        tag = lw_k_prim(L, P_BOR, lw_k_prim(L, P_SHL, tag, u64c(L, (uint64_t)ft->packed_bits)), sub);
      else
        tag = lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, tag, u64c(L, ft->choices)), sub);
    }
    return tag;
  }
  int k = lw_k_cast(L, S_U64, v[(*pos)++]);
  int tag = u64c(L, 0);
  int result = lw_var(L, S_U64);
  lw_k_mov(L, result, tag);
  uint64_t offset = 0;
  for (int c = 0; c < t->n; c++) {
    int act = lw_k_prim(L, P_EQ, k, u64c(L, (uint64_t)c));
    if (active >= 0) act = lw_k_prim(L, P_LAND, act, active);
    int sub = store_rec(L, slot, idx, t->fields[c], act, v, pos);
    int mine = p->packed
      ? lw_k_prim(L, P_BOR, u64c(L, (uint64_t)c << layout_payload_bits(t)), sub)
      : lw_k_prim(L, P_ADD, u64c(L, offset), sub);
    k_if(L, act);
    lw_k_mov(L, result, mine);
    k_end(L);
    offset += t->fields[c]->choices;
  }
  return result;
}

void lw_store_elem(lower *L, int slot, int idx, const int *v) {
  if (slot == L->then.slot && L->then.map != NULL) {   /* a fold's result, then the map */
    const lacc_node *f = L->then.map->kids[0];
    const lacc_type *t = L->then.map->kids[1]->type;
    v = lw_apply(L, f, NULL, L->then.env, &t, v);
  }
  const pslot *s = &L->P->slots[slot];
  const layout_plan *p = s->plan;
  lw_use_slot(L, slot);
  if (!p->raw) {
    for (int k = 0; k < s->type->nleaves; k++)
      if (p->leaf_buf[k] >= 0) lw_k_store(L, slot, p->leaf_buf[k], idx, v[k]);
    return;
  }
  int pos = 0;
  int tag = store_rec(L, slot, idx, s->type, -1, v, &pos);
  if (p->tag_buf >= 0) lw_k_store(L, slot, p->tag_buf, idx, tag);
}

/* ---- index arithmetic */

int lw_ravel(lower *L, int rank, const int *ext, const int *ix) {
  if (rank == 0) return lw_k_int(L, S_I64, 0);
  int lin = ix[0];
  for (int d = 1; d < rank; d++) lin = lw_k_prim(L, P_ADD, lw_k_prim(L, P_MUL, lin, ext[d]), ix[d]);
  return lin;
}

/* The same for a lin that is by construction an index inside the shape: then each
 * index is inside its extent, which the lowering records for bounds.c. */
void lw_unravel_in(lower *L, int rank, const int *ext, int lin, int *ix) {
  lw_unravel(L, rank, ext, lin, ix);
  for (int d = 0; d < rank; d++) lw_fact(L, ix[d], ext[d], -1);
}

/* Multi-index of linear index lin in a shape; extents of 0 give 0 (no division). */
void lw_unravel(lower *L, int rank, const int *ext, int lin, int *ix) {
  if (rank == 1) {
    ix[0] = lin;
    return;
  }
  int zero = lw_k_int(L, S_I64, 0);
  for (int d = rank - 1; d >= 0; d--) {
    if (d == 0) {
      ix[0] = lin;
      break;
    }
    int nz = lw_k_prim(L, P_NE, ext[d], zero);
    int safe = lw_k_select(L, nz, ext[d], lw_k_int(L, S_I64, 1));
    ix[d] = lw_k_prim(L, P_REM, lin, safe);
    lin = lw_k_select(L, nz, lw_k_prim(L, P_QUOT, lin, safe), zero);
  }
}
