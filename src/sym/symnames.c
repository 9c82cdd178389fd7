/* symnames.c - the names a symbolizer shows: a symbol demangled and
 * without its version suffix, cached by the raw string's address (the
 * strings live as long as the image), and "[function at 0x..., no
 * symbol]" for code without a name.  Lookups on two threads (a batch)
 * meet here, so both tables are under the symbolizer's names_lock. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"
#include "sym/symbolizer_priv.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ */
/* demangling, cached by the mangled string's address                   */

static size_t ptr_hash(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

static int cache_grow(struct name_cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 1024;
	const char **keys = calloc(cap, sizeof(*keys));
	const char **values = calloc(cap, sizeof(*values));

	if (!keys || !values) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->cap; i++) {
		size_t h;

		if (!c->keys[i])
			continue;
		for (h = ptr_hash(c->keys[i], cap); keys[h]; h = (h + 1) & (cap - 1))
			;
		keys[h] = c->keys[i];
		values[h] = c->values[i];
	}
	free(c->keys);
	free(c->values);
	c->keys = keys;
	c->values = values;
	c->cap = cap;
	return 0;
}

/* ELF symbol names may carry a symbol version ("clock_nanosleep@@GLIBC_2.17",
 * a compat "xdr_uint32_t@GLIBC_2.2.5"): shown without it, as gdb and
 * llvm-symbolizer name the function; symbol_raw keeps it. */
static char *strip_version(const char *raw, bool demangle)
{
	const char *at = strchr(raw, '@');
	char *plain, *d;

	if (!at || at == raw)
		return NULL;
	plain = strndup(raw, (size_t)(at - raw));
	if (!plain || !demangle)
		return plain;
	d = vg_demangle(plain);
	if (d) {
		free(plain);
		return d;
	}
	return plain;
}

static bool is_plt_name(const char *raw)
{
	size_t n = strlen(raw);

	return n > 4 && strcmp(raw + n - 4, "@plt") == 0 && !strchr(raw, '@')[4];
}

/* raw as a person reads it: demangled (unless --no-demangle) and, for an
 * ELF symbol (versioned true), without its version suffix. */
const char *sym_display_name(struct vg_symbolizer *s, const char *raw,
			     bool versioned)
{
	struct name_cache *c = &s->names;
	bool demangle = !(s->flags & VG_SYM_NO_DEMANGLE);
	bool mangled, has_version;
	size_t h;
	char *d;

	if (!raw)
		return raw;
	mangled = demangle && raw[0] == '_' && (raw[1] == 'Z' || raw[1] == 'R');
	/* "printf@plt" (a PLT stub vigil named) is a name, not a version. */
	has_version = versioned && strchr(raw, '@') && !is_plt_name(raw);
	/* Plain C names are the common case: no table needed. */
	if (!mangled && !has_version)
		return raw;
	/* Lookups under the shared lock (a batch on two threads) meet
	 * here: the table has its own. */
	pthread_mutex_lock(&s->names_lock);
	if ((c->n + 1) * 2 > c->cap && cache_grow(c)) {
		pthread_mutex_unlock(&s->names_lock);
		return raw;
	}
	for (h = ptr_hash(raw, c->cap); c->keys[h]; h = (h + 1) & (c->cap - 1))
		if (c->keys[h] == raw) {
			raw = c->values[h];
			pthread_mutex_unlock(&s->names_lock);
			return raw;
		}
	d = has_version ? strip_version(raw, demangle) : vg_demangle(raw);
	if (d && VG_GROW(c->owned, c->cap_owned, c->n_owned + 1)) {
		free(d);
		d = NULL;
	}
	if (d)
		c->owned[c->n_owned++] = d;
	c->keys[h] = raw;
	c->values[h] = d ? d : raw;
	c->n++;
	raw = c->values[h];
	pthread_mutex_unlock(&s->names_lock);
	return raw;
}

static const char *unnamed_name(struct unnamed_cache *c, uint64_t start)
{
	size_t h;
	char *v;

	if (!start)
		return NULL;
	if ((c->n + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		char **values = calloc(cap, sizeof(*values));

		if (!keys || !values) {
			free(keys);
			free(values);
			return NULL;
		}
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->keys[i])
				continue;
			for (h = ptr_hash((void *)(uintptr_t)c->keys[i], cap); keys[h];
			     h = (h + 1) & (cap - 1))
				;
			keys[h] = c->keys[i];
			values[h] = c->values[i];
		}
		free(c->keys);
		free(c->values);
		c->keys = keys;
		c->values = values;
		c->cap = cap;
	}
	for (h = ptr_hash((void *)(uintptr_t)start, c->cap); c->keys[h]; h = (h + 1) & (c->cap - 1))
		if (c->keys[h] == start)
			return c->values[h];
	if (asprintf(&v, "[function at 0x%" PRIx64 ", no symbol]", start) < 0)
		return NULL;
	c->keys[h] = start;
	c->values[h] = v;
	c->n++;
	return v;
}

const char *sym_unnamed_name(struct vg_symbolizer *s, uint64_t start)
{
	const char *v;

	pthread_mutex_lock(&s->names_lock);
	v = unnamed_name(&s->unnamed, start);
	pthread_mutex_unlock(&s->names_lock);
	return v;
}

static void unnamed_free(struct unnamed_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->values[i]);
	free(c->keys);
	free(c->values);
}

static void cache_free(struct name_cache *c)
{
	for (size_t i = 0; i < c->n_owned; i++)
		free(c->owned[i]);
	free(c->owned);
	free(c->keys);
	free(c->values);
}

void sym_names_free(struct vg_symbolizer *s)
{
	cache_free(&s->names);
	unnamed_free(&s->unnamed);
}
