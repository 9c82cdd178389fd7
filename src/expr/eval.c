/* eval.c - expressions over DWARF types and live memory (eval.h). */
#include "expr/eval.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/tls.h"
#include "sym/demangle.h"
#include "util/vec.h"

struct vg_expr_env {
	const struct vg_images *imgs;
	struct vg_mem *mem;
	char *root;
	struct vg_dwtypes **dts;      /* per image, opened on first use */
	bool *tried;
	pid_t pid, tid;               /* whose thread-local variables (0: none) */
};

void vg_expr_env_set_thread(struct vg_expr_env *env, pid_t pid, pid_t tid)
{
	env->pid = pid;
	env->tid = tid;
}

struct vg_expr_env *vg_expr_env_new(const struct vg_images *imgs, struct vg_mem *mem,
				    const char *target_root)
{
	struct vg_expr_env *env = calloc(1, sizeof(*env));

	if (!env)
		return NULL;
	env->imgs = imgs;
	env->mem = mem;
	env->dts = calloc(imgs->n + 1, sizeof(*env->dts));
	env->tried = calloc(imgs->n + 1, sizeof(*env->tried));
	env->root = target_root ? strdup(target_root) : NULL;
	if (!env->dts || !env->tried || (target_root && !env->root))
		return vg_expr_env_free(env);
	return env;
}

struct vg_expr_env *vg_expr_env_free(struct vg_expr_env *env)
{
	if (!env)
		return NULL;
	for (size_t i = 0; env->dts && i < env->imgs->n; i++)
		vg_dwtypes_free(env->dts[i]);
	free(env->dts);
	free(env->tried);
	free(env->root);
	free(env);
	return NULL;
}

struct vg_mem *vg_expr_env_mem(struct vg_expr_env *env)
{
	return env->mem;
}

struct vg_dwtypes *vg_expr_env_types(struct vg_expr_env *env, const struct vg_image *img)
{
	for (size_t i = 0; i < env->imgs->n; i++) {
		if (env->imgs->images[i] != img)
			continue;
		if (!env->tried[i]) {
			env->tried[i] = true;
			(void)vg_dwtypes_open(env->imgs->images[i], env->root, &env->dts[i], NULL);
		}
		return env->dts[i];
	}
	return NULL;
}

bool vg_expr_env_is_type(const char *name, void *ctx)
{
	struct vg_expr_env *env = ctx;
	const struct vg_image *main_img = vg_images_main(env->imgs);

	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < env->imgs->n; i++) {
			const struct vg_image *img = env->imgs->images[i];
			struct vg_dwtypes *dt;
			struct vg_dwvar var;
			struct vg_error terr = { 0 };

			if ((pass == 0) != (img == main_img) || !(dt = vg_expr_env_types(env, img)))
				continue;
			/* A variable wins: "(n) * 2" stays a product. */
			if (vg_dwtypes_find_var(dt, name, NULL, &var, 1, &terr) != 0)
				return false;
			if (vg_dwtypes_find_type(dt, name, 0, &terr))
				return true;
		}
	}
	return false;
}

char *vg_expr_env_describe(struct vg_expr_env *env, uint64_t addr, char *buf, size_t size)
{
	const struct vg_image *img = vg_images_find(env->imgs, addr);
	struct vg_symbol sym;

	buf[0] = '\0';
	if (img && vg_image_symbol_at(img, addr - img->bias, &sym) == 0) {
		uint64_t off = addr - img->bias - sym.vaddr;
		/* gdb's spelling: "vtable for app::Derived+16". */
		char *dm = vg_demangle(sym.name);
		const char *name = dm ? dm : sym.name;

		if (off)
			snprintf(buf, size, "%s+%" PRIu64, name, off);
		else
			snprintf(buf, size, "%s", name);
		free(dm);
	}
	return buf;
}

char *vg_expr_describe_result(struct vg_expr_env *env, const struct vg_expr_result *r,
			      uint64_t addr, char *buf, size_t size)
{
	/* The ELF symbol would say the same: the variable's own name; an
	 * image's symbol table of 100,000s of C++ names is not read (and
	 * sorted) to learn it. */
	if (r->var_name && r->var_size && addr >= r->var_addr && addr - r->var_addr < r->var_size) {
		if (addr == r->var_addr)
			snprintf(buf, size, "%s", r->var_name);
		else
			snprintf(buf, size, "%s+%" PRIu64, r->var_name, addr - r->var_addr);
		return buf;
	}
	return vg_expr_env_describe(env, addr, buf, size);
}

/* ------------------------------------------------------------------ */

