/* stack.c - `vigil stack`: the table and the JSON document (stack.h). */
#include "report/stack.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "report/text.h"
#include "kernel/syscalls.h"
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
		       const struct vg_thread_stack *st, const char *indent)
{
	struct vg_sym_result *res = malloc(sizeof(*res));
	size_t k = 0;

	if (!res) {
		fprintf(out, "%s(out of memory for the frames)\n", indent);
		return;
	}
	for (size_t i = 0; i < st->n; i++) {
		uint64_t a = lookup_addr(st, i);

		if (vg_sym_lookup(r->sym, a, res, NULL) < 0 || res->n_frames == 0) {
			fprintf(out, "%s#%-2zu 0x%016" PRIx64 "  ", indent, k++, st->ips[i]);
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
				fprintf(out, "%s#%-2zu 0x%016" PRIx64 "  ", indent, k++, st->ips[i]);
			else
				fprintf(out, "%s#%-2zu %18s  ", indent, k++, "");
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

/* ------------------------------------------------------------ waits */

static const struct vg_report_stack_thread *thread_of(const struct vg_report_stack *r, pid_t tid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->threads[i].st->tid == tid)
			return &r->threads[i];
	return NULL;
}

static const struct vg_wait_chain *chain_of(const struct vg_report_stack *r, pid_t tid)
{
	for (size_t i = 0; r->graph && i < r->graph->n_chains; i++)
		if (r->graph->chains[i].n && r->graph->chains[i].links[0].tid == tid)
			return &r->graph->chains[i];
	return NULL;
}

static bool in_deadlock(const struct vg_report_stack *r, pid_t tid)
{
	for (size_t i = 0; r->graph && i < r->graph->n_deadlocks; i++)
		for (size_t k = 0; k < r->graph->deadlocks[i].n; k++)
			if (r->graph->deadlocks[i].links[k].tid == tid)
				return true;
	return false;
}

/* libc, libpthread, ld.so, the vDSO: the frames a thread blocks through,
 * not where its own code blocked. */
static bool system_image(const char *path)
{
	const char *b = base_name(path);

	if (!b)
		return false;
	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-", 5) == 0 ||
	       strncmp(b, "libpthread", 10) == 0 || strncmp(b, "ld-linux", 8) == 0 ||
	       strncmp(b, "ld-2.", 5) == 0 || strncmp(b, "linux-vdso", 10) == 0 ||
	       strcmp(b, "[vdso]") == 0;
}

/* Where the thread blocked: its first frame outside the system images
 * (function, file, line, column copied into *out).  False when every
 * frame is in them, or none is known. */
struct blocked_at {
	char function[256];
	char file[512];
	uint32_t line, column;
	bool inlined;
	size_t index;           /* the frame's index in frames[] (inline frames count) */
};

static bool find_blocked_at(const struct vg_report_stack *r, const struct vg_thread_stack *st,
			    struct vg_sym_result *res, struct blocked_at *out)
{
	size_t k = 0;

	for (size_t i = 0; i < st->n; i++) {
		uint64_t a = lookup_addr(st, i);
		size_t nf;

		if (vg_sym_lookup(r->sym, a, res, NULL) < 0)
			memset(res, 0, sizeof(*res));
		nf = res->n_frames ? res->n_frames : 1;
		if (!res->image_path || system_image(res->image_path)) {
			k += nf;
			continue;
		}
		memset(out, 0, sizeof(*out));
		out->index = k;
		if (res->n_frames) {
			const struct vg_sym_frame *f = &res->frames[0];

			snprintf(out->function, sizeof(out->function), "%s", f->function ? f->function : "??");
			snprintf(out->file, sizeof(out->file), "%s", f->file ? f->file : "");
			out->line = f->line;
			out->column = f->column;
			out->inlined = f->inlined;
		} else {
			snprintf(out->function, sizeof(out->function), "%s",
				 res->has_symbol ? res->symbol : "??");
			snprintf(out->file, sizeof(out->file), "%s", res->file ? res->file : "");
			out->line = res->line;
			out->column = res->column;
		}
		return true;
	}
	return false;
}

static void put_blocked_at(FILE *out, const struct blocked_at *b)
{
	vg_text_put(out, b->function);
	if (b->file[0]) {
		fputs("  ", out);
		vg_text_put(out, base_name(b->file));
		fprintf(out, ":%" PRIu32 ":%" PRIu32, b->line, b->column);
	}
}

static const char *call_name(const struct vg_stack_facts *f)
{
	if (!f || f->info.syscall.state != VG_SYSCALL_IN || f->info.syscall.nr < 0 ||
	    f->info.syscall.nr > 0x7fffffff)
		return NULL;
	return vg_syscall_name((int)f->info.syscall.nr);
}

/* "holder, sleeping" for an owner, from the thread's facts. */
static void put_who(FILE *out, const struct vg_report_stack *r, pid_t tid)
{
	const struct vg_report_stack_thread *o = thread_of(r, tid);

	fprintf(out, "%d", (int)tid);
	if (o && o->facts && !o->facts->info_error) {
		fputs(" (", out);
		vg_text_put(out, o->facts->info.name);
		putc(')', out);
	}
}

static void put_object(FILE *out, const struct vg_wait *w)
{
	if (w->object_name[0]) {
		vg_text_put(out, w->object_name);
		fprintf(out, " (0x%" PRIx64 ")", w->object);
	} else if (w->object) {
		fprintf(out, "0x%" PRIx64, w->object);
	}
}

/* What a thread is doing, as the end of a chain says it: "running",
 * "sleeping in clock_nanosleep", "in read on tcp ...". */
static void put_doing(FILE *out, const struct vg_report_stack_thread *th)
{
	const struct vg_wait *w = th->wait;
	const char *call = call_name(th->facts);

	if (!w) {
		fputs("in an unknown state", out);
		return;
	}
	switch (w->kind) {
	case VG_WAIT_RUNNING:
		fputs("running", out);
		return;
	case VG_WAIT_USER:
		fputs("off the CPU in its own code (preempted or faulting)", out);
		return;
	case VG_WAIT_UNKNOWN:
		fputs("in an unknown state", out);
		return;
	case VG_WAIT_SLEEP:
		fprintf(out, "sleeping in %s", call ? call : "a sleep");
		return;
	case VG_WAIT_IO:
	case VG_WAIT_POLL:
		fprintf(out, "in %s", call ? call : vg_wait_kind_name(w->kind));
		if (w->fd >= 0) {
			fprintf(out, " on fd %d", w->fd);
			if (th->facts && th->facts->fd_text[0]) {
				fputs(" = ", out);
				vg_text_put(out, th->facts->fd_text);
			}
		}
		return;
	default:
		fprintf(out, "waiting (%s) in %s", vg_wait_kind_name(w->kind), call ? call : "?");
		return;
	}
}

/* "waits for g_lock held by 12 (holder), which is sleeping in ..." */
static void put_chain(FILE *out, const struct vg_report_stack *r, const struct vg_wait_chain *c)
{
	for (size_t k = 0; k < c->n; k++) {
		const struct vg_wait_link *l = &c->links[k];

		fputs(k ? ", which waits for " : "waits for ", out);
		if (l->object_name && l->object_name[0])
			vg_text_put(out, l->object_name);
		else if (l->object)
			fprintf(out, "0x%" PRIx64, l->object);
		else
			fputs("thread", out);
		fputs(" held by ", out);
		put_who(out, r, l->owner);
	}
	switch (c->end) {
	case VG_CHAIN_AT_THREAD: {
		const struct vg_report_stack_thread *e = thread_of(r, c->end_tid);

		if (e) {
			fputs(", which is ", out);
			put_doing(out, e);
		}
		break;
	}
	case VG_CHAIN_DEAD_OWNER: {
		const struct vg_report_stack_thread *w = thread_of(r, c->links[c->n - 1].tid);

		if (w && w->facts && w->facts->owner_state)
			fputs(", which is not among the threads asked for (--tid)", out);
		else
			fputs(", which is no thread of the process (it exited holding it)", out);
		break;
	}
	case VG_CHAIN_DEADLOCK:
		fputs(": DEADLOCK", out);
		break;
	}
}

/* The wait line of a thread: "mutex g_lock (0x...) held by 12 (holder, S)". */
static void put_wait(FILE *out, const struct vg_report_stack *r,
		     const struct vg_report_stack_thread *th)
{
	const struct vg_wait *w = th->wait;
	const struct vg_stack_facts *f = th->facts;

	fputs(vg_wait_kind_name(w->kind), out);
	if (w->object || w->object_name[0]) {
		putc(' ', out);
		put_object(out, w);
	}
	if (w->fd >= 0) {
		fprintf(out, " fd %d", w->fd);
		if (f && f->fd_text[0]) {
			fputs(" = ", out);
			vg_text_put(out, f->fd_text);
		}
	}
	if (w->kind == VG_WAIT_RWLOCK && !w->write_locked && w->readers)
		fprintf(out, " held by %u reader%s", w->readers, w->readers == 1 ? "" : "s");
	if (w->owner) {
		fputs(w->kind == VG_WAIT_JOIN ? " for thread " : w->write_locked ?
		      " write-locked by " : " held by ", out);
		put_who(out, r, w->owner);
		if (f && f->owner_state)
			fprintf(out, ", %s", vg_thread_state_name(f->owner_state));
		else
			fputs(", no thread of the process", out);
	}
	(void)r;
}

static void put_kernel(FILE *out, const struct vg_report_stack *r, const struct vg_stack_facts *f,
		       const char *indent)
{
	if (r->no_kernel || !f)
		return;
	if (f->info.kernel_error) {
		fprintf(out, "%skernel stack: ", indent);
		vg_text_put(out, f->info.kernel_why);
		putc('\n', out);
		return;
	}
	if (!f->info.n_kernel) {
		fprintf(out, "%skernel stack: empty (on a CPU, or in user code)\n", indent);
		return;
	}
	fprintf(out, "%skernel stack:\n", indent);
	for (size_t k = 0; k < f->info.n_kernel; k++) {
		const struct vg_kernel_frame *kf = &f->info.kernel[k];

		fprintf(out, "%s#%-2zu [kernel] ", indent, k);
		vg_text_put(out, kf->function);
		if (kf->size)
			fprintf(out, "+0x%" PRIx64 "/0x%" PRIx64, kf->offset, kf->size);
		putc('\n', out);
	}
}

static bool same_facts(const struct vg_report_stack_thread *a, const struct vg_report_stack_thread *b)
{
	const struct vg_wait *x = a->wait, *y = b->wait;
	const struct vg_stack_facts *f = a->facts, *g = b->facts;

	if (!x != !y || !f != !g)
		return false;
	/* not the call's text: sleepers differ in the time left */
	if (x && (x->kind != y->kind || x->object != y->object || x->fd != y->fd ||
		  x->owner != y->owner))
		return false;
	if (f) {
		if (f->info.n_kernel != g->info.n_kernel || f->info.kernel_error != g->info.kernel_error)
			return false;
		for (size_t k = 0; k < f->info.n_kernel; k++)
			if (strcmp(f->info.kernel[k].function, g->info.kernel[k].function) ||
			    f->info.kernel[k].offset != g->info.kernel[k].offset)
				return false;
	}
	return true;
}

static void put_state(FILE *out, const struct vg_report_stack_thread *th)
{
	const struct vg_stack_facts *f = th->facts;

	fprintf(out, "%d", (int)th->st->tid);
	if (f && f->info.name[0]) {
		fputs(" (", out);
		vg_text_put(out, f->info.name);
		putc(')', out);
	}
	if (!f || f->info_error) {
		fputs(" ?", out);
		return;
	}
	fprintf(out, " %c", f->info.state ? f->info.state : '?');
	fprintf(out, " cpu %.3fs", (double)(f->info.user_ns + f->info.system_ns) / 1e9);
}

/* The lines between a group's header and its frames (th the first of
 * its m members). */
static void put_thread_facts(FILE *out, const struct vg_report_stack *r,
			     const struct vg_report_stack_thread *th, const size_t *members,
			     size_t m, struct vg_sym_result *res)
{
	bool same_call = true;
	const struct vg_stack_facts *f = th->facts;
	const struct vg_wait_chain *c = chain_of(r, th->st->tid);
	struct blocked_at b;

	if (f && f->info_error) {
		fputs("  facts: ", out);
		vg_text_put(out, f->info_why);
		putc('\n', out);
	}
	if (th->wait) {
		fputs("  waits: ", out);
		put_wait(out, r, th);
		putc('\n', out);
	}
	if (c) {
		fputs("  chain: ", out);
		put_chain(out, r, c);
		putc('\n', out);
	}
	for (size_t k = 1; th->wait && k < m; k++)
		same_call &= strcmp(r->threads[members[k]].wait->detail, th->wait->detail) == 0;
	if (th->wait && th->wait->detail[0] && same_call) {
		fputs("  syscall: ", out);
		vg_text_put(out, th->wait->detail);
		putc('\n', out);
	}
	for (size_t k = 0; !same_call && k < m; k++) {
		const struct vg_report_stack_thread *o = &r->threads[members[k]];

		fprintf(out, "  syscall (%d): ", (int)o->st->tid);
		vg_text_put(out, o->wait->detail);
		putc('\n', out);
	}
	if (th->wait && th->wait->kind != VG_WAIT_RUNNING && find_blocked_at(r, th->st, res, &b)) {
		fputs("  blocked at: ", out);
		put_blocked_at(out, &b);
		putc('\n', out);
	}
}

static void put_how(FILE *out, const struct vg_thread_stack *st, const char *indent)
{
	fprintf(out, "%sstack: %s", indent, vg_stack_how_name(st->how));
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
}

/* The DEADLOCK block: each cycle, each thread's wait, line and stack. */
static void put_deadlocks(FILE *out, const struct vg_report_stack *r, struct vg_sym_result *res)
{
	for (size_t d = 0; r->graph && d < r->graph->n_deadlocks; d++) {
		const struct vg_deadlock *dl = &r->graph->deadlocks[d];

		fprintf(out, "\nDEADLOCK: %zu threads wait for each other:", dl->n);
		for (size_t k = 0; k < dl->n; k++) {
			fputs(k ? ", " : " ", out);
			put_who(out, r, dl->links[k].tid);
		}
		fputs("\n", out);
		for (size_t k = 0; k < dl->n; k++) {
			const struct vg_wait_link *l = &dl->links[k];
			const struct vg_report_stack_thread *th = thread_of(r, l->tid);
			struct blocked_at b;

			fputs("  thread ", out);
			put_who(out, r, l->tid);
			fputs(" waits for ", out);
			if (l->object_name && l->object_name[0])
				vg_text_put(out, l->object_name);
			else
				fprintf(out, "0x%" PRIx64, l->object);
			fputs(" held by ", out);
			put_who(out, r, l->owner);
			putc('\n', out);
			if (!th)
				continue;
			if (find_blocked_at(r, th->st, res, &b)) {
				fputs("    blocked at: ", out);
				put_blocked_at(out, &b);
				putc('\n', out);
			}
			put_frames(out, r, th->st, "    ");
		}
	}
}

int vg_report_stack_table(FILE *out, const struct vg_report_stack *r)
{
	bool *done = calloc(r->n ? r->n : 1, sizeof(*done));
	size_t *members = calloc(r->n ? r->n : 1, sizeof(*members));
	struct vg_sym_result *res = malloc(sizeof(*res));

	if (!done || !members || !res) {
		free(done);
		free(members);
		free(res);
		return -ENOMEM;
	}
	fprintf(out, "pid %d (", (int)r->t->pid);
	vg_text_put(out, r->t->comm);
	fprintf(out, "): %zu thread%s, read in %.1f ms without stopping any", r->n,
		r->n == 1 ? "" : "s", (double)r->elapsed_ns / 1e6);
	if (r->graph && r->graph->n_deadlocks)
		fprintf(out, "; %zu DEADLOCK%s", r->graph->n_deadlocks,
			r->graph->n_deadlocks == 1 ? "" : "S");
	putc('\n', out);
	for (size_t i = 0; r->notes && r->notes[i]; i++) {
		fputs("# ", out);
		vg_text_put(out, r->notes[i]);
		putc('\n', out);
	}
	put_deadlocks(out, r, res);
	for (size_t i = 0; i < r->n; i++) {
		const struct vg_report_stack_thread *th = &r->threads[i];
		size_t m = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < r->n; j++)
			if (!done[j] && same_stack(th->st, r->threads[j].st) &&
			    same_facts(th, &r->threads[j])) {
				done[j] = true;
				members[m++] = j;
			}
		putc('\n', out);
		if (m == 1) {
			fputs("thread ", out);
			put_state(out, th);
		} else {
			fprintf(out, "%zu threads:", m);
			for (size_t k = 0; k < m; k++) {
				fputs(k ? ", " : " ", out);
				put_state(out, &r->threads[members[k]]);
			}
		}
		if (in_deadlock(r, th->st->tid))
			fputs("  [DEADLOCK]", out);
		putc('\n', out);
		put_thread_facts(out, r, th, members, m, res);
		put_how(out, th->st, "  ");
		put_frames(out, r, th->st, "  ");
		put_kernel(out, r, th->facts, "  ");
	}
	free(done);
	free(members);
	free(res);
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

static cJSON *blocked_at_json(const struct vg_report_stack *r, const struct vg_thread_stack *st,
			      struct vg_sym_result *res)
{
	struct blocked_at b;
	struct vg_sym_frame f;
	cJSON *o;

	if (!find_blocked_at(r, st, res, &b))
		return cJSON_CreateNull();
	f = (struct vg_sym_frame){ b.function, b.file[0] ? b.file : NULL, b.line, b.column, b.inlined };
	o = vg_json_sym_frame(&f);
	if (o)
		cJSON_AddNumberToObject(o, "frame", (double)b.index);
	return o;
}

static const char *syscall_state_name(enum vg_syscall_state s)
{
	switch (s) {
	case VG_SYSCALL_RUNNING: return "running";
	case VG_SYSCALL_NONE: return "none";
	case VG_SYSCALL_IN: return "in";
	default: return "unknown";
	}
}

static cJSON *syscall_json(const struct vg_report_stack_thread *th)
{
	const struct vg_stack_facts *f = th->facts;
	const struct vg_thread_syscall *sc;
	const char *name;
	cJSON *o, *args;

	if (!f || f->info_error)
		return cJSON_CreateNull();
	sc = &f->info.syscall;
	o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "state", syscall_state_name(sc->state));
	if (sc->state != VG_SYSCALL_IN) {
		cJSON_AddNullToObject(o, "nr");
		cJSON_AddNullToObject(o, "name");
		cJSON_AddNullToObject(o, "args");
		cJSON_AddNullToObject(o, "text");
	} else {
		cJSON_AddNumberToObject(o, "nr", (double)sc->nr);
		name = call_name(f);
		if (name)
			cJSON_AddStringToObject(o, "name", name);
		else
			cJSON_AddNullToObject(o, "name");
		args = cJSON_AddArrayToObject(o, "args");
		for (size_t k = 0; args && k < 6; k++) {
			char hex[24];

			snprintf(hex, sizeof(hex), "0x%" PRIx64, sc->args[k]);
			cJSON_AddItemToArray(args, cJSON_CreateString(hex));
		}
		if (th->wait && th->wait->detail[0])
			vg_json_add_text(o, "text", th->wait->detail);
		else
			cJSON_AddNullToObject(o, "text");
	}
	if (sc->state == VG_SYSCALL_IN || sc->state == VG_SYSCALL_NONE) {
		vg_json_add_addr(o, "sp", sc->sp);
		vg_json_add_addr(o, "pc", sc->pc);
	} else {
		cJSON_AddNullToObject(o, "sp");
		cJSON_AddNullToObject(o, "pc");
	}
	return o;
}

static cJSON *wait_json(const struct vg_report_stack_thread *th)
{
	const struct vg_wait *w = th->wait;
	const struct vg_stack_facts *f = th->facts;
	char leaf[512];
	cJSON *o;

	if (!w)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "kind", vg_wait_kind_name(w->kind));
	if (w->object)
		vg_json_add_addr(o, "object", w->object);
	else
		cJSON_AddNullToObject(o, "object");
	if (w->object_name[0])
		vg_json_add_text(o, "object_name", w->object_name);
	else
		cJSON_AddNullToObject(o, "object_name");
	if (w->fd >= 0) {
		cJSON_AddNumberToObject(o, "fd", w->fd);
		if (f && f->fd_text[0]) {
			cJSON_AddStringToObject(o, "fd_kind", f->fd_kind);
			vg_json_add_text(o, "fd_text", f->fd_text);
		} else {
			cJSON_AddNullToObject(o, "fd_kind");
			cJSON_AddNullToObject(o, "fd_text");
		}
	} else {
		cJSON_AddNullToObject(o, "fd");
		cJSON_AddNullToObject(o, "fd_kind");
		cJSON_AddNullToObject(o, "fd_text");
	}
	if (w->owner) {
		char st[2] = { f ? f->owner_state : 0, 0 };

		cJSON_AddNumberToObject(o, "owner", w->owner);
		if (st[0]) {
			vg_json_add_text(o, "owner_name", f->owner_name);
			cJSON_AddStringToObject(o, "owner_state", st);
		} else {
			cJSON_AddNullToObject(o, "owner_name");
			cJSON_AddNullToObject(o, "owner_state");
		}
	} else {
		cJSON_AddNullToObject(o, "owner");
		cJSON_AddNullToObject(o, "owner_name");
		cJSON_AddNullToObject(o, "owner_state");
	}
	cJSON_AddBoolToObject(o, "write_locked", w->write_locked);
	cJSON_AddNumberToObject(o, "readers", w->readers);
	vg_json_add_text(o, "leaf", vg_stack_wait_leaf(w, f, leaf, sizeof(leaf)));
	return o;
}

