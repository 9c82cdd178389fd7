/* records.h - decoding of the perf records vigil asks for.
 *
 * Every event vigil opens has PERF_SAMPLE_IDENTIFIER and sample_id_all, so
 * the first u64 of a sample and the last u64 of any other record name the
 * event that wrote it: one ring may gather events with different formats.
 * Only the sample fields listed in VG_PERF_SAMPLE_SUPPORTED are decoded; a
 * format with others is refused when the event is added, so a record that
 * does not parse is damage, counted as undecodable, never guessed at. */
#ifndef VG_RECORDS_H
#define VG_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "unwind/regs.h"

#define VG_PERF_SAMPLE_SUPPORTED                                            \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |        \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |             \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |     \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |                    \
	 PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_INTR)

/* What the decoder needs of an event's attr. */
struct vg_perf_format {
	uint64_t sample_type;
	uint64_t regs_user_mask;     /* attr.sample_regs_user */
	uint64_t regs_intr_mask;     /* attr.sample_regs_intr */
};

struct vg_perf_sample {
	uint64_t identifier;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;               /* ns, the attr's clock */
	uint64_t addr;
	uint32_t cpu;
	uint64_t period;
	uint64_t nr_callchain;
	const uint64_t *callchain;   /* borrowed from the record; may hold PERF_CONTEXT_* markers */
	uint64_t regs_abi;           /* PERF_SAMPLE_REGS_ABI_*; 0: no user regs (kernel thread) */
	struct vg_regs regs;         /* user registers by perf index */
	uint64_t stack_size;         /* bytes in stack (dyn_size: what was really copied) */
	const uint8_t *stack;        /* user stack from regs SP, borrowed */
	struct vg_regs intr;         /* PERF_SAMPLE_REGS_INTR: the registers at the
	                              * event (a kernel trap's are the kernel's);
	                              * mask 0 when not asked or not given */
};

/* The event identifier of any record (sample: first u64; other records:
 * last u64 of the sample_id trailer).  false for a record too short. */
bool vg_perf_record_identifier(const struct perf_event_header *h, uint64_t *id);

/* Decode a PERF_RECORD_SAMPLE of the given format.  false when the record
 * is shorter than the format says (undecodable). */
bool vg_perf_parse_sample(const struct perf_event_header *h,
			  const struct vg_perf_format *fmt, struct vg_perf_sample *out);

/* PERF_RECORD_FORK / EXIT body. */
struct vg_perf_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
bool vg_perf_parse_task(const struct perf_event_header *h, struct vg_perf_task *out);

/* PERF_RECORD_MMAP2 (attr.mmap + mmap2): a mapping the process made, for
 * exec mappings only unless attr.mmap_data.  filename is borrowed from the
 * record and NUL-terminated within it. */
struct vg_perf_mmap {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t prot, flags;
	const char *filename;
};
bool vg_perf_parse_mmap2(const struct perf_event_header *h, struct vg_perf_mmap *out);

/* PERF_RECORD_COMM (attr.comm): a thread's new name (prctl, exec). */
struct vg_perf_comm {
	uint32_t pid, tid;
	const char *comm;            /* borrowed, NUL-terminated within the record */
	bool exec;                   /* PERF_RECORD_MISC_COMM_EXEC */
};
bool vg_perf_parse_comm(const struct perf_event_header *h, struct vg_perf_comm *out);

/* PERF_RECORD_LOST: how many records the kernel dropped for lack of room. */
bool vg_perf_parse_lost(const struct perf_event_header *h, uint64_t *lost);

/* PERF_RECORD_THROTTLE / UNTHROTTLE time. */
bool vg_perf_parse_throttle(const struct perf_event_header *h, uint64_t *time);

#endif
