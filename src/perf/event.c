/* event.c - perf events on every thread of a process: see event.h. */
#include "perf/event.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf/cpus.h"
#include "perf/merge.h"
#include "perf/ring.h"
#include "util/vec.h"

/* Setup gives up when threads keep appearing faster than it attaches
 * them (a fork bomb of threads): the report would never be exact. */
#define MAX_RESCANS 1000

struct slot {
	struct perf_event_attr attr;
	struct vg_perf_format fmt;
};

struct event {
	int fd;
	unsigned slot;
	int cpu_index;
	pid_t tid;                    /* the thread it was opened on: the sample's source */
	uint64_t id;
};

struct id_entry {
	uint64_t id;
	size_t event;
};

/* Duplicate guard: (tid, slot) -> the source thread whose events count. */
struct dup_entry {
	uint64_t key;                 /* 0: empty */
	pid_t source;
};

struct vg_perf_set {
	const struct vg_target *t;
	size_t data_pages;
	int *cpus;                    /* online CPU numbers */
	int ncpus;
	struct vg_ring **rings;       /* per CPU index */
	int *ring_fd;
	bool *ring_hup;

	struct slot *slots;
	size_t n_slots, cap_slots;
	struct event *events;
	size_t n_events, cap_events;
	struct id_entry *ids;         /* sorted by id */
	size_t n_ids, cap_ids;

	struct vg_cover_tid *tids;
	size_t n_tids, cap_tids;

	struct dup_entry *dup;
	size_t dup_cap, dup_used;

	struct vg_perf_stats stats;
	/* vg_perf_set_drain_ordered: every record copied out, then merged
	 * (tag: the CPU index). */
	struct vg_merge merge;
	bool no_inherit;
	bool started;
	uint64_t start_time;
};

uint64_t vg_perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *vg_cover_how_name(enum vg_cover_how h)
{
	switch (h) {
	case VG_COVER_SEEDED: return "seeded";
	case VG_COVER_INHERITED: return "inherited";
	case VG_COVER_RESCAN: return "attached_on_rescan";
	case VG_COVER_NONE: return "not_covered";
	}
	return "?";
}

/* Online CPUs as the set keeps them (an int count). */
static int online_cpus(int **out, int *n, struct vg_error *err)
{
	size_t k = 0;
	int r = vg_cpus_online(out, &k, err);

	*n = (int)k;
	return r;
}

int vg_perf_set_new(const struct vg_target *t, size_t data_pages,
		    struct vg_perf_set **out, struct vg_error *err)
{
	struct vg_perf_set *s = calloc(1, sizeof(*s));
	int r;

	*out = NULL;
	if (!s)
		return vg_error_set(err, -ENOMEM, "out of memory for perf events");
	s->t = t;
	s->data_pages = data_pages;
	r = online_cpus(&s->cpus, &s->ncpus, err);
	if (r < 0) {
		free(s);
		return r;
	}
	s->rings = calloc((size_t)s->ncpus, sizeof(*s->rings));
	s->ring_fd = malloc((size_t)s->ncpus * sizeof(*s->ring_fd));
	s->ring_hup = calloc((size_t)s->ncpus, sizeof(*s->ring_hup));
	if (!s->rings || !s->ring_fd || !s->ring_hup) {
		vg_perf_set_free(s);
		return vg_error_set(err, -ENOMEM, "out of memory for perf rings");
	}
	for (int i = 0; i < s->ncpus; i++)
		s->ring_fd[i] = -1;
	*out = s;
	return 0;
}

struct vg_perf_set *vg_perf_set_free(struct vg_perf_set *s)
{
	if (!s)
		return NULL;
	/* Closing the fds is what removes the breakpoints from the target
	 * (the kernel uninstalls them with the last reference). */
	for (size_t i = 0; i < s->n_events; i++)
		close(s->events[i].fd);
	for (int i = 0; s->rings && i < s->ncpus; i++)
		vg_ring_unmap(s->rings[i]);
	free(s->rings);
	free(s->ring_fd);
	free(s->ring_hup);
	vg_merge_release(&s->merge);
	free(s->cpus);
	free(s->slots);
	free(s->events);
	free(s->ids);
	free(s->tids);
	free(s->dup);
	free(s);
	return NULL;
}

