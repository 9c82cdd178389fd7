/* stack.c - `vigil stack`: the table and the JSON document (stack.h). */
#include "report/stack.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "report/text.h"
#include "unwind/unwind.h"

/* The address a frame is looked up at. */
static uint64_t lookup_addr(const struct vg_thread_stack *st, size_t i)
{
	return st->exact[i] || st->ips[i] == 0 ? st->ips[i] : st->ips[i] - 1;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static bool same_stack(const struct vg_thread_stack *a, const struct vg_thread_stack *b)
{
	return a->how == b->how && a->n == b->n && a->complete == b->complete &&
	       a->stop == b->stop && strcmp(a->why, b->why) == 0 &&
	       memcmp(a->ips, b->ips, a->n * sizeof(a->ips[0])) == 0;
}

static void put_frames(FILE *out, const struct vg_report_stack *r,
		       const struct vg_thread_stack *st)
{
	struct vg_sym_result *res = malloc(sizeof(*res));
	size_t k = 0;

	if (!res) {
		fputs("  (out of memory for the frames)\n", out);
		return;
	}
	for (size_t i = 0; i < st->n; i++) {
		uint64_t a = lookup_addr(st, i);

		if (vg_sym_lookup(r->sym, a, res, NULL) < 0 || res->n_frames == 0) {
			fprintf(out, "  #%-2zu 0x%016" PRIx64 "  ", k++, st->ips[i]);
			if (res->has_symbol) {
				vg_text_put(out, res->symbol);
				fprintf(out, "+0x%" PRIx64, res->offset + (a != st->ips[i]));
			} else if (res->function_start) {
				fprintf(out, "[function at 0x%" PRIx64 ", no symbol]", res->function_start);
			} else {
				fputs("??", out);
			}
			if (res->file) {
				fputs("  ", out);
				vg_text_put(out, res->file);
				fprintf(out, ":%" PRIu32 ":%" PRIu32, res->line, res->column);
			}
			if (res->image_path) {
				fputs("  in ", out);
				vg_text_put(out, base_name(res->image_path));
			}
			putc('\n', out);
			continue;
		}
		for (size_t f = 0; f < res->n_frames; f++) {
			const struct vg_sym_frame *fr = &res->frames[f];

			if (f == 0)
				fprintf(out, "  #%-2zu 0x%016" PRIx64 "  ", k++, st->ips[i]);
			else
				fprintf(out, "  #%-2zu %18s  ", k++, "");
			if (fr->function)
				vg_text_put(out, fr->function);
			else
				fputs("??", out);
			if (fr->file) {
				fputs("  ", out);
				vg_text_put(out, fr->file);
				fprintf(out, ":%" PRIu32 ":%" PRIu32, fr->line, fr->column);
			}
			if (fr->inlined)
				fputs("  (inlined)", out);
			if (f == res->n_frames - 1 && res->image_path) {
				fputs("  in ", out);
				vg_text_put(out, base_name(res->image_path));
			}
			putc('\n', out);
		}
	}
	free(res);
}

static void put_state(FILE *out, const struct vg_report_stack_thread *th)
{
	fprintf(out, "%d", (int)th->st->tid);
	if (th->name[0]) {
		fputs(" (", out);
		vg_text_put(out, th->name);
		putc(')', out);
	}
	fprintf(out, " %c", th->state ? th->state : '?');
	if (th->cpu_ns >= 0)
		fprintf(out, " cpu %.3fs", (double)th->cpu_ns / 1e9);
}

int vg_report_stack_table(FILE *out, const struct vg_report_stack *r)
{
	bool *done = calloc(r->n ? r->n : 1, sizeof(*done));
	size_t *members = calloc(r->n ? r->n : 1, sizeof(*members));

	if (!done || !members) {
		free(done);
		free(members);
		return -ENOMEM;
	}
	fprintf(out, "pid %d (", (int)r->t->pid);
	vg_text_put(out, r->t->comm);
	fprintf(out, "): %zu thread%s, read in %.1f ms without stopping any\n", r->n,
		r->n == 1 ? "" : "s", (double)r->elapsed_ns / 1e6);
	for (size_t i = 0; r->notes && r->notes[i]; i++) {
		fputs("# ", out);
		vg_text_put(out, r->notes[i]);
		putc('\n', out);
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct vg_thread_stack *st = r->threads[i].st;
		size_t m = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < r->n; j++)
			if (!done[j] && same_stack(st, r->threads[j].st)) {
				done[j] = true;
				members[m++] = j;
			}
		putc('\n', out);
		if (m == 1) {
			fputs("thread ", out);
			put_state(out, &r->threads[i]);
		} else {
			fprintf(out, "%zu threads:", m);
			for (size_t k = 0; k < m; k++) {
				fputs(k ? ", " : " ", out);
				put_state(out, &r->threads[members[k]]);
			}
		}
		fprintf(out, "\n  stack: %s", vg_stack_how_name(st->how));
		if (st->how != VG_STACK_NONE) {
			fprintf(out, ", %s", st->complete ? "complete" : "incomplete");
			if (!st->complete)
				fprintf(out, " (%s)", vg_unwind_stop_name(st->stop));
			if (st->moved)
				fputs(", moved while read (twice): frames may mix two moments", out);
			else if (st->reread)
				fputs(", read twice (moved during the first read)", out);
		}
		if (st->why[0]) {
			fputs(": ", out);
			vg_text_put(out, st->why);
		}
		putc('\n', out);
		put_frames(out, r, st);
	}
	free(done);
	free(members);
	return ferror(out) ? -EIO : 0;
}

