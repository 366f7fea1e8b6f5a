/* tir_print.c: the textual dump of tile IR (tilec --emit=tir). One op per line,
 * `%id = opcode[attributes] operands : result types`, regions indented; layouts are
 * printed once assigned. The format is stable: golden tests compare it. */
#include "tir.h"

static const char *const opcode_names[TIR_OPCODE_COUNT] = {
    [TIR_CONST] = "const", [TIR_PARAM] = "param", [TIR_PROGRAM_ID] = "program_id",
    [TIR_NUM_PROGRAMS] = "num_programs", [TIR_ARANGE] = "arange", [TIR_SPLAT] = "splat",
    [TIR_EXPAND_DIMS] = "expand_dims", [TIR_BROADCAST] = "broadcast", [TIR_TRANS] = "trans",
    [TIR_RESHAPE] = "reshape", [TIR_PERMUTE] = "permute", [TIR_JOIN] = "join", [TIR_SPLIT] = "split",
    [TIR_HINT] = "hint", [TIR_ASSUME] = "assume", [TIR_INLINE_ASM] = "inline_asm", [TIR_PRINT] = "print", [TIR_ASSERT] = "assert",
    [TIR_CONVERT_LAYOUT] = "convert_layout", [TIR_BINARY] = "binary", [TIR_CMP] = "cmp",
    [TIR_UNARY] = "unary", [TIR_SELECT] = "select", [TIR_CAST] = "cast", [TIR_FMA] = "fma",
    [TIR_ADDPTR] = "addptr", [TIR_LOAD] = "load", [TIR_STORE] = "store", [TIR_PREFETCH] = "prefetch",
    [TIR_ATOMIC] = "atomic",
    [TIR_LOCAL_ALLOC] = "local_alloc", [TIR_LOCAL_STORE] = "local_store",
    [TIR_LOCAL_LOAD] = "local_load", [TIR_ASYNC_COPY] = "async_copy",
    [TIR_ASYNC_COMMIT] = "async_commit", [TIR_ASYNC_WAIT] = "async_wait",
    [TIR_BARRIER] = "barrier", [TIR_REDUCE] = "reduce", [TIR_SCAN] = "scan", [TIR_FLIP] = "flip", [TIR_SORT] = "sort", [TIR_DOT] = "dot", [TIR_FOR] = "for", [TIR_WHILE] = "while",
    [TIR_IF] = "if", [TIR_YIELD] = "yield", [TIR_CONDITION] = "condition",
    [TIR_BREAK] = "break", [TIR_CONTINUE] = "continue", [TIR_RETURN] = "return",
};
static const char *const binop_names[] = {"add", "sub", "mul", "div", "rem", "and", "or",
                                          "xor", "shl", "shr", "min", "max", "pow",
                                          "atan2", "hypot", "copysign"};
static const char *const cmp_names[] = {"lt", "le", "gt", "ge", "eq", "ne"};
static const char *const unop_names[] = {"neg", "not", "abs", "exp", "exp2", "log",
                                         "log2", "sqrt", "rsqrt", "sin", "cos", "floor",
                                         "ceil", "trunc", "tanh", "erf", "rint", "log1p",
                                         "expm1", "tan", "atan", "asin", "acos", "sinh",
                                         "cosh", "log10", "asinh", "acosh", "atanh", "cbrt",
                                         "exp10", "erfinv", "popc", "clz", "ffs", "brev"};
static const char *const reduce_names[] = {"sum", "max", "min", "argmax", "argmin", "argmax_last",
                                           "argmin_last"};
static const char *const atomic_names[] = {"add", "max", "min", "and", "or", "xor", "xchg", "cas"};
static const char *const sem_names[] = {"relaxed", "acquire", "release", "acq_rel"};
static const char *const scope_names[] = {"cta", "gpu", "sys"};

const char *tir_opcode_name(TirOpcode c) {
    return c < TIR_OPCODE_COUNT && opcode_names[c] ? opcode_names[c] : "?";
}

static void print_type(FILE *out, Arena *a, const TirValue *v) {
    fputs(tir_type_str(a, &v->type), out);
    if (v->layout && v->layout->kind != LAYOUT_SCALAR) fprintf(out, " %s", tir_layout_str(a, v->layout));
}

