/* check_registers.h: rejects specializations whose single tiles cannot fit a GPU thread's
 * registers (see check_registers.c). */
#ifndef TILE_CHECK_REGISTERS_H
#define TILE_CHECK_REGISTERS_H
#include "diag.h"
#include "tir.h"

/* 0 when every tile fits (always on the host: gpu == 0), -1 with a diagnostic. */
struct Target;
int check_registers(const TirKernel *k, const struct Target *t, Diags *d);

#endif
