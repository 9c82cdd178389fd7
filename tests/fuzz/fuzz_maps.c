/* fuzz_maps.c - libFuzzer harness for the /proc/PID/maps text parser.
 *
 * Any input must either be rejected with -EINVAL and a message naming a line,
 * or give a table that keeps the parser's promises: sorted, disjoint,
 * non-empty regions, NUL-terminated paths, and a find() that agrees with a
 * linear scan.  Built by tests/fuzz/run.sh, not by Meson. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct vg_region *linear_find(const struct vg_maps *m, uint64_t a)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->regions[i].start <= a && a < m->regions[i].end)
			return &m->regions[i];
	return NULL;
}

static void check(const struct vg_maps *m, uint64_t a)
{
	if (vg_maps_find(m, a) != linear_find(m, a))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_error err = { 0 };
	struct vg_maps *m = NULL;
	int r = vg_maps_parse((const char *)data, size, &m, &err);

	if (r != 0) {
		if (r != -EINVAL || m || !strstr(err.msg, "line "))
			abort();
		return 0;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct vg_region *g = &m->regions[i];

		if (g->start >= g->end || (i && g->start < m->regions[i - 1].end))
			abort();
		if (strlen(g->path) > size || strlen(g->perms) != 4)
			abort();
		(void)vg_region_kind_name(g->kind);
		check(m, g->start);
		check(m, g->end - 1);
		check(m, g->end);
		if (g->start)
			check(m, g->start - 1);
	}
	check(m, 0);
	check(m, UINT64_MAX);
	vg_maps_carry_over(m, m);
	vg_maps_free(m);
	return 0;
}
