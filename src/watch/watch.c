/* watch.c - the watch session: see watch.h.  Validation, the self-test,
 * arming (one breakpoint or emulation slot per watched location), the run
 * loop and the results.  What a trap becomes (writer site, sample, value)
 * is sites.c; pointers followed and re-bound are follow.c; the three share
 * the session (session.h). */
#include "watch/watch.h"
#include "watch/session.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <asm/perf_regs.h>

#include "perf/uprobe.h"
#include "util/vec.h"

const char *vg_binding_name(enum vg_binding b)
{
	switch (b) {
	case VG_BIND_BOUND: return "bound";
	case VG_BIND_NULL: return "null_pointer";
	case VG_BIND_UNMAPPED: return "unmapped";
	case VG_BIND_UNREADABLE: return "unreadable";
	case VG_BIND_MISALIGNED: return "misaligned";
	case VG_BIND_FAILED: return "rebind_failed";
	}
	return "?";
}

/* ---- self-test ------------------------------------------------------ */

static volatile uint64_t selftest_cell __attribute__((aligned(8)));

int vg_watch_selftest(struct vg_error *err)
{
	struct perf_event_attr a = { 0 };
	uint64_t count = 0;
	int fd;

	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uint64_t)(uintptr_t)&selftest_cell;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOSPC)
			return vg_error_set(err, -ENOSPC, "no free hardware debug register in vigil itself");
		if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP)
			return vg_error_set(err, -EOPNOTSUPP, "this kernel has no hardware breakpoint "
					    "events (perf_event_open: %s)", strerror(e));
		return vg_error_set(err, -e, "cannot open a hardware breakpoint: %s", strerror(e));
	}
	for (int i = 0; i < 4; i++)
		selftest_cell = (uint64_t)i;
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = 0;
	close(fd);
	if (count == 0) {
		vg_error_set(err, -EOPNOTSUPP,
			     "hardware breakpoints do not fire on this machine: the kernel accepted "
			     "a test breakpoint on a variable of vigil's own and 4 writes to it "
			     "triggered none (a virtual machine that does not pass debug "
			     "registers through; gdb's hardware watchpoints fail here too)");
		vg_error_set_exit(err, VG_EXIT_PERM);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* ---- validation ----------------------------------------------------- */

static int check_location(const struct vg_watch_session *s, const struct vg_watch_request *q,
			  uint64_t addr, unsigned len, bool write_only, const char *what,
			  const struct vg_region **out, struct vg_error *err)
{
	const struct vg_region *r = vg_maps_find(s->maps, addr);

	if (!r)
		return vg_error_set(err, -EFAULT, "%s 0x%" PRIx64 " (%s) is not mapped in pid %d",
				    what, addr, q->input, (int)s->t->pid);
	if (addr % len) {
		unsigned fit = addr % 8 == 0 ? 8 : addr % 4 == 0 ? 4 : addr % 2 == 0 ? 2 : 1;

		return vg_error_set(err, -EINVAL,
				    "%s 0x%" PRIx64 " (%s) is not aligned to --len %u: x86 breakpoints "
				    "cover an aligned 1, 2, 4 or 8-byte range; watch 0x%" PRIx64
				    " --len %u (covers it), or 0x%" PRIx64 " --len %u", what, addr,
				    q->input, len, addr & ~(uint64_t)(len - 1), len, addr, fit);
	}
	if (addr + len > r->end)
		return vg_error_set(err, -EFAULT, "%s 0x%" PRIx64 " + %u runs past the end of its region",
				    what, addr, len);
	if (write_only && !r->writable)
		return vg_error_set(err, -EINVAL,
				    "%s 0x%" PRIx64 " (%s) is in a read-only region (%s %s): no "
				    "instruction can write it; --access rw watches reads too", what, addr,
				    q->input, r->perms, r->path[0] ? r->path : vg_region_kind_name(r->kind));
	*out = r;
	return 0;
}

static int copy_region(struct vg_region *dst, const struct vg_region *src)
{
	*dst = *src;
	dst->state = NULL;
	dst->path = strdup(src->path);
	return dst->path ? 0 : -ENOMEM;
}

int vg_watch_new(struct vg_target *t, struct vg_symbolizer *sym, const struct vg_maps *maps,
		 struct vg_mem *mem, const struct vg_watch_request *reqs, size_t n,
		 const struct vg_watch_options *opt, struct vg_watch_session **out,
		 struct vg_error *err)
{
	struct vg_watch_session *s;
	unsigned need = 0;

	*out = NULL;
	for (size_t i = 0; i < n; i++)
		need += reqs[i].follow ? 2 + (unsigned)reqs[i].n_mid : 1;
	if (n == 0)
		return vg_error_set(err, -EINVAL, "nothing to watch");
	if (need > VG_WATCH_MAX_SLOTS)
		return vg_error_set(err, -EINVAL,
				    "%zu watch%s need %u hardware debug registers; x86 has 4 (DR0-DR3): "
				    "a plain watch takes 1, a --follow takes 2 (pointer slot and leaf), "
				    "an expression 1 per pointer hop + 1 for the leaf",
				    n, n == 1 ? "" : "es", need);
	s = calloc(1, sizeof(*s));
	if (!s || !(s->w = calloc(n, sizeof(*s->w)))) {
		free(s);
		return vg_error_set(err, -ENOMEM, "out of memory for the watch");
	}
	s->t = t;
	s->sym = sym;
	s->maps = maps;
	s->mem = mem;
	s->opt = *opt;
	s->n = n;
	s->slots_used = need;
	for (size_t i = 0; i < n; i++) {
		struct vg_watch *w = &s->w[i];
		const struct vg_region *r = NULL;
		struct vg_sym_result res;
		struct vg_error e2 = { 0 };
		int rc;

		w->req = reqs[i];
		w->len = reqs[i].follow ? 8 : reqs[i].len ? reqs[i].len : opt->len;
		w->rw = opt->rw;
		w->slot = w->leaf_slot = -1;
		rc = check_location(s, &reqs[i], reqs[i].addr, w->len, !opt->rw && !reqs[i].follow,
				    reqs[i].follow ? "pointer slot" : "address", &r, err);
		if (rc == 0 && reqs[i].follow && !r->writable)
			rc = vg_error_set(err, -EINVAL, "pointer slot 0x%" PRIx64 " (%s) is in a "
					  "read-only region (%s): it cannot be re-pointed",
					  reqs[i].addr, reqs[i].input, r->perms);
		if (rc == 0 && copy_region(&w->region, r) < 0)
			rc = vg_error_set(err, -ENOMEM, "out of memory");
		if (rc < 0) {
			vg_watch_free(s);
			return rc;
		}
		w->initial_ok = watch_read_value(mem, w->req.addr, w->len, w->initial);
		if (vg_sym_lookup(sym, w->req.addr, &res, &e2) == 0 && res.image) {
			w->has_static = true;
			w->static_va = res.static_address;
			w->image = res.image_path;
		}
		if (reqs[i].follow) {
			uint64_t p = 0;
			enum vg_binding b;

			uint64_t mid_addr[VG_WATCH_MAX_SLOTS - 2];

			w->len = reqs[i].len ? reqs[i].len : opt->len;   /* the leaf's; the slot itself is 8 */
			b = watch_resolve_leaf(s, w, NULL, &p, mid_addr);
			for (size_t k = 0; k < w->req.n_mid; k++) {
				w->mid[k].slot = -1;
				w->mid[k].addr = mid_addr[k];
				w->mid[k].bound = mid_addr[k] != PARK_ADDR;
			}
			if (watch_add_generation(w, p, b, 0) < 0) {
				vg_watch_free(s);
				return vg_error_set(err, -ENOMEM, "out of memory");
			}
		}
	}
	*out = s;
	return 0;
}

/* ---- arming --------------------------------------------------------- */

static void base_attr(const struct vg_watch_session *s, struct perf_event_attr *a, bool root)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN |
			 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	/* Every trap is verified against the registers after it: always
	 * sampled, whatever --regs says.  At a kernel trap, the kernel's own
	 * registers show how far its string copy has come (attribute.h). */
	a->sample_regs_user = REGS_ALL;
	if (s->kernel_visible) {
		a->sample_type |= PERF_SAMPLE_REGS_INTR;
		a->sample_regs_intr = REGS_STRING;
	}
	/* One CFI step (a kernel write's call site) needs the top of the
	 * stack; --stacks unwinds it all by CFI (the kernel's user callchain
	 * follows frame pointers, wrong through Debian's libc). */
	a->sample_stack_user = s->opt.stacks ? STACK_DUMP_STACKS : STACK_DUMP;
	a->exclude_callchain_user = 1;
	a->exclude_kernel = !s->kernel_visible;
	a->exclude_hv = 1;
	if (root) {
		/* A pointer store must re-bind the leaf at once. */
		a->wakeup_events = 1;
	} else {
		/* Batch wake-ups: one per quarter ring, not one per write. */
		a->watermark = 1;
		a->wakeup_watermark = RING_PAGES * 4096 / 4;
	}
}