struct ctx {
	struct vg_expr_env *env;
	const struct vg_expr *e;
	struct vg_error *err;
	struct vg_expr_result *res;
	size_t hops_cap;
	struct vg_dwtypes *dt;        /* of the image of the first variable */
	uint64_t cu;
	int no_read;                  /* inside sizeof: types only */
};

struct val {
	const struct vg_type *type;
	bool lvalue;
	uint64_t addr;
	uint32_t bit_offset, bit_size;
	uint64_t bits;
};

static const struct vg_type *base(const char *name)
{
	return vg_dwtypes_find_type(NULL, name, 0, NULL);
}

static char *text(struct ctx *c, const struct vg_expr_node *n, char *buf, size_t size)
{
	return vg_expr_text(c->e, n, buf, size);
}

static int eval(struct ctx *c, const struct vg_expr_node *n, struct val *out);

static bool is_integer(const struct vg_type *t)
{
	t = vg_type_strip(t);
	return t && (t->kind == VG_TYPE_INT || t->kind == VG_TYPE_BOOL || t->kind == VG_TYPE_ENUM);
}

static bool is_pointer(const struct vg_type *t)
{
	t = vg_type_strip(t);
	return t && t->kind == VG_TYPE_POINTER;
}

static bool is_array(const struct vg_type *t)
{
	t = vg_type_strip(t);
	return t && t->kind == VG_TYPE_ARRAY;
}

static int read_failed(struct ctx *c, const struct vg_expr_node *n, uint64_t addr, size_t len,
		       const struct vg_error *rerr)
{
	char t[256], d[256];

	if (rerr->code == -ESRCH)
		return vg_error_set(c->err, -ESRCH, "%s", rerr->msg);
	vg_expr_env_describe(c->env, addr, d, sizeof(d));
	vg_error_set(c->err, -EFAULT, "%s: cannot read %zu bytes at 0x%" PRIx64 "%s%s%s: %s",
		     text(c, n, t, sizeof(t)), len, addr, d[0] ? " <" : "", d, d[0] ? ">" : "",
		     rerr->msg);
	vg_error_set_exit(c->err, VG_EXIT_RUNTIME);
	return -EFAULT;
}

/* The value as a number: an rvalue's bits, or the scalar an lvalue holds
 * (bit-fields extracted, signed types sign-extended); an array or a
 * function stands for its address. */
static int load(struct ctx *c, const struct vg_expr_node *n, const struct val *v, uint64_t *bits)
{
	const struct vg_type *t = vg_type_strip(v->type);
	unsigned char buf[16] = { 0 };
	struct vg_mem_result mr;
	struct vg_error rerr = { 0 };
	uint64_t x = 0, size;
	size_t len;

	if (!v->lvalue) {
		*bits = v->bits;
		return 0;
	}
	if (t && (t->kind == VG_TYPE_ARRAY || t->kind == VG_TYPE_FUNC)) {
		*bits = v->addr;
		return 0;
	}
	if (!t || !(is_integer(t) || t->kind == VG_TYPE_POINTER) || t->size == 0 || t->size > 8) {
		char tx[256], tn[256];

		return vg_error_set(c->err, -EINVAL, "%s: a value of type %s is not a number or a pointer",
				    text(c, n, tx, sizeof(tx)), vg_type_name(v->type, tn, sizeof(tn)));
	}
	size = t->size;
	if (c->no_read) {
		*bits = 0;
		return 0;
	}
	len = v->bit_size ? (v->bit_offset + v->bit_size + 7) / 8 : (size_t)size;
	if (vg_mem_read(c->env->mem, v->addr, buf, len, &mr, &rerr) < 0)
		return read_failed(c, n, v->addr + mr.bytes_read, len - mr.bytes_read, &rerr);
	memcpy(&x, buf, len > 8 ? 8 : len);
	if (v->bit_size) {
		unsigned __int128 w = 0;

		memcpy(&w, buf, len);
		x = (uint64_t)(w >> v->bit_offset);
		if (v->bit_size < 64)
			x &= (1ull << v->bit_size) - 1;
		if (t->is_signed && v->bit_size < 64 && (x >> (v->bit_size - 1) & 1))
			x |= ~0ull << v->bit_size;
	} else if (t->is_signed && size < 8 && (x >> (size * 8 - 1) & 1)) {
		x |= ~0ull << (size * 8);
	}
	*bits = x;
	return 0;
}

