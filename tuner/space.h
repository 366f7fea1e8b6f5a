/* space.h: tuning configuration spaces read from a kernel's annotations: the product of
 * its @tune candidate lists, pruned by its @constraint expressions, and the tuning key of
 * a launch (@key values, bucketed where the author asked). */
#ifndef TILE_SPACE_H
#define TILE_SPACE_H
#include <stdint.h>
#include "ast.h"
#include "driver.h"

typedef struct TuneParam {
    const char *name;
    int64_t *values;
    int nvalues;
} TuneParam;

typedef struct TuneSpace {
    TuneParam *params;
    int nparams;
    const Expr **constraints;
    int nconstraints;
    SrcLoc loc; /* the first @tune, for diagnostics */
    const Func *func; /* whose consts the constraints may read, defaults included */
} TuneSpace;

/* The limits of a space (docs/tuning.md): the product of its candidate lists, and the
 * configurations left after its constraints (each one is compiled when tuning). */
enum { SPACE_MAX_COMBINATIONS = 65536, SPACE_MAX_CONFIGS = 4096 };

/* One configuration: a value for every tuned parameter, in TuneSpace order. */
typedef struct TuneConfig {
    ConstBinding *values;
    int nvalues;
} TuneConfig;

/* Reads @tune and @constraint of kernel f. 0 ok, -1 with diagnostics (a candidate that
 * is not a compile-time integer, a parameter tuned twice, an empty list); -2 out of memory. */
int space_build(const Func *f, Arena *a, Diags *d, TuneSpace *out);
/* What space_build and space_enumerate return when an arena allocation failed (after an
 * "out of memory" diagnostic); space_key returns NULL. */
enum { SPACE_OUT_OF_MEMORY = -2 };

/* Number of configurations before pruning (saturates at INT32_MAX). */
int64_t space_size(const TuneSpace *s);

/* Enumerates the configurations that satisfy every constraint; `fixed` values (the
 * caller's consts and the launch's scalar arguments) are visible to constraints. Fills
 * *out (arena) and returns the count, or -1 with a diagnostic (also for a space past
 * SPACE_MAX_COMBINATIONS or SPACE_MAX_CONFIGS, naming its size). `pruned` (may be NULL)
 * receives how many were dropped by constraints. */
int space_enumerate(const TuneSpace *s, const ConstBinding *fixed, int nfixed, Arena *a,
                    Diags *d, TuneConfig **out, int *pruned);

/* Applies a @key bucket ("pow2": next power of two, values <= 1 stay) to a value. */
int64_t space_bucket(const char *bucket, int64_t v);

/* Whether every name the constraints read, besides the tuned parameters, is a @key entry
 * without a bucket: then a configuration chosen for a key satisfies them at every launch with
 * that key. Otherwise (a bucketed or unkeyed value, a const outside @key) a cached choice must
 * be checked again at each launch. */
int space_key_exact(const TuneSpace *s, const Func *f);

/* Whether every constraint holds over vals (a launch's resolved consts and scalar arguments):
 * 1, 0, or -1 when one does not evaluate (a name vals lack). Cheap: no enumeration. */
int space_allows(const TuneSpace *s, const ConstBinding *vals, int nvals, Arena *a);

/* The tuning key of a launch: "name=value;..." for each @key entry, bucketed, in the
 * annotation's order. `vals` holds the scalar arguments and const values by name. */
char *space_key(const Func *f, const ConstBinding *vals, int nvals, Arena *a, Diags *d);

#endif
