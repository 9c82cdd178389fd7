/* output.c - the rings the recording programs write to, and their merge
 * in time order: see bpf.h.
 *
 * One BPF ring buffer (BPF_MAP_TYPE_RINGBUF) per online CPU, found by the
 * program through an ARRAY_OF_MAPS indexed by its CPU number.  A program
 * reserves its whole record in the ring (bpf_ringbuf_reserve) and writes
 * it there, so there is no per-CPU scratch value that a preempted program
 * could share with another (the limit of the perf-output version).  Per
 * CPU rather than one ring for the machine: reservation takes the ring's
 * spinlock, and one ring would make every CPU's hits contend for it.
 *
 * Reading: libbpf's ring_buffer consumes every ring; for poll(2) each ring
 * has an epoll fd that holds it edge-triggered, because a ring buffer's fd
 * polls readable whenever it holds a byte.  The programs wake the reader
 * only when a ring crosses a quarter full (BPF_RB_FORCE_WAKEUP, else
 * BPF_RB_NO_WAKEUP), as the perf rings' wakeup watermark did; a drain
 * first takes the edge out of each epoll fd, then reads.
 *
 * Lost records (ring full, or a CPU without a ring) are counted by the
 * programs in a one-slot map: exact at any time.  The records are merged
 * in time order across the rings by perf/merge.h, as perf's are.
 *
 * Not done here: which records to write (progs.c), pairing them (stats.c). */
#include "probe/bpf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perf/bpf_log.h"
#include "perf/cpus.h"
#include "perf/merge.h"
#include "probe/bpf_int.h"

#define REC_HDR offsetof(struct vg_probe_record, stack)

struct vg_bpf_output {
	int rings_fd;              /* ARRAY_OF_MAPS: CPU number -> its ring */
	int lost_fd;               /* ARRAY, 1 slot: records not written */
	size_t n;                  /* online CPUs: one ring each */
	int *ring_fds;
	int *epoll_fds;            /* what vg_bpf_output_fds hands out */
	struct ring_buffer *reader;

	struct vg_merge merge;     /* records taken out, waiting for their turn */
	struct vg_bpf_output_stats st;
};

int vg_bpf_output_rings_fd(const struct vg_bpf_output *o)
{
	return o->rings_fd;
}

int vg_bpf_output_lost_fd(const struct vg_bpf_output *o)
{
	return o->lost_fd;
}

/* One record, checked, copied out and queued. */
static int collect_record(void *arg, void *data, size_t size)
{
	struct vg_bpf_output *o = arg;
	const unsigned char *raw = data;
	uint32_t stack_len;
	uint64_t time;

	if (size < REC_HDR) {
		o->st.malformed++;
		return 0;
	}
	memcpy(&stack_len, raw + offsetof(struct vg_probe_record, stack_len), sizeof(stack_len));
	if (stack_len > size - REC_HDR) {
		o->st.malformed++;
		return 0;
	}
	memcpy(&time, raw + offsetof(struct vg_probe_record, time_ns), sizeof(time));
	if (vg_merge_add(&o->merge, time, 0, raw, size) < 0)
		o->st.dropped_nomem++;
	return 0;
}

static int online_cpus(int **cpus, size_t *n, int *max_entries, struct vg_error *err)
{
	int *possible = NULL;
	size_t n_possible = 0;
	int r = vg_cpus_online(cpus, n, err);

	if (r < 0)
		return r;
	/* The program indexes the array by the CPU it runs on: size it for
	 * every possible CPU, not just those online now. */
	*max_entries = (*cpus)[*n - 1] + 1;
	if (vg_cpu_list_read("/sys/devices/system/cpu/possible", &possible, &n_possible) == 0) {
		if (possible[n_possible - 1] + 1 > *max_entries)
			*max_entries = possible[n_possible - 1] + 1;
		free(possible);
	}
	return 0;
}

static int map_error(int r, const char *what, struct vg_error *err)
{
	if (r == -EPERM || r == -EACCES)
		return vg_bpf_refused(err, "creating the probe's output rings");
	return vg_error_set(err, r, "cannot create %s: %s", what, strerror(-r));
}

