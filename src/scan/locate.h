/* locate.h - where a scan match lives, in the terms a user can reuse:
 * region and perms, image and static offset (libfoo.so+0x1234, valid across
 * restarts), the symbol of .data/.bss it falls in (g_stats+16), and the
 * ADDR form `vigil watch` takes for it. */
#ifndef VG_SCAN_LOCATE_H
#define VG_SCAN_LOCATE_H

#include <stdint.h>

#include "elf/image.h"
#include "target/maps.h"

struct vg_location {
	const struct vg_region *region;   /* NULL: no longer mapped */
	const struct vg_image *image;     /* NULL: not in an image's range */
	uint64_t static_offset;           /* address - image bias */
	const char *symbol;               /* data symbol covering it, or NULL */
	uint64_t symbol_offset;
	char watch_spec[320];             /* "g_stats+16", "libc.so.6:x+8", "0x..." */
};

void vg_locate(const struct vg_maps *maps, const struct vg_images *imgs,
	       uint64_t addr, struct vg_location *out);

#endif
