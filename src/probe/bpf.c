/* bpf.c - uprobe events and the eBPF programs behind them: see bpf.h.
 *
 * Everything goes through bpf(2) and perf_event_open(2) directly: the
 * programs are a few dozen instructions, written here with the macros
 * below, so no compiler, no BTF and no libbpf are needed.  The verifier
 * checks them at load time; when it refuses one, the load is retried with
 * its log on and the log's last meaningful line goes into the sentence.
 *
 * Program shape (r6 = ctx, the probed thread's struct pt_regs; r7 = the
 * record when it lives in the scratch map; r8 = user SP; r9 = stack bytes
 * copied):
 *   count:   counts[site] += 1 (atomic); with the per-thread hash,
 *            threads[{site, tid}] += 1, inserted with value 1 when absent
 *            (BPF_NOEXIST; on EEXIST another CPU inserted it first: look
 *            it up once more), and counts[n_sites] (the "dropped" slot)
 *            += 1 when the hash is full.
 *   gate:    entry programs first read counts[n_sites + 1], return
 *            programs built with counters counts[n_sites + 2], and do
 *            nothing while it is 0 (vg_bpf_counters_gate, _gate_returns):
 *            one map store starts or stops every probe of a kind at one
 *            instant, however long the kernel takes to attach or detach
 *            them.  The return gate closes later than the entry gate, so
 *            a call entered before the stop can still return.
 *   exec:    a tracepoint program on sched:sched_process_exec stores 0
 *            in both gates, and the time in counts[n_sites + 3], when
 *            the target itself execs (vg_bpf_exec_gate_open).
 *   record:  kind, site, pid_tgid, time and the 21 registers into a
 *            struct vg_probe_record, then bpf_perf_event_output into this
 *            CPU's ring.  Without stack bytes the record is on the BPF
 *            stack (200 bytes); with them it is in the output's per-CPU
 *            scratch map (header + 16384 bytes: too big for the 512-byte
 *            BPF stack), and the user stack is copied in 512-byte pieces
 *            with bpf_probe_read_user, stopping at the first piece that
 *            faults.  The output size is a constant on every path the
 *            verifier walks (one per number of pieces copied).
 *
 * Not done here: choosing sites (resolve.c), matching entries to returns
 * and statistics (stats.c), deciding when to drain (the caller). */
#include "probe/bpf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#include "perf/cpus.h"
#include "perf/records.h"
#include "perf/ring.h"
#include "perf/tracepoint.h"
#include "util/vec.h"

/* ------------------------------------------------------------ eBPF ISA */

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i)        INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
/* A 32-bit move zero-extends: MOV32_IMM(r, -1) gives 0xffffffff. */
#define MOV32_IMM(d, i)        INSN(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s)        INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD64_IMM(d, i)        INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_DW(d, s, o)        INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define LDX_W(d, s, o)         INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define STX_DW(d, s, o)        INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_W(d, s, o)         INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define ST_DW(d, o, i)         INSN(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)
#define ST_W(d, o, i)          INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define ATOMIC_ADD_DW(d, s, o) INSN(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
#define CALL(f)                INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT()                 INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* Jumps: the offset is filled in when the label is placed. */
#define JEQ_IMM(d, i)          INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, 0, i)
#define JNE_IMM(d, i)          INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, 0, i)
#define JA()                   INSN(BPF_JMP | BPF_JA, 0, 0, 0, 0)

enum { R0 = 0, R1, R2, R3, R4, R5, R6, R7, R8, R9, FP };

#define MAX_STACK_BYTES 16384u
#define STACK_PIECE 512u
#define MAX_INSNS 1024
#define REC_HDR offsetof(struct vg_probe_record, stack)

_Static_assert(offsetof(struct vg_probe_record, regs) == 24, "record layout");
_Static_assert(offsetof(struct vg_probe_record, stack) == 200, "record layout");
_Static_assert(VG_PR_COUNT == 21, "struct pt_regs has 21 words on x86-64");

/* BPF stack (frame pointer offsets): the map keys, then the record when
 * it has no stack bytes. */
#define FP_KEY        (-4)     /* u32: counts key, scratch key */
#define FP_THREAD_KEY (-16)    /* struct thread_key */
#define FP_ONE        (-24)    /* u64 1: a new pair's first count */
#define FP_RECORD     (-232)   /* struct vg_probe_record, 200 bytes */
#define FP_PIDNS      (-16)    /* exec gate: struct bpf_pidns_info */

struct thread_key {
	uint32_t site;
	uint32_t tid;
};

struct prog_buf {
	struct bpf_insn insn[MAX_INSNS];
	size_t n;
	bool overflow;
};

/* Jumps to one place, patched when the place is known. */
struct label {
	size_t from[40];
	size_t n;
};

static void emit(struct prog_buf *p, struct bpf_insn i)
{
	if (p->n == MAX_INSNS) {
		p->overflow = true;
		return;
	}
	p->insn[p->n++] = i;
}

/* The two-slot load of a map's address, by fd (the kernel swaps it in). */
static void emit_ld_map(struct prog_buf *p, int reg, int map_fd)
{
	emit(p, INSN(BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, map_fd));
	emit(p, INSN(0, 0, 0, 0, 0));
}

static void emit_jump(struct prog_buf *p, struct bpf_insn jump, struct label *to)
{
	if (to->n == sizeof(to->from) / sizeof(to->from[0])) {
		p->overflow = true;
		return;
	}
	to->from[to->n++] = p->n;
	emit(p, jump);
}

static void place(struct prog_buf *p, struct label *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->from[i] < p->n)
			p->insn[l->from[i]].off = (int16_t)(p->n - l->from[i] - 1);
	l->n = 0;
}

/* The two-slot load of a 64-bit constant (MOV64_IMM sign-extends 32). */
static void emit_ld_imm64(struct prog_buf *p, int reg, uint64_t v)
{
	emit(p, INSN(BPF_LD | BPF_DW | BPF_IMM, reg, 0, 0, (int32_t)(uint32_t)v));
	emit(p, INSN(0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32)));
}