/* ------------------------------------------------------------ JSON */

static cJSON *frames_json(const struct vg_report_stack *r, const struct vg_thread_stack *st,
			  struct vg_sym_result *res)
{
	cJSON *arr = cJSON_CreateArray();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < st->n; i++) {
		uint64_t a = lookup_addr(st, i);
		size_t nf;

		if (vg_sym_lookup(r->sym, a, res, NULL) < 0)
			memset(res, 0, sizeof(*res));
		nf = res->n_frames ? res->n_frames : 1;
		for (size_t f = 0; f < nf; f++) {
			struct vg_sym_frame none = {
				.function = res->has_symbol ? res->symbol : NULL,
				.file = res->file, .line = res->line, .column = res->column,
			};
			cJSON *o = vg_json_sym_frame(res->n_frames ? &res->frames[f] : &none);

			if (!o)
				goto fail;
			cJSON_AddItemToArray(arr, o);
			vg_json_add_addr(o, "pc", st->ips[i]);
			cJSON_AddNumberToObject(o, "index", (double)i);
			cJSON_AddBoolToObject(o, "exact", st->exact[i] || a == st->ips[i]);
			if (res->image_path)
				vg_json_add_text(o, "image", res->image_path);
			else
				cJSON_AddNullToObject(o, "image");
			if (res->has_symbol) {
				vg_json_add_text(o, "symbol", res->symbol);
				cJSON_AddNumberToObject(o, "symbol_offset",
							(double)(res->offset + (a != st->ips[i])));
			} else {
				cJSON_AddNullToObject(o, "symbol");
				cJSON_AddNullToObject(o, "symbol_offset");
			}
		}
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

static cJSON *thread_json(const struct vg_report_stack *r, const struct vg_report_stack_thread *th,
			  struct vg_sym_result *res)
{
	const struct vg_thread_stack *st = th->st;
	cJSON *o = cJSON_CreateObject(), *frames;
	char state[2] = { th->state, 0 };

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "tid", st->tid);
	if (th->name[0])
		vg_json_add_text(o, "name", th->name);
	else
		cJSON_AddNullToObject(o, "name");
	if (th->state)
		cJSON_AddStringToObject(o, "state", state);
	else
		cJSON_AddNullToObject(o, "state");
	if (th->cpu_ns >= 0)
		cJSON_AddNumberToObject(o, "cpu_time_ns", (double)th->cpu_ns);
	else
		cJSON_AddNullToObject(o, "cpu_time_ns");
	cJSON_AddStringToObject(o, "obtained", vg_stack_how_name(st->how));
	cJSON_AddBoolToObject(o, "complete", st->complete);
	if (st->how != VG_STACK_NONE)
		cJSON_AddStringToObject(o, "unwind_stop", vg_unwind_stop_name(st->stop));
	else
		cJSON_AddNullToObject(o, "unwind_stop");
	if (st->why[0])
		vg_json_add_text(o, "why", st->why);
	else
		cJSON_AddNullToObject(o, "why");
	cJSON_AddBoolToObject(o, "reread", st->reread);
	cJSON_AddBoolToObject(o, "moved", st->moved);
	cJSON_AddNumberToObject(o, "stack_bytes", (double)st->stack_bytes);
	cJSON_AddBoolToObject(o, "stack_truncated", st->stack_truncated);
	if (st->regs.mask & (1ull << VG_PERF_IP))
		vg_json_add_addr(o, "pc", st->regs.regs[VG_PERF_IP]);
	else
		cJSON_AddNullToObject(o, "pc");
	if (st->regs.mask & (1ull << VG_PERF_SP))
		vg_json_add_addr(o, "sp", st->regs.regs[VG_PERF_SP]);
	else
		cJSON_AddNullToObject(o, "sp");
	frames = frames_json(r, st, res);
	if (!frames) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddItemToObject(o, "frames", frames);
	/* Reserved: the kernel stack (/proc/TID/stack) comes with the
	 * per-thread facts; null until then, and with --no-kernel. */
	cJSON_AddNullToObject(o, "kernel_frames");
	return o;
}

cJSON *vg_report_stack_json(const struct vg_report_stack *r)
{
	cJSON *doc = vg_json_report_new("live_stack", r->t), *obs, *arr, *notes;
	struct vg_sym_result *res = malloc(sizeof(*res));

	if (!doc || !res)
		goto fail;
	obs = cJSON_AddObjectToObject(doc, "observation");
	if (!obs)
		goto fail;
	cJSON_AddNumberToObject(obs, "elapsed_ns", (double)r->elapsed_ns);
	cJSON_AddBoolToObject(obs, "stopped_target", false);
	cJSON_AddBoolToObject(obs, "kernel_stacks", !r->no_kernel && false);
	notes = cJSON_AddArrayToObject(obs, "notes");
	for (size_t i = 0; notes && r->notes && r->notes[i]; i++)
		cJSON_AddItemToArray(notes, vg_json_text(r->notes[i]));
	arr = cJSON_AddArrayToObject(doc, "threads");
	if (!arr)
		goto fail;
	for (size_t i = 0; i < r->n; i++) {
		cJSON *o = thread_json(r, &r->threads[i], res);

		if (!o)
			goto fail;
		cJSON_AddItemToArray(arr, o);
	}
	free(res);
	return doc;
fail:
	free(res);
	cJSON_Delete(doc);
	return NULL;
}
