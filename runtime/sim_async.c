/* sim_async.c: cp.async, deferred as on hardware. An issued copy reads its global source at
 * once into a pending record (and zero-fills the tail) but writes shared memory only when a
 * cp.async.wait_group covering its group runs; until then the destination keeps its old
 * bytes, and any access to them is reported (a pipeline missing a wait). The write counts as
 * the issuing thread's, at the wait, for the race checks. */
#include <stdlib.h>
#include <string.h>
#include "sim_int.h"

static int bad_copy(SimThread *t, const char *why, int bytes, int src_bytes)
{
    char who[48];
    return sim_fail(t->s, "cp.async: %s issues a copy of %d bytes (%d from global): %s",
                    sim_who(t->id, who), bytes, src_bytes, why);
}

static SimCopy *copy_slot(SimThread *t)
{
    if (t->ncopies == t->copies_cap) {
        int cap = t->copies_cap ? 2 * t->copies_cap : 16;
        SimCopy *c = realloc(t->copies, sizeof *c * (size_t)cap);
        if (!c)
            return NULL;
        t->copies = c;
        t->copies_cap = cap;
    }
    return &t->copies[t->ncopies++];
}

int sim_async_copy(SimThread *t, void *dst, const void *src, int bytes, int src_bytes)
{
    SimState *s = t->s;
    uint32_t off;
    if (bytes != 4 && bytes != 8 && bytes != 16)
        return bad_copy(t, "the size must be 4, 8 or 16", bytes, src_bytes);
    if (src_bytes < 0 || src_bytes > bytes)
        return bad_copy(t, "the source size must be 0 .. the size", bytes, src_bytes);
    if (sim_shadow_offset(s, t, dst, bytes, "gives cp.async a destination of", &off) != 0)
        return -1;
    if (off % (uint32_t)bytes)
        return bad_copy(t, "the destination is not aligned to the size", bytes, src_bytes);
    if (src_bytes > 0 && (uintptr_t)src % (uintptr_t)bytes) /* a GPU faults on it */
        return bad_copy(t, "the source is not aligned to the size", bytes, src_bytes);
    if (sim_shadow_access(s, t, dst, bytes, SH_ASYNC) != 0)
        return -1;
    SimCopy *c = copy_slot(t);
    if (!c)
        return sim_fail(s, "cp.async: out of memory");
    c->off = off;
    c->bytes = bytes;
    c->group = t->committed;
    memset(c->data, 0, sizeof c->data);
    if (src_bytes > 0)
        memcpy(c->data, src, (size_t)src_bytes);
    sim_shadow_pend(s, off, bytes, (uint16_t)(t->id + 1));
    return 0;
}

void sim_async_commit(SimThread *t) { t->committed++; }

static int complete(SimThread *t, const SimCopy *c)
{
    SimState *s = t->s;
    sim_shadow_pend(s, c->off, c->bytes, 0);
    if (sim_shadow_access(s, t, s->smem + c->off, c->bytes, SH_ASYNC) != 0)
        return -1;
    memcpy(s->smem + c->off, c->data, (size_t)c->bytes);
    return 0;
}

int sim_async_wait(SimThread *t, int pending)
{
    uint32_t n = pending > 0 ? (uint32_t)pending : 0;
    uint32_t limit = t->committed > n ? t->committed - n : 0; /* complete groups < limit */
    int kept = 0;
    for (int i = 0; i < t->ncopies; i++) {
        if (t->copies[i].group >= limit)
            t->copies[kept++] = t->copies[i];
        else if (complete(t, &t->copies[i]) != 0)
            return -1;
    }
    t->ncopies = kept;
    return 0;
}

void sim_async_reset(SimThread *t)
{
    if (t->s && t->s->shadow)
        for (int i = 0; i < t->ncopies; i++)
            sim_shadow_pend(t->s, t->copies[i].off, t->copies[i].bytes, 0);
    t->ncopies = 0;
    t->committed = 0;
}
