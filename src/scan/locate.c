/* locate.c - name a target address the way a user can reuse it.
 *
 * The image is found by its mappings first, then by its writable PT_LOADs:
 * the loader maps the file only up to the last file byte of the data
 * segment, and the rest of .bss is an anonymous mapping right after it,
 * which vg_images_find() (mapping ranges) does not cover.
 *
 * The ADDR form for `vigil watch` is never guessed: each candidate is
 * resolved back with vg_addr_parse(), the parser watch itself uses, and
 * kept only if it gives the same address (a local symbol defined twice, a
 * file name shared by two images, a copy-relocated variable that also
 * exists in libc all fall through to the next form). */
#include "scan/locate.h"

#include <elf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "elf/addrspec.h"

static bool in_writable_load(const struct vg_image *img, uint64_t addr)
{
	if (img->bias_method == VG_BIAS_NONE)
		return false;
	for (size_t i = 0; i < img->n_loads; i++) {
		const struct vg_load *l = &img->loads[i];
		uint64_t start = img->bias + l->vaddr;

		if ((l->flags & PF_W) && addr >= start && addr - start < l->memsz)
			return true;
	}
	return false;
}

const struct vg_image *vg_locate_image(const struct vg_images *imgs,
				       uint64_t addr)
{
	const struct vg_image *img = vg_images_find(imgs, addr);

	if (img || !imgs)
		return img;
	for (size_t i = 0; i < imgs->n; i++)
		if (in_writable_load(imgs->images[i], addr))
			return imgs->images[i];
	return NULL;
}

const char *vg_locate_image_name(const struct vg_image *img)
{
	const char *slash;

	if (!img || !img->path)
		return "";
	slash = strrchr(img->path, '/');
	return slash ? slash + 1 : img->path;
}

/* Keep spec in out->watch_spec if it resolves back to addr. */
static bool try_spec(struct vg_location *out, const struct vg_images *imgs,
		     uint64_t addr, bool need_unique, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static bool try_spec(struct vg_location *out, const struct vg_images *imgs,
		     uint64_t addr, bool need_unique, const char *fmt, ...)
{
	char spec[sizeof(out->watch_spec)];
	struct vg_addr a;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(spec, sizeof(spec), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(spec))
		return false;
	if (vg_addr_parse(spec, imgs, NULL, &a, NULL) < 0 || a.runtime != addr ||
	    (need_unique && a.n_definitions > 1))
		return false;
	memcpy(out->watch_spec, spec, (size_t)n + 1);
	return true;
}

static void set_watch_spec(struct vg_location *out,
			   const struct vg_images *imgs, uint64_t addr)
{
	const struct vg_image *img = out->image;
	char off[32] = "";

	if (img && out->symbol) {
		if (out->symbol_offset)
			snprintf(off, sizeof(off), "+%" PRIu64, out->symbol_offset);
		if (img->is_main &&
		    try_spec(out, imgs, addr, true, "%s%s", out->symbol, off))
			return;
		if (try_spec(out, imgs, addr, false, "%s:%s%s",
			     vg_locate_image_name(img), out->symbol, off) ||
		    try_spec(out, imgs, addr, false, "%s:%s%s", img->path,
			     out->symbol, off))
			return;
	}
	if (img && img->is_main &&
	    try_spec(out, imgs, addr, false, "@0x%" PRIx64, out->static_offset))
		return;
	snprintf(out->watch_spec, sizeof(out->watch_spec), "0x%" PRIx64, addr);
}

bool vg_locate_symbol(const struct vg_image *img, uint64_t static_offset,
		      const char **name, uint64_t *offset)
{
	struct vg_symbol sym;

	/* Sized symbols only: an unsized label before the address (_edata,
	 * __bss_start) does not name the variable that lives there. */
	if (vg_image_symbol_at(img, static_offset, &sym) < 0 || !sym.size)
		return false;
	*name = sym.name;
	*offset = static_offset - sym.vaddr;
	return true;
}

void vg_locate(const struct vg_maps *maps, const struct vg_images *imgs,
	       uint64_t addr, struct vg_location *out)
{
	memset(out, 0, sizeof(*out));
	out->region = maps ? vg_maps_find(maps, addr) : NULL;
	out->image = vg_locate_image(imgs, addr);
	if (out->image) {
		out->static_offset = addr - out->image->bias;
		vg_locate_symbol(out->image, out->static_offset, &out->symbol,
				 &out->symbol_offset);
	}
	set_watch_spec(out, imgs, addr);
}
