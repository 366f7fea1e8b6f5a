/* sim_shadow.c: the emulator's shared-memory checks. Every access is bounds-checked against
 * the program's shared memory; a shadow entry per byte remembers its last writer and its
 * readers in the current barrier interval, so two threads touching a byte between the same
 * two barriers, one of them writing, is reported as a race. Stores of the same value by
 * several threads (replicas of a layout) are harmless on hardware: they are reported only
 * in strict mode, else confirmed equal once the store is done. Bytes a cp.async will write
 * are marked until its wait; touching them before is an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim_int.h"

enum { MANY = 0xffff };

int sim_shadow_reserve(SimState *s, size_t bytes)
{
    if (s->shadow && s->shadow_cap >= bytes)
        return 0;
    size_t n = bytes ? (bytes + 4095) / 4096 * 4096 : 4096;
    SimShadow *sh = aligned_alloc(64, n * sizeof *sh); /* an aligned word: one cache line */
    if (!sh)
        return -1;
    memset(sh, 0, n * sizeof *sh);
    free(s->shadow);
    s->shadow = sh;
    s->shadow_cap = n;
    s->epoch = 0;
    return 0;
}

void sim_shadow_free(SimState *s)
{
    free(s->shadow);
    s->shadow = NULL;
    s->shadow_cap = 0;
}

/* Epochs grow across programs, so a new program needs no clearing but on wrap-around. */
void sim_shadow_next_epoch(SimState *s)
{
    if (++s->epoch == UINT32_MAX) {
        memset(s->shadow, 0, s->shadow_cap * sizeof *s->shadow);
        s->epoch = 1;
    }
}

int sim_shadow_offset(SimState *s, const SimThread *t, const void *addr, int bytes,
                      const char *what, uint32_t *off)
{
    intptr_t d = (intptr_t)((uintptr_t)addr - (uintptr_t)s->smem);
    if (bytes > 0 && d >= 0 && (size_t)d <= s->smem_size &&
        s->smem_size - (size_t)d >= (size_t)bytes) {
        *off = (uint32_t)d;
        return 0;
    }
    char who[48];
    return sim_fail(s, "shared memory out of bounds: %s %s %d bytes at offset %lld of %zu",
                    sim_who(t->id, who), what, bytes, (long long)d, s->smem_size);
}

void sim_shadow_pend(SimState *s, uint32_t off, int bytes, uint16_t mark)
{
    for (int i = 0; i < bytes; i++)
        s->shadow[off + i].pend = mark;
}

static const char *verb(ShadowKind k)
{
    return k == SH_READ ? "reads" : k == SH_WRITE ? "writes" : "cp.async writes";
}

static int race(SimState *s, const SimThread *t, ShadowKind k, uint32_t at, uint32_t off,
                int bytes, int other, const char *other_did)
{
    char a[48], b[48];
    if (other == MANY)
        snprintf(b, sizeof b, "another thread");
    else
        sim_who(other, b);
    return sim_fail(s, "shared-memory race: %s %s byte %u (a %d-byte access at offset %u), "
                    "which %s %s since the last barrier", sim_who(t->id, a), verb(k), at,
                    bytes, off, b, other_did);
}

static int pending(SimState *s, const SimThread *t, ShadowKind k, uint32_t at, int mark)
{
    char a[48], b[48];
    return sim_fail(s, "shared memory used before its cp.async completed: %s %s byte %u, "
                    "which a cp.async of %s has not written yet (missing cp.async.wait_group?)",
                    sim_who(t->id, a), verb(k), at, sim_who(mark - 1, b));
}

/* A write over another thread's write of this interval: an error, or (not strict, plain
 * store) a candidate for the same-value check once the store is done. */
static int overwrite(SimState *s, SimThread *t, ShadowKind k, uint32_t i, uint32_t off,
                     int bytes, int other)
{
    if (k == SH_ASYNC || s->prog->strict || bytes > SIM_RECHECK_MAX)
        return race(s, t, k, i, off, bytes, other, "wrote");
    SimRecheck *r = &t->recheck;
    if (!r->active) {
        r->active = 1;
        r->other = other;
        r->off = off;
        r->bytes = bytes;
        r->mask = 0;
        memcpy(r->before, s->smem + off, (size_t)bytes);
    }
    r->mask |= (uint64_t)1 << (i - off);
    return 0;
}

static int check_byte(SimState *s, SimThread *t, ShadowKind k, uint32_t i, uint32_t off,
                      int bytes)
{
    SimShadow *sh = &s->shadow[i];
    uint16_t me = (uint16_t)t->id;
    if (sh->pend)
        return pending(s, t, k, i, sh->pend);
    if (sh->w_epoch == s->epoch && sh->w_tid != me) {
        if (k == SH_READ)
            return race(s, t, k, i, off, bytes, sh->w_tid, "wrote");
        if (overwrite(s, t, k, i, off, bytes, sh->w_tid) != 0)
            return -1;
    }
    if (k != SH_READ && sh->r_epoch == s->epoch && (sh->r_tid != me || sh->r_many))
        return race(s, t, k, i, off, bytes, sh->r_tid != me ? sh->r_tid : MANY, "read");
    return 0;
}

static void record_byte(SimState *s, const SimThread *t, ShadowKind k, uint32_t i)
{
    SimShadow *sh = &s->shadow[i];
    uint16_t me = (uint16_t)t->id;
    if (k != SH_READ) {
        sh->w_epoch = s->epoch;
        sh->w_tid = me;
    } else if (sh->r_epoch != s->epoch) {
        sh->r_epoch = s->epoch;
        sh->r_tid = me;
        sh->r_many = 0;
    } else if (sh->r_tid != me) {
        sh->r_many = 1;
    }
}

int sim_shadow_access(SimState *s, SimThread *t, const void *addr, int bytes, ShadowKind k)
{
    uint32_t off;
    if ((t->recheck.active && sim_shadow_recheck(t) != 0) ||
        sim_shadow_offset(s, t, addr, bytes, k == SH_READ ? "reads" : "writes", &off) != 0)
        return -1;
    /* one pass: after an error the program is abandoned, its records do not matter */
    for (uint32_t i = off; i < off + (uint32_t)bytes; i++) {
        if (check_byte(s, t, k, i, off, bytes) != 0)
            return -1;
        record_byte(s, t, k, i);
    }
    return 0;
}

int sim_shadow_recheck(SimThread *t)
{
    SimRecheck *r = &t->recheck;
    if (!r->active)
        return 0;
    r->active = 0;
    SimState *s = t->s;
    for (int j = 0; j < r->bytes; j++)
        if ((r->mask >> j & 1) && s->smem[r->off + j] != r->before[j])
            return race(s, t, SH_WRITE, r->off + (uint32_t)j, r->off, r->bytes, r->other,
                        "wrote (a different value)");
    return 0;
}
