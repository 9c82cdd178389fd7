/* ifunc.c - read the implementation an IFUNC selected out of the target's
 * relocated slots (see ifunc.h).
 *
 * Slots are found in the section headers' SHT_RELA tables of each image
 * (.rela.dyn, .rela.plt; vg_image_function_slots), read in one scatter read
 * (vg_mem_readv), and checked: inside the defining image's mappings, not
 * the resolver.  The name comes from the symbol starting exactly at the
 * value, in the image's own tables or its separate debug file's .symtab
 * (vg_debuginfo_symbols), since a stripped libc names __strcmp_avx2 only
 * there.  Never writes to the target. */
#include "elf/ifunc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/debuginfo.h"
#include "target/mem.h"

struct slot_list {
	uint64_t *addr;     /* runtime addresses of the slots */
	size_t n, cap;
};

static int add_slots(struct slot_list *l, const struct vg_image *img,
		     const char *name, uint64_t resolver_vaddr)
{
	uint64_t *s;
	size_t n;
	int r = vg_image_function_slots(img, name, resolver_vaddr, &s, &n);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (l->n == l->cap) {
			size_t nc = l->cap ? l->cap * 2 : 16;
			uint64_t *na = reallocarray(l->addr, nc, sizeof(*na));

			if (!na) {
				free(s);
				return -ENOMEM;
			}
			l->addr = na;
			l->cap = nc;
		}
		l->addr[l->n++] = s[i] + img->bias;
	}
	free(s);
	return 0;
}

/* The base name of sym->name without a version suffix: the name other
 * images import ("strcmp" of "strcmp@@GLIBC_2.2.5"). */
static void import_name(const char *name, char *buf, size_t size)
{
	size_t n = strcspn(name, "@");

	snprintf(buf, size, "%.*s", (int)n, name);
}

/* The symbol starting exactly at static address vaddr, or NULL. */
static const char *name_at(const struct vg_images *imgs, const struct vg_image *img,
			   uint64_t vaddr)
{
	const struct vg_image *dbg;
	struct vg_symbol s;
	char root[64];

	if (vg_image_symbol_at(img, vaddr, &s) == 0 && s.vaddr == vaddr && !s.ifunc)
		return s.name;
	if (imgs->target)
		vg_target_proc_path(imgs->target, root, sizeof(root), "root");
	dbg = vg_debuginfo_symbols(img, imgs->target ? root : NULL, true);
	if (dbg && vg_image_symbol_at(dbg, vaddr, &s) == 0 && s.vaddr == vaddr && !s.ifunc)
		return s.name;
	return NULL;
}

int vg_ifunc_resolve(const struct vg_images *imgs, const struct vg_image *img,
		     const struct vg_symbol *sym, struct vg_ifunc *out,
		     struct vg_error *err)
{
	struct slot_list l = { 0 };
	struct vg_mem_req *reqs = NULL;
	uint64_t *vals = NULL;
	struct vg_mem *mem = NULL;
	char name[256];
	size_t n_lazy = 0, n_unread = 0;
	int r;

	memset(out, 0, sizeof(*out));
	out->resolver = sym->vaddr + img->bias;
	if (!imgs->target)
		return vg_error_set(err, -EINVAL,
				    "'%s' in %s is an IFUNC: its address is a resolver, and without a running process there is no implementation selected",
				    sym->name, img->path);
	import_name(sym->name, name, sizeof(name));
	r = add_slots(&l, img, name, sym->vaddr);
	for (size_t i = 0; r == 0 && i < imgs->n; i++)
		if (imgs->images[i] != img)
			r = add_slots(&l, imgs->images[i], name, UINT64_MAX);
	if (r < 0)
		goto oom;
	if (!l.n) {
		r = vg_error_set(err, -ENOENT,
				 "'%s' in %s is an IFUNC (its address is the resolver, which runs once at startup) and no relocation in the process refers to it, so the implementation it selected is unknown; give the implementation's own name or address",
				 sym->name, img->path);
		goto out;
	}
	reqs = calloc(l.n, sizeof(*reqs));
	vals = calloc(l.n, sizeof(*vals));
	if (!reqs || !vals || vg_mem_open(imgs->target, NULL, &mem, err) < 0)
		goto oom;
	for (size_t i = 0; i < l.n; i++) {
		reqs[i].addr = l.addr[i];
		reqs[i].buf = &vals[i];
		reqs[i].len = sizeof(vals[i]);
	}
	r = vg_mem_readv(mem, reqs, l.n, err);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < l.n; i++) {
		uint64_t v = vals[i];

		if (reqs[i].bytes_read != sizeof(v)) {
			n_unread++;
			continue;
		}
		if (v == out->resolver || vg_images_find(imgs, v) != img) {
			n_lazy++;   /* unbound PLT stub, or interposed elsewhere */
			continue;
		}
		if (out->n_slots && v != out->impl) {
			r = vg_error_set(err, -EINVAL,
					 "'%s' in %s is an IFUNC and the process uses two implementations of it (0x%" PRIx64 " and 0x%" PRIx64 "); probe each by its own name or address",
					 sym->name, img->path, out->impl, v);
			goto out;
		}
		out->impl = v;
		out->n_slots++;
	}
	if (!out->n_slots) {
		r = vg_error_set(err, -ENOENT,
				 "'%s' in %s is an IFUNC (its address is the resolver, which runs once at startup) and none of the %zu slots that refer to it holds a selected implementation yet (%zu not bound, %zu unreadable); give the implementation's own name or address",
				 sym->name, img->path, l.n, n_lazy, n_unread);
		goto out;
	}
	out->impl_name = name_at(imgs, img, out->impl - img->bias);
	r = 0;
	goto out;
oom:
	r = vg_error_set(err, -ENOMEM, "out of memory reading the slots of IFUNC '%s'", sym->name);
out:
	vg_mem_free(mem);
	free(reqs);
	free(vals);
	free(l.addr);
	return r;
}