static cJSON *link_json(const struct vg_wait_link *l)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "tid", l->tid);
	if (l->object)
		vg_json_add_addr(o, "object", l->object);
	else
		cJSON_AddNullToObject(o, "object");
	if (l->object_name && l->object_name[0])
		vg_json_add_text(o, "object_name", l->object_name);
	else
		cJSON_AddNullToObject(o, "object_name");
	cJSON_AddNumberToObject(o, "owner", l->owner);
	return o;
}

static cJSON *chain_json(const struct vg_report_stack *r, pid_t tid)
{
	static const char *const ends[] = {
		[VG_CHAIN_AT_THREAD] = "at_thread", [VG_CHAIN_DEAD_OWNER] = "dead_owner",
		[VG_CHAIN_DEADLOCK] = "deadlock",
	};
	const struct vg_wait_chain *c = chain_of(r, tid);
	cJSON *o, *links;
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!c)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (!o)
		return NULL;
	m = open_memstream(&text, &len);
	if (m) {
		put_chain(m, r, c);
		fclose(m);
	}
	if (text)
		vg_json_add_text(o, "text", text);
	else
		cJSON_AddNullToObject(o, "text");
	free(text);
	cJSON_AddStringToObject(o, "end", ends[c->end]);
	cJSON_AddNumberToObject(o, "end_tid", c->end_tid);
	links = cJSON_AddArrayToObject(o, "links");
	for (size_t k = 0; links && k < c->n; k++)
		cJSON_AddItemToArray(links, link_json(&c->links[k]));
	return o;
}