int vg_perf_set_add(struct vg_perf_set *s, const struct perf_event_attr *attr,
		    struct vg_error *err)
{
	struct slot *sl;

	if (attr->sample_type & ~(uint64_t)VG_PERF_SAMPLE_SUPPORTED)
		return vg_error_set(err, -EINVAL, "internal: sample bits 0x%llx are not decoded",
				    (unsigned long long)(attr->sample_type & ~(uint64_t)VG_PERF_SAMPLE_SUPPORTED));
	if (VG_GROW(s->slots, s->cap_slots, s->n_slots + 1) < 0)
		return vg_error_set(err, -ENOMEM, "out of memory for perf events");
	sl = &s->slots[s->n_slots];
	sl->attr = *attr;
	sl->attr.size = sizeof(sl->attr);
	sl->attr.inherit = !s->no_inherit;
	sl->attr.inherit_thread = !s->no_inherit;
	sl->attr.sample_id_all = 1;
	sl->attr.use_clockid = 1;
	sl->attr.clockid = CLOCK_MONOTONIC;
	sl->attr.sample_type |= PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	sl->attr.task = s->n_slots == 0;
	/* The exec of the process (COMM with PERF_RECORD_MISC_COMM_EXEC). */
	if (s->n_slots == 0) {
		sl->attr.comm = 1;
		sl->attr.comm_exec = 1;
	}
	sl->fmt.sample_type = sl->attr.sample_type;
	sl->fmt.regs_user_mask = sl->attr.sample_regs_user;
	sl->fmt.regs_intr_mask = sl->attr.sample_regs_intr;
	return (int)s->n_slots++;
}

void vg_perf_set_no_inherit(struct vg_perf_set *s)
{
	s->no_inherit = true;
}

static struct vg_cover_tid *find_tid(struct vg_perf_set *s, pid_t tid)
{
	for (size_t i = 0; i < s->n_tids; i++)
		if (s->tids[i].tid == tid)
			return &s->tids[i];
	return NULL;
}

/* A child process (its FORK record): counted once per pid. */
static void note_child(struct vg_perf_set *s, pid_t pid)
{
	size_t n = s->stats.children < VG_PERF_MAX_CHILDREN ?
		   (size_t)s->stats.children : VG_PERF_MAX_CHILDREN;

	for (size_t i = 0; i < n; i++)
		if (s->stats.child_pids[i] == pid)
			return;
	if (n < VG_PERF_MAX_CHILDREN)
		s->stats.child_pids[n] = pid;
	s->stats.children++;   /* past the list: one FORK record per child */
}

const int *vg_perf_set_ring_fds(const struct vg_perf_set *s, size_t *n)
{
	*n = (size_t)s->ncpus;
	return s->ring_fd;
}

const pid_t *vg_perf_set_children(const struct vg_perf_set *s, size_t *n)
{
	*n = s->stats.children < VG_PERF_MAX_CHILDREN ?
	     (size_t)s->stats.children : VG_PERF_MAX_CHILDREN;
	return s->stats.child_pids;
}

static struct vg_cover_tid *add_tid(struct vg_perf_set *s, pid_t tid, enum vg_cover_how how,
				    pid_t parent)
{
	struct vg_cover_tid *c = find_tid(s, tid);

	if (c)
		return c;
	if (VG_GROW(s->tids, s->cap_tids, s->n_tids + 1) < 0)
		return NULL;
	c = &s->tids[s->n_tids++];
	*c = (struct vg_cover_tid){ .tid = tid, .how = how, .parent = parent };
	return c;
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct event *event_of(const struct vg_perf_set *s, uint64_t id)
{
	size_t lo = 0, hi = s->n_ids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ids[mid].id < id)
			lo = mid + 1;
		else if (s->ids[mid].id > id)
			hi = mid;
		else
			return &s->events[s->ids[mid].event];
	}
	return NULL;
}

