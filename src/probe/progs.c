/* progs.c - loading the probe's eBPF programs: see bpf.h.
 *
 * The programs are C (probe.bpf.c, exec_gate.bpf.c), compiled by clang at
 * build time; bpftool's skeletons (probe.skel.h, exec_gate.skel.h, made by
 * gen-skel.sh) embed the object and libbpf loads it.  One load per site
 * and kind: the site, the kind and what the program does are read-only
 * globals set before the load, which the verifier treats as constants, so
 * each program carries only its own path.  The maps are vigil's own
 * (counters.c, output.c), handed in with bpf_map__reuse_fd; a map the
 * program does not use (no per-thread hash, no rings) is left to libbpf,
 * which creates a one-entry one for the load.
 *
 * libbpf reports through a print callback (perf/bpf_log.h): vigil's
 * library never prints, so the last warning lines of the calling thread
 * are kept, and the last meaningful one (the verifier's reason) goes into
 * the sentence when a load fails.
 *
 * Not done here: the maps (counters.c), the rings (output.c), attaching
 * to a uprobe (perf/uprobe.c). */
#include "probe/bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perf/bpf_log.h"
#include "probe/bpf_int.h"
#include "probe/exec_gate.skel.h"
#include "probe/probe.skel.h"

#define MAX_STACK_BYTES 16384u
#define STACK_PIECE 512u

_Static_assert(offsetof(struct vg_probe_record, regs) == 24, "record layout");
_Static_assert(offsetof(struct vg_probe_record, mem) == 192, "record layout");
_Static_assert(offsetof(struct vg_probe_record, stack) == 248, "record layout");
_Static_assert(VG_PR_COUNT == 21, "struct pt_regs has 21 words on x86-64");

/* The program's fd, kept after the skeleton is gone. */
static int keep_fd(int fd, struct vg_error *err)
{
	int r = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	if (r < 0)
		return vg_error_set(err, -errno, "cannot keep the probe program's fd: %s",
				    strerror(errno));
	return r;
}

/* A failed load's sentence.  EPERM is a missing privilege; the verifier
 * says EACCES for a bad memory access: that is vigil's bug, neither a
 * missing privilege nor the user's input (exit 1). */
static int load_error(int r, const char *what, struct vg_error *err)
{
	char reason[256];

	vg_bpf_log_reason(reason, sizeof(reason));
	if (r == -EPERM || (r == -EACCES && !reason[0])) {
		vg_bpf_log_end();
		return vg_bpf_refused(err, what);
	}
	r = vg_error_set(err, r == -EACCES ? -EPROTO : r, "the kernel's BPF verifier refused %s: %s",
			 what, reason[0] ? reason : strerror(-r));
	vg_error_set_exit(err, VG_EXIT_RUNTIME);
	vg_bpf_log_end();
	return r;
}

/* ------------------------------------------------------------ probes */

static int reuse(struct bpf_map *map, int fd)
{
	return fd >= 0 ? bpf_map__reuse_fd(map, fd) : 0;
}

