/* value.c - read an evaluated expression's bytes and its pointers'
 * targets (value.h). */
#include "expr/value.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

#define PAGE 4096ull

/* Read [addr, addr+len): what cannot be read is skipped a page at a time
 * and left marked unreadable.  -ESRCH when the target is gone. */
static int read_holes(struct vg_mem *mem, uint64_t addr, unsigned char *buf, unsigned char *ok,
		      size_t len, uint64_t *n_bad, struct vg_error *err)
{
	size_t pos = 0;

	while (pos < len) {
		struct vg_mem_result mr;
		struct vg_error rerr = { 0 };
		int r = vg_mem_read(mem, addr + pos, buf + pos, len - pos, &mr, &rerr);

		memset(ok + pos, 1, mr.bytes_read);
		pos += mr.bytes_read;
		if (r == 0)
			break;
		if (r == -ESRCH)
			return vg_error_set(err, -ESRCH, "%s", rerr.msg);
		/* Skip to the next page: the kernel reads whole pages or none. */
		size_t next = (size_t)(((addr + pos) / PAGE + 1) * PAGE - addr);

		if (next > len)
			next = len;
		*n_bad += next - pos;
		pos = next;
	}
	return 0;
}

struct walk {
	struct vg_expr_env *env;
	struct vg_value *v;
	const struct vg_value_opts *o;
	size_t cap, cap_statics;
	struct vg_error *err;
	const struct vg_image *image;  /* whose DWARF the types are; NULL: no statics */
};

static int fetch(struct vg_expr_env *env, const struct vg_expr_result *r,
		 const struct vg_value_opts *o, bool statics, struct vg_value **out,
		 struct vg_error *err);

/* Each static data member of class t, read once per value from its own
 * definition (not inside a static's own value: a class holding a static
 * of its own type would recurse). */