static int add_hop(struct ctx *c, const struct vg_expr_node *ptr, const struct val *v, uint64_t value)
{
	struct vg_expr_hop *h;
	char t[512];

	if (!v->lvalue || c->no_read)
		return 0;
	if (VG_GROW(c->res->hops, c->hops_cap, c->res->n_hops + 1) < 0)
		return vg_error_set(c->err, -ENOMEM, "out of memory");
	h = &c->res->hops[c->res->n_hops];
	h->expr = strdup(text(c, ptr, t, sizeof(t)));
	if (!h->expr)
		return vg_error_set(c->err, -ENOMEM, "out of memory");
	h->slot = v->addr;
	h->value = value;
	c->res->n_hops++;
	return 0;
}

/* *ptr as an lvalue (whole is the expression being evaluated). */
static int deref(struct ctx *c, const struct vg_expr_node *whole, const struct vg_expr_node *ptr,
		 const struct val *p, struct val *out)
{
	const struct vg_type *pt = vg_type_strip(p->type), *to;
	char t[256], pt_text[256], tn[256], d[256];
	uint64_t value;
	int r;

	if (!pt || (pt->kind != VG_TYPE_POINTER && pt->kind != VG_TYPE_ARRAY))
		return vg_error_set(c->err, -EINVAL, "%s: %s is a %s, not a pointer",
				    text(c, whole, t, sizeof(t)), text(c, ptr, pt_text, sizeof(pt_text)),
				    vg_type_name(p->type, tn, sizeof(tn)));
	to = vg_dwtypes_complete(c->dt, pt->target);
	if (!vg_type_strip(to) || vg_type_strip(to)->kind == VG_TYPE_VOID)
		return vg_error_set(c->err, -EINVAL, "%s: %s is a void pointer; cast it first, e.g. *(int *)%s",
				    text(c, whole, t, sizeof(t)), text(c, ptr, pt_text, sizeof(pt_text)),
				    pt_text);
	if (vg_type_strip(to)->kind == VG_TYPE_FUNC)
		return vg_error_set(c->err, -EINVAL, "%s: %s points to a function; print %s itself",
				    text(c, whole, t, sizeof(t)), text(c, ptr, pt_text, sizeof(pt_text)),
				    pt_text);
	if (pt->kind == VG_TYPE_ARRAY) {
		*out = (struct val){ .type = to, .lvalue = true, .addr = p->addr };
		return 0;
	}
	r = load(c, ptr, p, &value);
	if (r < 0)
		return r;
	if (value == 0 && !c->no_read) {
		vg_expr_env_describe(c->env, p->addr, d, sizeof(d));
		if (p->lvalue)
			vg_error_set(c->err, -EFAULT, "%s: null pointer %s (read at 0x%" PRIx64 "%s%s%s)",
				     text(c, whole, t, sizeof(t)), text(c, ptr, pt_text, sizeof(pt_text)),
				     p->addr, d[0] ? " <" : "", d, d[0] ? ">" : "");
		else
			vg_error_set(c->err, -EFAULT, "%s: null pointer %s",
				     text(c, whole, t, sizeof(t)), text(c, ptr, pt_text, sizeof(pt_text)));
		vg_error_set_exit(c->err, VG_EXIT_RUNTIME);
		return -EFAULT;
	}
	r = add_hop(c, ptr, p, value);
	if (r < 0)
		return r;
	*out = (struct val){ .type = to, .lvalue = true, .addr = value };
	return 0;
}

/* Levenshtein distance, capped: names are short. */
static unsigned distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64], prev;

	if (la >= 64 || lb >= 64)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cur = row[j];
			unsigned sub = prev + (a[i - 1] != b[j - 1]);
			unsigned best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;

			row[j] = sub < best ? sub : best;
			prev = cur;
		}
	}
	return row[lb];
}

/* The member called name, looking into anonymous structs and unions;
 * *offset accumulates.  Also proposes the closest name (*best). */
static const struct vg_type_member *find_member(const struct vg_type *t, const char *name,
						uint64_t *offset, const char **best, unsigned *best_d,
						int depth)
{
	/* Anonymous members nest a few levels in real code; a corrupt file
	 * can make one contain itself. */
	if (depth > 32)
		return NULL;
	for (size_t i = 0; i < t->n_members; i++) {
		const struct vg_type_member *m = &t->members[i];
		const struct vg_type *mt = vg_type_strip(m->type);

		if (m->name && !m->is_base) {
			unsigned d;

			if (strcmp(m->name, name) == 0) {
				*offset += m->offset;
				return m;
			}
			d = distance(m->name, name);
			if (d < *best_d) {
				*best_d = d;
				*best = m->name;
			}
		} else if (mt && (mt->kind == VG_TYPE_STRUCT || mt->kind == VG_TYPE_UNION ||
				  mt->kind == VG_TYPE_CLASS)) {
			uint64_t off = *offset + m->offset;
			const struct vg_type_member *f = find_member(mt, name, &off, best, best_d, depth + 1);

			if (f) {
				*offset = off;
				return f;
			}
		}
	}
	return NULL;
}