/* r0 = &map[*(fp + key_off)] or NULL; clobbers r1-r5. */
static void emit_lookup(struct prog_buf *p, int map_fd, int key_off)
{
	emit_ld_map(p, R1, map_fd);
	emit(p, MOV64_REG(R2, FP));
	emit(p, ADD64_IMM(R2, key_off));
	emit(p, CALL(BPF_FUNC_map_lookup_elem));
}

/* If r0 is a value, *(u64 *)r0 += 1, atomically (other CPUs run the same
 * program on the same slot). */
static void emit_add_one_at_r0(struct prog_buf *p, struct label *skip)
{
	emit_jump(p, JEQ_IMM(R0, 0), skip);
	emit(p, MOV64_IMM(R1, 1));
	emit(p, ATOMIC_ADD_DW(R0, R1, 0));
}

static void emit_count_slot(struct prog_buf *p, int counts_fd, uint32_t slot)
{
	struct label done = { .n = 0 };

	emit(p, ST_W(FP, FP_KEY, (int32_t)slot));
	emit_lookup(p, counts_fd, FP_KEY);
	emit_add_one_at_r0(p, &done);
	place(p, &done);
}

static void emit_count_thread(struct prog_buf *p, const struct vg_bpf_counters *c, uint32_t site);

/* ------------------------------------------------------------ counters */

/* The counts map's slots after the sites' (slot n_sites + SLOT_...). */
enum {
	SLOT_DROPPED = 0,          /* per-thread hits not in the full hash */
	SLOT_ENTRY_GATE,           /* entry programs run while it is not 0 */
	SLOT_RETURN_GATE,          /* return programs likewise */
	SLOT_EXEC_NS,              /* when the exec gate closed both (0: not yet) */
	N_EXTRA_SLOTS
};

struct vg_bpf_counters {
	size_t n_sites;
	int counts_fd;             /* ARRAY u32 -> u64: n_sites, then N_EXTRA_SLOTS */
	int threads_fd;            /* HASH struct thread_key -> u64, or -1 */
};

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

/* Is cap in vigil's effective set?  capget(2) directly: libcap is not a
 * dependency for two bits. */
static bool cap_effective(unsigned cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0 || cap / 32 >= _LINUX_CAPABILITY_U32S_3)
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

static int bpf_refused(struct vg_error *err, const char *what)
{
	return vg_error_set(err, -EPERM, "%s was refused: vigil probe needs root or "
			    "CAP_SYS_ADMIN (the kernel's uprobes require it; it stands for the "
			    "CAP_BPF and CAP_PERFMON the eBPF program needs)", what);
}

static int map_create(enum bpf_map_type type, uint32_t key_size, uint32_t value_size,
		      uint32_t max_entries, const char *name, int *fd, struct vg_error *err)
{
	union bpf_attr a;
	long r;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key_size;
	a.value_size = value_size;
	a.max_entries = max_entries;
	snprintf(a.map_name, sizeof(a.map_name), "%s", name);
	r = sys_bpf(BPF_MAP_CREATE, &a);
	if (r < 0) {
		int e = errno;

		if (e == EPERM || e == EACCES)
			return bpf_refused(err, "creating the probe's BPF maps");
		return vg_error_set(err, -e, "cannot create the probe's BPF map '%s' "
				    "(%u entries of %u bytes): %s", name, max_entries, value_size,
				    strerror(e));
	}
	*fd = (int)r;   /* bpf(2) fds are close-on-exec */
	return 0;
}

static int map_lookup(int fd, const void *key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0 ? -errno : 0;
}

static int map_update(int fd, const void *key, const void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	a.flags = BPF_ANY;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0 ? -errno : 0;
}

static int map_next_key(int fd, const void *key, void *next)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.next_key = (uint64_t)(uintptr_t)next;
	return sys_bpf(BPF_MAP_GET_NEXT_KEY, &a) < 0 ? -errno : 0;
}

int vg_bpf_counters_new(size_t n_sites, bool per_thread, size_t max_thread_entries,
			struct vg_bpf_counters **out, struct vg_error *err)
{
	struct vg_bpf_counters *c;
	int r;

	*out = NULL;
	if (n_sites == 0 || n_sites >= UINT32_MAX)
		return vg_error_set(err, -EINVAL, "internal: %zu probe sites", n_sites);
	if (per_thread && (max_thread_entries == 0 || max_thread_entries > UINT32_MAX))
		return vg_error_set(err, -EINVAL, "internal: per-thread table of %zu entries",
				    max_thread_entries);
	c = calloc(1, sizeof(*c));
	if (!c)
		return vg_error_set(err, -ENOMEM, "out of memory for probe counters");
	c->n_sites = n_sites;
	c->counts_fd = c->threads_fd = -1;
	r = map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t), sizeof(uint64_t),
		       (uint32_t)n_sites + N_EXTRA_SLOTS, "vg_counts", &c->counts_fd, err);
	if (r == 0 && per_thread)
		r = map_create(BPF_MAP_TYPE_HASH, sizeof(struct thread_key), sizeof(uint64_t),
			       (uint32_t)max_thread_entries, "vg_thread_counts", &c->threads_fd,
			       err);
	if (r < 0) {
		vg_bpf_counters_free(c);
		return r;
	}
	*out = c;
	return 0;
}

struct vg_bpf_counters *vg_bpf_counters_free(struct vg_bpf_counters *c)
{
	if (!c)
		return NULL;
	if (c->counts_fd >= 0)
		close(c->counts_fd);
	if (c->threads_fd >= 0)
		close(c->threads_fd);
	free(c);
	return NULL;
}

static int read_slot(const struct vg_bpf_counters *c, uint32_t slot, uint64_t *v,
		     struct vg_error *err)
{
	int r = map_lookup(c->counts_fd, &slot, v);

	if (r < 0)
		return vg_error_set(err, r, "cannot read probe counter %u: %s", slot, strerror(-r));
	return 0;
}

int vg_bpf_counters_read(const struct vg_bpf_counters *c, size_t site, uint64_t *calls,
			 struct vg_error *err)
{
	if (site >= c->n_sites)
		return vg_error_set(err, -EINVAL, "internal: probe site %zu of %zu", site,
				    c->n_sites);
	return read_slot(c, (uint32_t)site, calls, err);
}

static int set_gate(const struct vg_bpf_counters *c, uint32_t slot, bool open,
		    struct vg_error *err)
{
	uint64_t v = open;
	int r = map_update(c->counts_fd, &slot, &v);