static int fetch_statics(struct walk *w, const struct vg_type *t)
{
	struct vg_dwtypes *dt = w->image ? vg_expr_env_types(w->env, w->image) : NULL;

	for (size_t i = 0; dt && i < t->n_statics; i++) {
		struct vg_value_static *s;
		struct vg_expr_result res = { 0 };
		uint64_t sa;
		bool seen = false;
		int r;

		for (size_t k = 0; k < w->v->n_statics && !seen; k++)
			seen = w->v->statics[k].owner == t && w->v->statics[k].index == i;
		if (seen)
			continue;
		if (VG_GROW(w->v->statics, w->cap_statics, w->v->n_statics + 1) < 0)
			return vg_error_set(w->err, -ENOMEM, "out of memory");
		s = &w->v->statics[w->v->n_statics++];
		*s = (struct vg_value_static){ .owner = t, .index = i };
		r = vg_dwtypes_static_member(dt, t->statics[i].decl, &sa, w->err);
		if (r < 0)
			return r;
		if (r == 0 || !t->statics[i].type)
			continue;
		res.type = t->statics[i].type;
		res.lvalue = true;
		res.addr = sa + w->image->bias;
		r = fetch(w->env, &res, w->o, false, &s->value, w->err);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool readable(const struct vg_value *v, uint64_t off, uint64_t n)
{
	if (off + n > v->size)
		return false;
	for (uint64_t i = 0; i < n; i++)
		if (!v->ok[off + i])
			return false;
	return true;
}

static bool is_char(const struct vg_type *t)
{
	t = vg_type_strip(t);
	return t && t->kind == VG_TYPE_INT && t->is_char && t->size == 1;
}

static int note_pointer(struct walk *w, uint64_t off, const struct vg_type *pt)
{
	struct vg_value_ptr *p;
	uint64_t value;

	if (!readable(w->v, off, 8))
		return 0;
	memcpy(&value, w->v->bytes + off, 8);
	if (value == 0)
		return 0;
	if (VG_GROW(w->v->ptrs, w->cap, w->v->n_ptrs + 1) < 0)
		return vg_error_set(w->err, -ENOMEM, "out of memory");
	p = &w->v->ptrs[w->v->n_ptrs++];
	memset(p, 0, sizeof(*p));
	p->off = off;
	if (is_char(pt->target)) {
		size_t max = w->o->max_elements ? w->o->max_elements : 200;
		struct vg_mem_result mr;
		struct vg_error rerr = { 0 };
		unsigned char *s = malloc(max + 1);
		unsigned char *nul;

		if (!s)
			return vg_error_set(w->err, -ENOMEM, "out of memory");
		p->is_string = true;
		/* A string may end just before an unmapped page: read what
		 * there is (vg_mem_read stops there and says how far). */
		if (vg_mem_read(vg_expr_env_mem(w->env), value, s, max + 1, &mr, &rerr) == -ESRCH) {
			free(s);
			return vg_error_set(w->err, -ESRCH, "%s", rerr.msg);
		}
		if (mr.bytes_read == 0) {
			p->str_unreadable = true;
			free(s);
			return 0;
		}
		nul = memchr(s, 0, mr.bytes_read);
		p->str = s;
		p->str_len = nul ? (size_t)(nul - s) : (mr.bytes_read > max ? max : mr.bytes_read);
		p->str_terminated = nul != NULL;
		return 0;
	}
	vg_expr_env_describe(w->env, value, p->sym, sizeof(p->sym));
	return 0;
}

static int walk(struct walk *w, const struct vg_type *t, uint64_t off, unsigned depth)
{
	int r;

	t = vg_type_strip(t);
	if (!t || off >= w->v->size)
		return 0;
	switch (t->kind) {
	case VG_TYPE_POINTER:
		return note_pointer(w, off, t);
	case VG_TYPE_STRUCT:
	case VG_TYPE_UNION:
	case VG_TYPE_CLASS:
		if (depth >= w->o->max_depth)
			return 0;
		if (t->n_statics && (r = fetch_statics(w, t)) < 0)
			return r;
		for (size_t i = 0; i < t->n_members; i++)
			if (!t->members[i].bit_size &&
			    (r = walk(w, t->members[i].type, off + t->members[i].offset, depth + 1)) < 0)
				return r;
		return 0;
	case VG_TYPE_ARRAY: {
		uint64_t es = vg_type_size(t->target);
		const struct vg_type *et = vg_type_strip(t->target);

		if (!es || !t->count_known || !et ||
		    !(et->kind == VG_TYPE_POINTER || et->kind == VG_TYPE_STRUCT ||
		      et->kind == VG_TYPE_UNION || et->kind == VG_TYPE_CLASS || et->kind == VG_TYPE_ARRAY))
			return 0;
		for (uint64_t i = 0; i < t->count && i < w->o->max_elements; i++)
			if ((r = walk(w, t->target, off + i * es, depth + 1)) < 0)
				return r;
		return 0;
	}
	default:
		return 0;
	}
}

int vg_value_fetch(struct vg_expr_env *env, const struct vg_expr_result *r,
		   const struct vg_value_opts *o, struct vg_value **out, struct vg_error *err)
{
	return fetch(env, r, o, true, out, err);
}

static int fetch(struct vg_expr_env *env, const struct vg_expr_result *r,
		 const struct vg_value_opts *o, bool statics, struct vg_value **out,
		 struct vg_error *err)
{
	struct vg_value *v = calloc(1, sizeof(*v));
	struct walk w = { .env = env, .v = v, .o = o, .err = err,
			  .image = statics ? r->image : NULL };
	int rc;

	*out = NULL;
	if (!v)
		return vg_error_set(err, -ENOMEM, "out of memory");
	v->type = r->type;
	v->bit_offset = r->bit_offset;
	v->bit_size = r->bit_size;
	v->type_size = vg_type_size(r->type);
	if (r->lvalue) {
		v->has_addr = true;
		v->addr = r->addr;
		vg_expr_describe_result(env, r, r->addr, v->sym, sizeof(v->sym));
		v->size = r->bit_size ? (r->bit_offset + r->bit_size + 7) / 8 : v->type_size;
		if (v->size > VG_VALUE_MAX_BYTES)
			v->size = VG_VALUE_MAX_BYTES;
	} else {
		v->size = v->type_size > 8 || v->type_size == 0 ? 8 : v->type_size;
	}
	v->bytes = malloc(v->size ? v->size : 1);
	v->ok = calloc(1, v->size ? v->size : 1);
	if (!v->bytes || !v->ok) {
		vg_value_free(v);
		return vg_error_set(err, -ENOMEM, "out of memory for a value of %llu bytes",
				    (unsigned long long)v->size);
	}
	if (r->lvalue) {
		rc = read_holes(vg_expr_env_mem(env), v->addr, v->bytes, v->ok, (size_t)v->size,
				&v->n_unreadable, err);
		if (rc < 0) {
			vg_value_free(v);
			return rc;
		}
	} else {
		memcpy(v->bytes, &r->bits, (size_t)v->size);
		memset(v->ok, 1, (size_t)v->size);
	}
	if (!r->bit_size && (rc = walk(&w, v->type, 0, 0)) < 0) {
		vg_value_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

struct vg_value *vg_value_free(struct vg_value *v)
{
	if (!v)
		return NULL;
	for (size_t i = 0; i < v->n_ptrs; i++)
		free(v->ptrs[i].str);
	free(v->ptrs);
	for (size_t i = 0; i < v->n_statics; i++)
		vg_value_free(v->statics[i].value);
	free(v->statics);
	free(v->bytes);
	free(v->ok);
	free(v);
	return NULL;
}

const struct vg_value_static *vg_value_static_of(const struct vg_value *v,
						 const struct vg_type *owner, size_t index)
{
	for (size_t i = 0; i < v->n_statics; i++)
		if (v->statics[i].owner == owner && v->statics[i].index == index)
			return &v->statics[i];
	return NULL;
}

const struct vg_value_ptr *vg_value_ptr_at(const struct vg_value *v, uint64_t off)
{
	/* Notes are added in walk order, which is increasing offset. */
	size_t lo = 0, hi = v->n_ptrs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v->ptrs[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->n_ptrs && v->ptrs[lo].off == off ? &v->ptrs[lo] : NULL;
}
