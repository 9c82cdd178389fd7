/* addrspec.c - resolve the ADDR forms of addrspec.h to runtime addresses.
 *
 * Symbols come from .symtab/.dynsym of the images, else from the .symtab
 * of their separate debug files (full DWARF is the symbolizer's job); an
 * IFUNC symbol resolves to the implementation the target selected.  C++ names contain "::" and may contain '+'
 * (operator+), so IMAGE is split off only at a single ':' and +OFF only when
 * what follows the last '+' is a number. */
#include "elf/addrspec.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/debuginfo.h"
#include "elf/ifunc.h"

/* The first or the last single ':' of spec ("::" belongs to a C++ name; an
 * image path may contain ':', as in "memfd:payload"), or NULL. */
static const char *single_colon(const char *spec, bool last)
{
	const char *found = NULL;

	for (const char *p = spec; (p = strchr(p, ':')); p++) {
		if (p[1] == ':') {
			p++;
			continue;
		}
		found = p;
		if (!last)
			break;
	}
	return found;
}

/* The main image (or a symbol) is missing: say whether permission is why. */
static int no_images(const struct vg_images *imgs, const char *what, struct vg_error *err)
{
	if (imgs && imgs->n_denied)
		return vg_error_set(err, -EACCES,
				    "cannot resolve '%s': %zu ELF image(s) of the target could not be opened: permission denied (reading them needs ptrace read access to the target: its user, or CAP_SYS_PTRACE)",
				    what, imgs->n_denied);
	return vg_error_set(err, -ENOENT,
			    "cannot resolve '%s': the main executable's image is unknown", what);
}

static int static_in_loads(const struct vg_image *img, uint64_t vaddr)
{
	for (size_t i = 0; i < img->n_loads; i++)
		if (vaddr >= img->loads[i].vaddr &&
		    vaddr < img->loads[i].vaddr + img->loads[i].memsz)
			return 1;
	return 0;
}

static int resolve_static(const char *spec, const struct vg_images *imgs,
			  const struct vg_image *bin, struct vg_addr *out,
			  struct vg_error *err)
{
	const struct vg_image *main_img = imgs ? vg_images_main(imgs) : NULL;
	const struct vg_image *img = bin ? bin : main_img;
	uint64_t vaddr;
	int r = vg_parse_u64(spec + 1, 0, &vaddr);

	if (r < 0 || strncmp(spec + 1, "0x", 2) != 0)
		return vg_error_set(err, r < 0 ? r : -EINVAL,
				    "malformed static address '%s': expected @0xHEX", spec);
	if (!main_img)
		return no_images(imgs, spec, err);
	if (!static_in_loads(img, vaddr))
		return vg_error_set(err, -EFAULT,
				    "static address 0x%" PRIx64 " is not inside any PT_LOAD of '%s'",
				    vaddr, img->path);
	if (__builtin_add_overflow(vaddr, main_img->bias, &out->runtime))
		return vg_error_set(err, -ERANGE, "static address '%s' overflows", spec);
	out->image = img;
	return 0;
}

/* "image name 'libx.so' is ambiguous: /a/libx.so, /b/libx.so; ..." */
static int ambiguous_image(const struct vg_images *imgs, const char *name,
			   struct vg_error *err)
{
	char list[512] = "";
	size_t used = 0, nl = strlen(name);

	for (size_t i = 0; i < imgs->n && used < sizeof(list); i++) {
		const char *p = imgs->images[i]->path;
		size_t pl = strlen(p);

		if (pl > nl && p[pl - nl - 1] == '/' && strcmp(p + pl - nl, name) == 0)
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? ", " : "", p);
	}
	return vg_error_set(err, -EINVAL,
			    "image name '%s' is ambiguous: %s; give the full path as IMAGE",
			    name, list);
}

static int not_found(const struct vg_image *img, const char *name, struct vg_error *err)
{
	if (vg_image_has_tls_symbol(img, name))
		return vg_error_set(err, -EINVAL,
				    "'%s' is a thread-local variable of '%s': it has one address per thread, which vigil cannot name yet",
				    name, img->path);
	return vg_error_set(err, -ENOENT, "no symbol '%s' in '%s'", name, img->path);
}

/* name in img's own tables, else in its separate debug file's .symtab
 * (found once and kept with img).  debuginfod only when asked: an
 * unqualified name would otherwise download every image's debug file. */