	if (r < 0)
		return vg_error_set(err, r, "cannot %s the probes: %s", open ? "start" : "stop",
				    strerror(-r));
	return 0;
}

int vg_bpf_counters_gate(const struct vg_bpf_counters *c, bool open, struct vg_error *err)
{
	return set_gate(c, (uint32_t)c->n_sites + SLOT_ENTRY_GATE, open, err);
}

int vg_bpf_counters_gate_returns(const struct vg_bpf_counters *c, bool open, struct vg_error *err)
{
	return set_gate(c, (uint32_t)c->n_sites + SLOT_RETURN_GATE, open, err);
}

int vg_bpf_counters_exec_ns(const struct vg_bpf_counters *c, uint64_t *ns, struct vg_error *err)
{
	return read_slot(c, (uint32_t)c->n_sites + SLOT_EXEC_NS, ns, err);
}

static int cmp_thread_count(const void *a, const void *b)
{
	const struct vg_bpf_thread_count *x = a, *y = b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int vg_bpf_counters_threads(const struct vg_bpf_counters *c, struct vg_bpf_thread_count **out,
			    size_t *n, uint64_t *dropped, struct vg_error *err)
{
	struct vg_bpf_thread_count *v = NULL;
	size_t cap = 0, k = 0;
	struct thread_key key, next;
	const void *prev = NULL;
	int r;

	*out = NULL;
	*n = 0;
	*dropped = 0;
	if (c->threads_fd < 0)
		return 0;
	r = read_slot(c, (uint32_t)c->n_sites + SLOT_DROPPED, dropped, err);
	if (r < 0)
		return r;
	/* Pairs are only ever added while we walk: the walk may miss one
	 * added meanwhile, never see one twice. */
	while ((r = map_next_key(c->threads_fd, prev, &next)) == 0) {
		uint64_t calls;

		key = next;
		prev = &key;
		if (map_lookup(c->threads_fd, &key, &calls) < 0)
			continue;
		if (VG_GROW(v, cap, k + 1) < 0) {
			free(v);
			return vg_error_set(err, -ENOMEM, "out of memory for per-thread counts");
		}
		v[k++] = (struct vg_bpf_thread_count){ key.site, key.tid, calls };
	}
	if (r != -ENOENT) {
		free(v);
		return vg_error_set(err, r, "cannot walk the per-thread probe counts: %s",
				    strerror(-r));
	}
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_thread_count);
	*out = v;
	*n = k;
	return 0;
}

/* threads[{site, tid}] += 1; a new pair starts at 1; a full table counts
 * into the dropped slot.  Expects nothing in registers; clobbers r0-r5. */
static void emit_count_thread(struct prog_buf *p, const struct vg_bpf_counters *c, uint32_t site)
{
	struct label add = { .n = 0 }, drop = { .n = 0 }, done = { .n = 0 };

	emit(p, CALL(BPF_FUNC_get_current_pid_tgid));
	emit(p, ST_W(FP, FP_THREAD_KEY + (int)offsetof(struct thread_key, site), (int32_t)site));
	emit(p, STX_W(FP, R0, FP_THREAD_KEY + (int)offsetof(struct thread_key, tid)));
	emit_lookup(p, c->threads_fd, FP_THREAD_KEY);
	emit_jump(p, JNE_IMM(R0, 0), &add);
	emit(p, ST_DW(FP, FP_ONE, 1));
	emit_ld_map(p, R1, c->threads_fd);
	emit(p, MOV64_REG(R2, FP));
	emit(p, ADD64_IMM(R2, FP_THREAD_KEY));
	emit(p, MOV64_REG(R3, FP));
	emit(p, ADD64_IMM(R3, FP_ONE));
	emit(p, MOV64_IMM(R4, BPF_NOEXIST));
	emit(p, CALL(BPF_FUNC_map_update_elem));
	emit_jump(p, JEQ_IMM(R0, 0), &done);
	/* EEXIST: the same thread on another CPU cannot race us, but a
	 * recycled tid or a second program on the pair can; anything else
	 * (E2BIG, ENOMEM) means full. */
	emit_jump(p, JNE_IMM(R0, -EEXIST), &drop);
	emit_lookup(p, c->threads_fd, FP_THREAD_KEY);
	emit_jump(p, JEQ_IMM(R0, 0), &drop);
	place(p, &add);
	emit(p, MOV64_IMM(R1, 1));
	emit(p, ATOMIC_ADD_DW(R0, R1, 0));
	emit_jump(p, JA(), &done);
	place(p, &drop);
	emit_count_slot(p, c->counts_fd, (uint32_t)c->n_sites + SLOT_DROPPED);
	place(p, &done);
}

/* ------------------------------------------------------------ output */

struct queued {
	uint64_t time;
	uint64_t seq;              /* collection order: ties keep it */
	size_t off;                /* payload in arena, 8-aligned */
	size_t len;
};

struct vg_bpf_output {
	int array_fd;              /* PERF_EVENT_ARRAY: CPU number -> its event */
	/* PERCPU_ARRAY, 1 entry of REC_HDR + MAX_STACK_BYTES: the record of
	 * a program that copies stack bytes.  Here rather than in the
	 * counters because only recording programs need it. */
	int scratch_fd;
	size_t n;                  /* online CPUs: one event and ring each */
	int *fds;
	struct vg_ring **rings;

	/* Records taken out of the rings, waiting for their turn. */
	unsigned char *arena, *spare;
	size_t arena_len, arena_cap, spare_cap;
	struct queued *q;
	size_t n_q, cap_q;
	uint64_t seq;
	struct vg_bpf_output_stats st;   /* lost: from PERF_RECORD_LOST */
	bool exact_lost;                 /* every event reads its lost count */
};

static int online_cpus(int **cpus, size_t *n, int *max_entries, struct vg_error *err)
{
	int *possible = NULL;
	size_t n_possible = 0;
	int r = vg_cpus_online(cpus, n, err);

	if (r < 0)
		return r;
	/* The program indexes the array by the CPU it runs on: size it for
	 * every possible CPU, not just those online now. */
	*max_entries = (*cpus)[*n - 1] + 1;
	if (vg_cpu_list_read("/sys/devices/system/cpu/possible", &possible, &n_possible) == 0) {
		if (possible[n_possible - 1] + 1 > *max_entries)
			*max_entries = possible[n_possible - 1] + 1;
		free(possible);
	}
	return 0;
}

