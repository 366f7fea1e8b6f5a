/* analysis_axis.h: axis analysis (Triton's AxisInfo). For every integer, bool and pointer
 * value of a kernel, per dim: contiguity (runs of consecutive values), divisibility (largest
 * power of two dividing the first value of each run: elements for integers, bytes for
 * pointers) and constancy (runs of equal values). Runs start at multiples of their length.
 * Vector lowering of loads and stores (compiler/lower_memory.c) reads it. */
#ifndef TILE_ANALYSIS_AXIS_H
#define TILE_ANALYSIS_AXIS_H
#include "tir.h"

enum { AXIS_MAX_DIV = 1 << 30 }; /* "divisible by anything" (the value 0) */

typedef struct AxisInfo {
    int64_t contig[TIR_MAX_RANK]; /* scalars: index 0, contig = cnst = 1 */
    int64_t div[TIR_MAX_RANK];
    int64_t cnst[TIR_MAX_RANK];
} AxisInfo;

/* Analyzes k (params' launch divisors included); an array indexed by value id, in k->arena,
 * or NULL when out of memory. */
AxisInfo *axis_analyze(const TirKernel *k);

#endif
