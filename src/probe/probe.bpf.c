/* probe.bpf.c - the program behind every uprobe of vigil probe: counts the
 * hit and, when asked, writes a record of it.  Compiled by clang at build
 * time (-target bpf) and loaded through its libbpf skeleton by progs.c,
 * once per site and kind, with the read-only settings below filled in
 * first: the verifier sees them as constants and removes the paths not
 * taken, so each loaded program is what the hand-assembled one was.
 *
 *   gate:    a gated program first reads counts[gate_slot] and does
 *            nothing while it is 0 (vg_bpf_counters_gate, _gate_returns).
 *   count:   counts[site] += 1 (atomic); with per_thread also
 *            threads[{site, tid}] += 1, and counts[dropped_slot] += 1
 *            when that hash is full.
 *   filter:  with n_terms, every call first adds 1 to counts[all_slot]
 *            (the calls seen), then the AND of the terms on the argument
 *            registers decides whether the call goes on to be counted and
 *            recorded (vigil probe --filter); with record_dropped a
 *            dropped call is recorded too, marked, for the pairing of
 *            its return.
 *   record:  one struct record (= struct vg_probe_record in bpf.h) with
 *            the 21 pt_regs words and up to stack_bytes of user stack,
 *            reserved directly in this CPU's BPF ring buffer: no scratch
 *            map, so a program preempted mid-copy cannot have its record
 *            overwritten by another hit on the same CPU.  A full ring
 *            adds 1 to lost[0].
 *
 * The maps are created by vigil (counters.c, output.c) and handed to each
 * load with bpf_map__reuse_fd; the definitions here only give their
 * shape.  No vmlinux.h: a uprobe's ctx is the user's struct pt_regs, read
 * as 21 words. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";   /* bpf_probe_read_user needs GPL */

#define N_REGS 21
#define REG_SP 19
#define STACK_PIECE 512
#define MAX_STACK_BYTES 16384
#define KERNEL_EEXIST 17

/* Filled in by the loader (progs.c) before the load. */
const volatile __u32 site = 0;
const volatile __u32 kind = 0;
const volatile __u32 gate_slot = 0;
const volatile __u32 dropped_slot = 0;
const volatile __u32 stack_bytes = 0;   /* a multiple of STACK_PIECE */
const volatile _Bool gated = 0;
const volatile _Bool count = 0;
const volatile _Bool per_thread = 0;
const volatile _Bool record = 0;
/* --filter with --latency/--retval: a call the filter drops still gets an
 * entry record, marked (struct record's flags), without its stack, so
 * that its return pairs with it and is left out, not with an outer call. */
const volatile _Bool record_dropped = 0;
#define RECORD_DROPPED 1

/* usdt: arguments in memory ("-4@-20(%rbp)"): mem_size[i] bytes at
 * pt_regs word mem_reg[i] + mem_disp[i], read into the record's mem[i]
 * at the hit (0: argument i is not in memory). */
#define MAX_MEM_ARGS 6
const volatile __u32 mem_size[MAX_MEM_ARGS] = {};
const volatile __u32 mem_reg[MAX_MEM_ARGS] = {};
const volatile __s64 mem_disp[MAX_MEM_ARGS] = {};

/* --filter: n_terms comparisons, all of which must hold (the fields of
 * struct vg_bpf_filter_term in bpf.h, as arrays: a struct type here
 * would have to be declared in the skeleton header too). */
#define MAX_TERMS 4
const volatile __u32 n_terms = 0;
const volatile __u32 all_slot = 0;
const volatile __u32 term_reg[MAX_TERMS] = {};     /* 0-5: rdi rsi rdx rcx r8 r9 */
const volatile __u32 term_bits[MAX_TERMS] = {};    /* 8, 16, 32 or 64 */
const volatile __u32 term_signed[MAX_TERMS] = {};
const volatile __u32 term_op[MAX_TERMS] = {};      /* VG_FILTER_EQ.. in bpf.h */
const volatile __u64 term_value[MAX_TERMS] = {};

struct thread_key {
	__u32 site;
	__u32 tid;
};

/* The layout of struct vg_probe_record (bpf.h; progs.c checks the size). */
struct record {
	__u32 kind;
	__u32 site;
	__u64 pid_tgid;
	__u64 time_ns;
	__u64 regs[N_REGS];
	__u64 mem[MAX_MEM_ARGS];
	__u32 stack_len;
	__u32 flags;        /* RECORD_DROPPED */
	__u8 stack[];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct thread_key);
	__type(value, __u64);
} threads SEC(".maps");

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

/* CPU number -> that CPU's ring buffer. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline void add_one(void *map, __u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(map, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline _Bool gate_open(void)
{
	__u32 slot = gate_slot;
	__u64 *v = bpf_map_lookup_elem(&counts, &slot);

	return v && *v;
}

/* threads[{site, tid}] += 1; a new pair starts at 1. */
static __always_inline void count_thread(void)
{
	struct thread_key key = { .site = site, .tid = (__u32)bpf_get_current_pid_tgid() };
	__u64 one = 1, *v = bpf_map_lookup_elem(&threads, &key);

	if (!v) {
		long r = bpf_map_update_elem(&threads, &key, &one, BPF_NOEXIST);

		if (r == 0)
			return;
		/* EEXIST: a recycled tid or a second program on the pair
		 * inserted it first; anything else (E2BIG, ENOMEM): full. */
		if (r == -KERNEL_EEXIST)
			v = bpf_map_lookup_elem(&threads, &key);
		if (!v) {
			add_one(&counts, dropped_slot);
			return;
		}
	}
	__sync_fetch_and_add(v, 1);
}

