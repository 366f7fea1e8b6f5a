/* layout_convert.c: conversion plans between linear layouts (layout_convert.h). Every test is
 * linear algebra over GF(2): whether destination bases lie in the span of source bases. */
#include <string.h>
#include "layout_convert.h"

static int same_bases(const LinearLayout *a, const LinearLayout *b, LLDim dim)
{
    if (a->nbits[dim] != b->nbits[dim])
        return 0;
    for (int i = 0; i < a->nbits[dim]; i++)
        if (a->basis[dim][i] != b->basis[dim][i])
            return 0;
    return 1;
}

/* Every destination register's element sits in the same thread's source registers. */
static int plan_regs(const LinearLayout *src, const LinearLayout *dst, ConvPlan *p)
{
    if (!same_bases(src, dst, LL_LANE) || !same_bases(src, dst, LL_WARP))
        return 0;
    for (int i = 0; i < dst->nbits[LL_REG]; i++)
        if (!ll_solve(src->basis[LL_REG], src->nbits[LL_REG], dst->basis[LL_REG][i],
                      &p->src_reg[i]))
            return 0;
    p->kind = CONV_REGS;
    return 1;
}

/* Destination bases written in source (register, lane) coordinates: x's low `nreg` bits
 * are source register bits, the rest source lane bits. */
static int solve_reg_lane(const LinearLayout *src, uint32_t target, uint32_t *reg,
                          uint32_t *lane)
{
    uint32_t basis[2 * LL_MAX_BITS], x;
    int nr = src->nbits[LL_REG], nl = src->nbits[LL_LANE];
    memcpy(basis, src->basis[LL_REG], sizeof(uint32_t) * (size_t)nr);
    memcpy(basis + nr, src->basis[LL_LANE], sizeof(uint32_t) * (size_t)nl);
    if (nr + nl > 32 || !ll_solve(basis, nr + nl, target, &x))
        return 0;
    *reg = x & ((1u << nr) - 1);
    *lane = x >> nr;
    return 1;
}

/* Elements stay in their warp, and a destination lane changes only the source lane. */
static int plan_shuffle(const LinearLayout *src, const LinearLayout *dst, ConvPlan *p)
{
    if (!same_bases(src, dst, LL_WARP) || src->nbits[LL_LANE] != dst->nbits[LL_LANE])
        return 0;
    for (int j = 0; j < dst->nbits[LL_LANE]; j++)
        if (!ll_solve(src->basis[LL_LANE], src->nbits[LL_LANE], dst->basis[LL_LANE][j],
                      &p->lane_of_lane[j]))
            return 0;
    for (int i = 0; i < dst->nbits[LL_REG]; i++)
        if (!solve_reg_lane(src, dst->basis[LL_REG][i], &p->src_reg[i], &p->lane_of_reg[i]))
            return 0;
    p->kind = CONV_SHUFFLE;
    return 1;
}

void conv_plan(const LinearLayout *src, const LinearLayout *dst, ConvPlan *p)
{
    memset(p, 0, sizeof *p);
    p->dst_reg_bits = dst->nbits[LL_REG];
    p->dst_lane_bits = dst->nbits[LL_LANE];
    if (ll_equal(src, dst))
        p->kind = CONV_NONE;
    else if (!plan_regs(src, dst, p) && !plan_shuffle(src, dst, p))
        p->kind = CONV_SMEM;
}

const char *conv_kind_name(ConvKind k)
{
    static const char *names[] = {"none", "registers", "shuffle", "shared memory"};
    return (unsigned)k < 4 ? names[k] : "?";
}
