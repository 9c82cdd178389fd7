/* counters.c - the maps every program of a probe session shares: the
 * counts ARRAY (one u64 per site, then the dropped slot, the two gates and
 * the exec time) and the per-thread HASH.  Created, read and written with
 * libbpf's low-level map calls (bpf(2) underneath); the programs that use
 * them are in probe.bpf.c and are loaded by progs.c. */
#include "probe/bpf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "probe/bpf_int.h"
#include "util/vec.h"

struct thread_key {
	uint32_t site;
	uint32_t tid;
};

int vg_bpf_refused(struct vg_error *err, const char *what)
{
	return vg_error_set(err, -EPERM, "%s was refused: vigil probe needs root or "
			    "CAP_SYS_ADMIN (the kernel's uprobes require it; it stands for the "
			    "CAP_BPF and CAP_PERFMON the eBPF program needs)", what);
}

static int map_create(enum bpf_map_type type, uint32_t key_size, uint32_t value_size,
		      uint32_t max_entries, const char *name, int *fd, struct vg_error *err)
{
	int r = bpf_map_create(type, name, key_size, value_size, max_entries, NULL);

	if (r < 0) {
		if (r == -EPERM || r == -EACCES)
			return vg_bpf_refused(err, "creating the probe's BPF maps");
		return vg_error_set(err, r, "cannot create the probe's BPF map '%s' "
				    "(%u entries of %u bytes): %s", name, max_entries, value_size,
				    strerror(-r));
	}
	*fd = r;   /* bpf(2) fds are close-on-exec */
	return 0;
}

int vg_bpf_counters_new(size_t n_sites, bool per_thread, size_t max_thread_entries,
			struct vg_bpf_counters **out, struct vg_error *err)
{
	struct vg_bpf_counters *c;
	int r;

	*out = NULL;
	if (n_sites == 0 || n_sites >= UINT32_MAX - N_EXTRA_SLOTS)
		return vg_error_set(err, -EINVAL, "internal: %zu probe sites", n_sites);
	if (per_thread && (max_thread_entries == 0 || max_thread_entries > UINT32_MAX))
		return vg_error_set(err, -EINVAL, "internal: per-thread table of %zu entries",
				    max_thread_entries);
	c = calloc(1, sizeof(*c));
	if (!c)
		return vg_error_set(err, -ENOMEM, "out of memory for probe counters");
	c->n_sites = n_sites;
	c->counts_fd = c->threads_fd = -1;
	r = map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t), sizeof(uint64_t),
		       (uint32_t)n_sites + N_EXTRA_SLOTS, "vg_counts", &c->counts_fd, err);
	if (r == 0 && per_thread)
		r = map_create(BPF_MAP_TYPE_HASH, sizeof(struct thread_key), sizeof(uint64_t),
			       (uint32_t)max_thread_entries, "vg_thread_counts", &c->threads_fd,
			       err);
	if (r < 0) {
		vg_bpf_counters_free(c);
		return r;
	}
	*out = c;
	return 0;
}

struct vg_bpf_counters *vg_bpf_counters_free(struct vg_bpf_counters *c)
{
	if (!c)
		return NULL;
	if (c->counts_fd >= 0)
		close(c->counts_fd);
	if (c->threads_fd >= 0)
		close(c->threads_fd);
	free(c);
	return NULL;
}

static int read_slot(const struct vg_bpf_counters *c, uint32_t slot, uint64_t *v,
		     struct vg_error *err)
{
	int r = bpf_map_lookup_elem(c->counts_fd, &slot, v);

	if (r < 0)
		return vg_error_set(err, r, "cannot read probe counter %u: %s", slot, strerror(-r));
	return 0;
}

int vg_bpf_counters_read(const struct vg_bpf_counters *c, size_t site, uint64_t *calls,
			 struct vg_error *err)
{
	if (site >= c->n_sites)
		return vg_error_set(err, -EINVAL, "internal: probe site %zu of %zu", site,
				    c->n_sites);
	return read_slot(c, (uint32_t)site, calls, err);
}

static int set_gate(const struct vg_bpf_counters *c, uint32_t slot, bool open,
		    struct vg_error *err)
{
	uint64_t v = open;
	int r = bpf_map_update_elem(c->counts_fd, &slot, &v, BPF_ANY);

	if (r < 0)
		return vg_error_set(err, r, "cannot %s the probes: %s", open ? "start" : "stop",
				    strerror(-r));
	return 0;
}

int vg_bpf_counters_gate(const struct vg_bpf_counters *c, bool open, struct vg_error *err)
{
	return set_gate(c, (uint32_t)c->n_sites + SLOT_ENTRY_GATE, open, err);
}

int vg_bpf_counters_gate_returns(const struct vg_bpf_counters *c, bool open, struct vg_error *err)
{
	return set_gate(c, (uint32_t)c->n_sites + SLOT_RETURN_GATE, open, err);
}

int vg_bpf_counters_exec_ns(const struct vg_bpf_counters *c, uint64_t *ns, struct vg_error *err)
{
	return read_slot(c, (uint32_t)c->n_sites + SLOT_EXEC_NS, ns, err);
}

static int cmp_thread_count(const void *a, const void *b)
{
	const struct vg_bpf_thread_count *x = a, *y = b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int vg_bpf_counters_threads(const struct vg_bpf_counters *c, struct vg_bpf_thread_count **out,
			    size_t *n, uint64_t *dropped, struct vg_error *err)
{
	struct vg_bpf_thread_count *v = NULL;
	size_t cap = 0, k = 0;
	struct thread_key key, next;
	const void *prev = NULL;
	int r;

	*out = NULL;
	*n = 0;
	*dropped = 0;
	if (c->threads_fd < 0)
		return 0;
	r = read_slot(c, (uint32_t)c->n_sites + SLOT_DROPPED, dropped, err);
	if (r < 0)
		return r;
	/* Pairs are only ever added while we walk: the walk may miss one
	 * added meanwhile, never see one twice. */
	while ((r = bpf_map_get_next_key(c->threads_fd, prev, &next)) == 0) {
		uint64_t calls;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(c->threads_fd, &key, &calls) < 0)
			continue;
		if (VG_GROW(v, cap, k + 1) < 0) {
			free(v);
			return vg_error_set(err, -ENOMEM, "out of memory for per-thread counts");
		}
		v[k++] = (struct vg_bpf_thread_count){ key.site, key.tid, calls };
	}
	if (r != -ENOENT) {
		free(v);
		return vg_error_set(err, r, "cannot walk the per-thread probe counts: %s",
				    strerror(-r));
	}
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_thread_count);
	*out = v;
	*n = k;
	return 0;
}