static void print_attrs(FILE *out, const TirOp *op) {
    switch (op->code) {
    case TIR_CONST:
        if (et_is_float(op->results[0]->type.elem)) fprintf(out, " %.17g", op->attr.f);
        else fprintf(out, " %lld", (long long)op->attr.i);
        break;
    case TIR_PARAM: case TIR_PROGRAM_ID: case TIR_NUM_PROGRAMS: case TIR_EXPAND_DIMS:
        fprintf(out, " %lld", (long long)op->attr.i);
        break;
    case TIR_ARANGE: fprintf(out, " %lld, %lld", (long long)op->attr.i, (long long)op->attr.i2); break;
    case TIR_BINARY: fprintf(out, " %s", binop_names[op->attr.i]); break;
    case TIR_CMP: fprintf(out, " %s", cmp_names[op->attr.i]); break;
    case TIR_UNARY: fprintf(out, " %s", unop_names[op->attr.i]); break;
    case TIR_REDUCE: fprintf(out, " %s axis=%lld", reduce_names[op->attr.i], (long long)op->attr.i2); break;
    case TIR_FLIP: fprintf(out, " axis=%lld", (long long)(op->attr.i2 & 15)); break;
    case TIR_SORT:
        fprintf(out, " axis=%lld%s", (long long)(op->attr.i2 & 15), (op->attr.i2 >> 4) & 1 ? " descending" : "");
        break;
    case TIR_SCAN:
        fprintf(out, " %s axis=%lld%s", op->attr.i == SCAN_ADD ? "add" : "mul", (long long)(op->attr.i2 & 15),
                (op->attr.i2 >> 4) & 1 ? " reverse" : "");
        break;
    case TIR_DOT:
        if (op->attr.i == DOT_TF32) fputs(" tf32", out);
        break;
    case TIR_ASYNC_WAIT: fprintf(out, " %lld", (long long)op->attr.i); break;
    case TIR_FOR:
        if (op->attr.i) fprintf(out, " num_stages=%lld", (long long)op->attr.i);
        break;
    case TIR_CAST:
        if (op->attr.i == CAST_BITS) fputs(" bits", out);
        break;
    case TIR_BARRIER:
        if (op->attr.i == TIR_BARRIER_USER) fputs(" user", out);
        break;
    case TIR_HINT:
        fputs(op->attr.i == HINT_MULTIPLE_OF ? " multiple_of" : " max_contiguous", out);
        for (int d = 0; d < (op->ops[0]->type.rank ? op->ops[0]->type.rank : 1); d++)
            fprintf(out, "%s%lld", d ? "," : " [", 1LL << ((op->attr.i2 >> (5 * d)) & 31));
        fputs("]", out);
        break;
    case TIR_PERMUTE:
        for (int d = 0; d < op->ops[0]->type.rank; d++)
            fprintf(out, "%s%d", d ? "," : " [", (int)((op->attr.i >> (4 * d)) & 15));
        fputs("]", out);
        break;
    case TIR_ATOMIC:
        fprintf(out, " %s %s %s", atomic_names[op->attr.i], sem_names[op->attr.i2 & 15],
                scope_names[op->attr.i2 >> 4]);
        break;
    case TIR_PRINT: case TIR_ASSERT:
        fprintf(out, " site=%lld", (long long)op->attr.i);
        break;
    case TIR_LOAD: case TIR_STORE: {
        TirCache c = tir_mem_cache(op->attr.i);
        TirEvict e = tir_mem_evict(op->attr.i);
        fprintf(out, "%s%s%s%s%s", c ? " " : "", tir_mem_cache_name(c), e ? " " : "", tir_mem_evict_name(e),
                op->attr.i & TIR_MEM_VOLATILE ? " volatile" : "");
        break;
    }
    case TIR_PREFETCH:
        fprintf(out, " L%lld", (long long)op->attr.i);
        break;
    case TIR_INLINE_ASM:
        fprintf(out, " asm=%lld pack=%d%s", (long long)op->attr.i, tir_asm_pack(op->attr.i2),
                op->attr.i2 & TIR_ASM_PURE ? " pure" : "");
        break;
    case TIR_LOCAL_ALLOC:
        if (op->attr.i >= 0) fprintf(out, " offset=%lld", (long long)op->attr.i);
        break;
    default: break;
    }
}

static void print_block(FILE *out, Arena *a, const TirBlock *b, int depth);

static void print_op(FILE *out, Arena *a, const TirOp *op, int depth) {
    fprintf(out, "%*s", depth * 2, "");
    for (int i = 0; i < op->nres; i++) fprintf(out, "%s%%%d", i ? ", " : "", op->results[i]->id);
    if (op->nres) fputs(" = ", out);
    fputs(tir_opcode_name(op->code), out);
    print_attrs(out, op);
    for (int i = 0; i < op->nops; i++) fprintf(out, "%s%%%d", i ? ", " : " ", op->ops[i]->id);
    if (op->nres) fputs(" : ", out);
    for (int i = 0; i < op->nres; i++) {
        if (i) fputs(", ", out);
        print_type(out, a, op->results[i]);
    }
    if (op->code == TIR_PARAM && op->results[0]->name) fprintf(out, "  // %s", op->results[0]->name);
    for (int r = 0; r < op->nregions; r++) {
        fputs(!r ? " {\n" : op->code == TIR_WHILE ? " do {\n" : " else {\n", out);
        print_block(out, a, op->regions[r], depth + 1);
        fprintf(out, "%*s}", depth * 2, "");
    }
    fputc('\n', out);
}

static void print_block(FILE *out, Arena *a, const TirBlock *b, int depth) {
    if (b->nargs) {
        fprintf(out, "%*s^(", depth * 2, "");
        for (int i = 0; i < b->nargs; i++) {
            fprintf(out, "%s%%%d: ", i ? ", " : "", b->args[i]->id);
            print_type(out, a, b->args[i]);
        }
        fputs("):\n", out);
    }
    for (const TirOp *op = b->first; op; op = op->next) print_op(out, a, op, depth);
}

void tir_print(const TirKernel *k, FILE *out) {
    fprintf(out, "kernel @%s(", k->symbol ? k->symbol : k->name);
    for (int i = 0; i < k->nparams; i++) {
        if (i) fputs(", ", out);
        fprintf(out, "%s: %s", k->params[i].name, tir_type_str(k->arena, &k->params[i].type));
    }
    fprintf(out, ") num_warps=%d num_stages=%d {\n", k->num_warps, k->num_stages);
    print_block(out, k->arena, k->body, 1);
    fputs("}\n", out);
}
