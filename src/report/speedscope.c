/* speedscope.c - the speedscope JSON file format through cJSON.
 *
 * Built as a cJSON tree and printed once, like every JSON vigil writes;
 * names and paths from the target go through vg_json_text, since JSON
 * must be UTF-8 and a symbol or a file name need not be. */
#include "report/speedscope.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"

static cJSON *frame_json(const struct vg_stacks *v, const struct vg_stack_frame *f)
{
	const char *name = vg_stacks_string(v, f->name);
	cJSON *o = cJSON_CreateObject();
	char *label;
	size_t len = strlen(name) + sizeof(" [inlined] [kernel]");

	if (!o || !(label = malloc(len))) {
		cJSON_Delete(o);
		return NULL;
	}
	snprintf(label, len, "%s%s%s", name, f->inlined ? " [inlined]" : "",
		 f->kernel ? " [kernel]" : "");
	if (!vg_json_add_text(o, "name", label) ||
	    (f->file && !vg_json_add_text(o, "file", vg_stacks_string(v, f->file)))) {
		free(label);
		cJSON_Delete(o);
		return NULL;
	}
	free(label);
	return o;
}

struct walk {
	const struct vg_stacks *v;
	cJSON *samples, *weights;
	uint32_t *path;      /* frame ids root first */
	uint64_t unit;       /* weight of one sample */
	uint64_t end;
};

static int walk(struct walk *w, uint32_t id)
{
	const struct vg_stack_node *node = vg_stacks_node(w->v, id);
	uint32_t *kids;
	size_t n;
	int rc;

	if (node->frame != VG_STACKS_NONE)
		w->path[node->depth - 1] = node->frame;
	if (node->self && node->depth) {
		cJSON *stack = cJSON_CreateArray();

		if (!stack || !cJSON_AddItemToArray(w->samples, stack))
			return -ENOMEM;
		for (uint32_t d = 0; d < node->depth; d++)
			if (!cJSON_AddItemToArray(stack, cJSON_CreateNumber(w->path[d])))
				return -ENOMEM;
		if (!cJSON_AddItemToArray(w->weights,
					  cJSON_CreateNumber((double)(node->self * w->unit))))
			return -ENOMEM;
		w->end += node->self * w->unit;
	}
	if ((rc = vg_stacks_children(w->v, id, &kids, &n)) < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = walk(w, kids[i]);
	free(kids);
	return rc;
}

static uint32_t max_depth(const struct vg_stacks *v)
{
	uint32_t d = 0;

	for (size_t i = 0; i < vg_stacks_n_nodes(v); i++)
		if (vg_stacks_node(v, (uint32_t)i)->depth > d)
			d = vg_stacks_node(v, (uint32_t)i)->depth;
	return d;
}

static cJSON *thread_profile(struct walk *w, const struct vg_stack_thread *th,
			     const char *unit)
{
	cJSON *p = cJSON_CreateObject();
	const char *comm = vg_stacks_string(w->v, th->name);
	char name[160];

	snprintf(name, sizeof(name), "%.100s (tid %" PRId32 ")", *comm ? comm : "?",
		 th->tid);
	w->end = 0;
	if (!p || !cJSON_AddStringToObject(p, "type", "sampled") ||
	    !vg_json_add_text(p, "name", name) ||
	    !cJSON_AddStringToObject(p, "unit", unit) ||
	    !cJSON_AddNumberToObject(p, "startValue", 0) ||
	    !(w->samples = cJSON_AddArrayToObject(p, "samples")) ||
	    !(w->weights = cJSON_AddArrayToObject(p, "weights")) ||
	    walk(w, th->root) < 0 ||
	    !cJSON_AddNumberToObject(p, "endValue", (double)w->end)) {
		cJSON_Delete(p);
		return NULL;
	}
	return p;
}

static cJSON *document(const struct vg_stacks *v, const struct vg_stacks_meta *m,
		       uint32_t *path)
{
	cJSON *doc = cJSON_CreateObject(), *shared, *frames, *profiles;
	const char *unit = m && m->sample_ns ? "nanoseconds" : "none";
	struct walk w = {.v = v, .path = path, .unit = m && m->sample_ns ? m->sample_ns : 1};
	char text[200];

	snprintf(text, sizeof(text), "vigil %s",
		 m && m->tool_version ? m->tool_version : VG_VERSION);
	if (!doc || !cJSON_AddStringToObject(doc, "$schema", VG_SPEEDSCOPE_SCHEMA) ||
	    !cJSON_AddStringToObject(doc, "exporter", text))
		goto fail;
	if (m && m->pid)
		snprintf(text, sizeof(text), "pid %" PRId32 " (%.100s) %.40s", m->pid,
			 m->comm ? m->comm : "?", m->event ? m->event : "");
	else if (m && m->comm)   /* several processes: comm names them */
		snprintf(text, sizeof(text), "%.120s %.40s", m->comm, m->event ? m->event : "");
	else
		snprintf(text, sizeof(text), "vigil profile");
	if (!vg_json_add_text(doc, "name", text) ||
	    !cJSON_AddNumberToObject(doc, "activeProfileIndex", 0) ||
	    !(shared = cJSON_AddObjectToObject(doc, "shared")) ||
	    !(frames = cJSON_AddArrayToObject(shared, "frames")) ||
	    !(profiles = cJSON_AddArrayToObject(doc, "profiles")))
		goto fail;
	for (size_t i = 0; i < vg_stacks_n_frames(v); i++)
		if (!cJSON_AddItemToArray(frames, frame_json(v, vg_stacks_frame(v, (uint32_t)i))))
			goto fail;
	for (size_t t = 0; t < vg_stacks_n_threads(v); t++)
		if (!cJSON_AddItemToArray(profiles, thread_profile(&w, vg_stacks_thread(v, t), unit)))
			goto fail;
	return doc;
fail:
	cJSON_Delete(doc);
	return NULL;
}

int vg_speedscope_write(FILE *out, const struct vg_stacks *s, const struct vg_stack_write_opts *o,
			struct vg_error *err)
{
	const struct vg_stacks_meta *meta = o ? o->meta : NULL;
	struct vg_stacks *v;
	uint32_t *path = NULL;
	cJSON *doc = NULL;
	char *text = NULL;
	int rc = vg_stacks_by_function(s, false, &v, err);

	if (rc < 0)
		return rc;
	rc = -ENOMEM;
	if (!(path = malloc(((size_t)max_depth(v) + 1) * sizeof(*path))) ||
	    !(doc = document(v, meta, path)) || !(text = cJSON_PrintUnformatted(doc))) {
		vg_error_set(err, rc, "cannot build the speedscope profile: out of memory");
		goto out;
	}
	errno = 0;
	if (fputs(text, out) == EOF || fputc('\n', out) == EOF || fflush(out) != 0 ||
	    ferror(out)) {
		rc = errno ? -errno : -EIO;
		vg_error_set(err, rc, "cannot write the speedscope profile: %s",
			     strerror(-rc));
		goto out;
	}
	rc = 0;
out:
	cJSON_free(text);
	cJSON_Delete(doc);
	free(path);
	vg_stacks_free(v);
	return rc;
}
