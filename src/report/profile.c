/* profile.c - `vigil profile` as JSON, and the header its stack outputs
 * carry (what was sampled, for how long, what was lost or cut).
 *
 * The stacks themselves go through the writers of stack_format.h; this
 * file says what only a profile knows: the observation (event, rate,
 * stop, thread coverage, unwind stops) and why its counts may be a lower
 * bound, one sentence per reason. */
#include "report/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unwind/unwind.h"
#include "report/json.h"

/* How many stacks ended before their outermost frame, and why, for the
 * table's header (why: "stack_end 12, no_cfi 3, frame limit 1"). */
static void fill_cut(const struct vg_profile *p, struct vg_stacks_meta *m, char *why, size_t size)
{
	const struct vg_profile_stats *st = vg_profile_stats(p);
	size_t len = 0;
	uint64_t n = 0;

	why[0] = '\0';
	if (vg_profile_unwind(p) == VG_UNWIND_MODE_DWARF)
		for (int i = 0; i < 8; i++) {
			if (i == VG_UNWIND_OUTERMOST || !st->unwind_stop[i] || len >= size)
				continue;
			n += st->unwind_stop[i];
			len += (size_t)snprintf(why + len, size - len, "%s%s %" PRIu64, len ? ", " : "",
						vg_unwind_stop_name((enum vg_unwind_stop)i), st->unwind_stop[i]);
		}
	if (st->max_frames_hit && len < size) {
		n += st->max_frames_hit;
		snprintf(why + len, size - len, "%sframe limit %" PRIu64, len ? ", " : "", st->max_frames_hit);
	}
	if (n > st->samples)
		n = st->samples;   /* a sample cut in both its kernel and user part */
	m->stacks_cut = n;
	m->stacks_cut_why = n ? why : NULL;
}

void vg_report_profile_meta(const struct vg_profile *p, const struct vg_target *t,
			    struct vg_stacks_meta *m, char *why, size_t size)
{
	struct timespec now;
	uint64_t dur = vg_profile_duration_ns(p);

	memset(m, 0, sizeof(*m));
	m->event = vg_profile_event(p);
	m->frequency_hz = vg_profile_freq(p);
	/* A clock sample stands for 1/freq of a second of running. */
	if (strcmp(m->event, "cpu-clock") == 0 || strcmp(m->event, "task-clock") == 0)
		m->sample_ns = 1000000000u / m->frequency_hz;
	clock_gettime(CLOCK_REALTIME, &now);
	m->start_time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec - dur;
	m->duration_ns = dur;
	m->lost = vg_profile_perf_stats(p)->lost;
	m->throttled = vg_profile_perf_stats(p)->throttled;
	m->pid = t->pid;
	m->comm = t->comm;
	fill_cut(p, m, why, size);
}

