/* tune_context.c: the library's contexts: the runtime's contexts with the tuner as the chooser
 * of tuned consts at launch. The tuner sits above the runtime, so it is wired in here, at the
 * top, and the runtime never calls it by name. */
#include "tune.h"

static const RtChooser tuner_chooser = {tune_choose, tune_forget};

tile_Status tile_context_open(tile_Backend backend, tile_Context **out)
{
    return rt_context_open(backend, 0, &tuner_chooser, out);
}

tile_Status tile_context_open_device(tile_Backend backend, int device, tile_Context **out)
{
    return rt_context_open(backend, device, &tuner_chooser, out);
}
