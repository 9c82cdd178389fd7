/* table_profile.c - the top functions of a profile as a text table.
 *
 * Sorting by self shows where the CPU is spent; sorting by total shows
 * which callers own that time.  Both sections come from the same
 * vg_stacks_functions totals, so they never disagree. */
#include "report/table_profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* The name with control characters as \ooo (target text: a name may hold
 * anything but NUL). */
static void put_name(FILE *out, const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\%03o", *p);
		else
			fputc(*p, out);
	}
}

static void put_row(FILE *out, const struct vg_stacks *s,
		    const struct vg_stack_function *fn, uint64_t total)
{
	fprintf(out, "self %6.2f%% %8" PRIu64 "  total %6.2f%% %8" PRIu64 "  ",
		pct(fn->self, total), fn->self, pct(fn->total, total), fn->total);
	put_name(out, vg_stacks_string(s, fn->name));
	if (fn->inlined)
		fputs(" (inlined)", out);
	if (fn->kernel)
		fputs(" [kernel]", out);
	fputc('\n', out);
}

static int by_total(const void *pa, const void *pb)
{
	const struct vg_stack_function *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	return (a->name > b->name) - (a->name < b->name);
}

int vg_table_profile_write(FILE *out, const struct vg_stacks *s,
			   const struct vg_stack_write_opts *o, struct vg_error *err)
{
	const struct vg_stacks_meta *meta = o ? o->meta : NULL;
	size_t top_n = o ? o->top : 0;
	struct vg_stack_function *fns;
	uint64_t total = vg_stacks_total(s);
	size_t n, shown;
	int rc = vg_stacks_functions(s, &fns, &n, err);

	errno = 0;   /* a write error below is reported with its own errno */
	if (rc < 0)
		return rc;
	shown = top_n && top_n < n ? top_n : n;
	fprintf(out, "%" PRIu64 " samples", total);
	if (meta && meta->event)
		fprintf(out, " of %s", meta->event);
	fprintf(out, ", %zu threads, %zu functions", vg_stacks_n_threads(s), n);
	if (meta && (meta->lost || meta->throttled))
		fprintf(out, "; lower bound: %" PRIu64 " samples lost, throttled %"
			PRIu64 " times", meta->lost, meta->throttled);
	fputc('\n', out);
	if (meta && meta->stacks_cut)
		fprintf(out, "%" PRIu64 " of %" PRIu64 " stacks cut before their outermost frame (%s): "
			"their callers are missing, so totals are lower bounds\n",
			meta->stacks_cut, total, meta->stacks_cut_why ? meta->stacks_cut_why : "frame limit");
	if (meta && meta->totals)
		fprintf(out, "%s\n", meta->totals);
	fputs("by self:\n", out);
	for (size_t i = 0; i < shown; i++)
		put_row(out, s, &fns[i], total);
	/* Ties keep a fixed order (name id) so the output is reproducible. */
	if (n)
		qsort(fns, n, sizeof(*fns), by_total);
	fputs("by total:\n", out);
	for (size_t i = 0; i < shown; i++)
		put_row(out, s, &fns[i], total);
	free(fns);
	if (fflush(out) != 0 || ferror(out))
		return vg_error_set(err, errno ? -errno : -EIO,
				    "cannot write the profile table: %s",
				    strerror(errno ? errno : EIO));
	return 0;
}
