/* follow.c - pointers followed by a watch (--follow P+OFF, or the chain
 * of an expression a->b->c.d): the leaf's binding from the slots' values,
 * generations, and moving the hop and leaf breakpoints when a slot is
 * written (PERF_EVENT_IOC_MODIFY_ATTRIBUTES).
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
	for (size_t k = 0; k < w->req.n_mid; k++)
		g->mid_addr[k] = w->mid[k].bound ? w->mid[k].addr : 0;
	w->n_gens++;
	w->binding = state;
	w->pointer = pointer;
	return 0;
}

/* Where the leaf is: the root slot's value (known: from the sample that
 * wrote it, when a register or immediate store says it, which saves a
 * read on the re-bind path: a leaf write until the breakpoint moves is not
 * seen), then each mid hop's slot and value, then *last + offset. */
enum vg_binding watch_resolve_leaf(struct vg_watch_session *s, struct vg_watch *w,
				    const uint64_t *known, uint64_t *pointer, uint64_t *mid_addr)
{
	unsigned char buf[8], probe[8];

	for (size_t k = 0; k < w->req.n_mid; k++)
		mid_addr[k] = PARK_ADDR;
	if (known) {
		*pointer = *known;
	} else {
		if (!watch_read_value(s->mem, w->req.addr, 8, buf))
			return VG_BIND_UNREADABLE;
		*pointer = watch_le_value(buf, 8);
	}
	for (size_t k = 0; k < w->req.n_mid; k++) {
		uint64_t slot = *pointer + w->req.mid_offsets[k];

		if (*pointer == 0)
			return VG_BIND_NULL;
		if (slot % 8)
			return VG_BIND_MISALIGNED;
		if (!watch_read_value(s->mem, slot, 8, buf))
			return VG_BIND_UNMAPPED;
		mid_addr[k] = slot;
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

/* Move one breakpoint (not under emulation: the uprobes are where they
 * are); false with the kernel's sentence kept when it refused. */
static bool move_slot(struct vg_watch_session *s, struct vg_watch *w, int slot, uint64_t addr,
		      unsigned len, bool rw)
{
	struct perf_event_attr a = { 0 };
	struct vg_error e = { 0 };

	if (s->emulated || slot < 0)
		return true;
	a.bp_type = rw ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
	a.bp_len = len;
	a.bp_addr = addr;
	if (vg_perf_set_modify(s->set, (unsigned)slot, &a, &e) < 0) {
		w->rebind_failures++;
		snprintf(w->rebind_error, sizeof(w->rebind_error), "%s", e.msg);
		return false;
	}
	return true;
}

/* A pointer of the chain was written: take the root's new value (from the
 * sample, or re-read it), walk the hops after it, move each one whose slot
 * changed, then the leaf.  Hops first: a write through the new path to a
 * hop slot is seen as soon as possible.  Then the chain is read once more:
 * a pointer stored into a hop's new slot before its breakpoint moved would
 * otherwise leave the chain bound to a stale path until the next write
 * (bounded: a target re-pointing faster than this loop is caught by the
 * next trap). */
void watch_rebind(struct vg_watch_session *s, struct vg_watch *w, uint64_t written_ns,
		   const uint64_t *known)
{
	for (int pass = 0; pass < 3; pass++) {
		uint64_t p = 0, mid_addr[VG_WATCH_MAX_SLOTS - 2];
		enum vg_binding b = watch_resolve_leaf(s, w, pass == 0 ? known : NULL, &p, mid_addr);
		bool same = b == w->binding && p == w->pointer;

		for (size_t k = 0; k < w->req.n_mid; k++)
			same = same && mid_addr[k] == w->mid[k].addr;
		if (same)
			return;   /* rewritten with the same value: nothing moved */
		for (size_t k = 0; k < w->req.n_mid; k++) {
			if (mid_addr[k] == w->mid[k].addr)
				continue;
			if (!move_slot(s, w, w->mid[k].slot, mid_addr[k], 8, false))
				b = VG_BIND_FAILED;
			w->mid[k].addr = mid_addr[k];
			w->mid[k].bound = mid_addr[k] != PARK_ADDR;
		}
		if (!move_slot(s, w, w->leaf_slot, b == VG_BIND_BOUND ? p + w->req.leaf_offset : PARK_ADDR,
			       w->len, w->rw))
			b = VG_BIND_FAILED;
		watch_add_generation(w, p, b, written_ns);
		if (w->req.n_mid == 0 || b == VG_BIND_FAILED)
			return;   /* one slot: its own breakpoint saw any later store */
	}
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

