/* tilec_log.c: tilec's log sink for the runtime (tile_set_log). Warnings of the runtime and
 * of the caches (a damaged file ignored or moved aside, a result that could not be saved)
 * reach stderr as "tilec: warning: ..."; routine activity (compiled, loaded from the disk
 * cache, a tuned configuration's failure that the tuning table shows anyway) is kept quiet.
 * A failed save of tuning results is remembered: `tilec tune` exits 1 when they were not stored. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "tilec.h"

/* Messages of the library that report normal work, not a problem. */
static const char *const ROUTINE[] = { "tile: compiled '", "tile: loaded '", "tile: tuning '" };
/* Messages the user asked for (TILE_PRINT_AUTOTUNING=1, the kernel's static_print): printed
 * as they are. */
static const char *const REQUESTED[] = { "tile: autotuning: ", "tile: compiling '" };

static atomic_int save_failed;

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void log_to_stderr(void *user, const char *msg)
{
    (void)user;
    for (size_t i = 0; i < sizeof ROUTINE / sizeof ROUTINE[0]; i++)
        if (starts_with(msg, ROUTINE[i]))
            return;
    for (size_t i = 0; i < sizeof REQUESTED / sizeof REQUESTED[0]; i++)
        if (starts_with(msg, REQUESTED[i])) {
            fprintf(stderr, "%s\n", msg);
            return;
        }
    if (strstr(msg, "cannot save the tuning cache"))
        atomic_store(&save_failed, 1);
    if (starts_with(msg, "tile: "))
        fprintf(stderr, "tilec: warning: %s\n", msg + 6);
    else /* already formatted: a compiler diagnostic, an autotuning choice */
        fprintf(stderr, "%s\n", msg);
}

void tilec_log_install(tile_Context *ctx)
{
    tile_set_log(ctx, log_to_stderr, NULL);
}

int tilec_log_save_failed(void)
{
    return atomic_load(&save_failed);
}
