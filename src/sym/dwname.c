/* dwname.c - an address inside a variable as the C expression reaching it.
 *
 * The walk goes down the type one level at a time, as long as the bytes
 * named (a read's length, a match's width) fit in one member or element: a struct or union to
 * the member whose bytes hold the offset (a union's first such member: a
 * name has to pick one, and the first is what its initializer fills), an
 * array to the element, and stops at a scalar, at a pointer (the bytes of
 * the pointer itself, not what it points to) or where no member covers
 * the byte (padding).  Anonymous members and C++ base classes are entered
 * without a name, as C spells access through them. */
#include "sym/dwname.h"
#include "sym/demangle.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool append(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strnlen(buf, size);
	va_list ap;
	int n;

	if (len >= size)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size - len;
}

/* Bytes of m inside its aggregate: a bit-field's reach from its byte. */
static uint64_t member_bytes(const struct vg_type_member *m)
{
	if (m->bit_size)
		return ((uint64_t)m->bit_offset + m->bit_size + 7) / 8;
	return vg_type_size(m->type);
}

/* The member holding byte off: of several, the one starting last (a C++
 * base class's tail padding holds the next base or member: Base of size
 * 16 at 0 and Mid at 12 both cover byte 12, which is Mid's), the first of
 * those starting at the same byte (a union's first member). */
static const struct vg_type_member *member_at(const struct vg_type *t, uint64_t off)
{
	const struct vg_type_member *best = NULL;

	for (size_t i = 0; i < t->n_members; i++) {
		const struct vg_type_member *m = &t->members[i];
		uint64_t len = member_bytes(m);

		if (off >= m->offset && off - m->offset < len && (!best || m->offset > best->offset))
			best = m;
	}
	return best;
}

bool vg_dwname_path(struct vg_dwtypes *dt, const struct vg_type *t, uint64_t off,
		    uint64_t len, char *buf, size_t size)
{
	if (!len)
		len = 1;
	for (int depth = 0; depth < VG_DWNAME_MAX_DEPTH; depth++) {
		t = vg_type_strip(t);
		if (t && dt)
			t = vg_dwtypes_complete(dt, t);
		if (!t)
			break;
		if (t->kind == VG_TYPE_STRUCT || t->kind == VG_TYPE_UNION ||
		    t->kind == VG_TYPE_CLASS) {
			const struct vg_type_member *m = member_at(t, off);

			if (m && off - m->offset + len > member_bytes(m))
				break;  /* the range spans members: name the aggregate */
			if (!m) {
				if (t->declaration)
					break;
				return append(buf, size, "+%" PRIu64 " (padding)", off);
			}
			if (m->name && !m->is_base && !append(buf, size, ".%s", m->name))
				return false;
			off -= m->offset;
			t = m->type;
			if (m->bit_size)  /* a bit-field is a scalar of its own */
				break;
			continue;
		}
		if (t->kind == VG_TYPE_ARRAY) {
			uint64_t es = vg_type_size(t->target);

			if (!es || (t->count_known && off / es >= t->count) ||
			    off % es + len > es)
				break;
			if (!append(buf, size, "[%" PRIu64 "]", off / es))
				return false;
			off %= es;
			t = t->target;
			continue;
		}
		break;
	}
	return off ? append(buf, size, "+%" PRIu64, off) : true;
}

struct namer_image {
	const struct vg_image *img;
	struct vg_dwtypes *dt;        /* NULL: no DWARF */
};

struct vg_dwnamer {
	char *root;
	struct namer_image *images;
	size_t n, cap;
};

struct vg_dwnamer *vg_dwnamer_new(const char *target_root)
{
	struct vg_dwnamer *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (target_root && !(n->root = strdup(target_root))) {
		free(n);
		return NULL;
	}
	return n;
}

struct vg_dwnamer *vg_dwnamer_free(struct vg_dwnamer *n)
{
	if (!n)
		return NULL;
	for (size_t i = 0; i < n->n; i++)
		vg_dwtypes_free(n->images[i].dt);
	free(n->images);
	free(n->root);
	free(n);
	return NULL;
}

/* img's type table, opened on first use; *dt NULL when it has no DWARF. */
static int types_of(struct vg_dwnamer *n, const struct vg_image *img, struct vg_dwtypes **dt)
{
	struct namer_image *ni;
	int r;

	for (size_t i = 0; i < n->n; i++)
		if (n->images[i].img == img) {
			*dt = n->images[i].dt;
			return 0;
		}
	if (n->n == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 4;
		struct namer_image *p = realloc(n->images, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		n->images = p;
		n->cap = cap;
	}
	ni = &n->images[n->n];
	ni->img = img;
	ni->dt = NULL;
	/* The table only reads the image (it borrows it for its DWARF file);
	 * vg_dwtypes_open takes it mutable for the expression evaluator's
	 * sake, which owns its images. */
	r = vg_dwtypes_open((struct vg_image *)img, n->root, &ni->dt, NULL);
	if (r < 0)
		return r;
	n->n++;
	*dt = ni->dt;
	return 0;
}

int vg_dwnamer_name(struct vg_dwnamer *n, const struct vg_image *img, uint64_t static_addr,
		    uint64_t len, char *buf, size_t size)
{
	struct vg_dwtypes *dt;
	struct vg_symbol sym;
	struct vg_dwvar var;
	char *demangled;
	bool ok;
	int r;

	if (!size)
		return 0;
	buf[0] = '\0';
	/* Sized symbols only, as scan/locate.c: _edata names no variable. */
	if (!n || !img || vg_image_symbol_at(img, static_addr, &sym) < 0 || !sym.size ||
	    static_addr - sym.vaddr >= sym.size)
		return 0;
	r = types_of(n, img, &dt);
	if (r < 0)
		return r;
	if (!dt)
		return 0;
	r = vg_dwtypes_find_var_at(dt, sym.vaddr, sym.name, &var, NULL);
	if (r <= 0 || !var.type || var.tls)
		return r < 0 ? r : 0;
	/* A C++ namespace variable's symbol is mangled: print takes app::g_obj. */
	demangled = vg_demangle(var.name);
	ok = append(buf, size, "%s", demangled ? demangled : var.name) &&
	     vg_dwname_path(dt, var.type, static_addr - sym.vaddr, len, buf, size);
	free(demangled);
	if (!ok) {
		buf[0] = '\0';
		return 0;
	}
	return 1;
}
