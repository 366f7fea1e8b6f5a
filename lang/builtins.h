/* builtins.h: the signatures of the language's built-in functions: how many arguments a call
 * gives, which of them may be named, and their names (the slots specialization binds them to). */
#ifndef TILE_BUILTINS_H
#define TILE_BUILTINS_H

enum { BUILTIN_MAX_SLOTS = 8 };

typedef struct BuiltinSig {
    const char *name;
    int nreq;   /* arguments every call gives (the first nreq slots) */
    int kwfrom; /* the first slot that may also be given by keyword */
    const char *slots[BUILTIN_MAX_SLOTS]; /* in positional order; NULL after the last */
} BuiltinSig;

/* The built-in function `name`, or NULL. */
const BuiltinSig *builtin_sig(const char *name);
/* How many arguments b takes at most. */
int builtin_nslots(const BuiltinSig *b);
/* Whether argument `slot` of builtin `fn` is a list of integers that Triton writes as a tuple
 * (make_block_ptr's shape, strides, offsets, block_shape and order, advance's offsets, the
 * boundary_check of load and store, the shape of zeros, full, reshape and broadcast_to, the
 * dims of permute and trans): a tuple there is that list. */
int builtin_list_slot(const char *fn, const char *slot);

#endif