/* Why the counts may be short of the truth: each reason one sentence. */
static void lower_bound_reasons(const struct vg_profile *p, cJSON *arr)
{
	const struct vg_perf_stats *ps = vg_profile_perf_stats(p);
	const struct vg_cover_tid *th;
	size_t n, uncovered = 0, rescan = 0;
	char buf[256];

	if (ps->lost) {
		snprintf(buf, sizeof(buf), "%" PRIu64 " samples lost: the ring buffer was full", ps->lost);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	if (ps->throttled) {
		snprintf(buf, sizeof(buf), "the kernel throttled sampling %" PRIu64 " times (kernel.perf_event_max_sample_rate)",
			 ps->throttled);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	th = vg_profile_threads(p, &n);
	for (size_t i = 0; i < n; i++) {
		uncovered += th[i].how == VG_COVER_NONE;
		rescan += th[i].how == VG_COVER_RESCAN;
	}
	if (rescan) {
		snprintf(buf, sizeof(buf), "%zu threads created during setup were sampled only from their rescan", rescan);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	if (uncovered) {
		snprintf(buf, sizeof(buf), "%zu threads were not covered", uncovered);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	if (ps->undecodable) {
		snprintf(buf, sizeof(buf), "%" PRIu64 " records could not be decoded", ps->undecodable);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	if (ps->exec_ns) {
		snprintf(buf, sizeof(buf), "the process called exec() (new program '%s'): the profile stopped "
			 "there, %" PRIu64 " samples of the new program were left out", ps->exec_comm,
			 ps->after_exec);
		cJSON_AddItemToArray(arr, vg_json_text(buf));
	}
	if (ps->children) {
		snprintf(buf, sizeof(buf), "the process created %" PRIu64 " child process%s during the profile: "
			 "their time is not sampled", ps->children, ps->children == 1 ? "" : "es");
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
}

static cJSON *frame_json(const struct vg_stacks *s, const struct vg_stack_frame *f)
{
	cJSON *j = cJSON_CreateObject();
	const struct vg_stack_image *img = f->image != VG_STACKS_NONE ? vg_stacks_image(s, f->image) : NULL;

	vg_json_add_text(j, "function", vg_stacks_string(s, f->name));
	cJSON_AddBoolToObject(j, "function_known", f->has_function);
	if (img)
		vg_json_add_text(j, "image", vg_stacks_string(s, img->path));
	else
		cJSON_AddNullToObject(j, "image");
	vg_json_add_addr(j, "address", f->address);
	if (f->file)
		vg_json_add_text(j, "file", vg_stacks_string(s, f->file));
	else
		cJSON_AddNullToObject(j, "file");
	cJSON_AddNumberToObject(j, "line", f->line);
	cJSON_AddBoolToObject(j, "inlined", f->inlined);
	cJSON_AddBoolToObject(j, "kernel", f->kernel);
	return j;
}

struct stack_walk {
	const struct vg_stacks *s;
	cJSON *arr;
	uint32_t path[4096];
	size_t depth;
	size_t listed, total, max;
	int32_t tid;
};

/* Depth first: every node with self samples is one stack, root first. */
static void walk_stacks(struct stack_walk *w, uint32_t node)
{
	const struct vg_stack_node *nd = vg_stacks_node(w->s, node);
	uint32_t *kids = NULL;
	size_t nk = 0;

	if (nd->frame != VG_STACKS_NONE) {
		if (w->depth == sizeof(w->path) / sizeof(w->path[0]))
			return;
		w->path[w->depth++] = nd->frame;
	}
	if (nd->self) {
		w->total++;
		if (w->listed < w->max) {
			cJSON *st = cJSON_CreateObject(), *fr;

			cJSON_AddNumberToObject(st, "tid", w->tid);
			cJSON_AddNumberToObject(st, "count", (double)nd->self);
			fr = cJSON_AddArrayToObject(st, "frames");
			for (size_t i = 0; i < w->depth; i++)
				cJSON_AddItemToArray(fr, frame_json(w->s, vg_stacks_frame(w->s, w->path[i])));
			cJSON_AddItemToArray(w->arr, st);
			w->listed++;
		}
	}
	if (vg_stacks_children(w->s, node, &kids, &nk) == 0) {
		for (size_t i = 0; i < nk; i++)
			walk_stacks(w, kids[i]);
		free(kids);
	}
	if (nd->frame != VG_STACKS_NONE)
		w->depth--;
}

/* What was observed of one process: its "observation" object. */
static cJSON *observation_json(const struct vg_profile *p)
{
	const struct vg_stacks *s = vg_profile_stacks(p);
	const struct vg_perf_stats *ps = vg_profile_perf_stats(p);
	const struct vg_profile_stats *st = vg_profile_stats(p);
	size_t nth;
	uint64_t total = vg_stacks_total(s);
	const struct vg_cover_tid *th;
	const char *why;
	cJSON *obs = cJSON_CreateObject(), *reasons, *cov;

	if (!obs)
		return NULL;
	cJSON_AddStringToObject(obs, "event", vg_profile_event(p));
	cJSON_AddNumberToObject(obs, "frequency_hz", (double)vg_profile_freq(p));
	cJSON_AddStringToObject(obs, "unwind", vg_unwind_mode_name(vg_profile_unwind(p)));
	cJSON_AddNumberToObject(obs, "duration_ms", (double)vg_profile_duration_ns(p) / 1e6);
	cJSON_AddStringToObject(obs, "stop_reason", vg_stop_name(vg_profile_stop_reason(p)));
	cJSON_AddItemToObject(obs, "process_tree",
			      vg_json_process_tree_perf(vg_profile_perf_stats(p), vg_profile_start_ns(p)));
	cJSON_AddNumberToObject(obs, "samples", (double)total);
	cJSON_AddNumberToObject(obs, "lost", (double)ps->lost);
	cJSON_AddNumberToObject(obs, "throttled", (double)ps->throttled);
	cJSON_AddNumberToObject(obs, "samples_other_threads", (double)st->samples_other_tid);
	cJSON_AddNumberToObject(obs, "samples_after_stop", (double)st->samples_after_stop);
	cJSON_AddNumberToObject(obs, "samples_before_start", (double)st->samples_before_start);
	cJSON_AddNumberToObject(obs, "distinct_addresses", (double)st->addresses);
	cJSON_AddNumberToObject(obs, "symbolizer_refreshes", (double)st->refreshes);
	cJSON_AddStringToObject(obs, "kernel_stacks", vg_profile_kernel_shown(p, &why) ? "shown" : "hidden");
	if (why)
		cJSON_AddStringToObject(obs, "kernel_stacks_reason", why);
	else
		cJSON_AddNullToObject(obs, "kernel_stacks_reason");
	reasons = cJSON_CreateArray();
	lower_bound_reasons(p, reasons);
	cJSON_AddBoolToObject(obs, "counts_are_lower_bound", cJSON_GetArraySize(reasons) > 0);
	cJSON_AddItemToObject(obs, "lower_bound_reasons", reasons);
	th = vg_profile_threads(p, &nth);
	cov = cJSON_AddObjectToObject(obs, "thread_coverage");
	{
		size_t by[4] = { 0 }, exited = 0;

		for (size_t i = 0; i < nth; i++) {
			if ((unsigned)th[i].how < 4)
				by[th[i].how]++;
			exited += th[i].exited;
		}
		cJSON_AddNumberToObject(cov, "threads_total", (double)nth);
		cJSON_AddNumberToObject(cov, "seeded", (double)by[VG_COVER_SEEDED]);
		cJSON_AddNumberToObject(cov, "inherited", (double)by[VG_COVER_INHERITED]);
		cJSON_AddNumberToObject(cov, "attached_on_rescan", (double)by[VG_COVER_RESCAN]);
		cJSON_AddNumberToObject(cov, "not_covered", (double)by[VG_COVER_NONE]);
		cJSON_AddNumberToObject(cov, "exited", (double)exited);
	}
	cJSON_AddNumberToObject(obs, "samples_without_user_stack", (double)st->samples_kernel_only);
	cJSON_AddNumberToObject(obs, "callchains_cut", (double)st->max_frames_hit);
	if (vg_profile_unwind(p) == VG_UNWIND_MODE_DWARF) {
		cJSON *u = cJSON_AddObjectToObject(obs, "unwind_stops");

		for (int i = 0; i < 8; i++)
			if (st->unwind_stop[i])
				cJSON_AddNumberToObject(u, vg_unwind_stop_name((enum vg_unwind_stop)i),
							(double)st->unwind_stop[i]);
	}
	return obs;
}

/* The threads of s, each with its pid when pid is not 0. */
static void threads_json(cJSON *arr, const struct vg_stacks *s, pid_t pid)
{
	for (size_t i = 0; i < vg_stacks_n_threads(s); i++) {
		const struct vg_stack_thread *thr = vg_stacks_thread(s, i);
		cJSON *j = cJSON_CreateObject();

		cJSON_AddNumberToObject(j, "tid", thr->tid);
		if (pid)
			cJSON_AddNumberToObject(j, "pid", pid);
		vg_json_add_text(j, "comm", vg_stacks_string(s, thr->name));
		cJSON_AddNumberToObject(j, "samples", (double)vg_stacks_node(s, thr->root)->total);
		cJSON_AddItemToArray(arr, j);
	}
}

/* functions[] and stacks[] of s into doc, the stack counts into obs. */
static int stacks_json(cJSON *doc, cJSON *obs, const struct vg_stacks *s, struct vg_error *err)
{
	struct vg_stack_function *fn = NULL;
	size_t nfn = 0;
	uint64_t total = vg_stacks_total(s);
	struct stack_walk w;
	cJSON *arr;

	arr = cJSON_AddArrayToObject(doc, "functions");
	if (vg_stacks_functions(s, &fn, &nfn, err) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < nfn; i++) {
		cJSON *j = cJSON_CreateObject();

		vg_json_add_text(j, "function", vg_stacks_string(s, fn[i].name));
		if (fn[i].file)
			vg_json_add_text(j, "file", vg_stacks_string(s, fn[i].file));
		else
			cJSON_AddNullToObject(j, "file");
		cJSON_AddBoolToObject(j, "inlined", fn[i].inlined);
		cJSON_AddBoolToObject(j, "kernel", fn[i].kernel);
		cJSON_AddNumberToObject(j, "self", (double)fn[i].self);
		cJSON_AddNumberToObject(j, "total", (double)fn[i].total);
		cJSON_AddNumberToObject(j, "self_share", total ? 100.0 * (double)fn[i].self / (double)total : 0);
		cJSON_AddNumberToObject(j, "total_share", total ? 100.0 * (double)fn[i].total / (double)total : 0);
		cJSON_AddItemToArray(arr, j);
	}
	free(fn);
	memset(&w, 0, sizeof(w));
	w.s = s;
	w.arr = cJSON_AddArrayToObject(doc, "stacks");
	w.max = 10000;
	for (size_t i = 0; i < vg_stacks_n_threads(s); i++) {
		w.tid = vg_stacks_thread(s, i)->tid;
		walk_stacks(&w, vg_stacks_thread(s, i)->root);
	}
	cJSON_AddNumberToObject(obs, "stacks_total", (double)w.total);
	cJSON_AddNumberToObject(obs, "stacks_listed", (double)w.listed);
	return 0;
}

cJSON *vg_report_profile_json(const struct vg_profile *p, const struct vg_target *t,
			     struct vg_error *err)
{
	const struct vg_stacks *s = vg_profile_stacks(p);
	cJSON *doc = vg_json_report_new("live_profile", t), *obs = observation_json(p);

	if (!doc || !obs) {
		cJSON_Delete(doc);
		cJSON_Delete(obs);
		vg_error_set(err, -ENOMEM, "out of memory building the JSON report");
		return NULL;
	}
	cJSON_AddItemToObject(doc, "observation", obs);
	threads_json(cJSON_AddArrayToObject(doc, "threads"), s, 0);
	if (stacks_json(doc, obs, s, err) < 0) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

/* The whole run's observation from the processes' own: numbers summed,
 * flags or'ed, arrays joined, objects merged key by key; a text (event,
 * unwind mode) and the process tree stay the first process's. */
static void observation_add(cJSON *sum, const cJSON *one)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, one) {
		cJSON *mine = cJSON_GetObjectItemCaseSensitive(sum, it->string);

		if (!mine) {
			cJSON_AddItemToObject(sum, it->string, cJSON_Duplicate(it, true));
		} else if (strcmp(it->string, "process_tree") == 0) {
			continue;
		} else if (cJSON_IsNumber(mine) && cJSON_IsNumber(it)) {
			cJSON_SetNumberValue(mine, mine->valuedouble + it->valuedouble);
		} else if (cJSON_IsBool(mine) && cJSON_IsBool(it)) {
			if (cJSON_IsTrue(it) && !cJSON_IsTrue(mine))
				cJSON_ReplaceItemInObjectCaseSensitive(sum, it->string, cJSON_CreateTrue());
		} else if (cJSON_IsArray(mine) && cJSON_IsArray(it)) {
			const cJSON *e;

			cJSON_ArrayForEach(e, it)
				cJSON_AddItemToArray(mine, cJSON_Duplicate(e, true));
		} else if (cJSON_IsObject(mine) && cJSON_IsObject(it)) {
			observation_add(mine, it);
		}
	}
}

cJSON *vg_report_profiles_json(const struct vg_profile *const *ps,
			       const struct vg_target *const *ts, size_t n,
			       const struct vg_stacks *merged, enum vg_stop stop,
			       uint64_t duration_ns, struct vg_error *err)
{
	cJSON *doc = vg_json_report_new("live_profile", n ? ts[0] : NULL);
	cJSON *obs = cJSON_CreateObject(), *procs, *threads;
	uint64_t total = vg_stacks_total(merged);

	if (!doc || !obs)
		goto nomem;
	cJSON_AddItemToObject(doc, "observation", obs);
	procs = cJSON_AddArrayToObject(doc, "processes");
	threads = cJSON_AddArrayToObject(doc, "threads");
	for (size_t i = 0; i < n; i++) {
		const struct vg_profile *p = ps[i];
		uint64_t samples = vg_stacks_total(vg_profile_stacks(p));
		cJSON *j = cJSON_CreateObject(), *own = observation_json(p);
		bool alive, changed;

		if (!j || !own) {
			cJSON_Delete(j);
			cJSON_Delete(own);
			goto nomem;
		}
		cJSON_AddItemToArray(procs, j);
		cJSON_AddNumberToObject(j, "pid", ts[i]->pid);
		vg_json_add_text(j, "comm", ts[i]->comm);
		cJSON_AddNumberToObject(j, "samples", (double)samples);
		cJSON_AddNumberToObject(j, "share", total ? 100.0 * (double)samples / (double)total : 0);
		vg_target_recheck(ts[i], &alive, &changed);
		cJSON_AddBoolToObject(j, "pid_alive_after", alive && !changed);
		{
			/* Its stacks are counted here, listed in stacks[]. */
			struct stack_walk w = { .s = vg_profile_stacks(p) };

			for (size_t k = 0; k < vg_stacks_n_threads(w.s); k++)
				walk_stacks(&w, vg_stacks_thread(w.s, k)->root);
			cJSON_AddNumberToObject(own, "stacks_total", (double)w.total);
			cJSON_AddNumberToObject(own, "stacks_listed", 0);
		}
		observation_add(obs, own);
		cJSON_AddItemToObject(j, "observation", own);
		threads_json(threads, vg_profile_stacks(p), ts[i]->pid);
	}
	/* The run's own: one duration and one stop for all. */
	cJSON_ReplaceItemInObjectCaseSensitive(obs, "duration_ms",
					       cJSON_CreateNumber((double)duration_ns / 1e6));
	cJSON_ReplaceItemInObjectCaseSensitive(obs, "stop_reason", cJSON_CreateString(vg_stop_name(stop)));
	cJSON_DeleteItemFromObjectCaseSensitive(obs, "stacks_total");
	cJSON_DeleteItemFromObjectCaseSensitive(obs, "stacks_listed");
	if (stacks_json(doc, obs, merged, err) < 0) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
nomem:
	cJSON_Delete(doc);
	if (!doc)
		cJSON_Delete(obs);
	vg_error_set(err, -ENOMEM, "out of memory building the JSON report");
	return NULL;
}
