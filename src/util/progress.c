/* progress.c - see progress.h. */
#include "util/progress.h"

#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void vg_progress_start(struct vg_progress *p, uint64_t total)
{
	if (!p)
		return;
	if (!p->interval_ns)
		p->interval_ns = 250000000u;
	p->total = total;
	p->done = 0;
	p->t0_ns = now_ns();
	/* Nothing in the first interval: a quick run stays silent. */
	p->next_ns = p->t0_ns + p->interval_ns;
}

void vg_progress_add(struct vg_progress *p, uint64_t n)
{
	uint64_t t, done, next;

	if (!p || !p->report)
		return;
	done = __atomic_add_fetch(&p->done, n, __ATOMIC_RELAXED);
	t = now_ns();
	next = __atomic_load_n(&p->next_ns, __ATOMIC_RELAXED);
	if (t < next)
		return;
	/* One thread moves the deadline on and reports; the others saw it move. */
	if (!__atomic_compare_exchange_n(&p->next_ns, &next, t + p->interval_ns, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	p->report(p->arg, p->what, done, p->total, (double)(t - p->t0_ns) / 1e9);
	__atomic_store_n(&p->reported, true, __ATOMIC_RELAXED);
}