static int open_error(struct vg_perf_set *s, int e, pid_t tid, int cpu, unsigned slot,
		      struct vg_error *err)
{
	switch (e) {
	case ENOSPC:
		return vg_error_set(err, -ENOSPC,
				    "no free hardware debug register for thread %d on CPU %d: x86 "
				    "has 4 (DR0-DR3) per thread, this request needs %zu, and another "
				    "debugger, perf or vigil holds the rest", (int)tid, cpu, s->n_slots);
	case EACCES:
	case EPERM:
		return vg_error_set(err, -e,
				    "cannot open perf events for pid %d: %s; run as root, or give "
				    "vigil CAP_PERFMON, or set kernel.perf_event_paranoid <= 1 "
				    "(it is read from /proc/sys/kernel/perf_event_paranoid)",
				    (int)s->t->pid, strerror(e));
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return vg_error_set(err, -EOPNOTSUPP,
				    "the kernel has no such perf event (slot %u, type %u): %s",
				    slot, s->slots[slot].attr.type, strerror(e));
	default:
		return vg_error_set(err, -e, "perf_event_open for thread %d on CPU %d failed: %s",
				    (int)tid, cpu, strerror(e));
	}
}

/* Open every slot on tid for every CPU.  All or nothing: on failure the
 * events opened for tid are closed again.  -ESRCH: tid has exited. */
static int open_tid(struct vg_perf_set *s, pid_t tid, struct vg_error *err)
{
	size_t first = s->n_events;
	int r = 0;

	for (unsigned sl = 0; sl < s->n_slots && r == 0; sl++) {
		for (int ci = 0; ci < s->ncpus; ci++) {
			int fd = (int)syscall(SYS_perf_event_open, &s->slots[sl].attr, tid,
					      s->cpus[ci], -1, PERF_FLAG_FD_CLOEXEC);
			struct event *ev;
			uint64_t id = 0;

			if (fd < 0) {
				r = errno == ESRCH ? -ESRCH
					: open_error(s, errno, tid, s->cpus[ci], sl, err);
				break;
			}
			if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0 ||
			    VG_GROW(s->events, s->cap_events, s->n_events + 1) < 0) {
				close(fd);
				r = vg_error_set(err, -ENOMEM, "out of memory for perf events");
				break;
			}
			if (s->ring_fd[ci] < 0) {
				r = vg_ring_map(fd, s->data_pages, &s->rings[ci], err);
				if (r < 0) {
					close(fd);
					break;
				}
				s->ring_fd[ci] = fd;
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring_fd[ci]) < 0) {
				r = vg_error_set(err, -errno, "cannot share CPU %d's ring: %s",
						 s->cpus[ci], strerror(errno));
				close(fd);
				break;
			}
			ev = &s->events[s->n_events++];
			*ev = (struct event){ .fd = fd, .slot = sl, .cpu_index = ci, .tid = tid, .id = id };
		}
	}
	if (r < 0) {
		/* A ring owner stays open: other threads' events may already
		 * write into it. */
		for (size_t i = s->n_events; i-- > first;) {
			bool owner = false;

			for (int ci = 0; ci < s->ncpus; ci++)
				owner |= s->ring_fd[ci] == s->events[i].fd;
			if (owner)
				continue;
			close(s->events[i].fd);
			s->events[i] = s->events[--s->n_events];
		}
		return r;
	}
	/* Index the new ids. */
	if (VG_GROW(s->ids, s->cap_ids, s->n_events) < 0)
		return vg_error_set(err, -ENOMEM, "out of memory for perf events");
	for (size_t i = first; i < s->n_events; i++)
		s->ids[s->n_ids++] = (struct id_entry){ s->events[i].id, i };
	qsort(s->ids, s->n_ids, sizeof(*s->ids), cmp_id);
	return 0;
}

static uint64_t dup_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

/* True when source is the one that counts for (tid, slot, CPU): each
 * source's event of one CPU only fires there, so two sources overlap per
 * CPU (a partial inheritance covers some CPUs only). */