static int map_slot(struct vg_watch_session *s, int slot, size_t watch, enum role role)
{
	if (slot < 0)
		return slot;
	if (VG_GROW(s->map, s->cap_map, (size_t)slot + 1) < 0)
		return -ENOMEM;
	s->map[slot] = (struct slot_map){ watch, role, 0 };
	if ((size_t)slot + 1 > s->n_map)
		s->n_map = (size_t)slot + 1;
	return slot;
}

/* One uprobe slot per FILE:OFFSET of group (emulation). */
static int add_emulated(struct vg_watch_session *s, const char *group, size_t watch,
			enum role role, struct vg_error *err)
{
	char path[4096];
	const char *p = group;
	int first = -1, type, retprobe_bit;

	if (vg_uprobe_pmu(&type, &retprobe_bit, NULL) < 0)
		return vg_error_set(err, -EOPNOTSUPP, "VIGIL_WATCH_EMULATE_TRAPS: no uprobe PMU");
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *colon = memrchr(p, ':', len);
		struct perf_event_attr a;
		char *tail;
		uint64_t off;
		int slot;

		if (!colon || (size_t)(colon - p) >= sizeof(path))
			return vg_error_set(err, -EINVAL, "VIGIL_WATCH_EMULATE_TRAPS: bad FILE:OFFSET '%.*s'",
					    (int)len, p);
		memcpy(path, p, (size_t)(colon - p));
		path[colon - p] = '\0';
		off = strtoull(colon + 1, &tail, 0);
		if (tail == colon + 1 || tail != p + len)
			return vg_error_set(err, -EINVAL, "VIGIL_WATCH_EMULATE_TRAPS: bad offset in '%.*s'",
					    (int)len, p);
		base_attr(s, &a, role == ROLE_ROOT || role == ROLE_MID);
		a.type = (uint32_t)type;
		a.config2 = off;
		/* perf_event_open reads the path itself, at attach: it
		 * must live until then (freed with the session). */
		if (s->n_paths < MAX_EMULATED)
			s->paths[s->n_paths] = strdup(path);
		if (s->n_paths >= MAX_EMULATED || !s->paths[s->n_paths])
			return vg_error_set(err, -ENOMEM, "VIGIL_WATCH_EMULATE_TRAPS: too many sites");
		a.config1 = (uint64_t)(uintptr_t)s->paths[s->n_paths++];
		slot = vg_perf_set_add(s->set, &a, err);
		if (map_slot(s, slot, watch, role) < 0)
			return slot < 0 ? slot : vg_error_set(err, -ENOMEM, "out of memory");
		if (first < 0)
			first = slot;
		p += len + (end ? 1 : 0);
	}
	if (first < 0)
		return vg_error_set(err, -EINVAL, "VIGIL_WATCH_EMULATE_TRAPS: empty group");
	return first;
}

