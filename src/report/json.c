/* json.c - the common report header shared by every command.
 *
 * The header is built last (when the observation is over) because it carries
 * pid_alive_after and process_changed, which only mean something then.
 * cJSON does all escaping; nothing here formats JSON by hand. */
#include "report/json.h"

#include "perf/event.h"
#include "sym/symbolizer.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

cJSON *vg_json_add_addr(cJSON *obj, const char *key, uint64_t addr)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
	return cJSON_AddStringToObject(obj, key, buf);
}

/* s with each byte that is not part of valid UTF-8 as "\xNN" (malloc'ed). */
static char *escape_invalid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = malloc(4 * strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	while (*p) {
		size_t n = vg_utf8_seq(p);

		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			o += sprintf(o, "\\x%02x", *p++);
		}
	}
	*o = '\0';
	return out;
}

char *vg_hex_string(const void *buf, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = buf;
	char *hex = malloc(2 * n + 1);

	if (!hex)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = digits[p[i] >> 4];
		hex[2 * i + 1] = digits[p[i] & 15];
	}
	hex[2 * n] = '\0';
	return hex;
}

static cJSON *text_item(const char *s, bool valid)
{
	char *esc;
	cJSON *item;

	if (valid)
		return cJSON_CreateString(s);
	esc = escape_invalid(s);
	item = cJSON_CreateString(esc ? esc : "");
	free(esc);
	return item;
}

cJSON *vg_json_text(const char *s)
{
	if (!s)
		s = "";
	return text_item(s, vg_utf8_valid(s));
}

cJSON *vg_json_add_text(cJSON *obj, const char *key, const char *s)
{
	bool valid;
	cJSON *item;

	if (!s)
		s = "";
	valid = vg_utf8_valid(s);
	item = text_item(s, valid);
	if (!item || !cJSON_AddItemToObject(obj, key, item))
		return NULL;
	if (!valid) {
		size_t klen = strlen(key);
		char *hex = vg_hex_string(s, strlen(s)), *hkey = malloc(klen + 5);

		if (hex && hkey) {
			snprintf(hkey, klen + 5, "%s_hex", key);
			cJSON_AddStringToObject(obj, hkey, hex);
		}
		free(hex);
		free(hkey);
	}
	return item;
}

cJSON *vg_json_region(const struct vg_region *r)
{
	cJSON *o = cJSON_CreateObject();
	char dev[24], inode[24];

	if (!o)
		return NULL;
	vg_json_add_addr(o, "start", r->start);
	vg_json_add_addr(o, "end", r->end);
	cJSON_AddStringToObject(o, "perms", r->perms);
	vg_json_add_addr(o, "offset", r->offset);
	snprintf(dev, sizeof(dev), "%02x:%02x", r->dev_major, r->dev_minor);
	cJSON_AddStringToObject(o, "dev", dev);
	/* A string: overlayfs (xino) inodes exceed what a double holds. */
	snprintf(inode, sizeof(inode), "%" PRIu64, r->inode);
	cJSON_AddStringToObject(o, "inode", inode);
	vg_json_add_text(o, "path", r->path);
	cJSON_AddBoolToObject(o, "deleted", r->deleted);
	cJSON_AddStringToObject(o, "kind", vg_region_kind_name(r->kind));
	if (r->name_ambiguous)  /* decoded from "\012": may not be the name */
		cJSON_AddBoolToObject(o, "name_ambiguous", true);
	return o;
}

static cJSON *process_object(const struct vg_target *t)
{
	cJSON *p = cJSON_CreateObject();
	cJSON *w;
	bool alive, changed;

	if (!p)
		return NULL;
	vg_target_recheck(t, &alive, &changed);
	cJSON_AddNumberToObject(p, "pid", t->pid);
	if (t->requested != t->pid)
		cJSON_AddNumberToObject(p, "requested_pid", t->requested);
	cJSON_AddNumberToObject(p, "starttime_ticks", (double)t->starttime);
	vg_json_add_text(p, "comm", t->comm);
	cJSON_AddBoolToObject(p, "pid_alive_after", alive);
	cJSON_AddBoolToObject(p, "process_changed", changed || t->exec_seen);
	w = cJSON_AddArrayToObject(p, "warnings");
	for (size_t i = 0; w && i < t->n_warnings; i++)
		cJSON_AddItemToArray(w, vg_json_text(t->warnings[i]));
	return p;
}