static bool dup_accept(struct vg_perf_set *s, pid_t tid, unsigned slot, int cpu_index,
		       pid_t source)
{
	uint64_t key = ((uint64_t)(uint32_t)tid << 32 | (uint64_t)(slot & 0xffff) << 16 |
			(uint64_t)(cpu_index & 0xffff)) + 1;
	size_t i;

	if (s->dup_used * 2 >= s->dup_cap) {
		size_t cap = s->dup_cap ? s->dup_cap * 2 : 64;
		struct dup_entry *d = calloc(cap, sizeof(*d));

		if (!d)
			return true;   /* no guard beats no sample */
		for (size_t j = 0; j < s->dup_cap; j++) {
			if (!s->dup[j].key)
				continue;
			for (i = dup_hash(s->dup[j].key) & (cap - 1); d[i].key; i = (i + 1) & (cap - 1))
				;
			d[i] = s->dup[j];
		}
		free(s->dup);
		s->dup = d;
		s->dup_cap = cap;
	}
	for (i = dup_hash(key) & (s->dup_cap - 1); s->dup[i].key; i = (i + 1) & (s->dup_cap - 1))
		if (s->dup[i].key == key)
			return s->dup[i].source == source;
	s->dup[i] = (struct dup_entry){ key, source };
	s->dup_used++;
	return true;
}

struct drain_ctx {
	struct vg_perf_set *s;
	const struct vg_perf_consumer *c;
	int cpu_index;
};

static uint64_t record_time(const struct vg_perf_set *s, const struct perf_event_header *h);

static int handle_record(const struct perf_event_header *h, void *arg)
{
	struct drain_ctx *d = arg;
	struct vg_perf_set *s = d->s;
	const struct event *ev = NULL;
	uint64_t id, n;

	if (h->type == PERF_RECORD_LOST) {
		if (vg_perf_parse_lost(h, &n)) {
			s->stats.lost += n;
			s->stats.lost_records++;
		} else {
			s->stats.undecodable++;
		}
		return 0;
	}
	if (h->type == PERF_RECORD_THROTTLE) {
		uint64_t when;

		if (vg_perf_parse_throttle(h, &when))
			s->stats.throttled++;
		else
			s->stats.undecodable++;
		return 0;
	}
	if (vg_perf_record_identifier(h, &id))
		ev = event_of(s, id);
	if (h->type == PERF_RECORD_SAMPLE) {
		struct vg_perf_sample sample;
		struct vg_perf_hit hit;

		if (!ev || !vg_perf_parse_sample(h, &s->slots[ev->slot].fmt, &sample)) {
			s->stats.undecodable++;
			return 0;
		}
		if ((pid_t)sample.pid != s->t->pid) {
			s->stats.other_process++;
			return 0;
		}
		if (s->stats.exec_ns && sample.time >= s->stats.exec_ns) {
			s->stats.after_exec++;
			return 0;
		}
		if (!dup_accept(s, (pid_t)sample.tid, ev->slot, ev->cpu_index, ev->tid)) {
			s->stats.duplicates++;
			return 0;
		}
		hit = (struct vg_perf_hit){ &sample, ev->slot, s->cpus[d->cpu_index],
					    !s->started || sample.time < s->start_time };
		s->stats.samples++;
		s->stats.before_start += hit.before_start;
		if (d->c && d->c->sample)
			d->c->sample(&hit, d->c->arg);
		return 0;
	}
	if (h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) {
		struct vg_perf_task task;

		if (!vg_perf_parse_task(h, &task)) {
			s->stats.undecodable++;
			return 0;
		}
		if ((pid_t)task.pid != s->t->pid && (pid_t)task.ppid == s->t->pid &&
		    h->type == PERF_RECORD_FORK)
			note_child(s, (pid_t)task.pid);
		if ((pid_t)task.pid == s->t->pid && s->no_inherit) {
			/* Nothing is inherited: during setup the rescan
			 * attaches the new thread; after it, it is uncovered. */
			if (s->started && h->type == PERF_RECORD_FORK)
				add_tid(s, (pid_t)task.tid, VG_COVER_NONE, (pid_t)task.ptid);
		} else if ((pid_t)task.pid == s->t->pid && h->type == PERF_RECORD_FORK) {
			struct vg_cover_tid *parent = find_tid(s, (pid_t)task.ptid);
			/* After setup every thread is fully covered, so is what
			 * it creates (its creator's own FORK may simply sit in
			 * another CPU's ring, not read yet). */
			bool full = (s->started && task.time >= s->start_time) ||
				    (parent && parent->full_ns && task.time >= parent->full_ns);
			struct vg_cover_tid *c = find_tid(s, (pid_t)task.tid);

			/* Created while its creator's events were still being
			 * opened: partly covered; left for the rescan. */
			if (!c && full)
				c = add_tid(s, (pid_t)task.tid, VG_COVER_INHERITED, (pid_t)task.ptid);
			if (c && c->how == VG_COVER_INHERITED && c->parent == 0)
				c->parent = (pid_t)task.ptid;   /* its EXIT was read first */
			if (c && c->how == VG_COVER_INHERITED && full)
				c->full_ns = task.time;
		} else if ((pid_t)task.pid == s->t->pid) {
			/* Rings are drained one CPU after the other: a short
			 * thread's EXIT (written on the CPU it ended on) can be
			 * read before its FORK (written on its creator's CPU).
			 * Only a covered thread writes an EXIT, so an unknown
			 * one is a thread created by a covered one whose FORK
			 * is still to come, and which has ended anyway. */
			struct vg_cover_tid *c = add_tid(s, (pid_t)task.tid, VG_COVER_INHERITED, 0);

			if (c)
				c->exited = true;
		}
		if (d->c && d->c->task)
			d->c->task(h, &task, d->c->arg);
		return 0;
	}
	if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		struct vg_perf_comm cm;

		if (vg_perf_parse_comm(h, &cm) && (pid_t)cm.pid == s->t->pid &&
		    !s->stats.exec_ns) {
			s->stats.exec_ns = record_time(s, h);
			if (!s->stats.exec_ns)
				s->stats.exec_ns = vg_perf_now();
			snprintf(s->stats.exec_comm, sizeof(s->stats.exec_comm), "%s", cm.comm);
		}
	}
	if (d->c && d->c->other)
		d->c->other(h, d->c->arg);
	return 0;
}

