/* fuzz_waits.c - libFuzzer harness for vg_wait_chains over arbitrary
 * wait graphs (TIDs and owners from the input, duplicates and owners
 * outside the process included).
 *
 * Promises checked: every chain's links follow owners (link k's owner is
 * link k+1's tid); a chain ends at a thread without owner, at an owner
 * that is no thread, or in a cycle; every deadlock is a cycle that starts
 * at its lowest TID.  Built by tests/fuzz/run.sh, not by Meson. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stack/waits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_wait w[64];
	struct vg_wait_graph g;
	size_t n = size / 2 < 64 ? size / 2 : 64;

	/* small TID space so that owners hit threads and cycles form */
	for (size_t i = 0; i < n; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].tid = (pid_t)(data[2 * i] % 32) + 1;
		w[i].owner = (pid_t)(data[2 * i + 1] % 40);  /* 0: none; > 32: not a thread */
		w[i].kind = w[i].owner ? VG_WAIT_MUTEX : VG_WAIT_RUNNING;
		w[i].fd = -1;
	}
	if (vg_wait_chains(w, n, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.n_chains; i++) {
		const struct vg_wait_chain *c = &g.chains[i];

		if (c->n == 0 || c->n > n)
			abort();
		for (size_t k = 0; k + 1 < c->n; k++)
			if (c->links[k].owner != c->links[k + 1].tid)
				abort();
		if (c->end == VG_CHAIN_DEAD_OWNER && c->end_tid != c->links[c->n - 1].owner)
			abort();
	}
	for (size_t i = 0; i < g.n_deadlocks; i++) {
		const struct vg_deadlock *d = &g.deadlocks[i];

		if (d->n == 0 || d->links[d->n - 1].owner != d->links[0].tid)
			abort();
		for (size_t k = 0; k < d->n; k++) {
			if (d->links[k].tid < d->links[0].tid)
				abort();
			if (k + 1 < d->n && d->links[k].owner != d->links[k + 1].tid)
				abort();
		}
	}
	vg_wait_graph_release(&g);
	return 0;
}