static int perf_paranoid(void)
{
	int v = -100;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

static int open_output_event(int cpu, size_t data_pages, int *fd, bool *exact_lost,
			     struct vg_error *err)
{
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);
	long r;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_type = PERF_SAMPLE_RAW;
	a.sample_period = 1;
	/* Wake a poller when a quarter of the ring is used, not per record:
	 * a record per call would cost a wakeup per call. */
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(data_pages * (size_t)page / 4);
	/* A full ring's PERF_RECORD_LOST is only written with the next
	 * record that fits, so a burst at the end would go uncounted; the
	 * event's own lost count (read(2), Linux 6.0) is exact at any time. */
	a.read_format = PERF_FORMAT_LOST;
	r = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r < 0 && errno == EINVAL) {
		a.read_format = 0;
		r = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		*exact_lost = false;
	}
	if (r < 0) {
		int e = errno;

		if (e == EACCES || e == EPERM)
			return vg_error_set(err, -e, "opening the probe's output ring on CPU %d "
					    "was refused: vigil probe needs CAP_PERFMON (or root); "
					    "kernel.perf_event_paranoid is %d", cpu, perf_paranoid());
		return vg_error_set(err, -e, "cannot open the probe's output event on CPU %d: %s",
				    cpu, strerror(e));
	}
	*fd = (int)r;
	return 0;
}

int vg_bpf_output_new(size_t data_pages, struct vg_bpf_output **out, struct vg_error *err)
{
	struct vg_bpf_output *o;
	int *cpus = NULL, max_entries = 0, r;
	size_t n = 0;

	*out = NULL;
	r = online_cpus(&cpus, &n, &max_entries, err);
	if (r < 0)
		return r;
	o = calloc(1, sizeof(*o));
	if (o) {
		o->fds = malloc(n * sizeof(*o->fds));
		o->rings = calloc(n, sizeof(*o->rings));
	}
	if (!o || !o->fds || !o->rings) {
		free(cpus);
		vg_bpf_output_free(o);
		return vg_error_set(err, -ENOMEM, "out of memory for the probe's output rings");
	}
	o->array_fd = o->scratch_fd = -1;
	o->exact_lost = true;
	for (size_t i = 0; i < n; i++)
		o->fds[i] = -1;
	o->n = n;
	r = map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, sizeof(uint32_t), sizeof(uint32_t),
		       (uint32_t)max_entries, "vg_out", &o->array_fd, err);
	if (r == 0)
		r = map_create(BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(uint32_t),
			       (uint32_t)(REC_HDR + MAX_STACK_BYTES), 1, "vg_scratch",
			       &o->scratch_fd, err);
	for (size_t i = 0; r == 0 && i < n; i++) {
		uint32_t key = (uint32_t)cpus[i], value;

		r = open_output_event(cpus[i], data_pages, &o->fds[i], &o->exact_lost, err);
		if (r == 0)
			r = vg_ring_map(o->fds[i], data_pages, &o->rings[i], err);
		if (r == 0) {
			value = (uint32_t)o->fds[i];
			r = map_update(o->array_fd, &key, &value);
			if (r < 0)
				r = vg_error_set(err, r, "cannot register CPU %d's output ring "
						 "with the probe program: %s", cpus[i],
						 strerror(-r));
		}
	}
	free(cpus);
	if (r < 0) {
		vg_bpf_output_free(o);
		return r;
	}
	*out = o;
	return 0;
}

struct vg_bpf_output *vg_bpf_output_free(struct vg_bpf_output *o)
{
	if (!o)
		return NULL;
	for (size_t i = 0; i < o->n; i++) {
		if (o->rings)
			vg_ring_unmap(o->rings[i]);
		if (o->fds && o->fds[i] >= 0)
			close(o->fds[i]);
	}
	if (o->array_fd >= 0)
		close(o->array_fd);
	if (o->scratch_fd >= 0)
		close(o->scratch_fd);
	free(o->fds);
	free(o->rings);
	free(o->arena);
	free(o->spare);
	free(o->q);
	free(o);
	return NULL;
}

const int *vg_bpf_output_fds(const struct vg_bpf_output *o, size_t *n)
{
	*n = o->n;
	return o->fds;
}

static size_t align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

/* A sample's raw payload, checked, copied out (8-aligned) and queued. */
static int collect_record(const struct perf_event_header *h, void *arg)
{
	struct vg_bpf_output *o = arg;
	const unsigned char *raw = (const unsigned char *)(h + 1) + sizeof(uint32_t);
	uint32_t size, stack_len;
	uint64_t n, time;
	size_t off;

	if (h->type == PERF_RECORD_LOST) {
		if (vg_perf_parse_lost(h, &n))
			o->st.lost += n;
		else
			o->st.malformed++;
		return 0;
	}
	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*h) + sizeof(size)) {
		o->st.malformed++;
		return 0;
	}
	memcpy(&size, h + 1, sizeof(size));
	if (size > h->size - sizeof(*h) - sizeof(size) || size < REC_HDR) {
		o->st.malformed++;
		return 0;
	}
	memcpy(&stack_len, raw + offsetof(struct vg_probe_record, stack_len), sizeof(stack_len));
	if (stack_len > size - REC_HDR) {
		o->st.malformed++;
		return 0;
	}
	off = align8(o->arena_len);
	if (VG_GROW(o->arena, o->arena_cap, off + size) < 0 || VG_GROW(o->q, o->cap_q, o->n_q + 1) < 0) {
		o->st.dropped_nomem++;
		return 0;
	}
	memcpy(&time, raw + offsetof(struct vg_probe_record, time_ns), sizeof(time));
	memcpy(o->arena + off, raw, size);
	o->arena_len = off + size;
	o->q[o->n_q++] = (struct queued){ time, o->seq++, off, size };
	return 0;
}