/* The time of any record of one of our events: a sample's TIME field
 * (after IDENTIFIER, IP, TID), or the sample_id trailer's (before ID,
 * STREAM_ID, CPU, IDENTIFIER) of any other record.  0 when unknown: such
 * a record is handled first, and counted as undecodable there. */
static uint64_t record_time(const struct vg_perf_set *s, const struct perf_event_header *h)
{
	const struct event *ev = NULL;
	uint64_t id, t = 0, st;
	size_t off;

	if (!vg_perf_record_identifier(h, &id) || !(ev = event_of(s, id)))
		return 0;
	st = s->slots[ev->slot].fmt.sample_type;
	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	if (h->type == PERF_RECORD_SAMPLE) {
		off = sizeof(*h) + 8 + (st & PERF_SAMPLE_IP ? 8 : 0) + (st & PERF_SAMPLE_TID ? 8 : 0);
	} else {
		size_t back = 8 + (st & PERF_SAMPLE_CPU ? 8 : 0) + (st & PERF_SAMPLE_STREAM_ID ? 8 : 0) +
			      (st & PERF_SAMPLE_ID ? 8 : 0) + 8;

		if (h->size < sizeof(*h) + back)
			return 0;
		off = h->size - back;
	}
	if (off + 8 > h->size)
		return 0;
	memcpy(&t, (const unsigned char *)h + off, 8);
	return t;
}

struct collect_ctx {
	struct vg_perf_set *s;
	int cpu_index;
};

static int collect_record(const struct perf_event_header *h, void *arg)
{
	struct collect_ctx *c = arg;
	struct vg_perf_set *s = c->s;

	if (vg_merge_add(&s->merge, record_time(s, h), c->cpu_index, h, h->size) < 0)
		s->stats.undecodable++;   /* dropped for lack of memory: a lower bound */
	return 0;
}

struct ordered_ctx {
	struct vg_perf_set *s;
	const struct vg_perf_consumer *c;
};

static void handle_ordered(const void *data, size_t len, int cpu_index, void *arg)
{
	const struct ordered_ctx *o = arg;
	struct drain_ctx d = { o->s, o->c, cpu_index };

	(void)len;
	handle_record(data, &d);
}

/* One ring's records, in order: handed out in place up to until; from the
 * first newer one on, queued in the merge for the next call (which then
 * merges, keeping the order). */
struct direct_ctx {
	struct drain_ctx d;
	uint64_t until;
	bool spilled;
	size_t handled;
};