static int symbol_in(const struct vg_images *imgs, const struct vg_image *img,
		     const char *name, bool debug, bool debuginfod, struct vg_symbol *sym)
{
	const struct vg_image *dbg;
	char root[64];

	if (!debug)
		return vg_image_symbol_by_name(img, name, sym);
	if (imgs && imgs->target)
		vg_target_proc_path(imgs->target, root, sizeof(root), "root");
	dbg = vg_debuginfo_symbols(img, imgs && imgs->target ? root : NULL, !debuginfod);
	return dbg ? vg_image_symbol_by_name(dbg, name, sym) : -ENOENT;
}

static int lookup_symbol(const struct vg_images *imgs, const struct vg_image *bin,
			 const char *image_name, const char *name,
			 bool debug_files, const struct vg_image **img, struct vg_symbol *sym,
			 unsigned *n_defs, struct vg_error *err)
{
	const struct vg_image *main_img = vg_images_main(imgs);
	size_t n_matches = 0;

	*n_defs = 1;
	if (image_name) {
		*img = vg_images_by_name(imgs, image_name, &n_matches);
		if (n_matches > 1)
			return ambiguous_image(imgs, image_name, err);
	}
	if (bin && (!image_name || (main_img && *img == main_img))) {
		*img = bin;
		if (symbol_in(imgs, bin, name, false, false, sym) == 0 ||
		    (debug_files && symbol_in(imgs, bin, name, true, true, sym) == 0))
			return 0;
		return not_found(bin, name, err);
	}
	if (image_name) {
		if (!*img)
			return vg_error_set(err, -ENOENT,
					    "no image named '%s' is mapped in the target; 'vigil maps PID' lists them",
					    image_name);
		if (symbol_in(imgs, *img, name, false, false, sym) == 0 ||
		    (debug_files && symbol_in(imgs, *img, name, true, true, sym) == 0))
			return 0;
		return not_found(*img, name, err);
	}
	*img = NULL;
	*n_defs = 0;
	/* Main executable first, then address order; count every definition
	 * so that an ambiguous name can be reported by the caller.
	 * The debug files are read only when no image's own tables define
	 * the name (a local symbol such as __strcmp_avx2). */
	for (int debug = 0; debug < (debug_files ? 2 : 1) && !*img; debug++) {
		for (size_t i = 0; i <= imgs->n; i++) {
			const struct vg_image *cand = i == 0 ? main_img : imgs->images[i - 1];
			struct vg_symbol s;

			if (!cand || (i > 0 && cand == main_img) ||
			    symbol_in(imgs, cand, name, debug, false, &s) < 0)
				continue;
			if ((*n_defs)++ == 0) {
				*img = cand;
				*sym = s;
			}
		}
	}
	if (*img)
		return 0;
	for (size_t i = 0; i < imgs->n; i++)
		if (vg_image_has_tls_symbol(imgs->images[i], name))
			return not_found(imgs->images[i], name, err);
	if (imgs->n_denied)
		return no_images(imgs, name, err);
	return vg_error_set(err, -ENOENT,
			    "no symbol '%s' in any image of the target (.symtab/.dynsym, debug files)", name);
}

/* sym (an IFUNC of img) becomes the implementation the target selected:
 * sym->vaddr its runtime address (bias 0), sym->name its name. */
static int resolve_ifunc(const struct vg_images *imgs, const struct vg_image *img,
			 struct vg_symbol *sym, struct vg_addr *out, struct vg_error *err)
{
	struct vg_ifunc f;
	int r = vg_ifunc_resolve(imgs, img, sym, &f, err);

	if (r < 0)
		return r;
	out->ifunc = sym->name;
	out->ifunc_resolver = f.resolver;
	sym->vaddr = f.impl;
	sym->name = f.impl_name;
	sym->ifunc = false;
	return 0;
}

static int resolve_symbol(const char *spec, const struct vg_images *imgs,
			  const struct vg_image *bin, struct vg_addr *out,
			  struct vg_error *err)
{
	const char *plus = strrchr(spec, '+');
	const char *sep = single_colon(spec, true), *first = single_colon(spec, false);
	char *image_name = NULL, *name;
	uint64_t off = 0, bias;
	struct vg_symbol sym;
	const struct vg_image *img;
	int r;