static int cmp_queued(const void *a, const void *b)
{
	const struct queued *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Keep queue entries k.. for the next drain, packed into the spare arena,
 * which then becomes the arena. */
static void keep_from(struct vg_bpf_output *o, size_t k)
{
	size_t need = 0, len = 0, cap;
	unsigned char *t;

	for (size_t i = k; i < o->n_q; i++)
		need = align8(need) + o->q[i].len;
	if (need && VG_GROW(o->spare, o->spare_cap, need) < 0) {
		o->st.dropped_nomem += o->n_q - k;
		o->n_q = o->arena_len = 0;
		return;
	}
	for (size_t i = k; i < o->n_q; i++) {
		struct queued e = o->q[i];

		len = align8(len);
		memcpy(o->spare + len, o->arena + e.off, e.len);
		e.off = len;
		o->q[i - k] = e;
		len += e.len;
	}
	t = o->arena;
	o->arena = o->spare;
	o->spare = t;
	cap = o->arena_cap;
	o->arena_cap = o->spare_cap;
	o->spare_cap = cap;
	o->arena_len = len;
	o->n_q -= k;
}

size_t vg_bpf_output_drain(struct vg_bpf_output *o, uint64_t until, vg_bpf_record_fn fn,
			   void *arg)
{
	size_t k;

	for (size_t i = 0; i < o->n; i++)
		vg_ring_drain(o->rings[i], collect_record, o);
	if (o->n_q > 1)
		qsort(o->q, o->n_q, sizeof(*o->q), cmp_queued);
	for (k = 0; k < o->n_q && o->q[k].time <= until; k++)
		fn((const struct vg_probe_record *)(o->arena + o->q[k].off), o->q[k].len, arg);
	o->st.records += k;
	keep_from(o, k);
	return k;
}

void vg_bpf_output_stats(const struct vg_bpf_output *o, struct vg_bpf_output_stats *st)
{
	uint64_t lost = 0;

	*st = o->st;
	if (!o->exact_lost)
		return;
	for (size_t i = 0; i < o->n; i++) {
		struct {
			uint64_t value, lost;
		} v;

		if (read(o->fds[i], &v, sizeof(v)) != (ssize_t)sizeof(v))
			return;   /* keep the PERF_RECORD_LOST sums */
		lost += v.lost;
	}
	/* Includes the losses whose LOST record is still to come. */
	if (lost > st->lost)
		st->lost = lost;
}

/* ------------------------------------------------------------ programs */

/* The record's fixed part at base + off: kind, site, pid_tgid, time and
 * the registers; stack_len and pad zero.  Expects r6 = ctx; clobbers
 * r0-r5. */
static void emit_record_header(struct prog_buf *p, int base, int off, uint32_t kind,
			       uint32_t site)
{
	emit(p, ST_W(base, off + (int)offsetof(struct vg_probe_record, kind), (int32_t)kind));
	emit(p, ST_W(base, off + (int)offsetof(struct vg_probe_record, site), (int32_t)site));
	emit(p, CALL(BPF_FUNC_get_current_pid_tgid));
	emit(p, STX_DW(base, R0, off + (int)offsetof(struct vg_probe_record, pid_tgid)));
	emit(p, CALL(BPF_FUNC_ktime_get_ns));
	emit(p, STX_DW(base, R0, off + (int)offsetof(struct vg_probe_record, time_ns)));
	for (int i = 0; i < VG_PR_COUNT; i++) {
		emit(p, LDX_DW(R1, R6, i * 8));
		emit(p, STX_DW(base, R1, off + (int)offsetof(struct vg_probe_record, regs) + i * 8));
	}
	/* stack_len and pad: the verifier wants every byte written before
	 * it leaves the BPF stack. */
	emit(p, ST_DW(base, off + (int)offsetof(struct vg_probe_record, stack_len), 0));
}

/* bpf_perf_event_output(ctx, out, BPF_F_CURRENT_CPU, r4, r5): expects r4
 * and r5 set. */
static void emit_output(struct prog_buf *p, const struct vg_bpf_output *o)
{
	emit(p, MOV64_REG(R1, R6));
	emit_ld_map(p, R2, o->array_fd);
	emit(p, MOV32_IMM(R3, -1));
	emit(p, CALL(BPF_FUNC_perf_event_output));
}

static void emit_record_on_stack(struct prog_buf *p, const struct vg_bpf_output *o, uint32_t kind,
				 uint32_t site)
{
	emit_record_header(p, FP, FP_RECORD, kind, site);
	emit(p, MOV64_REG(R4, FP));
	emit(p, ADD64_IMM(R4, FP_RECORD));
	emit(p, MOV64_IMM(R5, (int32_t)REC_HDR));
	emit_output(p, o);
}

/* The record in the scratch map (r7), with up to stack_bytes of user
 * stack; the program ends here if the map has no slot. */
static void emit_record_with_stack(struct prog_buf *p, const struct vg_bpf_output *o,
				   uint32_t kind, uint32_t site, uint32_t stack_bytes)
{
	struct label out = { .n = 0 }, copied = { .n = 0 };
	uint32_t pieces = stack_bytes / STACK_PIECE;

	emit(p, ST_W(FP, FP_KEY, 0));
	emit_lookup(p, o->scratch_fd, FP_KEY);
	emit_jump(p, JEQ_IMM(R0, 0), &out);
	emit(p, MOV64_REG(R7, R0));
	emit_record_header(p, R7, 0, kind, site);
	emit(p, LDX_DW(R8, R6, VG_PR_SP * 8));
	emit(p, MOV64_IMM(R9, 0));
	for (uint32_t k = 0; k < pieces; k++) {
		emit(p, MOV64_REG(R1, R7));
		emit(p, ADD64_IMM(R1, (int32_t)(REC_HDR + k * STACK_PIECE)));
		emit(p, MOV64_IMM(R2, (int32_t)STACK_PIECE));
		emit(p, MOV64_REG(R3, R8));
		emit(p, ADD64_IMM(R3, (int32_t)(k * STACK_PIECE)));
		emit(p, CALL(BPF_FUNC_probe_read_user));
		emit_jump(p, JNE_IMM(R0, 0), &copied);
		/* A constant, not r9 += 512: every path then has a known size. */
		emit(p, MOV64_IMM(R9, (int32_t)((k + 1) * STACK_PIECE)));
	}
	place(p, &copied);
	emit(p, STX_W(R7, R9, (int)offsetof(struct vg_probe_record, stack_len)));
	emit(p, MOV64_REG(R4, R7));
	emit(p, MOV64_REG(R5, R9));
	emit(p, ADD64_IMM(R5, (int32_t)REC_HDR));
	emit_output(p, o);
	place(p, &out);
}

/* Jump to closed while the gate slot reads 0 (or cannot be read). */
static void emit_gate(struct prog_buf *p, int counts_fd, uint32_t slot, struct label *closed)
{
	emit(p, ST_W(FP, FP_KEY, (int32_t)slot));
	emit_lookup(p, counts_fd, FP_KEY);
	emit_jump(p, JEQ_IMM(R0, 0), closed);
	emit(p, LDX_DW(R1, R0, 0));
	emit_jump(p, JEQ_IMM(R1, 0), closed);
}

static void build_prog(struct prog_buf *p, const struct vg_bpf_prog_spec *s,
		       const struct vg_bpf_counters *c, const struct vg_bpf_output *o)
{
	struct label closed = { .n = 0 };

	emit(p, MOV64_REG(R6, R1));
	if (c)
		emit_gate(p, c->counts_fd, (uint32_t)c->n_sites +
			  (s->kind == VG_PROBE_REC_ENTRY ? SLOT_ENTRY_GATE : SLOT_RETURN_GATE),
			  &closed);
	if (s->count) {
		emit_count_slot(p, c->counts_fd, s->site);
		if (c->threads_fd >= 0)
			emit_count_thread(p, c, s->site);
	}
	if (o && s->stack_bytes)
		emit_record_with_stack(p, o, s->kind, s->site, s->stack_bytes);
	else if (o)
		emit_record_on_stack(p, o, s->kind, s->site);
	place(p, &closed);
	emit(p, MOV64_IMM(R0, 0));
	emit(p, EXIT());
}

/* LINUX_VERSION_CODE of the running kernel: kernels before 5.0 refuse a
 * kprobe program whose kern_version differs. */
static uint32_t running_kernel_version(void)
{
	struct utsname u;
	unsigned a = 0, b = 0, c = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%u.%u.%u", &a, &b, &c) < 2)
		return 0;
	return (a << 16) + (b << 8) + (c > 255 ? 255 : c);
}

/* The verifier's reason: its log's last line that is not the closing
 * statistics ("processed N insns ...", "verification time ...") or blank. */
static void last_log_line(const char *log, char *out, size_t size)
{
	const char *end = log + strlen(log);

	out[0] = '\0';
	while (end > log) {
		const char *start = end;
		size_t len;

		while (start > log && start[-1] != '\n')
			start--;
		len = (size_t)(end - start);
		while (len && (start[len - 1] == '\n' || start[len - 1] == ' '))
			len--;
		if (len && strncmp(start, "processed ", 10) != 0 &&
		    strncmp(start, "verification time", 17) != 0 &&
		    strncmp(start, "stack depth", 11) != 0) {
			snprintf(out, size, "%.*s", (int)len, start);
			return;
		}
		end = start > log ? start - 1 : log;
	}
}

static int prog_load(const struct prog_buf *p, enum bpf_prog_type type, const char *name,
		     char *log, size_t log_size)
{
	union bpf_attr a;
	long r;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)p->insn;
	a.insn_cnt = (uint32_t)p->n;
	a.license = (uint64_t)(uintptr_t)"GPL";   /* perf_event_output needs GPL */
	a.kern_version = running_kernel_version();
	snprintf(a.prog_name, sizeof(a.prog_name), "%s", name);
	if (log) {
		log[0] = '\0';
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = (uint32_t)log_size;
		a.log_level = 1;
	}
	r = sys_bpf(BPF_PROG_LOAD, &a);
	return r < 0 ? -errno : (int)r;
}

