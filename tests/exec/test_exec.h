/* test_exec.h: the small framework of the execution tests (tests/exec/test_exec.c), shared
 * with the language-feature groups (tests/exec/test_features.c). A case is: begin(), input and
 * output buffers (outputs hold the float64 reference), then run(), which launches, compares
 * and reports one line. */
#ifndef TEST_EXEC_H
#define TEST_EXEC_H
#include <stddef.h>
#include <stdint.h>
#include "tile.h"

/* ---- element types ---- */

typedef enum { T_BOOL, T_I8, T_I16, T_I32, T_I64, T_U8, T_U16, T_U32, T_U64,
               T_F16, T_BF16, T_F32, T_F64, T_COUNT } Ty;

typedef struct TyInfo {
    const char *name;
    int size, is_float, is_signed;
} TyInfo;
extern const TyInfo TY[T_COUNT];

typedef struct Buf {
    const char *name;
    Ty t;
    size_t n;
    int out;
    double tol;         /* outputs: relative-error tolerance; 0 = exact */
    double *v;          /* inputs: the values; outputs: the reference */
    double *bound;      /* outputs: per-element absolute error bounds (sum_bound), or NULL */
    int scratch;        /* a workspace: poisoned like an output, never compared */
    double *init;       /* inout(): the contents before the launch (else outputs are poisoned) */
    unsigned char *raw; /* n + GUARD elements */
    tile_DevPtr d;
} Buf;

struct State {
    int quick; /* --quick: skip the largest sizes (sanitizer builds) */
    int host;  /* the CPU backend: one thread owns whole tiles */
    int cuda;  /* the CUDA backend (NVIDIA assembly runs) */
};
extern struct State S;

/* Rounds or wraps v to a value of type t (what a store of t keeps). */
double ty_round(Ty t, double v);
uint64_t rnd(void);
double rnd_unit(void);                 /* [0, 1) */
int64_t rnd_int(int64_t lo, int64_t hi); /* [lo, hi] */

void begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void case_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Random input values in [lo, hi): floats rounded to the type, integers in [lo, hi]. */
Buf *input(const char *name, Ty t, size_t n, double lo, double hi);
/* An output; fill ->v with the reference. tol: relative L2 error allowed, 0 = exact. */
Buf *output(const char *name, Ty t, size_t n, double tol);
/* An output that starts with the values the test writes into ->init (zeros until then), for
 * kernels that update memory in place (atomics); ->v holds the reference after the launch. */
Buf *inout(const char *name, Ty t, size_t n, double tol);
/* Checks output o's element i as a float sum of `nterms` terms whose magnitudes add up to
 * `abs_sum`: |got - want| <= nterms * eps * abs_sum, eps the machine epsilon of o's type.
 * That is twice the bound gamma_n * sum|x| (gamma_n = n u / (1 - n u), u = eps / 2) that holds
 * for every summation order, so a sum that cancels to near zero is not held to a relative
 * tolerance no float summation can meet. Elements with a bound skip the relative test. */
void sum_bound(Buf *o, size_t i, double abs_sum, size_t nterms);
/* Element i of o must be within `ulps` units in the last place (of o's type) of its reference. */
void ulp_bound(Buf *o, size_t i, double ulps);
/* c = a [M, K] @ b [K, N] (row-major) in double, each element bounded by sum_bound */
void matmul_ref_bounded(const Buf *a, const Buf *b, Buf *c, int M, int N, int K);
/* Uploads the inputs, poisons the outputs, launches, compares, reports. */
void run(const char *file, const char *kernel, const tile_Arg *args, int nargs,
         const tile_Const *consts, int nconsts);
/* A workspace buffer between kernels of one case: poisoned (NaN bytes for floats), checked for
 * writes past its end, never compared. */
Buf *scratch(const char *name, Ty t, size_t n);
/* One kernel launch of run_seq. */
typedef struct Launch {
    const char *kernel;
    const tile_Arg *args;
    int nargs;
    const tile_Const *consts;
    int nconsts;
} Launch;
/* run() for kernels launched one after the other on the same buffers; compares after the last. */
void run_seq(const char *file, const Launch *launches, int n);

/* One launch expected to end with status `want`, its message holding `message` (NULL: any)
 * and what it writes to standard output being `printed` exactly (NULL: anything); then the
 * outputs are compared (after a failed device_assert: what the programs wrote before). */
void run_expect(const char *file, const Launch *l, tile_Status want, const char *message,
                const char *printed);

#define P(b) tile_ptr((b)->d)
#define I(x) tile_int(x)
#define F(x) tile_float(x)
#define ARGS(...) (tile_Arg[]){__VA_ARGS__}, (int)(sizeof((tile_Arg[]){__VA_ARGS__}) / sizeof(tile_Arg))
#define CONSTS(...) (tile_Const[]){__VA_ARGS__}, (int)(sizeof((tile_Const[]){__VA_ARGS__}) / sizeof(tile_Const))
#define NO_CONSTS NULL, 0

#define TOL_F32 1e-5 /* f32 results */
#define TOL_F16 2e-3 /* f16 inputs or outputs */
#define EXACT 0      /* integers, bools, casts */

void t_elementwise(void);
void t_math(void);
void t_compare(void);
void t_intops(void);
void t_casts(void);
void t_reduce(void);
void t_dot(void);
void t_control(void);
void t_helpers(void);
void t_types(void);
void t_flash_fwd(void);
void t_fcast(void);
void t_memory(void);
void t_grid(void);
void t_broadcast(void);
void t_mma(void);
void t_intdiv(void);
void t_imports(void);
void t_attn_decode(void);
void t_attn_paged(void);
void t_inline_asm(void);
void t_atomics(void);
void t_random(void);
void t_shapes(void);
void t_fp8(void);
void t_debug(void);
void t_combine(void);
void t_ports_norm(void);
void t_ports_loss(void);
void t_ports_matmul(void);
void t_ports_misc(void);
void t_ports_more(void);
void t_barrier(void);
void t_porting(void);
void t_tuple_reduce(void);
void t_block_ptr(void);
void t_hints(void);
void t_triton_ops(void);
void t_triton_forms(void);

#endif
