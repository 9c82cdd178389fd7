/* wall.c - the wall-clock profile of vigil stack --every (wall.h). */
#include "stack/wall.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_IDS (VG_STACK_MAX_FRAMES * 4 + 1)
#define MAX_INLINE VG_DW_MAX_FRAMES

static const struct {
	char letter;
	const char *name;
} states[8] = {
	{ 'R', "running" }, { 'S', "sleeping" }, { 'D', "disk sleep" },
	{ 'T', "stopped" }, { 't', "traced" }, { 'I', "idle" },
	{ 'Z', "zombie" }, { 0, "unknown state" },
};

const char *vg_stack_wall_state_name(size_t i)
{
	return i < 8 ? states[i].name : "unknown state";
}

/* The leaf frames met so far: each text gets a pseudo address (its index
 * + 1, below any code) under which the trie interns it once. */
struct leaves {
	char **text;
	size_t n, cap;
};

static size_t state_index(char c)
{
	for (size_t i = 0; i < 7; i++)
		if (states[i].letter == c)
			return i;
	return 7;
}

static uint64_t mono_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The frames of one address (looked up at addr), interned once. */
static int address_ids(struct vg_stacks *out, struct vg_symbolizer *sym, uint64_t addr,
		       uint32_t *first, uint32_t *n)
{
	struct vg_sym_result *res;
	struct vg_stack_frame_in in[MAX_INLINE];
	struct vg_stack_site site = { addr, 0, VG_STACKS_NONE, false };
	size_t k = 0;
	int r;

	if (vg_stacks_find_address(out, addr, false, first, n))
		return 0;
	res = malloc(sizeof(*res));
	if (!res)
		return -ENOMEM;
	vg_sym_lookup(sym, addr, res, NULL);
	for (size_t i = 0; i < res->n_frames && k < MAX_INLINE; i++)
		in[k++] = (struct vg_stack_frame_in){ res->frames[i].function, res->frames[i].file,
						      res->frames[i].line };
	if (k == 0 && res->has_symbol)
		in[k++] = (struct vg_stack_frame_in){ res->symbol, res->file, res->line };
	if (res->image) {
		char bid[160];

		site.static_address = res->static_address;
		vg_image_build_id_hex(res->image, bid, sizeof(bid));
		if (vg_stacks_intern_image(out, res->image->path, bid[0] ? bid : NULL,
					   res->image->lo, res->image->hi, 0, false, &site.image,
					   NULL) < 0)
			site.image = VG_STACKS_NONE;
	}
	r = vg_stacks_intern_address(out, &site, in, k, first, n, NULL);
	free(res);
	return r;
}

/* The wait's leaf frame, interned once per text. */
static int leaf_id(struct vg_stacks *out, struct leaves *lv, const char *text, uint32_t *id)
{
	struct vg_stack_frame_in in = { text, NULL, 0 };
	struct vg_stack_site site = { 0, 0, VG_STACKS_NONE, false };
	uint32_t n;
	size_t i;

	for (i = 0; i < lv->n; i++)
		if (strcmp(lv->text[i], text) == 0)
			break;
	if (i == lv->n) {
		if (lv->n == lv->cap) {
			size_t c = lv->cap ? lv->cap * 2 : 32;
			char **p = realloc(lv->text, c * sizeof(*p));

			if (!p)
				return -ENOMEM;
			lv->text = p;
			lv->cap = c;
		}
		lv->text[lv->n] = strdup(text);
		if (!lv->text[lv->n])
			return -ENOMEM;
		lv->n++;
	}
	site.address = i + 1;
	if (vg_stacks_find_address(out, i + 1, false, id, &n))
		return 0;
	return vg_stacks_intern_address(out, &site, &in, 1, id, &n, NULL);
}

static int add_thread(struct vg_stacks *out, struct vg_symbolizer *sym, struct leaves *lv,
		      const struct vg_thread_stack *th, char state, const char *leaf,
		      struct vg_stack_wall_stats *st)
{
	uint32_t ids[MAX_IDS];
	size_t nids = 0, si = state_index(state);
	int r;

	for (size_t i = th->n; i-- > 0;) {
		uint64_t a = th->exact[i] || th->ips[i] == 0 ? th->ips[i] : th->ips[i] - 1;
		uint32_t first, cnt;

		r = address_ids(out, sym, a, &first, &cnt);
		if (r < 0)
			return r;
		for (uint32_t k = 0; k < cnt && nids < MAX_IDS - 1; k++)
			ids[nids++] = first + k;
	}
	r = leaf_id(out, lv, leaf, &ids[nids]);
	if (r < 0)
		return r;
	nids++;
	st->by_state[si]++;
	if (th->how == VG_STACK_NONE)
		st->none++;
	else if (!th->complete) {
		st->cut++;
		if ((unsigned)th->stop < VG_UNWIND_NSTOPS)
			st->cut_why[th->stop]++;
	}
	st->samples++;
	return vg_stacks_add(out, (int32_t)th->tid, ids, nids, 1, NULL);
}

