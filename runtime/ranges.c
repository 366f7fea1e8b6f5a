/* ranges.c: RtRanges, a context's live device memory as a sorted array of disjoint address
 * ranges (tile_malloc allocations and tile_borrow'ed ranges). Copies, memsets, frees and
 * launch pointer arguments find the range an address falls in by binary search, so an
 * offset into an allocation is fine and anything past its end, freed or foreign is not. */
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"

/* Index of the first range whose base is above addr (0..len). */
static size_t upper_bound(const RtRanges *r, uint64_t addr)
{
    size_t lo = 0, hi = r->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->items[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const RtRange *rtranges_find(const RtRanges *r, uint64_t addr)
{
    size_t i = upper_bound(r, addr);
    if (i == 0)
        return NULL;
    const RtRange *g = &r->items[i - 1];
    return addr - g->base < g->size ? g : NULL;
}

const RtRange *rtranges_find_span(const RtRanges *r, uint64_t addr, size_t bytes)
{
    const RtRange *g = rtranges_find(r, addr);
    if (!g || bytes > g->size - (addr - g->base))
        return NULL;
    return g;
}

static int grow(RtRanges *r)
{
    size_t cap = r->cap ? r->cap * 2 : 16;
    RtRange *items = realloc(r->items, sizeof *items * cap);
    if (!items)
        return -1;
    r->items = items;
    r->cap = cap;
    return 0;
}

int rtranges_add(RtRanges *r, uint64_t base, size_t size, int borrowed)
{
    if (!size || base + size < base)
        return RTRANGES_OVERLAP;
    size_t i = upper_bound(r, base);
    if (i > 0 && base - r->items[i - 1].base < r->items[i - 1].size)
        return RTRANGES_OVERLAP;
    if (i < r->len && r->items[i].base - base < size)
        return RTRANGES_OVERLAP;
    if (r->len == r->cap && grow(r) < 0)
        return RTRANGES_NOMEM;
    memmove(&r->items[i + 1], &r->items[i], sizeof *r->items * (r->len - i));
    r->items[i] = (RtRange){ base, size, borrowed };
    r->len++;
    return 0;
}

int rtranges_remove(RtRanges *r, uint64_t base, RtRange *out)
{
    size_t i = upper_bound(r, base);
    if (i == 0 || r->items[i - 1].base != base)
        return -1;
    *out = r->items[i - 1];
    memmove(&r->items[i - 1], &r->items[i], sizeof *r->items * (r->len - i));
    r->len--;
    return 0;
}

void rtranges_free(RtRanges *r)
{
    free(r->items);
    memset(r, 0, sizeof *r);
}
