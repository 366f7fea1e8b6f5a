/* builtins.c: the signatures of the language's built-in functions (docs/language.md), the one
 * table both the checks of sema and the argument binding of specialization read. */
#include <string.h>
#include "builtins.h"

/* name, arguments every call gives, the first slot that may be named, every slot's name */
static const BuiltinSig sigs[] = {
    {"program_id", 1, 0, {"axis"}},
    {"num_programs", 1, 0, {"axis"}},
    {"arange", 2, 2, {"start", "end"}},
    {"zeros", 1, 0, {"shape", "dtype"}},
    {"full", 2, 0, {"shape", "value", "dtype"}},
    {"load", 1, 1, {"ptr", "mask", "other", "boundary_check", "padding_option", "cache_modifier", "eviction_policy", "volatile"}},
    {"store", 2, 2, {"ptr", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy"}},
    {"prefetch", 1, 1, {"ptr", "mask", "level"}},
    {"inline_asm_elementwise", 4, 0, {"asm", "constraints", "args", "dtype", "is_pure", "pack"}},
    {"make_block_ptr", 5, 0, {"base", "shape", "strides", "offsets", "block_shape", "order"}},
    {"advance", 2, 0, {"base", "offsets"}},
    {"exp", 1, 1, {"x"}},
    {"exp2", 1, 1, {"x"}},
    {"log", 1, 1, {"x"}},
    {"log2", 1, 1, {"x"}},
    {"sqrt", 1, 1, {"x"}},
    {"rsqrt", 1, 1, {"x"}},
    {"sin", 1, 1, {"x"}},
    {"cos", 1, 1, {"x"}},
    {"abs", 1, 1, {"x"}},
    {"floor", 1, 1, {"x"}},
    {"ceil", 1, 1, {"x"}},
    {"trunc", 1, 1, {"x"}},
    {"tanh", 1, 1, {"x"}},
    {"erf", 1, 1, {"x"}},
    {"sigmoid", 1, 1, {"x"}},
    {"isnan", 1, 1, {"x"}},
    {"isinf", 1, 1, {"x"}},
    {"sqrt_rn", 1, 1, {"x"}},
    {"rint", 1, 1, {"x"}},
    {"round", 1, 1, {"x"}},
    {"log1p", 1, 1, {"x"}},
    {"expm1", 1, 1, {"x"}},
    {"tan", 1, 1, {"x"}},
    {"atan", 1, 1, {"x"}},
    {"asin", 1, 1, {"x"}},
    {"acos", 1, 1, {"x"}},
    {"sinh", 1, 1, {"x"}},
    {"cosh", 1, 1, {"x"}},
    {"log10", 1, 1, {"x"}},
    {"asinh", 1, 1, {"x"}},
    {"acosh", 1, 1, {"x"}},
    {"atanh", 1, 1, {"x"}},
    {"cbrt", 1, 1, {"x"}},
    {"exp10", 1, 1, {"x"}},
    {"erfinv", 1, 1, {"x"}},
    {"bitcast", 2, 2, {"x", "dtype"}},
    {"softmax", 1, 1, {"x", "dim", "keep_dims", "ieee_rounding"}},
    {"zeros_like", 1, 1, {"x"}},
    {"ravel", 1, 1, {"x"}},
    {"clamp", 3, 3, {"x", "min", "max"}},
    {"div_rn", 2, 2, {"x", "y"}},
    {"fdiv", 2, 2, {"x", "y"}},
    {"umulhi", 2, 2, {"x", "y"}},
    {"popc", 1, 1, {"x"}},
    {"clz", 1, 1, {"x"}},
    {"ffs", 1, 1, {"x"}},
    {"brev", 1, 1, {"x"}},
    {"pow", 2, 2, {"x", "y"}},
    {"atan2", 2, 2, {"y", "x"}},
    {"hypot", 2, 2, {"x", "y"}},
    {"copysign", 2, 2, {"x", "y"}},
    {"fmod", 2, 2, {"x", "y"}},
    {"signbit", 1, 1, {"x"}},
    {"minimum", 2, 2, {"a", "b"}},
    {"maximum", 2, 2, {"a", "b"}},
    {"fma", 3, 3, {"a", "b", "c"}},
    {"where", 3, 3, {"cond", "a", "b"}},
    {"cdiv", 2, 2, {"a", "b"}},
    {"next_pow2", 1, 1, {"x"}},
    {"broadcast_to", 2, 0, {"x", "shape"}},
    {"sum", 1, 1, {"x", "axis", "keep_dims", "dtype"}},
    {"max", 1, 1, {"x", "axis", "keep_dims", "return_indices", "return_indices_tie_break_left"}},
    {"min", 1, 1, {"x", "axis", "keep_dims", "return_indices", "return_indices_tie_break_left"}},
    {"argmax", 1, 1, {"x", "axis", "keep_dims", "tie_break_left"}},
    {"argmin", 1, 1, {"x", "axis", "keep_dims", "tie_break_left"}},
    {"dot", 2, 2, {"a", "b", "acc", "allow_tf32", "out_dtype", "input_precision"}},
    {"trans", 1, 1, {"x", "dims"}},
    {"permute", 2, 0, {"x", "dims"}},
    {"reshape", 2, 0, {"x", "shape"}},
    {"expand_dims", 2, 2, {"x", "axis"}},
    {"join", 2, 2, {"a", "b"}},
    {"interleave", 2, 2, {"a", "b"}},
    {"cat", 2, 2, {"input", "other", "can_reorder"}},
    {"split", 1, 1, {"x"}},
    {"atomic_add", 2, 2, {"ptr", "val", "mask", "sem", "scope"}},
    {"atomic_max", 2, 2, {"ptr", "val", "mask", "sem", "scope"}},
    {"atomic_min", 2, 2, {"ptr", "val", "mask", "sem", "scope"}},
    {"atomic_and", 2, 2, {"ptr", "val", "mask", "sem", "scope"}},
    {"atomic_or", 2, 2, {"ptr", "val", "mask", "sem", "scope"}},
    {"atomic_xor", 2, 2, {"ptr", "val", "mask", "sem", "scope"}},
    {"atomic_xchg", 2, 2, {"ptr", "val", "mask", "sem", "scope"}},
    {"static_assert", 1, 1, {"cond", "msg"}},
    {"print", 1, 6, {"prefix", "v1", "v2", "v3", "v4", "v5"}},
    {"static_print", 1, 6, {"shown1", "shown2", "shown3", "shown4", "shown5", "shown6"}},
    {"reduce", 3, 1, {"x", "axis", "combine_fn", "keep_dims"}},
    {"associative_scan", 3, 1, {"x", "axis", "combine_fn", "reverse"}},
    {"device_assert", 1, 1, {"cond", "msg"}},
    {"cumsum", 1, 1, {"x", "axis", "reverse", "dtype"}},
    {"flip", 1, 1, {"x", "dim"}},
    {"sort", 1, 1, {"x", "dim", "descending"}},
    {"topk", 2, 2, {"x", "k", "dim"}},
    {"argsort", 1, 1, {"x", "dim", "descending"}},
    {"argtopk", 2, 2, {"x", "k", "dim"}},
    {"cumprod", 1, 1, {"x", "axis", "reverse", "dtype"}},
    {"multiple_of", 2, 2, {"x", "values"}},
    {"max_contiguous", 2, 2, {"x", "values"}},
    {"max_constancy", 2, 2, {"x", "values"}},
    {"cast", 2, 2, {"input", "dtype", "fp_downcast_rounding", "bitcast"}},
    {"view", 2, 0, {"x", "shape"}},
    {"device_print", 1, 6, {"prefix", "v1", "v2", "v3", "v4", "v5"}},
    {"assume", 1, 1, {"cond"}},
    {"rand", 2, 2, {"seed", "offset", "n_rounds"}},
    {"randn", 2, 2, {"seed", "offset", "n_rounds"}},
    {"randint", 2, 2, {"seed", "offset", "n_rounds"}},
    {"rand4x", 2, 2, {"seed", "offset", "n_rounds"}},
    {"randn4x", 2, 2, {"seed", "offset", "n_rounds"}},
    {"randint4x", 2, 2, {"seed", "offset", "n_rounds"}},
    {"philox", 5, 5, {"seed", "c0", "c1", "c2", "c3", "n_rounds"}},
    {"atomic_cas", 3, 3, {"ptr", "cmp", "val", "sem", "scope", "mask"}},
    {"debug_barrier", 0, 0, {NULL}},
    {"swizzle2d", 5, 0, {"i", "j", "size_i", "size_j", "size_g"}},
    {"histogram", 2, 1, {"x", "num_bins", "mask"}},
    {"gather", 3, 2, {"src", "index", "axis"}},
    {"xor_sum", 1, 1, {"x", "axis", "keep_dims"}},
};

const BuiltinSig *builtin_sig(const char *name) {
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (!strcmp(sigs[i].name, name)) return &sigs[i];
    return NULL;
}

int builtin_nslots(const BuiltinSig *b) {
    int n = 0;
    while (n < BUILTIN_MAX_SLOTS && b->slots[n]) n++;
    return n;
}

int builtin_list_slot(const char *fn, const char *slot) {
    if (!slot) return 0;
    if (!strcmp(fn, "make_block_ptr")) return strcmp(slot, "base") != 0;
    if (!strcmp(fn, "permute") || !strcmp(fn, "trans")) return !strcmp(slot, "dims");
    if (!strcmp(slot, "shape")) /* a shape, as Triton writes it: zeros((M, N), f32) */
        return !strcmp(fn, "zeros") || !strcmp(fn, "full") || !strcmp(fn, "reshape") || !strcmp(fn, "view") ||
               !strcmp(fn, "broadcast_to");
    if (!strcmp(fn, "advance")) return !strcmp(slot, "offsets");
    if (!strcmp(fn, "inline_asm_elementwise")) return !strcmp(slot, "args") || !strcmp(slot, "dtype");
    return (!strcmp(fn, "load") || !strcmp(fn, "store")) && !strcmp(slot, "boundary_check");
}
