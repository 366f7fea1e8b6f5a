/* debug_abi.h: the debug buffer that print and device_assert write (compiler/lower_debug.c)
 * and the runtime reads back after the launch (runtime/debug.c), and the text form of a
 * kernel's debug sites that travels with its code (CompiledKernel.debug_sites, the disk
 * cache). The buffer is an array of 32-bit words: a header, then print records. */
#ifndef TILE_DEBUG_ABI_H
#define TILE_DEBUG_ABI_H
#include <stddef.h>
#include "tir.h"

enum {
    DEBUG_ASSERT_SITE = 0,  /* 1 + the site of the launch's first failed assertion; 0: none */
    DEBUG_ASSERT_PID = 1,   /* its program's ids along x, y, z (3 words) */
    DEBUG_ASSERT_INDEX = 4, /* the row-major index of its failing element */
    DEBUG_PRINT_COUNT = 8,  /* print records claimed; past DEBUG_RECORDS they were dropped */
    DEBUG_HEADER_WORDS = 16,
    /* a record: site | value << 16, occurrence (the how-manieth print the program ran),
     * row-major element index, program ids x, y, z, the value's 64 bits (low word first):
     * floats as f64, integers extended to 64 bits, bools 0/1, pointers as addresses */
    DEBUG_RECORD_WORDS = 8,
    DEBUG_RECORDS = 1 << 15,
};
#define DEBUG_BUFFER_BYTES \
    ((size_t)4 * (DEBUG_HEADER_WORDS + (size_t)DEBUG_RECORD_WORDS * DEBUG_RECORDS))

/* A site as the runtime reads it back. */
typedef struct DebugSiteInfo {
    char kind;          /* DEBUG_ASSERT or DEBUG_PRINT */
    const char *file;
    int line, col;
    const char *text;
    int nvalues;
    char kinds[TIR_DEBUG_MAX_VALUES + 1];
    int rank, shape[TIR_MAX_RANK];
} DebugSiteInfo;

/* The sites as text (one line each, strings length-prefixed), in the arena; "" for none. */
char *debug_sites_encode(Arena *a, const TirDebugSite *sites, int n);
/* Parses debug_sites_encode's text into a malloc'ed array (strings inside the same block;
 * free(*out) frees all): the number of sites, or -1 when the text is malformed. */
int debug_sites_decode(const char *text, DebugSiteInfo **out);

#endif
