/* fuzz_perfmap.c - libFuzzer harness for the /tmp/perf-PID.map parser, the
 * text a JIT in the target writes.
 *
 * The input is fed twice: whole, and cut in two at a point its first byte
 * chooses, the second part from where the first call stopped (as
 * vg_perfmap_update reads a growing file).  Both must give the same
 * entries and the same answers.  Every entry keeps the parser's promises
 * (non-empty range that does not wrap, a name without a newline, no
 * longer than a line may be), and every answer is the latest entry
 * covering the address, checked against a linear search over all of
 * them.  Probes are each entry's start, start - 1, end - 1 and end.
 * Built by tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct vg_perfmap_entry *brute(const struct vg_perfmap *m, uint64_t a)
{
	const struct vg_perfmap_entry *best = NULL;

	for (size_t i = 0; i < m->n; i++)
		if (a >= m->entries[i].start && a < m->entries[i].end &&
		    (!best || m->entries[i].seq > best->seq))
			best = &m->entries[i];
	return best;
}

static void probe(struct vg_perfmap *whole, struct vg_perfmap *cut, uint64_t a)
{
	const struct vg_perfmap_entry *x = vg_perfmap_lookup(whole, a);
	const struct vg_perfmap_entry *y = vg_perfmap_lookup(cut, a);

	if (x != brute(whole, a) || y != brute(cut, a))
		abort();
	if (!x != !y)
		abort();
	if (x && (x->start != y->start || x->end != y->end || x->seq != y->seq ||
		  strcmp(x->name, y->name) != 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_perfmap whole = { .sorted = true }, cut = { .sorted = true };
	const char *text = (const char *)data;
	size_t at = size ? (size_t)data[0] * size / 256 : 0, used;

	used = vg_perfmap_feed(&whole, text, size);
	if (used > size)
		abort();
	used = vg_perfmap_feed(&cut, text, at);
	used += vg_perfmap_feed(&cut, text + used, size - used);
	if (whole.n != cut.n)
		abort();
	for (size_t i = 0; i < whole.n && i < 256; i++) {
		const struct vg_perfmap_entry *e = &whole.entries[i];
		size_t len = strlen(e->name);

		if (e->end <= e->start || !len || len > VG_PERFMAP_MAX_LINE || strchr(e->name, '\n'))
			abort();
	}
	/* Probes: the first 256 entries' edges (lookups sort the entries) */
	{
		size_t n = whole.n < 256 ? whole.n : 256;
		uint64_t *edges = malloc((n ? n : 1) * 2 * sizeof(*edges));

		if (edges) {
			for (size_t i = 0; i < n; i++) {
				edges[2 * i] = whole.entries[i].start;
				edges[2 * i + 1] = whole.entries[i].end;
			}
			for (size_t i = 0; i < 2 * n; i++) {
				probe(&whole, &cut, edges[i]);
				probe(&whole, &cut, edges[i] - 1);
			}
			free(edges);
		}
	}
	probe(&whole, &cut, 0);
	probe(&whole, &cut, UINT64_MAX);
	vg_perfmap_free(&whole);
	vg_perfmap_free(&cut);
	return 0;
}
