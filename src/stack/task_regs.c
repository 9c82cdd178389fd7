/* task_regs.c - decoding the task iterator's stream (task_regs.h). */
#include "stack/task_regs.h"

#include <errno.h>
#include <string.h>

_Static_assert(sizeof(struct vg_task_regs_record) == 200, "the BPF program's struct record");

int vg_task_regs_next(const uint8_t *buf, size_t len, size_t *off,
		      struct vg_task_regs_record *rec, const uint8_t **stack)
{
	size_t at = *off;

	if (at >= len)
		return 0;
	if (len - at < sizeof(*rec))
		return -EINVAL;
	memcpy(rec, buf + at, sizeof(*rec));
	at += sizeof(*rec);
	if (rec->stack_len > VG_TASK_REGS_MAX_STACK || rec->stack_len > len - at)
		return -EINVAL;
	*stack = buf + at;
	*off = at + rec->stack_len;
	return 1;
}

/* pt_regs word order: r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di
 * orig_ax ip cs flags sp ss; perf indices from <asm/perf_regs.h>. */
void vg_task_regs_to_perf(const struct vg_task_regs_record *rec, struct vg_regs *regs)
{
	static const struct { uint8_t perf, pt; } map[] = {
		{ 0, 10 }, { 1, 5 }, { 2, 11 }, { 3, 12 }, { 4, 13 }, { 5, 14 },
		{ 6, 4 }, { 7, 19 }, { 8, 16 }, { 9, 18 }, { 10, 17 }, { 11, 20 },
		{ 16, 9 }, { 17, 8 }, { 18, 7 }, { 19, 6 }, { 20, 3 }, { 21, 2 },
		{ 22, 1 }, { 23, 0 },
	};

	memset(regs, 0, sizeof(*regs));
	if (rec->flags & VG_TASK_NO_REGS)
		return;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		regs->regs[map[i].perf] = rec->regs[map[i].pt];
		regs->mask |= 1ull << map[i].perf;
	}
}

bool vg_task_regs_still(const struct vg_task_regs_record *rec)
{
	return !(rec->flags & (VG_TASK_ON_CPU_BEFORE | VG_TASK_ON_CPU_AFTER)) &&
	       rec->csw_before == rec->csw_after;
}
