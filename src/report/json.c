/* json.c - the common report header shared by every command.
 *
 * The header is built last (when the observation is over) because it carries
 * pid_alive_after and process_changed, which only mean something then.
 * cJSON does all escaping; nothing here formats JSON by hand. */
#include "report/json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

cJSON *vg_json_add_addr(cJSON *obj, const char *key, uint64_t addr)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
	return cJSON_AddStringToObject(obj, key, buf);
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
	cJSON_AddStringToObject(p, "comm", t->comm);
	cJSON_AddBoolToObject(p, "pid_alive_after", alive);
	cJSON_AddBoolToObject(p, "process_changed", changed);
	w = cJSON_AddArrayToObject(p, "warnings");
	for (size_t i = 0; w && i < t->n_warnings; i++)
		cJSON_AddItemToArray(w, cJSON_CreateString(t->warnings[i]));
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
	cJSON_AddStringToObject(e, "message", message);
	cJSON_AddNumberToObject(e, "errno", -code);
	cJSON_AddNumberToObject(e, "exit_code", exit_code);
	return root;
}