int vg_bpf_prog_load(const struct vg_bpf_prog_spec *spec, const struct vg_bpf_counters *c,
		     const struct vg_bpf_output *output, int *prog_fd, struct vg_error *err)
{
	struct prog_buf *p;
	size_t log_size = 1u << 20;
	char *log, reason[256], name[BPF_OBJ_NAME_LEN];
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
	p = calloc(1, sizeof(*p));
	if (!p)
		return vg_error_set(err, -ENOMEM, "out of memory for a probe program");
	build_prog(p, spec, c, output);
	if (p->overflow) {
		free(p);
		return vg_error_set(err, -E2BIG, "internal: probe program longer than %d "
				    "instructions", MAX_INSNS);
	}
	snprintf(name, sizeof(name), "vg_probe_%u", spec->site);
	r = prog_load(p, BPF_PROG_TYPE_KPROBE, name, NULL, 0);
	if (r >= 0) {
		free(p);
		*prog_fd = r;
		return 0;
	}
	if (r == -EPERM) {
		free(p);
		return bpf_refused(err, "loading the probe's BPF program");
	}
	/* Refused: load again with the verifier's log to say why (the log
	 * costs time, so only now). */
	log = malloc(log_size);
	if (log) {
		r = prog_load(p, BPF_PROG_TYPE_KPROBE, name, log, log_size);
		last_log_line(log, reason, sizeof(reason));
	}
	free(p);
	if (!log)
		return vg_error_set(err, -ENOMEM, "out of memory for the BPF verifier's log");
	free(log);
	if (r >= 0) {   /* a transient failure: keep what loaded */
		*prog_fd = r;
		return 0;
	}
	if ((r == -EACCES || r == -EPERM) && !reason[0])
		return bpf_refused(err, "loading the probe's BPF program");
	/* The verifier says EACCES for a bad memory access: that is vigil's
	 * bug, neither a missing privilege nor the user's input (exit 1). */
	r = vg_error_set(err, r == -EACCES || r == -EPERM ? -EPROTO : r,
			 "the kernel's BPF verifier refused the probe program for site %u: %s",
			 spec->site, reason[0] ? reason : strerror(-r));
	vg_error_set_exit(err, VG_EXIT_RUNTIME);
	return r;
}

/* ------------------------------------------------------------ exec gate */

/* If the exec is tgid's (in the PID namespace of ns_dev/ns_ino): t =
 * ktime, both gates = 0, counts[exec slot] = t.  The time is taken first,
 * so that it is never later than the closing. */