static int member(struct ctx *c, const struct vg_expr_node *n, const struct val *obj, struct val *out)
{
	const struct vg_type *t = vg_type_strip(vg_dwtypes_complete(c->dt, obj->type));
	const struct vg_type_member *m;
	const char *best = NULL;
	unsigned best_d = 3;          /* suggest within two edits */
	uint64_t off = 0;
	char tx[256], tn[256];

	if (!t || (t->kind != VG_TYPE_STRUCT && t->kind != VG_TYPE_UNION && t->kind != VG_TYPE_CLASS))
		return vg_error_set(c->err, -EINVAL, "%s: %s is a %s, not a struct or union%s",
				    text(c, n, tx, sizeof(tx)), text(c, n->a, tn, sizeof(tn)),
				    vg_type_name(obj->type, (char[256]){ 0 }, 256),
				    is_pointer(obj->type) && n->op == VG_E_MEMBER ? "; use '->'" : "");
	if (t->declaration)
		return vg_error_set(c->err, -ENOENT, "%s: %s is only declared in the debug info (no member list)",
				    text(c, n, tx, sizeof(tx)), vg_type_name(t, tn, sizeof(tn)));
	if (!obj->lvalue)
		return vg_error_set(c->err, -EINVAL, "%s: %s has no address", text(c, n, tx, sizeof(tx)),
				    text(c, n->a, tn, sizeof(tn)));
	m = find_member(t, n->name, &off, &best, &best_d, 0);
	if (!m) {
		if (best)
			return vg_error_set(c->err, -ENOENT, "%s: %s has no member '%s'; did you mean '%s'?",
					    text(c, n, tx, sizeof(tx)), vg_type_name(t, tn, sizeof(tn)),
					    n->name, best);
		return vg_error_set(c->err, -ENOENT, "%s: %s has no member '%s'",
				    text(c, n, tx, sizeof(tx)), vg_type_name(t, tn, sizeof(tn)), n->name);
	}
	*out = (struct val){ .type = m->type, .lvalue = true, .addr = obj->addr + off,
			     .bit_offset = m->bit_offset, .bit_size = m->bit_size };
	return 0;
}

/* A global of a library that the main executable also defines lives in
 * the executable: a copy relocation (R_X86_64_COPY) moved it there at
 * startup and every reference, the library's included, goes to the copy;
 * the library's own slot keeps its initial value forever.  gdb prints the
 * copy too.  The address to read for img's definition of name. */
static uint64_t interposed(struct ctx *c, const struct vg_image *img, const char *name,
			   uint64_t addr)
{
	const struct vg_image *main_img = vg_images_main(c->env->imgs);
	struct vg_symbol sym;

	if (!main_img || img == main_img || vg_image_symbol_by_name(main_img, name, &sym) < 0 ||
	    sym.size == 0)
		return addr;
	return main_img->bias + sym.vaddr;
}

