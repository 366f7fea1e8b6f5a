/* linear_layout.h: linear layouts, the one representation of how a tile's elements are spread
 * over a program's threads (after Triton's LinearLayout and "Linear Layouts: Robust Code
 * Generation of Efficient Tensor Computation Using F2"). A layout is a linear map over GF(2)
 * from the bits of (register, lane, warp) indices to the bits of the element's row-major flat
 * index in the tile: element(r, l, w) = XOR of basis[d][i] over the set bits i of each index.
 * Shapes are powers of two, so the flat index's bits are the coordinates' bits side by side.
 * A zero basis means replication (several lanes, warps or registers hold the same element).
 * Blocked, slice, mma accumulator and operand layouts are constructors (compiler/layout.c);
 * lowering only ever reads the map. Pure data and arithmetic, no LLVM. */
#ifndef TILE_LINEAR_LAYOUT_H
#define TILE_LINEAR_LAYOUT_H
#include <stdint.h>
#include "tir.h"

typedef enum { LL_REG = 0, LL_LANE, LL_WARP, LL_NDIMS } LLDim;
enum { LL_MAX_BITS = 24 };

typedef struct LinearLayout {
    int rank;                      /* output (tile) dims */
    int shape[TIR_MAX_RANK];       /* powers of two */
    int nbits[LL_NDIMS];           /* input bits: log2 registers, lanes, warps */
    uint32_t basis[LL_NDIMS][LL_MAX_BITS]; /* flat row-major offsets */
} LinearLayout;

/* ---- building ---- */
/* An empty layout (no input bits) over `shape`; 0, or -1 when the shape has too many bits. */
int ll_init(LinearLayout *ll, int rank, const int *shape);
/* Appends an input bit to `dim` whose image has coordinates `coord` (per output dim). Each
 * coordinate is taken modulo the dim's size; a register bit whose image is then zero is
 * dropped (a thread keeps no duplicate registers), a lane or warp bit is kept as zero
 * (replication). Returns -1 when `dim` is full. */
int ll_push(LinearLayout *ll, LLDim dim, const int *coord);
/* Appends a zero lane or warp bit (that index bit does not move the element). */
int ll_push_zero(LinearLayout *ll, LLDim dim);

/* ---- reading ---- */
int ll_numel(const LinearLayout *ll);
int ll_regs(const LinearLayout *ll);          /* 1 << nbits[LL_REG] */
int ll_flat_bits(const LinearLayout *ll);     /* log2 numel */
uint32_t ll_apply(const LinearLayout *ll, uint32_t reg, uint32_t lane, uint32_t warp);
/* Image of the index x of one input dim alone (XOR of that dim's bases over x's bits). */
uint32_t ll_apply_dim(const LinearLayout *ll, LLDim dim, uint32_t x);
void ll_coords(const LinearLayout *ll, uint32_t flat, int *coord);
uint32_t ll_flat(const LinearLayout *ll, const int *coord);
/* Log2 of the stride of output dim d in the flat index. */
int ll_dim_shift(const LinearLayout *ll, int d);
/* Output dims a basis moves along, as a bit mask. */
unsigned ll_basis_dims(const LinearLayout *ll, uint32_t basis);
/* Input bits of `dim` whose basis is zero (replication), as a mask. */
uint32_t ll_zero_mask(const LinearLayout *ll, LLDim dim);
/* Input bits of `dim` whose basis moves along output dim d, as a mask. */
uint32_t ll_dim_mask(const LinearLayout *ll, LLDim dim, int d);
int ll_equal(const LinearLayout *a, const LinearLayout *b);
/* Every nonzero basis moves along a single output dim (all distributed layouts built by
 * compiler/layout.c; swizzled memory layouts are not). */
int ll_single_dim_bases(const LinearLayout *ll);
/* Every element is held by some (register, lane, warp). */
int ll_covers(const LinearLayout *ll);

/* How many consecutive registers, from each multiple of that count, hold consecutive
 * elements along dim d (registers 0, 1, 2, ... map to 1, 2, 4, ... along it and no other
 * basis disturbs the run's alignment); 1 when none do. */
int ll_contiguous_regs(const LinearLayout *ll, int d);
/* The single output dim basis b moves along, or -1 (zero, or several dims). */
int ll_basis_dim(const LinearLayout *ll, uint32_t b);

/* ---- algebra over GF(2) ---- */
/* Finds x with XOR{basis[i] : bit i of x} == target; 1 when one exists, else 0. */
int ll_solve(const uint32_t *basis, int n, uint32_t target, uint32_t *x);
/* Same layout with output dims permuted: output dim d of the result is dim perm[d] of ll. */
void ll_permute(const LinearLayout *ll, const int *perm, LinearLayout *out);
/* The layout of a reduction's result along `axis`: registers moving along the axis are
 * merged, lanes and warps along it become replicas, the axis is removed. -1 if some basis
 * moves along the axis and another dim at once. */
int ll_reduce(const LinearLayout *ll, int axis, LinearLayout *out);
/* The per-warp partial results of a reduction along `axis`: like ll_reduce, but the warps
 * along the axis stay apart, as coordinates 0 .. nw-1 of an axis of size nw (the result has
 * ll's rank). -1 on mixed bases. */
int ll_reduce_warps(const LinearLayout *ll, int axis, LinearLayout *out);
/* The same elements with the warp bits along `axis` turned into register bits (appended last):
 * each thread then holds every partial of its row. */
void ll_warps_to_regs(const LinearLayout *ll, int axis, LinearLayout *out);
/* The same map over another shape of as many elements (flat offsets are the same bits). */
void ll_reshape(const LinearLayout *ll, int rank, const int *shape, LinearLayout *out);
/* Two tiles of layout ll side by side along a new last dim of size 2: each thread holds both
 * elements of a pair in consecutive registers (the new dim is register bit 0). -1 when there
 * is no room. ll_unjoin undoes it (-1 unless ll has that form). */
int ll_join(const LinearLayout *ll, LinearLayout *out);
int ll_unjoin(const LinearLayout *ll, LinearLayout *out);
/* Projects onto `shape` (same rank, each dim equal or 1): coordinates along dims of size 1
 * become 0. Register bits are kept even when their image becomes zero (no renumbering). */
void ll_project(const LinearLayout *ll, const int *shape, LinearLayout *out);

/* "[reg (0,1) (8,0) | lane (0,2) ... | warp (16,0)]" into buf; returns buf. */
char *ll_str(const LinearLayout *ll, char *buf, int n);

#endif