static int direct_record(const struct perf_event_header *h, void *arg)
{
	struct direct_ctx *dc = arg;
	struct vg_perf_set *s = dc->d.s;
	uint64_t t = record_time(s, h);

	if (!dc->spilled && t <= dc->until) {
		dc->handled++;
		return handle_record(h, &dc->d);
	}
	dc->spilled = true;
	if (vg_merge_add(&s->merge, t, dc->d.cpu_index, h, h->size) < 0)
		s->stats.undecodable++;   /* dropped for lack of memory: a lower bound */
	return 0;
}

size_t vg_perf_set_drain_ordered(struct vg_perf_set *s, const struct vg_perf_consumer *c,
				 uint64_t until)
{
	struct collect_ctx cc = { s, 0 };
	struct ordered_ctx oc = { s, c };
	int only = -1, pending = 0;

	/* One ring with records and nothing held back: its records are in
	 * time order already (one CPU writes them in order), so they are
	 * handed out in place, without the copy into the merge's arena that
	 * cost vigil a seventh of its CPU at a million traps a second. */
	for (int ci = 0; ci < s->ncpus && s->merge.n == 0; ci++)
		if (s->rings[ci] && vg_ring_pending(s->rings[ci])) {
			only = ci;
			pending++;
		}
	if (s->merge.n == 0 && pending == 1) {
		struct direct_ctx dc = { { s, c, only }, until, false, 0 };

		vg_ring_drain(s->rings[only], direct_record, &dc);
		return dc.handled;
	}
	for (int ci = 0; ci < s->ncpus; ci++) {
		cc.cpu_index = ci;
		if (s->rings[ci])
			vg_ring_drain(s->rings[ci], collect_record, &cc);
	}
	return vg_merge_take(&s->merge, until, handle_ordered, &oc, &s->stats.undecodable);
}

size_t vg_perf_set_drain(struct vg_perf_set *s, const struct vg_perf_consumer *c)
{
	size_t total = 0;

	for (int ci = 0; ci < s->ncpus; ci++) {
		struct drain_ctx d = { s, c, ci };

		if (s->rings[ci])
			total += vg_ring_drain(s->rings[ci], handle_record, &d);
	}
	return total;
}

/* Threads of the process not yet covered (attached or announced by FORK). */
static int missing_tids(struct vg_perf_set *s, pid_t **out, size_t *n_out, struct vg_error *err)
{
	pid_t *tids;
	size_t n, k = 0;
	int r = vg_target_threads(s->t, &tids, &n, err);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (!find_tid(s, tids[i]))
			tids[k++] = tids[i];
	*out = tids;
	*n_out = k;
	return 0;
}

int vg_perf_set_attach(struct vg_perf_set *s, const struct vg_perf_consumer *c,
		       struct vg_error *err)
{
	bool first = true;

	if (s->n_slots == 0)
		return vg_error_set(err, -EINVAL, "internal: no perf event to open");
	for (;;) {
		pid_t *missing;
		size_t n;
		int r;

		vg_perf_set_drain(s, c);
		r = missing_tids(s, &missing, &n, err);
		if (r < 0)
			return vg_target_explain(s->t, r, err);
		if (n && !first) {
			/* A FORK record is written a little after the new thread
			 * shows in /proc: give it a moment, then keep only the
			 * threads of this scan that no FORK explained.  If none
			 * is left, every thread listed is covered, and any made
			 * later is made by a covered thread: setup is done
			 * (scanning /proc again would find the next new thread
			 * of a busy process and never end). */
			size_t k = 0;

			usleep(1000);
			vg_perf_set_drain(s, c);
			for (size_t i = 0; i < n; i++)
				if (!find_tid(s, missing[i]))
					missing[k++] = missing[i];
			n = k;
		}
		if (n == 0) {
			free(missing);
			break;
		}
		if (!first && ++s->stats.rescans > MAX_RESCANS) {
			free(missing);
			return vg_error_set(err, -EAGAIN, "pid %d creates threads faster than vigil can "
					    "attach to them (%u rescans)", (int)s->t->pid, MAX_RESCANS);
		}
		for (size_t i = 0; i < n; i++) {
			struct vg_cover_tid *ct;

			r = open_tid(s, missing[i], err);
			ct = add_tid(s, missing[i], first ? VG_COVER_SEEDED : VG_COVER_RESCAN, 0);
			if (!ct) {
				free(missing);
				return vg_error_set(err, -ENOMEM, "out of memory for thread list");
			}
			if (r == -ESRCH) {
				ct->exited = true;
				s->stats.exited_during_setup++;
				continue;
			}
			if (r < 0) {
				free(missing);
				return vg_target_explain(s->t, r, err);
			}
			ct->full_ns = vg_perf_now();
		}
		free(missing);
		first = false;
	}
	if (s->n_events == 0) {
		bool alive, changed;

		vg_target_recheck(s->t, &alive, &changed);
		return vg_error_set(err, -ESRCH, "pid %d has no thread left to watch%s", (int)s->t->pid,
				    alive ? "" : ": it exited");
	}
	s->start_time = vg_perf_now();
	s->started = true;
	return 0;
}

