/* folded.c - collapsed stacks for FlameGraph and speedscope.
 *
 * Walks the function view depth first with children sorted by name, so the
 * lines come out sorted and one run gives the same file as the next.  A ';'
 * or a line break inside a name would split a frame or a line: both become
 * '?' (no demangled C or C++ name contains them; a Rust closure name may). */
#include "report/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

struct folded {
	FILE *out;
	const struct vg_stacks *v;
	char *line;            /* the current path, "a;b;c" */
	size_t len, cap;
};

/* Append s to the line, without the characters that would break it
 * (a name), or as is (the separator). */
static int append_as(struct folded *f, const char *s, bool sanitize)
{
	size_t n = strlen(s);

	if (VG_GROW(f->line, f->cap, f->len + n + 8) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (sanitize && (c == ';' || c == '\n' || c == '\r'))
			c = '?';
		f->line[f->len++] = (char)c;
	}
	f->line[f->len] = '\0';
	return 0;
}

static int append(struct folded *f, const char *s)
{
	return append_as(f, s, true);
}

static int append_frame(struct folded *f, const struct vg_stack_frame *fr)
{
	if (f->len && append_as(f, ";", false) < 0)
		return -ENOMEM;
	if (append(f, vg_stacks_string(f->v, fr->name)) < 0)
		return -ENOMEM;
	if (fr->inlined && append(f, "_[i]") < 0)
		return -ENOMEM;
	if (fr->kernel && append(f, "_[k]") < 0)
		return -ENOMEM;
	return 0;
}

static int walk(struct folded *f, uint32_t id)
{
	const struct vg_stack_node *node = vg_stacks_node(f->v, id);
	size_t keep = f->len, n;
	uint32_t *kids;
	int rc;

	if (node->frame != VG_STACKS_NONE &&
	    append_frame(f, vg_stacks_frame(f->v, node->frame)) < 0)
		return -ENOMEM;
	if (node->self && f->len)
		fprintf(f->out, "%s %" PRIu64 "\n", f->line, node->self);
	if ((rc = vg_stacks_children(f->v, id, &kids, &n)) < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = walk(f, kids[i]);
	free(kids);
	f->len = keep;
	if (f->line)
		f->line[keep] = '\0';
	return rc;
}

int vg_folded_write(FILE *out, const struct vg_stacks *s, const struct vg_stack_write_opts *o,
		    struct vg_error *err)
{
	bool per_thread = o && o->per_thread;
	struct folded f = {.out = out};
	struct vg_stacks *v;
	int rc = vg_stacks_by_function(s, !per_thread, &v, err);

	if (rc < 0)
		return rc;
	errno = 0;   /* a write error below is reported with its own errno */
	f.v = v;
	for (size_t t = 0; t < vg_stacks_n_threads(v) && rc == 0; t++) {
		const struct vg_stack_thread *th = vg_stacks_thread(v, t);

		f.len = 0;
		if (per_thread) {
			char tid[24];

			snprintf(tid, sizeof(tid), "-%" PRId32, th->tid);
			const char *comm = vg_stacks_string(v, th->name);
			if (append(&f, *comm ? comm : "?") < 0 || append(&f, tid) < 0) {
				rc = -ENOMEM;
				break;
			}
		}
		rc = walk(&f, th->root);
	}
	free(f.line);
	vg_stacks_free(v);
	if (rc < 0)
		return vg_error_set(err, rc, "cannot write the folded stacks: out of memory");
	if (fflush(out) != 0 || ferror(out))
		return vg_error_set(err, errno ? -errno : -EIO,
				    "cannot write the folded stacks: %s",
				    strerror(errno ? errno : EIO));
	return 0;
}
