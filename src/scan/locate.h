/* locate.h - where a scan match lives, in the terms a user can reuse:
 * region and perms, image and static offset (libfoo.so+0x1234, valid across
 * restarts), the symbol of .data/.bss it falls in (g_stats+16), and the
 * ADDR form `vigil watch` takes for it. */
#ifndef VG_SCAN_LOCATE_H
#define VG_SCAN_LOCATE_H

#include <stdbool.h>
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

/* Fill out for addr (never fails; pointers borrowed from maps and imgs).
 * image: the image whose mappings cover addr, or whose writable PT_LOAD
 * does (its .bss past the file-backed pages lies in an anonymous mapping).
 * symbol: the sized symbol covering addr (unsized labels such as
 * __bss_start are not names of data).  watch_spec, the first of these that
 * vg_addr_parse() resolves back to addr: SYMBOL[+OFF] (main executable, the
 * only image defining SYMBOL), IMAGE:SYMBOL[+OFF] (IMAGE the file name, or
 * the path when the file name is shared), @0xSTATIC (main executable), 0xHEX.
 * Offsets are decimal. */
/* The sized data symbol of img covering static_offset: *name (borrowed)
 * and the offset into it; false (outputs untouched) when none does. */
bool vg_locate_symbol(const struct vg_image *img, uint64_t static_offset,
		      const char **name, uint64_t *offset);

void vg_locate(const struct vg_maps *maps, const struct vg_images *imgs,
	       uint64_t addr, struct vg_location *out);

/* The image addr belongs to, as vg_locate() decides it, or NULL. */
const struct vg_image *vg_locate_image(const struct vg_images *imgs,
				       uint64_t addr);

/* The file name of img's path ("libc.so.6"); "" for none.  Borrowed. */
const char *vg_locate_image_name(const struct vg_image *img);

#endif