static void build_exec_gate(struct prog_buf *p, const struct vg_bpf_counters *c, uint64_t ns_dev,
			    uint64_t ns_ino, pid_t tgid)
{
	struct label out = { .n = 0 };
	uint32_t base = (uint32_t)c->n_sites;

	emit_ld_imm64(p, R1, ns_dev);
	emit_ld_imm64(p, R2, ns_ino);
	emit(p, MOV64_REG(R3, FP));
	emit(p, ADD64_IMM(R3, FP_PIDNS));
	emit(p, MOV64_IMM(R4, (int32_t)sizeof(struct bpf_pidns_info)));
	emit(p, CALL(BPF_FUNC_get_ns_current_pid_tgid));
	/* -ENOENT: the exec'ing task is not in vigil's PID namespace, so it
	 * is not the target. */
	emit_jump(p, JNE_IMM(R0, 0), &out);
	emit(p, LDX_W(R1, FP, FP_PIDNS + (int)offsetof(struct bpf_pidns_info, tgid)));
	emit_jump(p, JNE_IMM(R1, (int32_t)tgid), &out);
	emit(p, CALL(BPF_FUNC_ktime_get_ns));
	emit(p, MOV64_REG(R7, R0));
	emit(p, ST_W(FP, FP_KEY, (int32_t)(base + SLOT_ENTRY_GATE)));
	emit_lookup(p, c->counts_fd, FP_KEY);
	emit_jump(p, JEQ_IMM(R0, 0), &out);
	emit(p, ST_DW(R0, 0, 0));
	emit(p, ST_W(FP, FP_KEY, (int32_t)(base + SLOT_RETURN_GATE)));
	emit_lookup(p, c->counts_fd, FP_KEY);
	emit_jump(p, JEQ_IMM(R0, 0), &out);
	emit(p, ST_DW(R0, 0, 0));
	emit(p, ST_W(FP, FP_KEY, (int32_t)(base + SLOT_EXEC_NS)));
	emit_lookup(p, c->counts_fd, FP_KEY);
	emit_jump(p, JEQ_IMM(R0, 0), &out);
	emit(p, STX_DW(R0, R7, 0));
	place(p, &out);
	emit(p, MOV64_IMM(R0, 0));
	emit(p, EXIT());
}

static int exec_gate_prog(const struct vg_bpf_counters *c, pid_t tgid, int *prog_fd,
			  struct vg_error *err)
{
	struct prog_buf *p;
	struct stat ns;
	char *log = NULL, reason[256] = "";
	int r;

	if (stat("/proc/self/ns/pid", &ns) < 0)
		return vg_error_set(err, -errno, "cannot identify vigil's PID namespace "
				    "(/proc/self/ns/pid): %s", strerror(errno));
	p = calloc(1, sizeof(*p));
	if (!p)
		return vg_error_set(err, -ENOMEM, "out of memory for the exec gate program");
	build_exec_gate(p, c, (uint64_t)ns.st_dev, (uint64_t)ns.st_ino, tgid);
	r = prog_load(p, BPF_PROG_TYPE_TRACEPOINT, "vg_exec_gate", NULL, 0);
	if (r < 0 && r != -EPERM && (log = malloc(1u << 16)) != NULL) {
		int again = prog_load(p, BPF_PROG_TYPE_TRACEPOINT, "vg_exec_gate", log, 1u << 16);

		last_log_line(log, reason, sizeof(reason));
		free(log);
		if (again >= 0)
			r = again;
	}
	free(p);
	if (r == -EPERM || (r == -EACCES && !reason[0]))
		return bpf_refused(err, "loading the exec gate's BPF program");
	if (r < 0)
		return vg_error_set(err, r == -EACCES ? -EPROTO : r, "the kernel refused the exec "
				    "gate's BPF program: %s", reason[0] ? reason : strerror(-r));
	*prog_fd = r;
	return 0;
}

int vg_bpf_exec_gate_open(const struct vg_bpf_counters *c, pid_t tgid, int *fd,
			  struct vg_error *err)
{
	struct perf_event_attr a;
	int id, prog = -1, *cpus = NULL, r;
	size_t n_cpus = 0;
	long ev;

	*fd = -1;
	r = vg_tracepoint_id("sched", "sched_process_exec", &id, err);
	if (r < 0)
		return r;
	r = vg_cpus_online(&cpus, &n_cpus, err);
	if (r < 0)
		return r;
	r = exec_gate_prog(c, tgid, &prog, err);
	if (r < 0) {
		free(cpus);
		return r;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.sample_period = 1;
	/* No sample_type: nothing is written to a ring, the program is all
	 * (and without PERF_SAMPLE_RAW no tracepoint data leaves the kernel). */
	ev = syscall(SYS_perf_event_open, &a, -1, cpus[0], -1, PERF_FLAG_FD_CLOEXEC);
	free(cpus);
	if (ev < 0) {
		int e = errno;

		close(prog);
		if (e == EACCES || e == EPERM)
			return vg_error_set(err, -e, "opening the sched:sched_process_exec tracepoint "
					    "was refused: it needs CAP_PERFMON (or root); "
					    "kernel.perf_event_paranoid is %d", perf_paranoid());
		return vg_error_set(err, -e, "cannot open the sched:sched_process_exec tracepoint "
				    "(id %d): %s", id, strerror(e));
	}
	if (ioctl((int)ev, PERF_EVENT_IOC_SET_BPF, prog) < 0) {
		int e = errno;

		close(prog);
		close((int)ev);
		return vg_error_set(err, -e, "cannot attach the exec gate program to the "
				    "sched:sched_process_exec tracepoint: %s", strerror(e));
	}
	close(prog);   /* the event holds it */
	*fd = (int)ev;
	return 0;
}

/* ------------------------------------------------------------ uprobes */

static int read_sysfs_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return -errno;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	return ok ? 0 : -EIO;
}

