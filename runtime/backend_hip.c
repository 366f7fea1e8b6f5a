/* backend_hip.c: the AMD backend's place in the backend table. Not built yet: opening it
 * reports TILE_ERROR_NO_DEVICE. When it comes, it loads libamdhip64.so with dlopen (an
 * X-macro list like cuda_api.h), links AMDGCN code objects with lld and fills the same ops. */
#include <stdio.h>
#include "backend.h"

static tile_Status hip_open(void **dev, int device, char *err)
{
    snprintf(err, BK_ERR_MAX, "HIP backend not built yet");
    return TILE_ERROR_NO_DEVICE;
}

/* A context never exists on this backend, so no other entry is ever called. */
const BackendOps rt_backend_hip = { TILE_BACKEND_HIP, "hip", hip_open };