static int variable(struct ctx *c, const struct vg_expr_node *n, struct val *out)
{
	const struct vg_images *imgs = c->env->imgs;
	const struct vg_image *only = NULL, *main_img = vg_images_main(imgs);
	const char *file = NULL;
	size_t n_nodebug = 0;
	char tx[256];

	if (n->scope) {
		size_t nm = 0;

		only = vg_images_by_name(imgs, n->scope, &nm);
		if (nm > 1)
			return vg_error_set(c->err, -EINVAL, "%s: %zu images are called '%s'; give the full path",
					    text(c, n, tx, sizeof(tx)), nm, n->scope);
		if (!only)
			file = n->scope;
	}
	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < imgs->n; i++) {
			const struct vg_image *img = imgs->images[i];
			struct vg_dwtypes *dt;
			struct vg_dwvar vars[16];
			int nv;

			/* The main executable first, then the others in order. */
			if ((pass == 0) != (img == main_img) || (only && img != only))
				continue;
			dt = vg_expr_env_types(c->env, img);
			if (!dt) {
				n_nodebug++;
				continue;
			}
			nv = vg_dwtypes_find_var(dt, n->name, file, vars, 16, c->err);
			if (nv < 0)
				return nv;
			if (nv == 0)
				continue;
			for (int k = 1; k < nv && k < 16; k++) {
				if (vars[k].static_addr != vars[0].static_addr || vars[k].tls != vars[0].tls) {
					char files[512] = "";
					size_t len = 0;

					for (int j = 0; j < nv && j < 16 && len < sizeof(files); j++)
						len += (size_t)snprintf(files + len, sizeof(files) - len, "%s%s",
									j ? ", " : "", vars[j].cu_name ? vars[j].cu_name : "?");
					return vg_error_set(c->err, -EINVAL, "%s: '%s' is defined in %d source files of %s (%s); name one, e.g. %s:%s",
							    text(c, n, tx, sizeof(tx)), n->name, nv, img->path, files,
							    vars[0].cu_name ? (strrchr(vars[0].cu_name, '/') ? strrchr(vars[0].cu_name, '/') + 1 : vars[0].cu_name) : "FILE",
							    n->name);
				}
			}
			if (vars[0].tls && !c->env->tid)
				return vg_error_set(c->err, -EINVAL, "%s: '%s' is a thread-local variable (one copy per thread); name the thread with --tid TID",
						    text(c, n, tx, sizeof(tx)), n->name);
			if (!vars[0].type)
				return vg_error_set(c->err, -ENOENT, "%s: '%s' has no type in the debug info",
						    text(c, n, tx, sizeof(tx)), n->name);
			if (!c->res->image) {
				c->res->image = img;
				c->res->var_cu = vars[0].cu_name;
				c->dt = dt;
				c->cu = vars[0].cu;
			}
			*out = (struct val){ .type = vars[0].type, .lvalue = true,
					     .addr = vars[0].static_addr + img->bias };
			if (vars[0].tls) {
				int r = vg_tls_address(c->env->imgs, c->env->mem, c->env->pid,
						       c->env->tid, img, vars[0].static_addr,
						       &out->addr, c->err);

				if (r < 0) {
					char why[sizeof(c->err->msg)];

					snprintf(why, sizeof(why), "%s", c->err ? c->err->msg : "");
					vg_error_reset(c->err, r, "%s: %s", text(c, n, tx, sizeof(tx)), why);
					return r;
				}
			} else if (vars[0].external) {
				out->addr = interposed(c, img, n->name, out->addr);
			}
			if (!vars[0].tls && !c->res->var_name && c->res->image == img &&
			    out->addr == vars[0].static_addr + img->bias) {
				c->res->var_name = strdup(n->name);
				if (!c->res->var_name)
					return vg_error_set(c->err, -ENOMEM, "out of memory");
				c->res->var_addr = out->addr;
				c->res->var_size = vg_type_size(vars[0].type);
			}
			return 0;
		}
	}
	/* An ELF symbol whose DWARF variable has another name (an alias):
	 * the variable at the symbol's address. */
	for (size_t pass = 0; !file && pass < 2; pass++) {
		for (size_t i = 0; i < imgs->n; i++) {
			const struct vg_image *img = imgs->images[i];
			struct vg_symbol sym;
			struct vg_dwtypes *dt;
			struct vg_dwvar var;
			int nv;

			if ((pass == 0) != (img == main_img) || (only && img != only) ||
			    vg_image_symbol_by_name(img, n->name, &sym) < 0 ||
			    !(dt = vg_expr_env_types(c->env, img)))
				continue;
			nv = vg_dwtypes_find_var_at(dt, sym.vaddr, n->name, &var, c->err);
			if (nv < 0)
				return nv;
			if (nv == 0 || !var.type)
				continue;
			if (!c->res->image) {
				c->res->image = img;
				c->res->var_cu = var.cu_name;
				c->dt = dt;
				c->cu = var.cu;
			}
			*out = (struct val){ .type = var.type, .lvalue = true,
					     .addr = interposed(c, img, n->name, var.static_addr + img->bias) };
			return 0;
		}
	}
	/* Say why: a symbol without DWARF, a thread-local, or nothing. */
	for (size_t i = 0; i < imgs->n; i++) {
		const struct vg_image *img = imgs->images[i];
		struct vg_symbol sym;

		if (only && img != only)
			continue;
		if (vg_image_has_tls_symbol(img, n->name))
			return vg_error_set(c->err, -ENOENT, "%s: '%s' is a thread-local symbol of %s, whose debug info has no variable of that name (no type)",
					    text(c, n, tx, sizeof(tx)), n->name, img->path);
		if (!file && vg_image_symbol_by_name(img, n->name, &sym) == 0 && !vg_expr_env_types(c->env, img))
			return vg_error_set(c->err, -ENOENT, "%s: '%s' is a symbol of %s, which has no debug info (no types); 'vigil read PID %s' reads its bytes",
					    text(c, n, tx, sizeof(tx)), n->name, img->path, n->name);
	}
	if (file)
		return vg_error_set(c->err, -ENOENT, "%s: no global or static variable '%s' in source file '%s' (nor an image of that name)",
				    text(c, n, tx, sizeof(tx)), n->name, file);
	return vg_error_set(c->err, -ENOENT, "%s: no global or static variable '%s' in the debug info%s%s (local variables need a stopped frame: not supported)",
			    text(c, n, tx, sizeof(tx)), n->name,
			    only ? " of " : "", only ? only->path : "");
}

