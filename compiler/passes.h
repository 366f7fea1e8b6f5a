/* passes.h: the tile-IR passes that run after layout assignment (compiler/driver.c lists the
 * order). Each takes the kernel and the target and returns 0, or -1 with a diagnostic. */
#ifndef TILE_PASSES_H
#define TILE_PASSES_H
#include "diag.h"
#include "layout.h"
#include "tir.h"

struct Target;

/* pass_induction.c: values a loop carries and advances by a loop-invariant amount each
 * iteration become functions of the induction variable (before layouts). */
int pass_induction(TirKernel *k, const struct Target *t, Diags *d);
/* pass_reduce.c: reductions across warps become a per-warp reduction, a conversion and an
 * in-thread reduction. */
int pass_split_reductions(TirKernel *k, const struct Target *t, Diags *d);
/* pass_remat.c: conversions of cheap values (index vectors, masks) become recomputations. */
int pass_rematerialize(TirKernel *k, const struct Target *t, Diags *d);
/* pass_hoist.c: conversions of values defined outside a loop move before the loop. */
int pass_hoist_conversions(TirKernel *k, const struct Target *t, Diags *d);
/* pass_smem.c: conversions through shared memory become local_alloc/store/load ops. */
int pass_smem_conversions(TirKernel *k, const struct Target *t, Diags *d);
/* pass_dce.c: removes unused ops that have no other effect. */
int pass_remove_dead(TirKernel *k, const struct Target *t, Diags *d);
/* pass_smem_alloc.c: offsets for local_alloc buffers, reusing space between buffers whose
 * lives do not overlap; fails when the total exceeds the target's per-block limit. Sets
 * k->smem_alloc_bytes. */
int pass_smem_alloc(TirKernel *k, const struct Target *t, Diags *d);
/* pass_barriers.c: a barrier before every shared-memory access that could race with an
 * earlier one by another thread (read after write, write after read or write). */
int pass_barriers(TirKernel *k, const struct Target *t, Diags *d);
/* pass_sink.c: elementwise tiles made before a dot and first used after it move down to
 * that use, so they are not live across the dot. */
int pass_sink_past_dots(TirKernel *k, const struct Target *t, Diags *d);

/* pass_pipeline.c: software pipelining of loops (num_stages): the loads that feed shared
 * buffers are issued num_stages - 1 iterations ahead as async copies into a ring of buffers. */
int pass_pipeline(TirKernel *k, const struct Target *t, Diags *d);
/* Elements per cp.async for copying a pointer tile into buf: the run of its registers along
 * the buffer's contiguous dim that the axis analysis proves contiguous, aligned and under one
 * mask value, within 16 bytes; 0 when that is under 4 bytes (no async copy possible). */
struct AxisInfo;
int async_copy_vector(const TirValue *ptr, const TirValue *mask, const TirValue *buf,
                      const struct AxisInfo *axis);

/* The bytes of one buffer of a local_alloc (its shape times its element size). */
int smem_buffer_bytes(const TirValue *buf);

#endif
