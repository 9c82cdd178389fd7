/* sites.c - what one trap of a watch becomes: its write attributed
 * (attribute.h), the writer site (symbolized once: function, inline
 * frames, line; a kernel write's system call and call site), writes and
 * traps counted, and a timeline entry per write with its value. */
#include "watch/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/vec.h"

/* ---- writer sites --------------------------------------------------- */

static void fill_frames(struct vg_watch_site *site, const struct vg_sym_result *res)
{
	site->image = res->image_path;
	site->symbol = res->has_symbol ? res->symbol : NULL;
	site->symbol_offset = res->offset;
	site->file = res->file;
	site->line = res->line;
	site->column = res->column;
	site->function = res->n_frames ? res->frames[0].function : site->symbol;
	site->n_frames = 0;
	for (size_t i = 0; i < res->n_frames && i < VG_WATCH_MAX_FRAMES; i++) {
		site->frames[i] = res->frames[i];
		site->n_frames++;
	}
}

/* Code bytes of an image from its file, for samples drained after the
 * process exited (its memory is gone; its text is the file's). */
static bool read_code_file(struct vg_watch_session *s, uint64_t from, uint64_t to, uint8_t *buf)
{
	const struct vg_images *imgs = vg_symbolizer_images(s->sym);
	const struct vg_image *img = imgs ? vg_images_find(imgs, from) : NULL;
	int fd = img ? vg_image_fd(img) : -1;

	if (fd < 0)
		return false;
	for (size_t i = 0; i < img->n_loads; i++) {
		const struct vg_load *l = &img->loads[i];
		uint64_t lo = from - img->bias, hi = to - img->bias;

		if (lo < l->vaddr || hi > l->vaddr + l->filesz)
			continue;
		return pread(fd, buf, to - from, (off_t)(l->offset + lo - l->vaddr)) == (ssize_t)(to - from);
	}
	return false;
}

/* The session's unwinder, created on first use; it follows the
 * symbolizer's image set, which a refresh replaces (the image objects
 * live as long as the symbolizer).  NULL when it cannot be allocated. */
static struct vg_unwinder *unwinder_of(struct vg_watch_session *s)
{
	const struct vg_images *now = vg_symbolizer_images(s->sym);

	if (!s->unwinder) {
		if (vg_unwinder_new(s->t->pid, now, &s->unwinder, NULL) < 0)
			return NULL;
		s->unwinder_images = now;
	} else if (now != s->unwinder_images) {
		vg_unwinder_set_images(s->unwinder, now, NULL);
		s->unwinder_images = now;
	}
	return s->unwinder;
}

/* ---- what the attributor needs of the target ---- */

static int env_read_code(void *arg, uint64_t addr, uint8_t *buf, size_t n)
{
	struct vg_watch_session *s = arg;
	struct vg_mem_result res;
	struct vg_error e = { 0 };

	if (vg_mem_read(s->mem, addr, buf, n, &res, &e) == 0)
		return 0;
	return read_code_file(s, addr, addr + n, buf) ? 0 : -EFAULT;
}

static bool env_function_start(void *arg, uint64_t ip, uint64_t *start)
{
	struct vg_watch_session *s = arg;
	struct vg_sym_result res;
	struct vg_error e = { 0 };

	if (vg_sym_lookup(s->sym, ip, &res, &e) < 0 || !res.has_symbol)
		return false;
	*start = res.symbol_address;
	return true;
}

static const char *env_kernel_symbol(void *arg, uint64_t ip)
{
	struct vg_watch_session *s = arg;
	struct vg_sym_result res;
	struct vg_error e = { 0 };

	if (vg_sym_lookup(s->sym, ip, &res, &e) < 0 || !res.has_symbol)
		return NULL;
	return res.symbol;
}

/* ---- writer sites --------------------------------------------------- */

/* A kernel write: the line that asked for it is the system call wrapper's
 * caller, one CFI step out of the wrapper. */
static void locate_kernel_site(struct vg_watch_session *s, const struct vg_perf_sample *smp,
			       struct vg_watch_site *site)
{
	struct vg_sym_result res;
	struct vg_error e = { 0 };