static cJSON *kernel_json(const struct vg_report_stack *r, const struct vg_stack_facts *f)
{
	cJSON *arr;

	if (r->no_kernel || !f || f->info_error || f->info.kernel_error)
		return cJSON_CreateNull();
	arr = cJSON_CreateArray();
	for (size_t k = 0; arr && k < f->info.n_kernel; k++) {
		const struct vg_kernel_frame *kf = &f->info.kernel[k];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			break;
		cJSON_AddItemToArray(arr, o);
		vg_json_add_text(o, "function", kf->function);
		cJSON_AddNumberToObject(o, "offset", (double)kf->offset);
		cJSON_AddNumberToObject(o, "size", (double)kf->size);
		if (kf->addr)
			vg_json_add_addr(o, "address", kf->addr);
		else
			cJSON_AddNullToObject(o, "address");
	}
	return arr;
}

static cJSON *thread_json(const struct vg_report_stack *r, const struct vg_report_stack_thread *th,
			  struct vg_sym_result *res)
{
	const struct vg_thread_stack *st = th->st;
	const struct vg_stack_facts *f = th->facts;
	bool known = f && !f->info_error;
	cJSON *o = cJSON_CreateObject(), *frames;
	char state[2] = { known ? f->info.state : 0, 0 };

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "tid", st->tid);
	if (known && f->info.name[0])
		vg_json_add_text(o, "name", f->info.name);
	else
		cJSON_AddNullToObject(o, "name");
	if (state[0]) {
		cJSON_AddStringToObject(o, "state", state);
		cJSON_AddStringToObject(o, "state_name", vg_thread_state_name(state[0]));
	} else {
		cJSON_AddNullToObject(o, "state");
		cJSON_AddNullToObject(o, "state_name");
	}
	if (known)
		cJSON_AddNumberToObject(o, "cpu_time_ns", (double)(f->info.user_ns + f->info.system_ns));
	else
		cJSON_AddNullToObject(o, "cpu_time_ns");
	if (f && f->info_error)
		vg_json_add_text(o, "facts_why", f->info_why);
	else
		cJSON_AddNullToObject(o, "facts_why");
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
	cJSON_AddItemToObject(o, "syscall", syscall_json(th));
	cJSON_AddItemToObject(o, "wait", wait_json(th));
	cJSON_AddItemToObject(o, "chain", chain_json(r, st->tid));
	cJSON_AddBoolToObject(o, "deadlocked", in_deadlock(r, st->tid));
	cJSON_AddItemToObject(o, "blocked_at", blocked_at_json(r, st, res));
	frames = frames_json(r, st, res);
	if (!frames) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddItemToObject(o, "frames", frames);
	cJSON_AddItemToObject(o, "kernel_frames", kernel_json(r, f));
	if (r->no_kernel)
		cJSON_AddStringToObject(o, "kernel_why", "not asked for (--no-kernel)");
	else if (!f || f->info_error)
		cJSON_AddStringToObject(o, "kernel_why", "the thread's facts could not be read");
	else if (f->info.kernel_error)
		vg_json_add_text(o, "kernel_why", f->info.kernel_why);
	else
		cJSON_AddNullToObject(o, "kernel_why");
	return o;
}