int vg_uprobe_pmu(int *type, int *retprobe_bit, struct vg_error *err)
{
	static const char dir[] = "/sys/bus/event_source/devices/uprobe";
	char buf[64];
	int r = read_sysfs_line("/sys/bus/event_source/devices/uprobe/type", buf, sizeof(buf));

	if (r == -ENOENT)
		return vg_error_set(err, -EOPNOTSUPP, "this kernel has no uprobe PMU (%s): vigil "
				    "probe needs a kernel built with CONFIG_UPROBE_EVENTS", dir);
	if (r < 0 || sscanf(buf, "%d", type) != 1)
		return vg_error_set(err, r < 0 ? r : -EIO, "cannot read the uprobe PMU's type "
				    "(%s/type)", dir);
	r = read_sysfs_line("/sys/bus/event_source/devices/uprobe/format/retprobe", buf,
			    sizeof(buf));
	if (r < 0 || sscanf(buf, "config:%d", retprobe_bit) != 1 || *retprobe_bit < 0 ||
	    *retprobe_bit > 63)
		return vg_error_set(err, -EOPNOTSUPP, "this kernel's uprobe PMU has no return "
				    "probes (%s/format/retprobe is not \"config:N\")", dir);
	return 0;
}

/* The kernel accepts any offset inside the file and then simply never
 * fires when no executable mapping covers it: refuse that here, for an
 * ELF file (anything else is left to the kernel). */
static int check_exec_offset(const char *path, uint64_t off, struct vg_error *err)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r = -EINVAL;

	if (fd < 0) {
		int e = errno;

		if (e == ENOENT || e == ENOTDIR)
			return vg_error_set(err, -ENOENT, "cannot probe '%s': no such file", path);
		return vg_error_set(err, -e, "cannot open '%s' to probe it: %s", path,
				    strerror(e));
	}
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr)) {
		close(fd);
		return 0;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && off >= ph.p_offset &&
		    off - ph.p_offset < ph.p_filesz) {
			r = 0;
			break;
		}
	}
	close(fd);
	if (r < 0)
		return vg_error_set(err, -EINVAL, "cannot probe '%s' at file offset 0x%llx: it is "
				    "not in an executable segment of the file", path,
				    (unsigned long long)off);
	return 0;
}

/* The kernel's ENOTSUPP (524, not in userspace headers): the instruction
 * at the offset cannot be single-stepped or emulated. */
#define KERNEL_ENOTSUPP 524

static int uprobe_open_error(int e, const char *path, uint64_t off, pid_t pid,
			     struct vg_error *err)
{
	unsigned long long o = (unsigned long long)off;

	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return vg_error_set(err, -ENOENT, "cannot probe '%s': no such file", path);
	case EINVAL:
		return vg_error_set(err, -EINVAL, "the kernel refused a uprobe on '%s' at file "
				    "offset 0x%llx: past the end of the file, or not an "
				    "instruction it can probe", path, o);
	case KERNEL_ENOTSUPP:
	case EOPNOTSUPP:
		/* vigil's resolver already checked the instruction boundary:
		 * what is left are instructions the kernel will not step out
		 * of line (lock-prefixed, int3, some privileged ones). */
		return vg_error_set(err, -EINVAL, "the kernel cannot probe the instruction at "
				    "file offset 0x%llx of '%s': uprobes refuse some instructions "
				    "(lock-prefixed, int3, ...); probe the next instruction "
				    "(SYMBOL+OFF) instead", o, path);
	case EACCES:
	case EPERM:
		/* perf_uprobe_event_init() checks capable(CAP_SYS_ADMIN) since
		 * "perf: Require CAP_SYS_ADMIN for uprobes" (2025, in stable
		 * kernels too): a uprobe on a data word mistaken for code
		 * corrupts it, so CAP_PERFMON (enough from 5.8 until then) no
		 * longer is; perf_event_paranoid plays no part. */
		if (!cap_effective(CAP_SYS_ADMIN))
			return vg_error_set(err, -e, "creating a uprobe on pid %d was refused: "
					    "the kernel's uprobe PMU requires CAP_SYS_ADMIN%s (CAP_PERFMON "
					    "was enough before the 2025 change 'perf: Require CAP_SYS_ADMIN "
					    "for uprobes'); run vigil probe as root or with CAP_SYS_ADMIN", (int)pid,
					    cap_effective(CAP_PERFMON) ? ", and vigil has CAP_PERFMON only" : "");
		return vg_error_set(err, -e, "creating a uprobe on pid %d was refused although "
				    "vigil has CAP_SYS_ADMIN: a security module (SELinux, AppArmor, "
				    "lockdown) refused it", (int)pid);
	case ESRCH:
		/* A leader that called pthread_exit is a zombie: the process
		 * lives on in its other threads. */
		if (kill(pid, 0) == 0)
			return vg_error_set(err, -ESRCH, "cannot probe through thread %d: it has "
					    "exited (open the probe on a live thread of the "
					    "process)", (int)pid);
		return vg_error_set(err, -ESRCH, "cannot probe pid %d: the process is gone",
				    (int)pid);
	default:
		return vg_error_set(err, -e, "cannot create a uprobe on '%s' at file offset "
				    "0x%llx in pid %d: %s", path, o, (int)pid, strerror(e));
	}
}

int vg_uprobe_open(const char *path, uint64_t file_offset, bool retprobe, pid_t pid,
		   int prog_fd, int *fd, struct vg_error *err)
{
	struct perf_event_attr a;
	int type, ret_bit, r;
	long ev;

	*fd = -1;
	r = vg_uprobe_pmu(&type, &ret_bit, err);
	if (r < 0)
		return r;
	r = check_exec_offset(path, file_offset, err);
	if (r < 0)
		return r;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)type;
	a.config = retprobe ? 1ull << ret_bit : 0;
	/* Read by the kernel during this call, in our mount namespace. */
	a.config1 = (uint64_t)(uintptr_t)path;
	a.config2 = file_offset;
	a.sample_period = 1;
	a.disabled = 1;
	/* inherit stays 0: an inherited uprobe event re-reads config1 in the
	 * cloning target's memory and its clone() fails.  The program covers
	 * every thread anyway (the uprobe filter matches the mm). */
	ev = syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev < 0)
		return uprobe_open_error(errno, path, file_offset, pid, err);
	if (ioctl((int)ev, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0) {
		int e = errno;

		close((int)ev);
		return vg_error_set(err, -e, "cannot attach the probe program to the uprobe on "
				    "'%s' at file offset 0x%llx: %s", path,
				    (unsigned long long)file_offset, strerror(e));
	}
	*fd = (int)ev;
	return 0;
}

int vg_uprobe_enable(int fd, bool on)
{
	return ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0 ? -errno : 0;
}