	/* A symbol may itself contain '+' or ':' (C++ operator+, a "lib:sym"
	 * label): the whole spec naming a symbol wins over any split. */
	if (strpbrk(spec, "+:") &&
	    lookup_symbol(imgs, bin, NULL, spec, false, &img, &sym, &out->n_definitions, NULL) == 0)
		goto found;
	if (plus && plus > spec && vg_parse_u64(plus + 1, 0, &off) == 0)
		name = strndup(spec, (size_t)(plus - spec));
	else
		name = strdup(spec);
	if (!name)
		return vg_error_set(err, -ENOMEM, "out of memory");
	if (sep) {
		char *s;
		size_t n_img = 0;

		/* "img:lib:sym": if no image is named "img:lib", the image
		 * is "img" and the symbol "lib:sym". */
		if (first != sep) {
			name[sep - spec] = '\0';
			vg_images_by_name(imgs, name, &n_img);
			name[sep - spec] = ':';
			if (n_img == 0)
				sep = first;
		}
		s = name + (sep - spec);
		*s = '\0';
		image_name = name;
		if (!*image_name || !s[1]) {
			free(name);
			return vg_error_set(err, -EINVAL,
					    "malformed address '%s': expected IMAGE:SYMBOL[+OFF]", spec);
		}
		r = lookup_symbol(imgs, bin, image_name, s + 1, true, &img, &sym,
				  &out->n_definitions, err);
	} else {
		r = lookup_symbol(imgs, bin, NULL, name, true, &img, &sym, &out->n_definitions, err);
	}
	free(name);
	if (r < 0)
		return r;
found:
	/* A --bin image has no bias of its own: it stands for the main image. */
	if (img == bin && !vg_images_main(imgs))
		return vg_error_set(err, -ENOENT,
				    "cannot resolve '%s' with --bin: the main executable's image is unknown", spec);
	bias = (img == bin) ? vg_images_main(imgs)->bias : img->bias;
	if (sym.ifunc) {
		r = resolve_ifunc(imgs, img == bin ? vg_images_main(imgs) : img, &sym, out, err);
		if (r < 0)
			return r;
		bias = 0;
	}
	if (__builtin_add_overflow(sym.vaddr, bias, &out->runtime) ||
	    __builtin_add_overflow(out->runtime, off, &out->runtime))
		return vg_error_set(err, -ERANGE, "address of '%s' overflows", spec);
	out->image = img;
	out->symbol = sym.name;
	out->symbol_offset = off;
	return 0;
}

/* "[function at 0xSTART, no symbol][+OFF]", as vigil names a function
 * whose symbol was stripped: START is a runtime address. */
#define UNNAMED_PREFIX "[function at 0x"
#define UNNAMED_SUFFIX ", no symbol]"

static int resolve_unnamed(const char *spec, struct vg_addr *out, struct vg_error *err)
{
	const char *hex = spec + sizeof(UNNAMED_PREFIX) - 3;  /* at "0x" */
	const char *end = strstr(spec, UNNAMED_SUFFIX);
	char buf[32];
	uint64_t off = 0;

	if (!end || (size_t)(end - hex) >= sizeof(buf))
		return vg_error_set(err, -EINVAL,
				    "malformed address '%s': expected [function at 0xHEX, no symbol][+OFF]", spec);
	memcpy(buf, hex, (size_t)(end - hex));
	buf[end - hex] = '\0';
	end += sizeof(UNNAMED_SUFFIX) - 1;
	if (vg_parse_u64(buf, 0, &out->runtime) < 0 ||
	    (*end && (*end != '+' || vg_parse_u64(end + 1, 0, &off) < 0)))
		return vg_error_set(err, -EINVAL,
				    "malformed address '%s': expected [function at 0xHEX, no symbol][+OFF]", spec);
	if (__builtin_add_overflow(out->runtime, off, &out->runtime))
		return vg_error_set(err, -ERANGE, "address '%s' overflows", spec);
	return 0;
}

int vg_addr_parse(const char *spec, const struct vg_images *imgs,
		  const struct vg_image *bin, struct vg_addr *out,
		  struct vg_error *err)
{
	int r;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec)
		return vg_error_set(err, -EINVAL, "empty address");
	if (spec[0] == '0' && (spec[1] == 'x' || spec[1] == 'X')) {
		r = vg_parse_u64(spec, 0, &out->runtime);
		if (r < 0)
			return vg_error_set(err, r, "malformed address '%s': expected 0xHEX", spec);
		return 0;
	}
	if (spec[0] == '@')
		return resolve_static(spec, imgs, bin, out, err);
	if (strncmp(spec, UNNAMED_PREFIX, sizeof(UNNAMED_PREFIX) - 1) == 0)
		return resolve_unnamed(spec, out, err);
	if (isdigit((unsigned char)spec[0]))
		return vg_error_set(err, -EINVAL,
				    "malformed address '%s': write runtime addresses as 0xHEX", spec);
	if (!imgs)
		return vg_error_set(err, -ENOENT, "cannot resolve symbol '%s': no images loaded", spec);
	return resolve_symbol(spec, imgs, bin, out, err);
}