int vg_perf_set_wait(struct vg_perf_set *s, struct pollfd *extra, size_t n_extra, int timeout_ms)
{
	struct pollfd pfd[64 + 8];
	size_t n = 0;
	bool any_hup = false;
	int r;

	for (int ci = 0; ci < s->ncpus && n < 64; ci++) {
		if (s->ring_fd[ci] < 0)
			continue;
		if (s->ring_hup[ci]) {
			any_hup = true;
			continue;
		}
		pfd[n++] = (struct pollfd){ .fd = s->ring_fd[ci], .events = POLLIN };
	}
	for (size_t i = 0; i < n_extra && i < 8; i++) {
		extra[i].revents = 0;
		pfd[n + i] = extra[i];
	}
	/* A ring whose own thread exited polls as hung up for ever while
	 * other threads still write into it: poll the rest, and drain it on
	 * a short timer. */
	if (any_hup && (timeout_ms < 0 || timeout_ms > 20))
		timeout_ms = 20;
	r = poll(pfd, n + (n_extra < 8 ? n_extra : 8), timeout_ms);
	if (r < 0)
		return -errno;
	for (size_t i = 0, k = 0; i < (size_t)s->ncpus && k < n; i++) {
		if (s->ring_fd[i] < 0 || s->ring_hup[i])
			continue;
		if (pfd[k].revents & (POLLHUP | POLLERR))
			s->ring_hup[i] = true;
		k++;
	}
	for (size_t i = 0; i < n_extra && i < 8; i++)
		extra[i].revents = pfd[n + i].revents;
	return r;
}

int vg_perf_set_modify(struct vg_perf_set *s, unsigned slot, const struct perf_event_attr *attr,
		       struct vg_error *err)
{
	struct perf_event_attr a;

	if (slot >= s->n_slots)
		return vg_error_set(err, -EINVAL, "internal: no perf event slot %u (%zu in use)",
				    slot, s->n_slots);
	a = s->slots[slot].attr;
	a.bp_addr = attr->bp_addr;
	a.bp_len = attr->bp_len;
	a.bp_type = attr->bp_type;
	for (size_t i = 0; i < s->n_events; i++) {
		if (s->events[i].slot != slot)
			continue;
		if (ioctl(s->events[i].fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a) < 0) {
			int e = errno;
			struct vg_cover_tid *c = find_tid(s, s->events[i].tid);

			if (e == ESRCH || (c && c->exited))
				continue;
			return vg_error_set(err, -e, "cannot move the breakpoint of thread %d: %s",
					    (int)s->events[i].tid, strerror(e));
		}
	}
	s->slots[slot].attr = a;
	return 0;
}

int vg_perf_set_enable(struct vg_perf_set *s, bool on)
{
	int r = 0;

	for (size_t i = 0; i < s->n_events; i++)
		if (ioctl(s->events[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
			r = -errno;
	return r;
}

const struct vg_perf_stats *vg_perf_set_stats(const struct vg_perf_set *s)
{
	return &s->stats;
}

const struct vg_cover_tid *vg_perf_set_threads(const struct vg_perf_set *s, size_t *n)
{
	*n = s->n_tids;
	return s->tids;
}

uint64_t vg_perf_set_start_time(const struct vg_perf_set *s)
{
	return s->start_time;
}

int vg_perf_set_ncpus(const struct vg_perf_set *s)
{
	return s->ncpus;
}

size_t vg_perf_set_nevents(const struct vg_perf_set *s)
{
	return s->n_events;
}
