/* merge.c - the time-ordered merge of per-CPU rings: see merge.h.
 *
 * Records are copied into an arena as they are taken out of their rings
 * (a ring's space is given back at once), sorted by (time, add order) at
 * each take, handed out up to the cut, and the rest is packed into a
 * second arena that then becomes the first: two buffers that grow to the
 * largest backlog and are reused, no allocation per record. */
#include "perf/merge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

static size_t align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

void vg_merge_init(struct vg_merge *m)
{
	memset(m, 0, sizeof(*m));
}

void vg_merge_release(struct vg_merge *m)
{
	free(m->arena);
	free(m->spare);
	free(m->q);
	memset(m, 0, sizeof(*m));
}

int vg_merge_add(struct vg_merge *m, uint64_t time, int tag, const void *data, size_t len)
{
	size_t off = align8(m->arena_len);

	if (VG_GROW(m->arena, m->arena_cap, off + len) < 0 || VG_GROW(m->q, m->cap, m->n + 1) < 0)
		return -ENOMEM;
	memcpy(m->arena + off, data, len);
	m->arena_len = off + len;
	m->q[m->n++] = (struct vg_merge_rec){ time, m->seq++, off, len, tag };
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct vg_merge_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Keep records k.. for the next take, packed into the spare arena, which
 * then becomes the arena.  Returns how many were lost for memory. */
static size_t keep_from(struct vg_merge *m, size_t k)
{
	size_t need = 0, len = 0, cap;
	unsigned char *t;

	for (size_t i = k; i < m->n; i++)
		need = align8(need) + m->q[i].len;
	if (need && VG_GROW(m->spare, m->spare_cap, need) < 0) {
		size_t lost = m->n - k;

		m->n = m->arena_len = 0;
		return lost;
	}
	for (size_t i = k; i < m->n; i++) {
		struct vg_merge_rec e = m->q[i];

		len = align8(len);
		memcpy(m->spare + len, m->arena + e.off, e.len);
		e.off = len;
		m->q[i - k] = e;
		len += e.len;
	}
	t = m->arena;
	m->arena = m->spare;
	m->spare = t;
	cap = m->arena_cap;
	m->arena_cap = m->spare_cap;
	m->spare_cap = cap;
	m->arena_len = len;
	m->n -= k;
	return 0;
}

size_t vg_merge_take(struct vg_merge *m, uint64_t until, vg_merge_fn fn, void *arg,
		     uint64_t *dropped)
{
	size_t k, lost;

	if (m->n > 1)
		qsort(m->q, m->n, sizeof(*m->q), cmp_rec);
	for (k = 0; k < m->n && m->q[k].time <= until; k++)
		fn(m->arena + m->q[k].off, m->q[k].len, m->q[k].tag, arg);
	lost = keep_from(m, k);
	if (dropped)
		*dropped += lost;
	return k;
}