/* How many whole pieces of user stack at sp can be read, up to
 * stack_bytes: the last byte of each piece, since the one before it was
 * readable.  On every path the verifier walks, the answer is a constant,
 * so the reservation below has a constant size, as it must; reserving
 * stack_bytes always would fill the ring with unused bytes when the top
 * of the stack is near. */
static __always_inline __u32 readable_pieces(__u64 sp)
{
	__u32 n = 0;
	char byte;

#pragma unroll
	for (__u32 k = 0; k < MAX_STACK_BYTES / STACK_PIECE; k++) {
		if (k >= stack_bytes / STACK_PIECE)
			break;
		if (bpf_probe_read_user(&byte, 1, (const void *)(sp + (k + 1) * STACK_PIECE - 1)))
			break;
		n = k + 1;
	}
	return n;
}

static __always_inline void write_record(struct pt_regs *ctx, _Bool dropped)
{
	const __u64 *regs = (const __u64 *)ctx;
	__u32 cpu = bpf_get_smp_processor_id(), pieces = 0, len = 0;
	__u64 sp = regs[REG_SP], size, avail, wake, flags;
	struct record *r;
	void *ring;

	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring) {
		add_one(&lost, 0);
		return;
	}
	if (stack_bytes && !dropped)
		pieces = readable_pieces(sp);
	size = sizeof(struct record) + pieces * STACK_PIECE;
	r = bpf_ringbuf_reserve(ring, size, 0);
	if (!r) {
		add_one(&lost, 0);
		return;
	}
	r->kind = kind;
	r->site = site;
	r->pid_tgid = bpf_get_current_pid_tgid();
	r->time_ns = bpf_ktime_get_ns();
#pragma unroll
	for (int i = 0; i < N_REGS; i++)
		r->regs[i] = regs[i];
#pragma unroll
	for (int i = 0; i < MAX_MEM_ARGS; i++) {
		__u32 reg = mem_reg[i], size = mem_size[i];

		r->mem[i] = 0;
		/* A failed read leaves 0 (the page was not there). */
		if (size && size <= 8 && reg < N_REGS)
			bpf_probe_read_user(&r->mem[i], size,
					    (const void *)(r->regs[reg] + (__u64)mem_disp[i]));
	}
	/* Not unrolled (pieces is not a compile-time constant): the
	 * verifier walks the bounded loop. */
	for (__u32 k = 0; k < MAX_STACK_BYTES / STACK_PIECE; k++) {
		if (k >= pieces)
			break;
		/* Stop at the first piece that cannot be read after all
		 * (unmapped meanwhile): stack_len says how much is there. */
		if (bpf_probe_read_user(r->stack + k * STACK_PIECE, STACK_PIECE,
					(const void *)(sp + k * STACK_PIECE)))
			break;
		len = (k + 1) * STACK_PIECE;
	}
	r->stack_len = len;
	r->flags = dropped ? RECORD_DROPPED : 0;
	/* Wake the reader once a quarter of the ring is used (the record
	 * that crosses it), not per record: a wakeup per call would cost a
	 * wakeup per call. */
	avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	wake = bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / 4;
	flags = avail >= wake && avail < wake + size + 8 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(r, flags);
}

/* The register as the parameter's type holds it, then the comparison,
 * signed or unsigned as the type is. */
static __always_inline _Bool term_holds(const __u64 *args, __u32 i)
{
	__u32 bits = term_bits[i], reg = term_reg[i];
	__u64 v, c = term_value[i];

	if (reg >= 6)
		return 0;
	v = args[reg];
	if (bits < 64) {
		v &= (1ull << bits) - 1;
		if (term_signed[i] && (v >> (bits - 1)) & 1)
			v |= ~0ull << bits;
	}
	if (term_signed[i]) {
		__s64 a = (__s64)v, b = (__s64)c;

		switch (term_op[i]) {
		case 0: return a == b;
		case 1: return a != b;
		case 2: return a < b;
		case 3: return a <= b;
		case 4: return a > b;
		default: return a >= b;
		}
	}
	switch (term_op[i]) {
	case 0: return v == c;
	case 1: return v != c;
	case 2: return v < c;
	case 3: return v <= c;
	case 4: return v > c;
	default: return v >= c;
	}
}

static __always_inline _Bool filter_holds(struct pt_regs *ctx)
{
	const volatile __u64 *regs = (const volatile __u64 *)ctx;
	/* A ctx access takes its offset from the instruction, never from a
	 * register: the six argument registers are copied first, rdi rsi
	 * rdx rcx r8 r9 (pt_regs words 14 13 12 11 9 8). */
	__u64 args[6] = { regs[14], regs[13], regs[12], regs[11], regs[9], regs[8] };

#pragma unroll
	for (__u32 i = 0; i < MAX_TERMS; i++) {
		if (i >= n_terms)
			break;
		if (!term_holds(args, i))
			return 0;
	}
	return 1;
}

SEC("uprobe")
int vg_probe(struct pt_regs *ctx)
{
	if (gated && !gate_open())
		return 0;
	if (n_terms) {
		add_one(&counts, all_slot);
		if (!filter_holds(ctx)) {
			if (record && record_dropped)
				write_record(ctx, 1);
			return 0;
		}
	}
	if (count) {
		add_one(&counts, site);
		if (per_thread)
			count_thread();
	}
	if (record)
		write_record(ctx, 0);
	return 0;
}
