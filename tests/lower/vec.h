/* vec.h: what test_vec.c and vec_axis.c share: the kernels under test and the tests. */
#ifndef TILE_TEST_VEC_H
#define TILE_TEST_VEC_H
#include "driver.h"

extern const char *ADD, *ROWSUM, *COPY16;
const Module *vec_parse(Arena *a, const char *src, Diags *d);
int t_axis_add(Arena *a);
int t_axis_loop(Arena *a);
int t_axis_divide(Arena *a);

#endif
