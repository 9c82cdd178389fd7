/* duration.h - a duration as users write it on the command line:
 * "2s", "500ms", "1m", "1.5s", "1h"; a bare number is milliseconds, as
 * every --duration and --interval took before units existed. */
#ifndef VG_DURATION_H
#define VG_DURATION_H

#include <stdint.h>

/* Parse s into whole milliseconds.  A bare number may be decimal or
 * 0xHEX (the old form); with a unit (ms, s, m, h) it is decimal with an
 * optional fraction ("1.5s").  -EINVAL for anything else, including a
 * value that is not a whole number of milliseconds ("1.5ms", "0.0001s");
 * -ERANGE when it does not fit in 64 bits of milliseconds. */
int vg_parse_duration_ms(const char *s, uint64_t *ms);

#endif