int vg_bpf_prog_load(const struct vg_bpf_prog_spec *spec, const struct vg_bpf_counters *c,
		     const struct vg_bpf_output *output, int *prog_fd, struct vg_error *err)
{
	struct vg_probe_bpf *skel;
	char what[64];
	int r;

	*prog_fd = -1;
	if (spec->count && !c)
		return vg_error_set(err, -EINVAL, "internal: a counting probe program without "
				    "counters");
	if (spec->count && spec->site >= c->n_sites)
		return vg_error_set(err, -EINVAL, "internal: probe site %u of %zu", spec->site,
				    c->n_sites);
	if (!spec->count && !output)
		return vg_error_set(err, -EINVAL, "internal: a probe program that neither counts "
				    "nor records");
	if (spec->stack_bytes % STACK_PIECE || spec->stack_bytes > MAX_STACK_BYTES)
		return vg_error_set(err, -EINVAL, "internal: %u stack bytes per record (a "
				    "multiple of %u up to %u)", spec->stack_bytes, STACK_PIECE,
				    MAX_STACK_BYTES);
	snprintf(what, sizeof(what), "the probe program for site %u", spec->site);
	skel = vg_probe_bpf__open();
	if (!skel)
		return vg_error_set(err, -errno, "cannot open the probe's BPF object: %s",
				    strerror(errno));
	skel->rodata->site = spec->site;
	skel->rodata->kind = spec->kind;
	skel->rodata->count = spec->count;
	skel->rodata->record = output != NULL;
	skel->rodata->stack_bytes = output ? spec->stack_bytes : 0;
	for (int i = 0; i < VG_BPF_MAX_MEM_ARGS; i++) {
		skel->rodata->mem_size[i] = spec->mem[i].size;
		skel->rodata->mem_reg[i] = spec->mem[i].reg;
		skel->rodata->mem_disp[i] = spec->mem[i].disp;
	}
	if (spec->n_terms && c && spec->n_terms <= VG_BPF_FILTER_MAX_TERMS) {
		skel->rodata->n_terms = spec->n_terms;
		skel->rodata->all_slot = spec->all_slot;
		skel->rodata->record_dropped = spec->record_dropped;
		for (uint32_t i = 0; i < spec->n_terms; i++) {
			skel->rodata->term_reg[i] = spec->terms[i].reg;
			skel->rodata->term_bits[i] = spec->terms[i].bits;
			skel->rodata->term_signed[i] = spec->terms[i].is_signed;
			skel->rodata->term_op[i] = spec->terms[i].op;
			skel->rodata->term_value[i] = spec->terms[i].value;
		}
	}
	if (c) {
		uint32_t base = (uint32_t)c->n_sites;

		skel->rodata->gated = true;
		skel->rodata->gate_slot = base + (spec->kind == VG_PROBE_REC_ENTRY ?
						   SLOT_ENTRY_GATE : SLOT_RETURN_GATE);
		skel->rodata->dropped_slot = base + SLOT_DROPPED;
		skel->rodata->per_thread = spec->count && c->threads_fd >= 0;
	}
	r = c ? reuse(skel->maps.counts, c->counts_fd) : 0;
	if (r == 0 && c)
		r = reuse(skel->maps.threads, c->threads_fd);
	if (r == 0 && output)
		r = reuse(skel->maps.rings, vg_bpf_output_rings_fd(output));
	if (r == 0 && output)
		r = reuse(skel->maps.lost, vg_bpf_output_lost_fd(output));
	if (r < 0) {
		vg_probe_bpf__destroy(skel);
		return vg_error_set(err, r, "cannot hand the probe's maps to its program: %s",
				    strerror(-r));
	}
	vg_bpf_log_start();
	r = vg_probe_bpf__load(skel);
	if (r < 0) {
		vg_probe_bpf__destroy(skel);
		return load_error(r, what, err);
	}
	vg_bpf_log_end();
	r = keep_fd(bpf_program__fd(skel->progs.vg_probe), err);
	vg_probe_bpf__destroy(skel);
	if (r < 0)
		return r;
	*prog_fd = r;
	return 0;
}

/* ------------------------------------------------------------ exec gate */

int vg_bpf_exec_gate_open(const struct vg_bpf_counters *c, pid_t tgid, int *fd,
			  struct vg_error *err)
{
	struct vg_exec_gate_bpf *skel;
	struct stat ns;
	uint32_t base = (uint32_t)c->n_sites;
	int r;

	*fd = -1;
	if (stat("/proc/self/ns/pid", &ns) < 0)
		return vg_error_set(err, -errno, "cannot identify vigil's PID namespace "
				    "(/proc/self/ns/pid): %s", strerror(errno));
	skel = vg_exec_gate_bpf__open();
	if (!skel)
		return vg_error_set(err, -errno, "cannot open the exec gate's BPF object: %s",
				    strerror(errno));
	skel->rodata->ns_dev = (uint64_t)ns.st_dev;
	skel->rodata->ns_ino = (uint64_t)ns.st_ino;
	skel->rodata->tgid = (uint32_t)tgid;
	skel->rodata->entry_slot = base + SLOT_ENTRY_GATE;
	skel->rodata->return_slot = base + SLOT_RETURN_GATE;
	skel->rodata->exec_slot = base + SLOT_EXEC_NS;
	r = bpf_map__reuse_fd(skel->maps.counts, c->counts_fd);
	if (r < 0) {
		vg_exec_gate_bpf__destroy(skel);
		return vg_error_set(err, r, "cannot hand the counts map to the exec gate: %s",
				    strerror(-r));
	}
	vg_bpf_log_start();
	r = vg_exec_gate_bpf__load(skel);
	if (r < 0) {
		vg_exec_gate_bpf__destroy(skel);
		return load_error(r, "the exec gate's BPF program", err);
	}
	vg_bpf_log_end();
	/* Attached for as long as this fd is open (closing it detaches). */
	r = bpf_raw_tracepoint_open("sched_process_exec", bpf_program__fd(skel->progs.vg_exec_gate));
	vg_exec_gate_bpf__destroy(skel);
	if (r < 0) {
		if (r == -EPERM || r == -EACCES)
			return vg_bpf_refused(err, "attaching the exec gate to the "
					      "sched_process_exec tracepoint");
		return vg_error_set(err, r, "cannot attach the exec gate to the sched_process_exec "
				    "tracepoint: %s", strerror(-r));
	}
	*fd = r;
	return 0;
}