	if (!site->user_ip || vg_sym_lookup(s->sym, site->user_ip, &res, &e) < 0)
		return;
	site->writer_static_ip = res.image ? res.static_address - 2 : site->user_ip - 2;
	fill_frames(site, &res);
	if (res.image && smp->stack_size) {
		struct vg_unwinder *u = unwinder_of(s);
		uint64_t ips[2];
		size_t n = 0;
		enum vg_unwind_stop why;

		/* Frame 0 is the sampled IP (site->user_ip), frame 1 the
		 * wrapper's return address. */
		if (u)
			vg_unwind_dwarf(u, &smp->regs, smp->stack, smp->stack_size, ips, NULL, 2,
					&n, &why);
		if (n == 2 && ips[1]) {
			site->call_site_ip = ips[1];
			if (vg_sym_lookup(s->sym, ips[1] - 1, &res, &e) == 0)
				fill_frames(site, &res);
		}
	}
	if (site->call_site_ip)
		snprintf(site->caveat, sizeof(site->caveat),
			 "the kernel wrote it in system call %s; the line is the call site of the "
			 "system call wrapper", site->syscall[0] ? site->syscall : "?");
}

static void new_site(struct vg_watch_session *s, const struct vg_perf_sample *smp,
		     const struct vg_trap_result *r, struct vg_watch_site *site)
{
	struct vg_sym_result res;
	struct vg_error e = { 0 };

	memset(site, 0, sizeof(*site));
	site->trap_ip = smp->ip;
	site->trap_static_ip = smp->ip;
	site->syscall_nr = -1;
	if (r->writer) {
		site->writer = *r->writer;
	} else {
		site->writer.value_reg = site->writer.mem_base = site->writer.mem_index = -1;
		site->writer.why = r->why;
	}
	site->writer.confidence = r->confidence;
	if (r->how == VG_TRAP_KERNEL) {
		site->kernel = true;
		site->user_ip = r->user_ip;
		site->kernel_function = r->kernel_function;
		site->syscall_nr = r->syscall_nr;
		snprintf(site->syscall, sizeof(site->syscall), "%s", r->syscall);
		locate_kernel_site(s, smp, site);
		return;
	}
	if (vg_sym_lookup(s->sym, smp->ip, &res, &e) == 0 && res.image)
		site->trap_static_ip = res.static_address;
	if (site->writer.caveat)
		snprintf(site->caveat, sizeof(site->caveat), "%s", site->writer.caveat);
	if (vg_sym_lookup(s->sym, r->writer ? r->writer->ip : smp->ip, &res, &e) == 0) {
		if (r->writer)
			site->writer_static_ip = res.image ? res.static_address : r->writer->ip;
		fill_frames(site, &res);
	}
}

/* One site per writer: a user instruction, a (user IP, system call) of
 * the kernel, or, without a writer, the trap IP. */
static struct vg_watch_site *site_for(struct vg_watch_session *s, struct vg_watch_log *log,
				      const struct vg_perf_sample *smp,
				      const struct vg_trap_result *r, size_t *index)
{
	bool kernel = r->how == VG_TRAP_KERNEL;
	uint64_t key = r->writer && !kernel ? r->writer->ip : kernel ? r->user_ip : smp->ip;

	for (size_t i = log->n_sites; i-- > 0;) {
		const struct vg_watch_site *x = &log->sites[i];
		uint64_t xkey = x->kernel ? x->user_ip : x->writer.ip ? x->writer.ip : x->trap_ip;

		if (x->kernel == kernel && xkey == key && (!kernel || x->syscall_nr == r->syscall_nr) &&
		    (x->writer.kind == VG_WRITER_UNKNOWN) == (r->writer == NULL)) {
			*index = i;
			return &log->sites[i];
		}
	}
	if (VG_GROW(log->sites, log->cap_sites, log->n_sites + 1) < 0)
		return NULL;
	new_site(s, smp, r, &log->sites[log->n_sites]);
	*index = log->n_sites++;
	return &log->sites[*index];
}

/* ---- samples -------------------------------------------------------- */

static void sample_value(const struct vg_watch_site *site, const struct vg_perf_sample *smp,
			 struct vg_watch_value *v)
{
	const char *why = NULL;

	memset(v, 0, sizeof(*v));
	v->width = site->writer.width;
	if (site->kernel) {
		v->why = "written by the kernel: the value is not in the registers";
		return;
	}
	if (site->writer.kind == VG_WRITER_UNKNOWN) {
		v->why = "the writer is unknown";
		return;
	}
	if (vg_writer_value(&site->writer, &smp->regs, &v->value, &why)) {
		v->kind = site->writer.value_kind;
		if (v->kind == VG_VALUE_REGISTER || v->kind == VG_VALUE_ADD_REGISTER)
			snprintf(v->register_name, sizeof(v->register_name), "%s",
				 site->writer.value_reg_name);
	} else {
		v->why = why;
	}
}

/* The thread's latest write in the timeline: a continuing trap adds to
 * it (the write it continues is recent: look a little way back). */
