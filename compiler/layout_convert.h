/* layout_convert.h: how a tile moves from one linear layout to another, derived from the two
 * maps alone (no case per encoding pair). In order of cost:
 *   CONV_NONE     the same map: nothing to do;
 *   CONV_REGS     each thread already holds its elements: a compile-time register permutation;
 *   CONV_SHUFFLE  the elements stay within their warp, and each destination register comes
 *                 from one source register index in every lane: one warp shuffle per
 *                 destination register;
 *   CONV_SMEM     anything else: through shared memory. */
#ifndef TILE_LAYOUT_CONVERT_H
#define TILE_LAYOUT_CONVERT_H
#include "linear_layout.h"

typedef enum { CONV_NONE, CONV_REGS, CONV_SHUFFLE, CONV_SMEM } ConvKind;

typedef struct ConvPlan {
    ConvKind kind;
    int dst_reg_bits, dst_lane_bits;
    /* CONV_REGS, CONV_SHUFFLE: destination register bit i reads source register
     * XOR{src_reg[i] ...} (register indices compose linearly) */
    uint32_t src_reg[LL_MAX_BITS];
    /* CONV_SHUFFLE: from source lane XOR{lane_of_reg[i] : bit i of the destination register}
     * ^ XOR{lane_of_lane[j] : bit j of the destination lane} */
    uint32_t lane_of_reg[LL_MAX_BITS], lane_of_lane[LL_MAX_BITS];
} ConvPlan;

/* Plans the move of a tile from src to dst (same shape). */
void conv_plan(const LinearLayout *src, const LinearLayout *dst, ConvPlan *p);
const char *conv_kind_name(ConvKind k);

#endif
