/* follow.c - pointers followed by a watch (--follow P+OFF): the leaf's
 * binding from the slot's value, generations, and moving the leaf
 * breakpoint when the slot is written (PERF_EVENT_IOC_MODIFY_ATTRIBUTES).
 * The blind window between a pointer store and the move is what the
 * report's lower-bound reason and rebind_latency_ns measure; the move
 * takes the stored value from the sample when it can, to keep it short. */
#include "watch/session.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <stdio.h>
#include <string.h>

#include "util/vec.h"

bool watch_read_value(struct vg_mem *mem, uint64_t addr, unsigned len, unsigned char *out)
{
	struct vg_mem_result res;
	struct vg_error e = { 0 };

	memset(out, 0, 8);
	return vg_mem_read(mem, addr, out, len, &res, &e) == 0;
}

uint64_t watch_le_value(const unsigned char *p, unsigned len)
{
	uint64_t v = 0;

	for (unsigned i = len; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

int watch_add_generation(struct vg_watch *w, uint64_t pointer, enum vg_binding state,
			  uint64_t written_ns)
{
	struct vg_watch_generation *g;

	if (VG_GROW(w->gens, w->cap_gens, w->n_gens + 1) < 0)
		return -ENOMEM;
	g = &w->gens[w->n_gens];
	*g = (struct vg_watch_generation){
		.index = (unsigned)w->n_gens, .pointer = pointer,
		.leaf_addr = pointer + w->req.leaf_offset, .state = state,
		.bound_ns = vg_perf_now(), .pointer_written_ns = written_ns,
	};
	w->n_gens++;
	w->binding = state;
	w->pointer = pointer;
	return 0;
}

/* Where *slot + offset is, or why the leaf cannot be bound. */
/* known: the slot's new value when the sample that wrote it says it (a
 * register or immediate store), which saves a read on the re-bind path:
 * a leaf write until the breakpoint moves is not seen. */
enum vg_binding watch_resolve_leaf(struct vg_watch_session *s, struct vg_watch *w,
				    const uint64_t *known, uint64_t *pointer)
{
	unsigned char buf[8], probe[8];

	if (known) {
		*pointer = *known;
	} else {
		if (!watch_read_value(s->mem, w->req.addr, 8, buf))
			return VG_BIND_UNREADABLE;
		*pointer = watch_le_value(buf, 8);
	}
	if (*pointer == 0)
		return VG_BIND_NULL;
	if ((*pointer + w->req.leaf_offset) % w->len)
		return VG_BIND_MISALIGNED;
	if (!watch_read_value(s->mem, *pointer + w->req.leaf_offset, w->len, probe))
		return VG_BIND_UNMAPPED;
	return VG_BIND_BOUND;
}

/* The pointer slot was written: take its new value (from the sample, or
 * re-read it) and move the leaf. */
void watch_rebind(struct vg_watch_session *s, struct vg_watch *w, uint64_t written_ns,
		   const uint64_t *known)
{
	uint64_t p = 0;
	enum vg_binding b = watch_resolve_leaf(s, w, known, &p);
	struct vg_error e = { 0 };

	if (b == w->binding && p == w->pointer)
		return;   /* rewritten with the same value: nothing moved */
	if (!s->emulated && w->leaf_slot >= 0) {
		struct perf_event_attr a = { 0 };

		a.bp_type = w->rw ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
		a.bp_len = w->len;
		a.bp_addr = b == VG_BIND_BOUND ? p + w->req.leaf_offset : PARK_ADDR;
		if (vg_perf_set_modify(s->set, (unsigned)w->leaf_slot, &a, &e) < 0) {
			w->rebind_failures++;
			snprintf(w->rebind_error, sizeof(w->rebind_error), "%s", e.msg);
			b = VG_BIND_FAILED;
		}
	}
	watch_add_generation(w, p, b, written_ns);
}

/* The generation a leaf write at time t to addr belongs to. */
struct vg_watch_generation *watch_generation_of(struct vg_watch *w, uint64_t t, uint64_t addr,
						 bool emulated)
{
	for (size_t i = w->n_gens; i-- > 0;) {
		struct vg_watch_generation *g = &w->gens[i];

		if (g->bound_ns > t && i > 0)
			continue;
		if (!emulated && addr && g->leaf_addr != addr && g->state == VG_BIND_BOUND) {
			/* The breakpoint was elsewhere then: an older binding. */
			for (size_t j = i; j-- > 0;)
				if (w->gens[j].leaf_addr == addr)
					return &w->gens[j];
		}
		return g;
	}
	return w->n_gens ? &w->gens[0] : NULL;
}

