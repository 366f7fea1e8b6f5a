/* tilec_clip.c: user text (a kernel name, an expression, an option's value) as tilec's
 * messages echo it: at most TILEC_CLIP_MAX bytes, the rest shown as "...", so that a
 * 100 KB argument does not come back as a 100 KB message. */
#include <string.h>
#include "tilec.h"

enum { SLOTS = 8 }; /* clipped texts alive at once: several may go into one message */

const char *tilec_clip(const char *s)
{
    static _Thread_local char slots[SLOTS][TILEC_CLIP_MAX + 4];
    static _Thread_local unsigned next;
    if (!s || strlen(s) <= TILEC_CLIP_MAX)
        return s;
    size_t n = TILEC_CLIP_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) /* not inside a UTF-8 character */
        n--;
    char *out = slots[next++ % SLOTS];
    memcpy(out, s, n);
    memcpy(out + n, "...", 4);
    return out;
}
