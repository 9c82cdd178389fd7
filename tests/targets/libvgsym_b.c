/* libvgsym_b - the twin of libvgsym_a.c (see there): same code, another
 * function name, file and lines.
 *
 * The blank comment lines below only move the lines of the code, so that an
 * answer from the wrong library shows in the line number too.
 *
 *
 *
 */
#include "libvgsym.h"

__attribute__((used)) volatile int vgsym_b_sink;
static volatile int vgsym_b_line;

int vgsym_b_work(int x);
__attribute__((noinline, used)) int vgsym_b_work(int x) { vgsym_b_line = __LINE__; return x * 5 + vgsym_b_sink; }

void vgsym_describe(struct vgsym_info *info)
{
	vgsym_b_sink += vgsym_b_work(vgsym_b_sink);
	info->function = "vgsym_b_work";
	info->file = __FILE__;
	info->address = (void *)vgsym_b_work;
	info->line = vgsym_b_line;
}
