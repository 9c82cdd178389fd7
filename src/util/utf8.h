/* utf8.h - UTF-8 validity of target-controlled strings. */
#ifndef VG_UTF8_H
#define VG_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length (1-4) of the valid UTF-8 sequence at p, or 0 if p starts an
 * invalid one (overlong, surrogate, past U+10FFFF, truncated).  p must be
 * NUL-terminated; NUL itself is a 1-byte sequence. */
size_t vg_utf8_seq(const unsigned char *p);

/* Whether the NUL-terminated s is entirely valid UTF-8. */
bool vg_utf8_valid(const char *s);

#endif