static int add_breakpoint(struct vg_watch_session *s, uint64_t addr, unsigned len, bool rw,
			  size_t watch, enum role role, struct vg_error *err)
{
	struct perf_event_attr a;

	base_attr(s, &a, role == ROLE_ROOT || role == ROLE_MID);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = rw ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
	a.bp_addr = addr;
	a.bp_len = len;
	return map_slot(s, vg_perf_set_add(s->set, &a, err), watch, role);
}

/* The next ';'-separated group of the emulation list. */
static char *next_group(char **cursor)
{
	char *g = *cursor, *semi;

	if (!g || !*g)
		return NULL;
	semi = strchr(g, ';');
	if (semi) {
		*semi = '\0';
		*cursor = semi + 1;
	} else {
		*cursor = g + strlen(g);
	}
	return g;
}

/* Which mid hop the slots from first on belong to (an emulated group
 * maps several). */
static void set_hop(struct vg_watch_session *s, int first, size_t hop)
{
	for (size_t j = (size_t)first; j < s->n_map; j++)
		if (s->map[j].role == ROLE_MID)
			s->map[j].hop = (unsigned)hop;
}

static int build_slots(struct vg_watch_session *s, struct vg_error *err)
{
	const char *env = s->opt.emulate_traps;
	char *copy = env && *env ? strdup(env) : NULL, *cursor = copy;
	int r = 0;

	for (size_t i = 0; i < s->n && r >= 0; i++) {
		struct vg_watch *w = &s->w[i];
		enum role first = w->req.follow ? ROLE_ROOT : ROLE_PLAIN;

		if (s->emulated) {
			char *g = next_group(&cursor);

			r = g ? add_emulated(s, g, i, first, err)
			      : vg_error_set(err, -EINVAL, "VIGIL_WATCH_EMULATE_TRAPS: no group for watch %zu", i + 1);
			if (r >= 0)
				w->slot = r;
			for (size_t k = 0; r >= 0 && w->req.follow && k < w->req.n_mid; k++) {
				g = next_group(&cursor);
				r = g ? add_emulated(s, g, i, ROLE_MID, err)
				      : vg_error_set(err, -EINVAL, "VIGIL_WATCH_EMULATE_TRAPS: no group for hop %zu of watch %zu", k + 2, i + 1);
				if (r >= 0) {
					w->mid[k].slot = r;
					set_hop(s, r, k);
				}
			}
			if (r >= 0 && w->req.follow) {
				g = next_group(&cursor);
				r = g ? add_emulated(s, g, i, ROLE_LEAF, err)
				      : vg_error_set(err, -EINVAL, "VIGIL_WATCH_EMULATE_TRAPS: no leaf group for watch %zu", i + 1);
				if (r >= 0)
					w->leaf_slot = r;
			}
			continue;
		}
		r = w->slot = add_breakpoint(s, w->req.addr, w->req.follow ? 8 : w->len,
					     w->req.follow ? false : w->rw, i, first, err);
		for (size_t k = 0; r >= 0 && w->req.follow && k < w->req.n_mid; k++) {
			r = w->mid[k].slot = add_breakpoint(s, w->mid[k].addr, 8, false, i, ROLE_MID, err);
			if (r >= 0)
				set_hop(s, r, k);
		}
		if (r >= 0 && w->req.follow) {
			const struct vg_watch_generation *g = &w->gens[0];

			r = w->leaf_slot = add_breakpoint(s, g->state == VG_BIND_BOUND ? g->leaf_addr
							  : PARK_ADDR, w->len, w->rw, i, ROLE_LEAF, err);
		}
	}
	free(copy);
	return r < 0 ? r : 0;
}

