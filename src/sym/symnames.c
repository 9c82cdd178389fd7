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

static size_t key_hash(uint64_t x, size_t cap)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

/* Where key is in m, or the empty slot where it would go (m has one). */
static size_t map_slot(const struct name_map *m, uint64_t key)
{
	size_t h;

	for (h = key_hash(key, m->cap); m->keys[h] && m->keys[h] != key; h = (h + 1) & (m->cap - 1))
		;
	return h;
}

/* Room for one more key, growing m to first_cap, then twice its size,
 * to keep it at most half full: 0, or -ENOMEM with m as it was. */
static int map_reserve(struct name_map *m, size_t first_cap)
{
	struct name_map grown = { .n = m->n, .cap = m->cap ? m->cap * 2 : first_cap };

	if ((m->n + 1) * 2 <= m->cap)
		return 0;
	grown.keys = calloc(grown.cap, sizeof(*grown.keys));
	grown.values = calloc(grown.cap, sizeof(*grown.values));
	if (!grown.keys || !grown.values) {
		free(grown.keys);
		free(grown.values);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t h;

		if (!m->keys[i])
			continue;
		h = map_slot(&grown, m->keys[i]);
		grown.keys[h] = m->keys[i];
		grown.values[h] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	*m = grown;
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
	if (map_reserve(&c->map, 1024)) {
		pthread_mutex_unlock(&s->names_lock);
		return raw;
	}
	h = map_slot(&c->map, (uintptr_t)raw);
	if (c->map.keys[h]) {
		raw = c->map.values[h];
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
	c->map.keys[h] = (uintptr_t)raw;
	c->map.values[h] = d ? d : raw;
	c->map.n++;
	raw = c->map.values[h];
	pthread_mutex_unlock(&s->names_lock);
	return raw;
}

static const char *unnamed_name(struct name_map *m, uint64_t start)
{
	size_t h;
	char *v;

	if (!start || map_reserve(m, 256))
		return NULL;
	h = map_slot(m, start);
	if (m->keys[h])
		return m->values[h];
	if (asprintf(&v, "[function at 0x%" PRIx64 ", no symbol]", start) < 0)
		return NULL;
	m->keys[h] = start;
	m->values[h] = v;
	m->n++;
	return v;
}

const char *sym_unnamed_name(struct vg_symbolizer *s, uint64_t start)
{
	const char *v;

	pthread_mutex_lock(&s->names_lock);
	v = unnamed_name(&s->unnamed.map, start);
	pthread_mutex_unlock(&s->names_lock);
	return v;
}

static void map_free(struct name_map *m)
{
	free(m->keys);
	free(m->values);
}

static void unnamed_free(struct unnamed_cache *c)
{
	for (size_t i = 0; i < c->map.cap; i++)
		free((char *)c->map.values[i]);
	map_free(&c->map);
}

static void cache_free(struct name_cache *c)
{
	for (size_t i = 0; i < c->n_owned; i++)
		free(c->owned[i]);
	free(c->owned);
	map_free(&c->map);
}

void sym_names_free(struct vg_symbolizer *s)
{
	cache_free(&s->names);
	unnamed_free(&s->unnamed);
}
