/* stack_format.c - the table of stack writers.  Order is what help and
 * error messages list. */
#include "report/stack_format.h"

#include <string.h>

#include "report/folded.h"
#include "report/pprof.h"
#include "report/speedscope.h"
#include "report/svg.h"
#include "report/table_profile.h"

const struct vg_stack_format vg_stack_formats[] = {
	{ "table", false, vg_table_profile_write },
	{ "folded", false, vg_folded_write },
	{ "pprof", true, vg_pprof_write },
	{ "speedscope", false, vg_speedscope_write },
	{ "svg", false, vg_svg_write },
	{ NULL, false, NULL },
};

const struct vg_stack_format *vg_stack_format_find(const char *name)
{
	for (const struct vg_stack_format *f = vg_stack_formats; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}