static int resolve_type(struct ctx *c, const struct vg_expr_node *n, const struct vg_type **out)
{
	struct vg_dwtypes *dt = c->dt;
	const struct vg_type *t;
	struct vg_error terr = { 0 };
	char tx[256];

	if (!dt)
		dt = c->dt = vg_expr_env_types(c->env, vg_images_main(c->env->imgs));
	t = vg_dwtypes_find_type(dt, n->type.base, c->cu, &terr);
	if (!t && terr.code != -ENOENT)
		return vg_error_set(c->err, terr.code, "%s", terr.msg);
	if (!t)
		return vg_error_set(c->err, -ENOENT, "%s: no type '%s' in the debug info",
				    text(c, n, tx, sizeof(tx)), n->type.base);
	for (unsigned i = 0; i < n->type.n_ptr; i++) {
		t = vg_dwtypes_pointer_to(dt, t);
		if (!t)
			return vg_error_set(c->err, -ENOMEM, "out of memory");
	}
	*out = t;
	return 0;
}

static const struct vg_type *decayed(struct ctx *c, const struct vg_type *t)
{
	const struct vg_type *s = vg_type_strip(t);

	if (s && s->kind == VG_TYPE_ARRAY)
		return vg_dwtypes_pointer_to(c->dt, s->target);
	return t;
}

static uint64_t elem_size(const struct vg_type *ptr)
{
	const struct vg_type *to = vg_type_strip(vg_type_strip(ptr)->target);
	uint64_t s = to ? vg_type_size(to) : 1;

	return s ? s : 1;
}

static int arith(struct ctx *c, const struct vg_expr_node *n, struct val *out)
{
	struct val a, b;
	uint64_t x, y, r;
	bool pa, pb, sgn;
	char tx[256];
	int rc;

	if ((rc = eval(c, n->a, &a)) < 0 || (rc = eval(c, n->b, &b)) < 0)
		return rc;
	pa = is_pointer(a.type) || is_array(a.type);
	pb = is_pointer(b.type) || is_array(b.type);
	if ((!pa && !is_integer(a.type)) || (!pb && !is_integer(b.type)))
		return vg_error_set(c->err, -EINVAL, "%s: arithmetic needs numbers or pointers",
				    text(c, n, tx, sizeof(tx)));
	if ((rc = load(c, n->a, &a, &x)) < 0 || (rc = load(c, n->b, &b, &y)) < 0)
		return rc;
	if (pa || pb) {
		if (n->op == VG_E_ADD && pa != pb) {
			const struct vg_type *pt = decayed(c, pa ? a.type : b.type);

			if (!pt)
				return vg_error_set(c->err, -ENOMEM, "out of memory");
			r = pa ? x + y * elem_size(pt) : y + x * elem_size(pt);
			*out = (struct val){ .type = pt, .bits = r };
			return 0;
		}
		if (n->op == VG_E_SUB && pa && !pb) {
			const struct vg_type *pt = decayed(c, a.type);

			if (!pt)
				return vg_error_set(c->err, -ENOMEM, "out of memory");
			*out = (struct val){ .type = pt, .bits = x - y * elem_size(pt) };
			return 0;
		}
		if (n->op == VG_E_SUB && pa && pb) {
			if (!decayed(c, a.type))
				return vg_error_set(c->err, -ENOMEM, "out of memory");
			*out = (struct val){ .type = base("long"),
					     .bits = (uint64_t)((int64_t)(x - y) / (int64_t)elem_size(decayed(c, a.type))) };
			return 0;
		}
		return vg_error_set(c->err, -EINVAL, "%s: this operation does not apply to pointers",
				    text(c, n, tx, sizeof(tx)));
	}
	sgn = !((vg_type_strip(a.type)->size == 8 && !vg_type_strip(a.type)->is_signed) ||
		(vg_type_strip(b.type)->size == 8 && !vg_type_strip(b.type)->is_signed));
	switch (n->op) {
	case VG_E_ADD: r = x + y; break;
	case VG_E_SUB: r = x - y; break;
	case VG_E_MUL: r = x * y; break;
	case VG_E_DIV:
	case VG_E_MOD:
		if (y == 0)
			return vg_error_set(c->err, -EINVAL, "%s: division by zero", text(c, n, tx, sizeof(tx)));
		if (sgn && (int64_t)y == -1)
			r = n->op == VG_E_DIV ? 0 - x : 0;
		else if (sgn)
			r = n->op == VG_E_DIV ? (uint64_t)((int64_t)x / (int64_t)y) : (uint64_t)((int64_t)x % (int64_t)y);
		else
			r = n->op == VG_E_DIV ? x / y : x % y;
		break;
	case VG_E_SHL: r = y >= 64 ? 0 : x << y; break;
	case VG_E_SHR: r = y >= 64 ? (sgn && (int64_t)x < 0 ? ~0ull : 0)
			      : sgn ? (uint64_t)((int64_t)x >> y) : x >> y; break;
	case VG_E_AND: r = x & y; break;
	case VG_E_OR: r = x | y; break;
	default: r = x ^ y; break;
	}
	*out = (struct val){ .type = base(sgn ? "long" : "unsigned long"), .bits = r };
	return 0;
}