static cJSON *deadlocks_json(const struct vg_report_stack *r, struct vg_sym_result *res)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t d = 0; arr && r->graph && d < r->graph->n_deadlocks; d++) {
		const struct vg_deadlock *dl = &r->graph->deadlocks[d];
		cJSON *o = cJSON_CreateObject(), *tids, *links;

		if (!o)
			break;
		cJSON_AddItemToArray(arr, o);
		tids = cJSON_AddArrayToObject(o, "threads");
		links = cJSON_AddArrayToObject(o, "links");
		for (size_t k = 0; tids && links && k < dl->n; k++) {
			const struct vg_report_stack_thread *th = thread_of(r, dl->links[k].tid);
			cJSON *l = link_json(&dl->links[k]);

			cJSON_AddItemToArray(tids, cJSON_CreateNumber(dl->links[k].tid));
			if (!l)
				continue;
			cJSON_AddItemToArray(links, l);
			if (th && th->facts && !th->facts->info_error)
				vg_json_add_text(l, "name", th->facts->info.name);
			else
				cJSON_AddNullToObject(l, "name");
			cJSON_AddItemToObject(l, "blocked_at",
					      th ? blocked_at_json(r, th->st, res) : cJSON_CreateNull());
		}
	}
	return arr;
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
	cJSON_AddBoolToObject(obs, "kernel_stacks", !r->no_kernel);
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
	arr = deadlocks_json(r, res);
	if (!arr)
		goto fail;
	cJSON_AddItemToObject(doc, "deadlocks", arr);
	free(res);
	return doc;
fail:
	free(res);
	cJSON_Delete(doc);
	return NULL;
}
