/* map.c: RtMap, a small open-addressing hash map from 64-bit keys to pointers, used for the
 * specialization cache (key hash -> Spec) and the table of live allocations. Linear probing
 * with backward-shift deletion, so there are no tombstones. */
#include <stdlib.h>
#include "runtime_internal.h"

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33; /* splitmix-style finalizer: pointers and hashes alike spread well */
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

void *rtmap_get(const RtMap *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = slot_of(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == key)
            return m->vals[i];
    return NULL;
}

static int grow(RtMap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    RtMap n = { calloc(cap, sizeof(uint64_t)), calloc(cap, sizeof(void *)), cap, 0 };
    if (!n.keys || !n.vals) {
        free(n.keys);
        free(n.vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i])
            rtmap_put(&n, m->keys[i], m->vals[i]);
    rtmap_free(m);
    *m = n;
    return 0;
}

int rtmap_put(RtMap *m, uint64_t key, void *val)
{
    if ((m->len + 1) * 4 > m->cap * 3 && grow(m) < 0)
        return -1;
    size_t i = slot_of(key, m->cap);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->vals[i])
        m->len++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

void *rtmap_remove(RtMap *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1, i = slot_of(key, m->cap);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    void *old = m->vals[i];
    if (!old)
        return NULL;
    /* shift back later entries of the run that would no longer be reachable */
    for (size_t j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
        size_t home = slot_of(m->keys[j], m->cap);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->vals[i] = NULL;
    m->len--;
    return old;
}

void rtmap_free(RtMap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->len = 0;
}
