/* task_regs.bpf.c - a sleepable BPF task iterator that reads, for every
 * thread of one process, the user registers the kernel saved when the
 * thread last entered it (bpf_task_pt_regs) and a copy of the top of its
 * user stack, without stopping it.  Compiled by clang at build time and
 * loaded through a light libbpf skeleton (capture.c, gen-skel.sh).
 *
 * Why the stack is copied here and not by process_vm_readv afterwards:
 * the registers and the bytes they describe are then one observation, a
 * few microseconds apart, and the thread's context-switch counts and
 * on-CPU flag are read before the registers and again after the copy.  A
 * thread that stayed off the CPU with the same counts throughout did not
 * run a single instruction of its own in between (to run it must be
 * switched in, and to stop running again switched out, which counts), so
 * registers and stack agree.  A thread on a CPU (on_cpu) has live
 * registers the kernel has not saved: the record says so and capture.c
 * takes it with a sampled perf event instead.
 *
 * The process is chosen by the iterator link (bpf_iter_link_info
 * task.pid, Linux 6.1), resolved in vigil's PID namespace, so the program
 * sees only the target's threads.
 *
 * One record per thread: struct vg_task_regs_record (task_regs.h) then
 * stack_len bytes.  All of one thread's output must fit in the iterator's
 * 32 KiB seq_file buffer, hence STACK_MAX; the copy goes page by page and
 * stops at the first page that cannot be read (the end of the stack's
 * mapping), never zero-fills.
 *
 * No vmlinux.h: the few kernel fields read are declared below with
 * preserve_access_index, and the skeleton's loader has the kernel relocate
 * them against its own BTF (CO-RE).  Nothing is written anywhere but the
 * seq_file. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

#define N_REGS 21
#define PAGE 4096u
/* The copy starts at SP and goes on while fewer than STACK_MAX bytes
 * were copied, by whole pages after the first: at most STACK_MAX + a
 * page, 28 KiB, which leaves room in the seq_file buffer for the record. */
#define STACK_MAX 24576u
#define OFF_MASK 32767u          /* off < STACK_MAX: a no-op the verifier reads */
#define BUF_SIZE (OFF_MASK + 1 + PAGE)
#define MAX_PIECES 8

/* Flags: keep in step with task_regs.h. */
#define F_ON_CPU_BEFORE 1u
#define F_ON_CPU_AFTER 2u
#define F_NO_REGS 4u
#define F_COPY_FAULT 8u
#define F_KTHREAD 16u
#define F_EXITING 32u

#define PF_EXITING 0x00000004u
#define PF_KTHREAD 0x00200000u

/* Set by capture.c before the load. */
const volatile __u32 stack_bytes = STACK_MAX;

struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int __state;
	int on_cpu;
	unsigned int flags;
	int pid;
	int tgid;
	unsigned long nvcsw, nivcsw;
} __attribute__((preserve_access_index));

struct seq_file;
struct bpf_iter_meta {
	struct seq_file *seq;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

/* = struct vg_task_regs_record */
struct record {
	__u32 tid;
	__u32 state;
	__u32 flags;
	__u32 stack_len;
	__u64 csw_before, csw_after;
	__u64 regs[N_REGS];
};

struct buf {
	__u8 bytes[BUF_SIZE];
};

/* One reader at a time (capture.c reads its own iterator from one
 * thread), so one scratch buffer per loaded program is enough. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct buf);
} scratch SEC(".maps");

static __always_inline __u64 switches(struct task_struct *t)
{
	return t->nvcsw + t->nivcsw;
}

SEC("iter.s/task")
int vg_task_regs(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct record rec = {};
	struct pt_regs *regs;
	struct buf *buf;
	__u32 zero = 0, off = 0, limit = stack_bytes;
	__u64 addr;

	if (!task)
		return 0;
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return 0;
	if (limit > STACK_MAX)
		limit = STACK_MAX;
	rec.tid = task->pid;
	rec.state = task->__state;
	if (task->flags & PF_KTHREAD)
		rec.flags |= F_KTHREAD;
	if (task->flags & PF_EXITING)
		rec.flags |= F_EXITING;
	rec.csw_before = switches(task);
	if (task->on_cpu)
		rec.flags |= F_ON_CPU_BEFORE;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs || (rec.flags & F_KTHREAD)) {
		rec.flags |= F_NO_REGS;
	} else {
		rec.regs[0] = regs->r15;
		rec.regs[1] = regs->r14;
		rec.regs[2] = regs->r13;
		rec.regs[3] = regs->r12;
		rec.regs[4] = regs->bp;
		rec.regs[5] = regs->bx;
		rec.regs[6] = regs->r11;
		rec.regs[7] = regs->r10;
		rec.regs[8] = regs->r9;
		rec.regs[9] = regs->r8;
		rec.regs[10] = regs->ax;
		rec.regs[11] = regs->cx;
		rec.regs[12] = regs->dx;
		rec.regs[13] = regs->si;
		rec.regs[14] = regs->di;
		rec.regs[15] = regs->orig_ax;
		rec.regs[16] = regs->ip;
		rec.regs[17] = regs->cs;
		rec.regs[18] = regs->flags;
		rec.regs[19] = regs->sp;
		rec.regs[20] = regs->ss;
	}
	/* The copy, page by page from SP: a page that cannot be read ends it
	 * (the top of the stack mapping), and what was read stays. */
	addr = rec.regs[19];
	if (!(rec.flags & (F_NO_REGS | F_ON_CPU_BEFORE)) && addr) {
		for (int i = 0; i < MAX_PIECES; i++) {
			__u32 n = PAGE - (__u32)(addr & (PAGE - 1));

			if (off >= limit || off >= STACK_MAX)
				break;
			/* 1..PAGE in a form the verifier can bound */
			barrier_var(n);
			n = ((n - 1) & (PAGE - 1)) + 1;
			if (bpf_copy_from_user_task(&buf->bytes[off & OFF_MASK], n, (void *)addr, task, 0)) {
				rec.flags |= F_COPY_FAULT;
				break;
			}
			off += n;
			addr += n;
		}
	}
	rec.stack_len = off;
	rec.csw_after = switches(task);
	if (task->on_cpu)
		rec.flags |= F_ON_CPU_AFTER;
	bpf_seq_write(seq, &rec, sizeof(rec));
	if (off > 0 && off <= STACK_MAX + PAGE)
		bpf_seq_write(seq, buf->bytes, off);
	return 0;
}