cJSON *vg_json_report_new(const char *operation, const struct vg_target *t)
{
	cJSON *root = cJSON_CreateObject();

	if (!root)
		return NULL;
	cJSON_AddNumberToObject(root, "schema_version", VG_SCHEMA_VERSION);
	cJSON_AddStringToObject(root, "tool", "vigil");
	cJSON_AddStringToObject(root, "tool_version", VG_VERSION);
	cJSON_AddStringToObject(root, "operation", operation);
	if (t)
		cJSON_AddItemToObject(root, "process", process_object(t));
	else
		cJSON_AddNullToObject(root, "process");
	return root;
}

cJSON *vg_json_error_new(const char *operation, const struct vg_target *t,
			 const char *message, int code, int exit_code)
{
	cJSON *root = vg_json_report_new(operation, t);
	cJSON *e;

	if (!root)
		return NULL;
	e = cJSON_AddObjectToObject(root, "error");
	vg_json_add_text(e, "message", message);
	cJSON_AddNumberToObject(e, "errno", -code);
	cJSON_AddNumberToObject(e, "exit_code", exit_code);
	return root;
}

cJSON *vg_json_sym_frame(const struct vg_sym_frame *f)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (f->function)
		vg_json_add_text(o, "function", f->function);
	else
		cJSON_AddNullToObject(o, "function");
	if (f->file)
		vg_json_add_text(o, "file", f->file);
	else
		cJSON_AddNullToObject(o, "file");
	cJSON_AddNumberToObject(o, "line", f->line);
	cJSON_AddNumberToObject(o, "column", f->column);
	cJSON_AddBoolToObject(o, "inlined", f->inlined);
	return o;
}

cJSON *vg_json_process_tree_perf(const struct vg_perf_stats *st, uint64_t start_ns)
{
	struct vg_json_tree t = {
		.watched = true, .start_ns = start_ns, .exec_ns = st->exec_ns,
		.exec_comm = st->exec_comm, .children = st->children, .pids = st->child_pids,
		.n_pids = st->children < VG_PERF_MAX_CHILDREN ? (size_t)st->children
							       : VG_PERF_MAX_CHILDREN,
	};

	return vg_json_process_tree(&t);
}

cJSON *vg_json_process_tree(const struct vg_json_tree *t)
{
	cJSON *o = cJSON_CreateObject(), *e, *arr;

	if (!o)
		return NULL;
	cJSON_AddBoolToObject(o, "watched", t->watched);
	if (t->exec_ns) {
		e = cJSON_AddObjectToObject(o, "exec");
		cJSON_AddNumberToObject(e, "at_ms", t->exec_ns > t->start_ns ?
					(double)(t->exec_ns - t->start_ns) / 1e6 : 0);
		vg_json_add_text(e, "comm", t->exec_comm ? t->exec_comm : "");
		if (t->stop_ns)
			cJSON_AddNumberToObject(e, "stopped_after_us", t->stop_ns > t->exec_ns ?
						(double)(t->stop_ns - t->exec_ns) / 1e3 : 0);
		else
			cJSON_AddNullToObject(e, "stopped_after_us");
		if (t->exec_stop == VG_JSON_EXEC_STOP_BY_TIME)
			cJSON_AddNullToObject(e, "stopped_in_kernel");
		else
			cJSON_AddBoolToObject(e, "stopped_in_kernel",
					      t->exec_stop == VG_JSON_EXEC_STOP_KERNEL);
	} else {
		cJSON_AddNullToObject(o, "exec");
	}
	cJSON_AddNumberToObject(o, "children_created", (double)t->children);
	arr = cJSON_AddArrayToObject(o, "children_pids");
	for (size_t i = 0; arr && i < t->n_pids; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(t->pids[i]));
	cJSON_AddBoolToObject(o, "children_covered", false);
	return o;
}