static void on_sample(const struct vg_perf_hit *hit, void *arg);

int vg_watch_arm(struct vg_watch_session *s, struct vg_error *err)
{
	struct vg_perf_consumer c = { on_sample, NULL, s, NULL };
	int r;

	s->emulated = s->opt.emulate_traps && *s->opt.emulate_traps;
	/* no_selftest (tests only): arm real breakpoints even where they do
	 * not fire, to test what the kernel refuses (ENOSPC). */
	if (!s->emulated && !s->opt.no_selftest) {
		r = vg_watch_selftest(err);
		if (r < 0)
			return r;
	}
	/* Kernel writes on the process's behalf (read(2) into the buffer)
	 * trap in kernel mode: seen only without exclude_kernel, which
	 * perf_event_paranoid may refuse; then watch user writes only. */
	for (int attempt = 0; attempt < 2; attempt++) {
		s->kernel_visible = attempt == 0;
		s->n_map = 0;
		s->set = vg_perf_set_free(s->set);
		r = vg_perf_set_new(s->t, RING_PAGES, &s->set, err);
		if (r == 0 && s->emulated)
			vg_perf_set_no_inherit(s->set);
		if (r == 0)
			r = build_slots(s, err);
		if (r == 0)
			r = vg_perf_set_attach(s->set, &c, err);
		if (r == 0 || (r != -EACCES && r != -EPERM) || attempt == 1)
			break;
		vg_error_clear(err);
	}
	if (r < 0)
		return r;
	s->armed = true;
	s->start_ns = vg_perf_set_start_time(s->set);
	s->n_events = vg_perf_set_nevents(s->set);
	s->ncpus = vg_perf_set_ncpus(s->set);
	for (size_t i = 0; i < s->n; i++) {
		struct vg_watch *w = &s->w[i];

		if (w->n_gens)
			w->gens[0].bound_ns = s->start_ns;
		/* The initial value opens the counted window: read it now that
		 * setup has ended, not before arming (writes during setup are
		 * setup_hits, outside the counts). */
		else
			w->initial_ok = watch_read_value(s->mem, w->req.addr, w->len, w->initial);
	}
	return 0;
}