int vg_bpf_output_new(size_t data_pages, struct vg_bpf_output **out, struct vg_error *err)
{
	struct vg_bpf_output *o;
	long page = sysconf(_SC_PAGESIZE);
	int *cpus = NULL, max_entries = 0, r;
	size_t n = 0, bytes;

	*out = NULL;
	vg_bpf_libbpf_quiet();   /* ring_buffer__new would warn on stderr */
	bytes = data_pages * (size_t)page;
	if (data_pages == 0 || (data_pages & (data_pages - 1)) || bytes > (1u << 30))
		return vg_error_set(err, -EINVAL, "internal: output rings of %zu pages (a power "
				    "of two)", data_pages);
	r = online_cpus(&cpus, &n, &max_entries, err);
	if (r < 0)
		return r;
	o = calloc(1, sizeof(*o));
	if (o) {
		o->ring_fds = malloc(n * sizeof(*o->ring_fds));
		o->epoll_fds = malloc(n * sizeof(*o->epoll_fds));
	}
	if (!o || !o->ring_fds || !o->epoll_fds) {
		free(cpus);
		if (o) {
			free(o->ring_fds);
			free(o->epoll_fds);
			free(o);
		}
		return vg_error_set(err, -ENOMEM, "out of memory for the probe's output rings");
	}
	vg_merge_init(&o->merge);
	o->rings_fd = o->lost_fd = -1;
	for (size_t i = 0; i < n; i++)
		o->ring_fds[i] = o->epoll_fds[i] = -1;
	o->n = n;
	r = bpf_map_create(BPF_MAP_TYPE_ARRAY, "vg_lost", sizeof(uint32_t), sizeof(uint64_t), 1,
			   NULL);
	if (r < 0)
		r = map_error(r, "the probe's lost-record counter", err);
	else
		o->lost_fd = r;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
		uint32_t key = (uint32_t)cpus[i], value;

		r = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "vg_ring", 0, 0, (uint32_t)bytes, NULL);
		if (r < 0) {
			r = map_error(r, "the probe's output ring", err);
			break;
		}
		o->ring_fds[i] = r;
		if (i == 0) {
			/* The first ring is the template of the array's values. */
			LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = (uint32_t)r);

			r = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "vg_rings", sizeof(uint32_t),
					   sizeof(uint32_t), (uint32_t)max_entries, &opts);
			if (r < 0) {
				r = map_error(r, "the probe's array of output rings", err);
				break;
			}
			o->rings_fd = r;
			o->reader = ring_buffer__new(o->ring_fds[0], collect_record, o, NULL);
			if (!o->reader) {
				r = vg_error_set(err, -errno, "cannot map the probe's output ring on "
						 "CPU %d: %s", cpus[i], strerror(errno));
				break;
			}
		} else if ((r = ring_buffer__add(o->reader, o->ring_fds[i], collect_record, o)) < 0) {
			r = vg_error_set(err, r, "cannot map the probe's output ring on CPU %d: %s",
					 cpus[i], strerror(-r));
			break;
		}
		value = (uint32_t)o->ring_fds[i];
		r = bpf_map_update_elem(o->rings_fd, &key, &value, BPF_ANY);
		if (r < 0) {
			r = vg_error_set(err, r, "cannot register CPU %d's output ring with the "
					 "probe program: %s", cpus[i], strerror(-r));
			break;
		}
		r = epoll_create1(EPOLL_CLOEXEC);
		if (r < 0 || epoll_ctl(r, EPOLL_CTL_ADD, o->ring_fds[i], &ev) < 0) {
			int e = errno;

			if (r >= 0)
				close(r);
			r = vg_error_set(err, -e, "cannot poll the probe's output ring on CPU %d: %s",
					 cpus[i], strerror(e));
			break;
		}
		o->epoll_fds[i] = r;
	}
	free(cpus);
	if (r < 0) {
		vg_bpf_output_free(o);
		return r;
	}
	*out = o;
	return 0;
}

struct vg_bpf_output *vg_bpf_output_free(struct vg_bpf_output *o)
{
	if (!o)
		return NULL;
	ring_buffer__free(o->reader);
	for (size_t i = 0; i < o->n; i++) {
		if (o->epoll_fds[i] >= 0)
			close(o->epoll_fds[i]);
		if (o->ring_fds[i] >= 0)
			close(o->ring_fds[i]);
	}
	if (o->rings_fd >= 0)
		close(o->rings_fd);
	if (o->lost_fd >= 0)
		close(o->lost_fd);
	free(o->ring_fds);
	free(o->epoll_fds);
	vg_merge_release(&o->merge);
	free(o);
	return NULL;
}

const int *vg_bpf_output_fds(const struct vg_bpf_output *o, size_t *n)
{
	*n = o->n;
	return o->epoll_fds;
}

struct hand_out {
	vg_bpf_record_fn fn;
	void *arg;
};

static void hand_out(const void *data, size_t len, int tag, void *arg)
{
	const struct hand_out *h = arg;

	(void)tag;
	h->fn(data, len, h->arg);
}

size_t vg_bpf_output_drain(struct vg_bpf_output *o, uint64_t until, vg_bpf_record_fn fn,
			   void *arg)
{
	struct hand_out h = { fn, arg };
	struct epoll_event ev[1];
	size_t k;

	/* Take the edges first: a wakeup while we read is kept. */
	for (size_t i = 0; i < o->n; i++)
		while (epoll_wait(o->epoll_fds[i], ev, 1, 0) > 0)
			;
	ring_buffer__consume(o->reader);
	k = vg_merge_take(&o->merge, until, hand_out, &h, &o->st.dropped_nomem);
	o->st.records += k;
	return k;
}

void vg_bpf_output_stats(const struct vg_bpf_output *o, struct vg_bpf_output_stats *st)
{
	uint32_t key = 0;
	uint64_t lost;

	*st = o->st;
	if (bpf_map_lookup_elem(o->lost_fd, &key, &lost) == 0)
		st->lost = lost;
}
