/* hash.c: short hashes for in-memory tables, from LLVM's bundled BLAKE3 (the same hash the
 * disk cache names its files with, see diskcache.c). */
#include <string.h>
#include <llvm-c/blake3.h>
#include "runtime_internal.h"

uint64_t rt_hash64(const void *data, size_t n)
{
    llvm_blake3_hasher h;
    uint8_t out[8];
    llvm_blake3_hasher_init(&h);
    llvm_blake3_hasher_update(&h, data, n);
    llvm_blake3_hasher_finalize(&h, out, sizeof out);
    uint64_t v;
    memcpy(&v, out, sizeof v);
    return v;
}
