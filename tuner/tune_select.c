/* tune_select.c: which timed configuration a tuning keeps. The earliest (enumeration order)
 * within TIE_BAND of the fastest, so measurement noise between near-equal configurations
 * cannot flip the choice; one whose code uses local memory (register spills, a stack) only
 * when it beats every configuration that uses none by more than SPILL_BAND: spilled code's
 * speed moves with the clock and the inputs more than the measurement's noise does. */
#include "tune.h"

static const double TIE_BAND = 0.005, SPILL_BAND = 0.03;

/* Whether r is timed and, for `spills` 0 or 1, uses no local memory (unknown counts as none)
 * or some; any timed one for -1. */
static int eligible(const tile_TuneResult *r, int spills)
{
    return r->status == TILE_TUNE_OK && (spills < 0 || (r->local_bytes > 0) == spills);
}

/* The earliest eligible result within TIE_BAND of the fastest eligible one, or -1. */
static int earliest_fastest(const tile_TuneResult *r, int n, int spills)
{
    double fastest = -1;
    for (int i = 0; i < n; i++)
        if (eligible(&r[i], spills) && (fastest < 0 || r[i].ms < fastest))
            fastest = r[i].ms;
    for (int i = 0; i < n && fastest >= 0; i++)
        if (eligible(&r[i], spills) && r[i].ms <= fastest * (1 + TIE_BAND))
            return i;
    return -1;
}

int tune_pick(const tile_TuneResult *r, int n)
{
    int best = earliest_fastest(r, n, -1), clean = earliest_fastest(r, n, 0);
    if (best >= 0 && r[best].local_bytes > 0 && clean >= 0 &&
        r[clean].ms <= r[best].ms * (1 + SPILL_BAND))
        return clean;
    return best;
}
