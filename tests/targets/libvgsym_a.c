/* libvgsym_a - a library tgt_sym dlopens in the middle of its life; its
 * twin libvgsym_b.c has the same code (so the same layout, and the loader
 * tends to put it at the same address after a dlclose) but another
 * function name, file and lines. */
#include "libvgsym.h"

__attribute__((used)) volatile int vgsym_a_sink;
static volatile int vgsym_a_line;

int vgsym_a_work(int x);
__attribute__((noinline, used)) int vgsym_a_work(int x) { vgsym_a_line = __LINE__; return x * 5 + vgsym_a_sink; }

void vgsym_describe(struct vgsym_info *info)
{
	vgsym_a_sink += vgsym_a_work(vgsym_a_sink);
	info->function = "vgsym_a_work";
	info->file = __FILE__;
	info->address = (void *)vgsym_a_work;
	info->line = vgsym_a_line;
}
