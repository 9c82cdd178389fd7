/* json.h - the common header and helpers for every machine-readable report.
 *
 * Every document starts with schema_version, tool, tool_version, operation
 * and process {pid, starttime_ticks, pid_alive_after, process_changed,
 * warnings}.  Addresses are strings "0x..." in lower-case hex.  Builds cJSON
 * trees only; printing is the CLI's job. */
#ifndef VG_JSON_H
#define VG_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "target/maps.h"
#include "target/target.h"

#define VG_SCHEMA_VERSION 2

/* New object with the common header; process is filled from t (may be NULL
 * for offline operations).  The identity is re-checked here, so call it when
 * the observation is over.  Returns NULL only on allocation failure. */
cJSON *vg_json_report_new(const char *operation, const struct vg_target *t);

/* Add "0x..." string member. */
cJSON *vg_json_add_addr(cJSON *obj, const char *key, uint64_t addr);

/* Add a string that came from the target (a path, a comm, a warning that
 * quotes them): JSON strings must be UTF-8, file names need not be.  Valid
 * UTF-8 is added as is; otherwise invalid bytes are written "\\xNN" and the
 * exact bytes are added as KEY_hex, so nothing is lost or made invalid. */
cJSON *vg_json_add_text(cJSON *obj, const char *key, const char *s);
/* Lower-case hex of n bytes, malloc'ed ("" for n = 0); NULL on ENOMEM. */
char *vg_hex_string(const void *buf, size_t n);

/* The same as an array element. */
cJSON *vg_json_text(const char *s);

/* One region as every report shows it: start, end, perms, offset, dev,
 * inode (a decimal string), path (+ path_hex), deleted, kind, and
 * name_ambiguous when set.  NULL only on allocation failure. */
cJSON *vg_json_region(const struct vg_region *r);

struct vg_sym_frame;
/* One symbolized frame {function, file, line, column, inlined}, as sym
 * and watch report it.  NULL only on allocation failure. */
cJSON *vg_json_sym_frame(const struct vg_sym_frame *f);

/* Error document: header plus {"error": {"message", "errno", "exit_code"}}. */
/* observation.process_tree of watch, probe and profile: what the process
 * did to the observation by exec() and fork().  watched: the exec and fork
 * records could be read (false: the perf event was refused, and nothing
 * is known); exec_ns (0: none) relative to start_ns, the new comm, and
 * how long after it the observation stopped counting (stop_ns, 0: not
 * known); the child processes created, counted, none observed (pids: the
 * first n of them). */
enum vg_json_exec_stop {
	VG_JSON_EXEC_STOP_BY_TIME = 0,   /* samples after the exec dropped (null) */
	VG_JSON_EXEC_STOP_KERNEL,        /* closed in the kernel at the exec (true) */
	VG_JSON_EXEC_STOP_VIGIL,         /* closed when vigil read it, stop_ns (false) */
};
struct vg_json_tree {
	bool watched;
	uint64_t start_ns, exec_ns, stop_ns;
	enum vg_json_exec_stop exec_stop;   /* exec.stopped_in_kernel */
	const char *exec_comm;
	uint64_t children;
	const pid_t *pids;
	size_t n_pids;
};
cJSON *vg_json_process_tree(const struct vg_json_tree *t);

struct vg_perf_stats;
/* The same from a perf set's exec and fork records (watch and profile:
 * the observation stopped at the exec, watched unless refused). */
cJSON *vg_json_process_tree_perf(const struct vg_perf_stats *st, uint64_t start_ns);

cJSON *vg_json_error_new(const char *operation, const struct vg_target *t,
			 const char *message, int code, int exit_code);

#endif