static void add_reason(struct vg_watch_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_reason(struct vg_watch_session *s, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;

	if (s->n_reasons >= MAX_REASONS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (text)
		s->reasons[s->n_reasons++] = text;
}

static void on_sample(const struct vg_perf_hit *hit, void *arg)
{
	struct vg_watch_session *s = arg;
	const struct vg_perf_sample *smp = hit->sample;
	struct slot_map m;
	struct vg_watch *w;

	if (hit->slot >= s->n_map)
		return;
	m = s->map[hit->slot];
	w = &s->w[m.watch];
	if (hit->before_start) {
		if (m.role == ROLE_LEAF)
			w->leaf.setup_hits++;
		else if (m.role == ROLE_MID)
			w->mid[m.hop].log.setup_hits++;
		else
			w->log.setup_hits++;
		return;
	}
	if (s->stop == VG_STOP_MAX_EVENTS ||
	    (s->opt.max_events && s->accepted_total >= s->opt.max_events)) {
		if (m.role == ROLE_LEAF)
			w->leaf.after_stop++;
		else if (m.role == ROLE_MID)
			w->mid[m.hop].log.after_stop++;
		else
			w->log.after_stop++;
		return;
	}
	s->accepted_total++;
	if (m.role == ROLE_ROOT) {
		watch_record(s, &w->log, smp, w->req.addr, 8, (unsigned)(w->n_gens ? w->n_gens - 1 : 0));
		const struct vg_watch_value *v = &w->log.last_value;
		/* The value this very sample stored, when the registers say it. */
		bool known = w->log.has_last_value && v->kind != VG_VALUE_UNKNOWN && v->width == 8 &&
			     w->log.n_samples && w->log.samples[w->log.n_samples - 1].time_ns == smp->time;

		watch_rebind(s, w, smp->time, known ? &v->value : NULL);
	} else if (m.role == ROLE_MID) {
		/* A pointer inside the chain: everything after it is re-read. */
		watch_record(s, &w->mid[m.hop].log, smp, w->mid[m.hop].addr, 8,
			     (unsigned)(w->n_gens ? w->n_gens - 1 : 0));
		watch_rebind(s, w, smp->time, NULL);
	} else if (m.role == ROLE_LEAF) {
		struct vg_watch_generation *g = watch_generation_of(w, smp->time, smp->addr, s->emulated);

		if (g)
			g->hits++;
		watch_record(s, &w->leaf, smp, g ? g->leaf_addr : 0, w->len, g ? g->index : 0);
	} else {
		watch_record(s, &w->log, smp, w->req.addr, w->len, 0);
	}
	if (s->opt.max_events && s->accepted_total >= s->opt.max_events)
		s->stop = VG_STOP_MAX_EVENTS;
}

/* ---- running -------------------------------------------------------- */

static void note_lower_bounds(struct vg_watch_session *s)
{
	const struct vg_perf_stats *st = vg_perf_set_stats(s->set);

	if (st->lost)
		add_reason(s, "%" PRIu64 " samples were lost: the ring was full (%" PRIu64
			   " PERF_RECORD_LOST records)", st->lost, st->lost_records);
	if (st->throttled)
		add_reason(s, "the kernel throttled the events %" PRIu64 " times "
			   "(kernel.perf_event_max_sample_rate): writes meanwhile were not sampled",
			   st->throttled);
	if (st->undecodable)
		add_reason(s, "%" PRIu64 " records could not be decoded", st->undecodable);
	for (size_t i = 0; i < s->n; i++)
		if (s->w[i].log.unattributed + s->w[i].leaf.unattributed)
			add_reason(s, "watch %zu: %" PRIu64 " traps could not be attributed to a write "
				   "(out of memory): writes and sites are short", i + 1,
				   s->w[i].log.unattributed + s->w[i].leaf.unattributed);
	if (st->exec_ns)
		add_reason(s, "the process called exec() (new program '%s') %.3f s into the watch: "
			   "the watch stopped there, writes of the new program are not counted",
			   st->exec_comm, st->exec_ns > s->start_ns ?
			   (double)(st->exec_ns - s->start_ns) / 1e9 : 0.0);
	if (s->emulated)
		add_reason(s, "uprobe emulation: threads created after setup are not covered "
			   "(an inherited uprobe PMU event makes the target's clone fail on this "
			   "kernel)");
	if (!s->kernel_visible)
		add_reason(s, "writes by the kernel on the process's behalf (read(2) into the "
			   "location) are not seen: kernel samples were refused "
			   "(kernel.perf_event_paranoid)");
	for (size_t i = 0; i < s->n; i++) {
		struct vg_watch *w = &s->w[i];
		uint64_t worst = 0;

		if (!w->req.follow)
			continue;
		for (size_t g = 1; g < w->n_gens; g++)
			if (w->gens[g].bound_ns > w->gens[g].pointer_written_ns &&
			    w->gens[g].bound_ns - w->gens[g].pointer_written_ns > worst)
				worst = w->gens[g].bound_ns - w->gens[g].pointer_written_ns;
		if (w->n_gens > 1 && !s->emulated)
			add_reason(s, "watch %zu: leaf writes between a pointer store and the re-bind "
				   "(at most %" PRIu64 " us here) are not seen", i + 1, worst / 1000);
		if (w->rebind_failures)
			add_reason(s, "watch %zu: %u re-binds failed: %s", i + 1, w->rebind_failures,
				   w->rebind_error);
	}
}

struct run {
	struct vg_watch_session *s;
	struct vg_perf_consumer c;
	void (*progress)(const struct vg_watch_session *s, void *arg);
	void *arg;
};

static void run_wait(void *arg, struct pollfd *extra, size_t n, int timeout_ms)
{
	struct run *r = arg;

	vg_perf_set_wait(r->s->set, extra, n, timeout_ms);
}

static enum vg_stop run_drain(void *arg)
{
	struct run *r = arg;

	/* In time order: --max-events takes the first N hits even when the
	 * thread moved between CPUs (rings are per CPU). */
	vg_perf_set_drain_ordered(r->s->set, &r->c, vg_perf_now());
	if (r->s->stop != VG_STOP_NONE)
		return r->s->stop;
	/* exec(): another program now runs at the watched addresses. */
	if (vg_perf_set_stats(r->s->set)->exec_ns)
		return VG_STOP_TARGET_EXEC;
	return VG_STOP_NONE;
}

static void run_tick(void *arg, uint64_t now)
{
	struct run *r = arg;

	(void)now;
	r->progress(r->s, r->arg);
}

int vg_watch_run(struct vg_watch_session *s, int stop_fd,
		 void (*progress)(const struct vg_watch_session *s, void *arg), void *arg,
		 struct vg_error *err)
{
	struct run r = { s, { on_sample, NULL, s, NULL }, progress, arg };
	/* A root breakpoint wakes the loop at once (wakeup_events 1); leaf
	 * samples are batched, drained at least every 200 ms. */
	struct vg_observer o = {
		.arg = &r, .wait = run_wait, .drain = run_drain,
		.tick = progress ? run_tick : NULL, .tick_ns = 1000000000ull, .max_wait_ms = 200,
	};

	if (!s->armed)
		return vg_error_set(err, -EINVAL, "internal: watch not armed");
	s->stop = vg_observe(&o, s->t, s->start_ns, s->opt.duration_ms, stop_fd, &s->end_ns);
	/* What the kernel wrote before the stop is still in the rings. */
	vg_perf_set_drain_ordered(s->set, &r.c, UINT64_MAX);
	return 0;
}

static int cmp_sample_time(const void *a, const void *b)
{
	const struct vg_watch_sample *x = a, *y = b;

	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

void vg_watch_disarm(struct vg_watch_session *s)
{
	bool alive, changed;

	if (!s || !s->set)
		return;
	vg_perf_set_enable(s->set, false);
	note_lower_bounds(s);
	s->set_stats = *vg_perf_set_stats(s->set);
	s->n_threads = 0;
	{
		size_t n;
		const struct vg_cover_tid *t = vg_perf_set_threads(s->set, &n);

		s->threads = malloc(n * sizeof(*t) + 1);
		if (s->threads) {
			memcpy(s->threads, t, n * sizeof(*t));
			s->n_threads = n;
		}
	}
	s->set = vg_perf_set_free(s->set);
	if (!s->end_ns)
		s->end_ns = vg_perf_now();
	vg_target_recheck(s->t, &alive, &changed);
	if (s->set_stats.exec_ns) {
		s->t->exec_seen = true;   /* the report's process_changed */
		changed = true;           /* no latest value: another program's memory */
	}
	for (size_t i = 0; i < s->n; i++) {
		struct vg_watch *w = &s->w[i];

		/* Rings are drained CPU by CPU: the timeline is merged here. */
		if (w->log.n_samples > 1)
			qsort(w->log.samples, w->log.n_samples, sizeof(*w->log.samples), cmp_sample_time);
		if (w->leaf.n_samples > 1)
			qsort(w->leaf.samples, w->leaf.n_samples, sizeof(*w->leaf.samples), cmp_sample_time);
		for (size_t k = 0; k < w->req.n_mid; k++)
			if (w->mid[k].log.n_samples > 1)
				qsort(w->mid[k].log.samples, w->mid[k].log.n_samples,
				      sizeof(*w->mid[k].log.samples), cmp_sample_time);
		/* A dead process has no latest value: a read would only find
		 * the file's bytes behind a private mapping. */
		w->latest_ok = alive && !changed && watch_read_value(s->mem, w->req.addr, w->req.follow ? 8 : w->len, w->latest);
	}
}

static void log_free(struct vg_watch_log *l)
{
	vg_attributor_free(l->attr);
	for (size_t i = 0; i < l->n_samples; i++)
		free(l->samples[i].callchain);
	free(l->samples);
	free(l->sites);
}

struct vg_watch_session *vg_watch_free(struct vg_watch_session *s)
{
	if (!s)
		return NULL;
	vg_watch_disarm(s);
	for (size_t i = 0; i < s->n; i++) {
		free(s->w[i].region.path);
		free(s->w[i].gens);
		log_free(&s->w[i].log);
		log_free(&s->w[i].leaf);
		for (size_t k = 0; k < s->w[i].req.n_mid; k++)
			log_free(&s->w[i].mid[k].log);
	}
	vg_unwinder_free(s->unwinder);
	for (size_t i = 0; i < s->n_reasons; i++)
		free(s->reasons[i]);
	for (size_t i = 0; i < s->n_paths; i++)
		free(s->paths[i]);
	free(s->threads);
	free(s->fs_cache);
	free(s->map);
	free(s->w);
	free(s);
	return NULL;
}

struct vg_watch *vg_watch_at(const struct vg_watch_session *s, size_t i)
{
	return i < s->n ? &s->w[i] : NULL;
}

size_t vg_watch_count(const struct vg_watch_session *s)
{
	return s->n;
}

enum vg_stop vg_watch_stop_reason(const struct vg_watch_session *s)
{
	return s->stop;
}

uint64_t vg_watch_elapsed_ms(const struct vg_watch_session *s)
{
	return s->end_ns > s->start_ns && s->start_ns ? (s->end_ns - s->start_ns) / 1000000 : 0;
}

const struct vg_perf_stats *vg_watch_perf_stats(const struct vg_watch_session *s)
{
	return s->set ? vg_perf_set_stats(s->set) : &s->set_stats;
}

const struct vg_cover_tid *vg_watch_threads(const struct vg_watch_session *s, size_t *n)
{
	if (s->set)
		return vg_perf_set_threads(s->set, n);
	*n = s->n_threads;
	return s->threads;
}

bool vg_watch_emulated(const struct vg_watch_session *s)
{
	return s->emulated;
}

bool vg_watch_kernel_visible(const struct vg_watch_session *s)
{
	return s->kernel_visible;
}

const char *const *vg_watch_lower_bound_reasons(const struct vg_watch_session *s)
{
	return (const char *const *)s->reasons;
}

uint64_t vg_watch_start_ns(const struct vg_watch_session *s)
{
	return s->start_ns;
}

size_t vg_watch_perf_events(const struct vg_watch_session *s, int *ncpus)
{
	*ncpus = s->ncpus;
	return s->n_events;
}

unsigned vg_watch_slots_used(const struct vg_watch_session *s)
{
	return s->slots_used;
}
