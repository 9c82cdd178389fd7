/* zydis.h - Zydis (the x86-64 decoder watch and probe use), loaded on
 * first use instead of linked (zydis.c says why). */
#ifndef VG_ZYDIS_H
#define VG_ZYDIS_H

#include <stdbool.h>

/* Load the library now if it is not yet: true when its functions work.
 * Otherwise *why (if why) says why in one sentence, and every Zydis call
 * fails as on bytes that are not an instruction. */
bool vg_zydis_load(const char **why);

#endif