int vg_stack_wall_run(struct vg_target *t, struct vg_symbolizer *sym,
		      struct vg_stack_capture *cap, const struct vg_stack_wall_opts *o,
		      int stop_fd, struct vg_stacks *out, struct vg_stack_wall_stats *st,
		      struct vg_error *err)
{
	uint64_t period = o->every_ms * 1000000u, next, end;
	pid_t *named = NULL;
	size_t n_named = 0, cap_named = 0;
	struct leaves lv = { 0 };
	int r = 0;

	memset(st, 0, sizeof(*st));
	st->start_ns = next = mono_ns(CLOCK_MONOTONIC);
	st->start_wall_ns = mono_ns(CLOCK_REALTIME);
	end = st->start_ns + o->duration_ms * 1000000u;
	while (next < end) {
		struct vg_thread_stack *th = NULL;
		struct vg_stack_facts *facts = NULL;
		struct vg_wait *waits = NULL;
		pid_t *tids = NULL;
		size_t n = 0;
		uint64_t now;

		if (o->n_tids) {
			tids = malloc(o->n_tids * sizeof(*tids));
			if (tids) {
				memcpy(tids, o->tids, o->n_tids * sizeof(*tids));
				n = o->n_tids;
			}
		} else if ((r = vg_target_threads(t, &tids, &n, err)) < 0) {
			if (r == -ESRCH && st->snapshots) {
				st->target_exited = true;
				r = 0;
			}
			break;
		}
		th = calloc(n ? n : 1, sizeof(*th));
		facts = calloc(n ? n : 1, sizeof(*facts));
		waits = calloc(n ? n : 1, sizeof(*waits));
		if (!tids || !th || !facts || !waits) {
			free(tids);
			free(th);
			free(facts);
			free(waits);
			r = vg_error_set(err, -ENOMEM, "out of memory for %zu threads", n);
			break;
		}
		r = vg_stack_capture_take(cap, tids, n, th, err);
		if (r == -ESRCH && st->snapshots) {
			st->target_exited = true;
			r = 0;
			free(tids);
			free(th);
			free(facts);
			free(waits);
			break;
		}
		if (r == 0) {
			vg_stack_facts_read(o->facts, th, n, false, facts);
			r = vg_stack_facts_classify(o->facts, th, n, facts, waits, err);
		}
		for (size_t i = 0; r == 0 && i < n; i++) {
			char state = th[i].state, leaf[512];
			bool known = false;

			if (th[i].how == VG_STACK_NONE && strcmp(th[i].why, "exited") == 0)
				continue;
			if (!state && !facts[i].info_error)
				state = facts[i].info.state;
			for (size_t k = 0; k < n_named; k++)
				known |= named[k] == th[i].tid;
			if (!known && !facts[i].info_error) {
				vg_stacks_set_thread_name(out, (int32_t)th[i].tid, facts[i].info.name, NULL);
				if (n_named == cap_named) {
					size_t c = cap_named ? cap_named * 2 : 64;
					pid_t *p = realloc(named, c * sizeof(*p));

					if (p) {
						named = p;
						cap_named = c;
					}
				}
				if (n_named < cap_named)
					named[n_named++] = th[i].tid;
			}
			vg_stack_wait_leaf(&waits[i], &facts[i], leaf, sizeof(leaf));
			if ((unsigned)waits[i].kind < VG_WAIT_NKINDS)
				st->by_wait[waits[i].kind]++;
			if (add_thread(out, sym, &lv, &th[i], state, leaf, st) < 0)
				r = vg_error_set(err, -ENOMEM, "out of memory for the stacks");
		}
		free(tids);
		free(th);
		free(facts);
		free(waits);
		if (r < 0)
			break;
		st->snapshots++;
		next += period;
		now = mono_ns(CLOCK_MONOTONIC);
		if (now > next) {
			/* the snapshot outlasted the period: skip to the next tick */
			st->late_ticks++;
			next = now;
		}
		if (next >= end)
			break;
		{
			struct pollfd pfd = { stop_fd, POLLIN, 0 };
			uint64_t wait = next - now;

			if (poll(&pfd, stop_fd >= 0 ? 1 : 0, (int)((wait + 999999u) / 1000000u)) > 0) {
				st->interrupted = true;
				break;
			}
		}
	}
	st->duration_ns = mono_ns(CLOCK_MONOTONIC) - st->start_ns;
	free(named);
	for (size_t i = 0; i < lv.n; i++)
		free(lv.text[i]);
	free(lv.text);
	return r;
}
