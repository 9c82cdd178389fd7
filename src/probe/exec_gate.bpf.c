/* exec_gate.bpf.c - the exec gate of vigil probe (progs.c,
 * vg_bpf_exec_gate_open): on sched_process_exec, when the exec'ing
 * process is the target, close both gates of the counts map and store the
 * time.  A raw tracepoint (BPF_RAW_TRACEPOINT_OPEN): no tracefs, no
 * tracepoint id; it runs for every exec on every CPU, so the program keeps
 * the target's own, by its tgid in vigil's PID namespace
 * (bpf_get_ns_current_pid_tgid, Linux 5.7). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 ns_dev = 0;
const volatile __u64 ns_ino = 0;
const volatile __u32 tgid = 0;
const volatile __u32 entry_slot = 0;
const volatile __u32 return_slot = 0;
const volatile __u32 exec_slot = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void store(__u32 slot, __u64 value)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &slot);

	if (v)
		*v = value;
}

SEC("raw_tp/sched_process_exec")
int vg_exec_gate(void *ctx)
{
	struct bpf_pidns_info ns;
	__u64 t;

	/* -ENOENT: the exec'ing task is not in vigil's PID namespace, so it
	 * is not the target. */
	if (bpf_get_ns_current_pid_tgid(ns_dev, ns_ino, &ns, sizeof(ns)) || ns.tgid != tgid)
		return 0;
	/* The time first: never later than the closing. */
	t = bpf_ktime_get_ns();
	store(entry_slot, 0);
	store(return_slot, 0);
	store(exec_slot, t);
	return 0;
}