static struct vg_watch_sample *last_sample_of(struct vg_watch_log *log, pid_t tid)
{
	for (size_t i = log->n_samples, seen = 0; i-- > 0 && seen < 64; seen++)
		if (log->samples[i].tid == tid)
			return &log->samples[i];
	return NULL;
}

/* --stacks: the write's user stack, by CFI over the sampled registers
 * and stack copy, innermost first (the IP, then return addresses).  A
 * kernel write is unwound from where its system call was made. */
static void unwind_sample(struct vg_watch_session *s, struct vg_watch_sample *ws,
			  const struct vg_perf_sample *smp)
{
	struct vg_unwinder *u = unwinder_of(s);
	uint64_t ips[MAX_CALLCHAIN];
	size_t n = 0;
	enum vg_unwind_stop why;

	if (!u || !(smp->regs.mask & 1ull << PERF_REG_X86_IP))
		return;
	vg_unwind_dwarf(u, &smp->regs, smp->stack, smp->stack_size, ips, NULL, MAX_CALLCHAIN,
			&n, &why);
	if (!n || !(ws->callchain = malloc(n * sizeof(uint64_t))))
		return;
	memcpy(ws->callchain, ips, n * sizeof(uint64_t));
	ws->n_callchain = n;
}

/* The fs base of tid, asked once per thread (opt.thread_pointer). */
static bool thread_fs_base(struct vg_watch_session *s, pid_t tid, uint64_t *fs)
{
	uint64_t v = 0;

	if (!s->opt.thread_pointer)
		return false;
	for (size_t i = 0; i < s->n_fs; i++) {
		if (s->fs_cache[i].tid == tid) {
			*fs = s->fs_cache[i].fs;
			return *fs != 0;
		}
	}
	if (s->opt.thread_pointer(s->opt.thread_pointer_ctx, tid, &v) < 0)
		v = 0;
	if (VG_GROW(s->fs_cache, s->cap_fs, s->n_fs + 1) == 0)
		s->fs_cache[s->n_fs++] = (struct thread_fs){ tid, v };
	*fs = v;
	return v != 0;
}

void watch_record(struct vg_watch_session *s, struct vg_watch_log *log,
		   const struct vg_perf_sample *smp, uint64_t watch_addr, unsigned len,
		   unsigned generation)
{
	struct vg_trap t = {
		.tid = smp->tid, .ip = smp->ip, .user = &smp->regs,
		.intr = smp->intr.mask ? &smp->intr : NULL,
		.callchain = smp->callchain, .n_callchain = smp->nr_callchain,
		.stack = smp->stack, .stack_size = smp->stack_size,
	};
	struct vg_trap_result r;
	struct vg_watch_site *site;
	struct vg_watch_value v;
	size_t index;

	log->accepted_hits++;
	t.fs_base_known = thread_fs_base(s, (pid_t)smp->tid, &t.fs_base);
	if (!log->attr) {
		struct vg_trap_env env = { s, env_read_code, env_function_start, env_kernel_symbol };

		log->attr = vg_attributor_new(&env);
	}
	if (!log->attr || vg_attribute_trap(log->attr, &t, watch_addr, len, &r) < 0 ||
	    !(site = site_for(s, log, smp, &r, &index))) {
		log->unattributed++;   /* out of memory: writes are a lower bound */
		return;
	}
	site->traps++;
	if (r.confidence != VG_CONF_EXACT && site->writer.kind != VG_WRITER_UNKNOWN) {
		if (!site->unverified++)
			site->unverified_why = r.why;
		if (site->writer.confidence == VG_CONF_EXACT)
			site->writer.confidence = VG_CONF_HEURISTIC;
	}
	if (r.continues) {
		struct vg_watch_sample *last = last_sample_of(log, (pid_t)smp->tid);

		if (last && last->site == index)
			last->traps++;
		return;
	}
	site->writes++;
	log->writes++;
	sample_value(site, smp, &v);
	log->has_last_value = true;
	log->last_value = v;
	if (log->n_samples >= s->opt.max_samples) {
		log->samples_truncated = true;
		return;
	}
	if (VG_GROW(log->samples, log->cap_samples, log->n_samples + 1) < 0)
		return;
	log->samples[log->n_samples++] = (struct vg_watch_sample){
		.time_ns = smp->time, .tid = (pid_t)smp->tid, .site = index,
		.generation = generation, .traps = 1, .value = v,
	};
	if (s->opt.stacks)
		unwind_sample(s, &log->samples[log->n_samples - 1], smp);
}