static int eval(struct ctx *c, const struct vg_expr_node *n, struct val *out)
{
	struct val a;
	uint64_t x;
	char tx[256], tn[256];
	int r;

	switch (n->op) {
	case VG_E_NUM:
		*out = (struct val){ .type = base(n->num > INT64_MAX ? "unsigned long" : "long"),
				     .bits = n->num };
		return 0;
	case VG_E_VAR:
		return variable(c, n, out);
	case VG_E_MEMBER:
		if ((r = eval(c, n->a, &a)) < 0)
			return r;
		return member(c, n, &a, out);
	case VG_E_ARROW: {
		struct val obj;

		if ((r = eval(c, n->a, &a)) < 0)
			return r;
		if (!is_pointer(a.type))
			return vg_error_set(c->err, -EINVAL, "%s: %s is a %s, not a pointer%s",
					    text(c, n, tx, sizeof(tx)), text(c, n->a, (char[256]){ 0 }, 256),
					    vg_type_name(a.type, tn, sizeof(tn)),
					    is_array(a.type) ? "" : "; use '.'");
		if ((r = deref(c, n, n->a, &a, &obj)) < 0)
			return r;
		return member(c, n, &obj, out);
	}
	case VG_E_INDEX: {
		struct val i, p;
		uint64_t idx;

		if ((r = eval(c, n->a, &a)) < 0 || (r = eval(c, n->b, &i)) < 0)
			return r;
		if (!is_integer(i.type))
			return vg_error_set(c->err, -EINVAL, "%s: the index %s is not an integer",
					    text(c, n, tx, sizeof(tx)), text(c, n->b, tn, sizeof(tn)));
		if ((r = load(c, n->b, &i, &idx)) < 0)
			return r;
		if (is_array(a.type)) {
			const struct vg_type *at = vg_type_strip(a.type);

			if (!a.lvalue)
				return vg_error_set(c->err, -EINVAL, "%s: the array has no address",
						    text(c, n, tx, sizeof(tx)));
			*out = (struct val){ .type = at->target, .lvalue = true,
					     .addr = a.addr + idx * vg_type_size(at->target) };
			return 0;
		}
		if (!is_pointer(a.type))
			return vg_error_set(c->err, -EINVAL, "%s: %s is a %s, not an array or a pointer",
					    text(c, n, tx, sizeof(tx)), text(c, n->a, (char[256]){ 0 }, 256),
					    vg_type_name(a.type, tn, sizeof(tn)));
		if ((r = deref(c, n, n->a, &a, &p)) < 0)
			return r;
		*out = p;
		out->addr += idx * (vg_type_size(p.type) ? vg_type_size(p.type) : 1);
		return 0;
	}
	case VG_E_DEREF:
		if ((r = eval(c, n->a, &a)) < 0)
			return r;
		return deref(c, n, n->a, &a, out);
	case VG_E_ADDR:
		if ((r = eval(c, n->a, &a)) < 0)
			return r;
		if (!a.lvalue || a.bit_size)
			return vg_error_set(c->err, -EINVAL, "%s: %s has no address%s",
					    text(c, n, tx, sizeof(tx)), text(c, n->a, tn, sizeof(tn)),
					    a.bit_size ? " (a bit-field)" : "");
		*out = (struct val){ .type = vg_dwtypes_pointer_to(c->dt, a.type), .bits = a.addr };
		if (!out->type)
			return vg_error_set(c->err, -ENOMEM, "out of memory");
		return 0;
	case VG_E_NEG:
	case VG_E_POS:
	case VG_E_NOT:
	case VG_E_BITNOT:
		if ((r = eval(c, n->a, &a)) < 0)
			return r;
		if (!is_integer(a.type) && !(n->op == VG_E_NOT && is_pointer(a.type)))
			return vg_error_set(c->err, -EINVAL, "%s: %s is not an integer",
					    text(c, n, tx, sizeof(tx)), text(c, n->a, tn, sizeof(tn)));
		if ((r = load(c, n->a, &a, &x)) < 0)
			return r;
		x = n->op == VG_E_NEG ? 0 - x : n->op == VG_E_NOT ? !x : n->op == VG_E_BITNOT ? ~x : x;
		*out = (struct val){ .type = n->op == VG_E_NOT ? base("int") : base("long"), .bits = x };
		return 0;
	case VG_E_CAST: {
		const struct vg_type *to, *s;

		if ((r = eval(c, n->a, &a)) < 0)
			return r;
		if ((r = resolve_type(c, n, &to)) < 0)
			return r;
		s = vg_type_strip(to);
		if (!s || !(is_integer(s) || s->kind == VG_TYPE_POINTER))
			return vg_error_set(c->err, -EINVAL, "%s: casts are to integer and pointer types only",
					    text(c, n, tx, sizeof(tx)));
		if (!(is_integer(a.type) || is_pointer(a.type) || is_array(a.type)))
			return vg_error_set(c->err, -EINVAL, "%s: %s is not a number or a pointer",
					    text(c, n, tx, sizeof(tx)), text(c, n->a, tn, sizeof(tn)));
		if ((r = load(c, n->a, &a, &x)) < 0)
			return r;
		if (s->size < 8) {
			x &= (1ull << (s->size * 8)) - 1;
			if (s->is_signed && (x >> (s->size * 8 - 1) & 1))
				x |= ~0ull << (s->size * 8);
		}
		*out = (struct val){ .type = to, .bits = x };
		return 0;
	}
	case VG_E_SIZEOF_TYPE:
	case VG_E_SIZEOF_EXPR: {
		const struct vg_type *t;

		if (n->op == VG_E_SIZEOF_TYPE) {
			if ((r = resolve_type(c, n, &t)) < 0)
				return r;
		} else {
			c->no_read++;
			r = eval(c, n->a, &a);
			c->no_read--;
			/* sizeof(size_t): a name that is no variable may be a type. */
			if (r == -ENOENT && n->a->op == VG_E_VAR && !n->a->scope) {
				struct vg_expr_node tnode = *n;
				struct vg_error terr = { 0 };
				struct vg_error *keep = c->err;

				tnode.type.base = n->a->name;
				tnode.type.n_ptr = 0;
				c->err = &terr;
				r = resolve_type(c, &tnode, &t);
				c->err = keep;
				if (r == 0)
					vg_error_clear(c->err);
				else
					return -ENOENT;
			} else if (r < 0) {
				return r;
			} else {
				t = a.type;
			}
		}
		t = vg_dwtypes_complete(c->dt, t);
		*out = (struct val){ .type = base("unsigned long"), .bits = vg_type_size(t) };
		return 0;
	}
	default:
		return arith(c, n, out);
	}
}

int vg_expr_eval(struct vg_expr_env *env, const struct vg_expr *e,
		 struct vg_expr_result *out, struct vg_error *err)
{
	struct ctx c = { .env = env, .e = e, .err = err, .res = out };
	struct val v;
	int r;

	memset(out, 0, sizeof(*out));
	r = eval(&c, e->root, &v);
	if (r < 0) {
		vg_expr_result_clear(out);
		return r;
	}
	out->type = v.type;
	out->lvalue = v.lvalue;
	out->addr = v.addr;
	out->bit_offset = v.bit_offset;
	out->bit_size = v.bit_size;
	out->bits = v.bits;
	return 0;
}

void vg_expr_result_clear(struct vg_expr_result *r)
{
	for (size_t i = 0; i < r->n_hops; i++)
		free(r->hops[i].expr);
	free(r->hops);
	r->hops = NULL;
	r->n_hops = 0;
	free(r->var_name);
	r->var_name = NULL;
}
