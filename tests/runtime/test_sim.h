/* test_sim.h: what the emulator's tests (test_sim.c, test_sim_ops.c) share: running one
 * program instance of a C "kernel", and checks on the error message. */
#ifndef TILE_TEST_SIM_H
#define TILE_TEST_SIM_H
#include "../testing.h"
#include "sim.h"

enum { SIM_TEST_ERR = 512 };

/* Runs fn as program (2,0,0) of a (4,1,1) grid, with args[0] = arg. 0, or -1 and err. */
int sim_test_run(SimEntry fn, void *arg, int threads, int smem, int strict, char *err);

/* A run that must succeed; prints the emulator's message when it did not. */
#define CHECK_RUN(cond, err) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #cond, err); \
            return 1; \
        } \
    } while (0)

/* The message contains `text`. */
#define HAS(err, text) \
    do { \
        if (!strstr(err, text)) { \
            fprintf(stderr, "%s:%d: message lacks '%s': %s\n", __FILE__, __LINE__, text, err); \
            return 1; \
        } \
    } while (0)

int t_mma(void);
int t_ldmatrix(void);
int t_cp_async(void);
int t_cp_async_errors(void);

#endif
