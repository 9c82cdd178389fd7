/* perfmap.h - the names a JIT gives its code in /tmp/perf-PID.map (node
 * --perf-basic-prof, the JVM through perf-map-agent, LuaJIT, .NET with
 * DOTNET_PerfMapEnabled): one "START SIZE NAME" line per function, hex
 * START and SIZE, NAME to the end of the line, appended while the program
 * runs.  As perf reads it: a later line wins where two ranges overlap
 * (code freed and the space reused).
 *
 * The file is written by the target, so it is untrusted input: lines are
 * bounded (VG_PERFMAP_MAX_LINE; a longer one is skipped), so is the number
 * of entries (VG_PERFMAP_MAX_ENTRIES; the rest is ignored and
 * vg_perfmap_full says so), and a line that does not parse is skipped and
 * counted.  Names are never moved nor freed before vg_perfmap_free, so an
 * answer may borrow them across re-reads.
 *
 * Not read: /tmp/jit-PID.dump (jitdump, perf inject's format with code
 * bytes and line tables). */
#ifndef VG_SYM_PERFMAP_H
#define VG_SYM_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"
#include "util/ranges.h"

#define VG_PERFMAP_MAX_LINE 4096
#define VG_PERFMAP_MAX_ENTRIES (2u * 1024 * 1024)

/* Starts as util/ranges.h's struct vg_range_head: its lookups read it. */
struct vg_perfmap_entry {
	uint64_t start, end;     /* [start, end) */
	uint32_t seq;            /* line order: the later wins */
	const char *name;
};
VG_RANGE_HEAD_CHECK(struct vg_perfmap_entry, start, end);

struct vg_perfmap_chunk;

struct vg_perfmap {
	struct vg_perfmap_entry *entries;  /* sorted by start after indexing */
	uint64_t *max_end;       /* max end over entries[0..i] */
	size_t n, cap;
	bool sorted;
	uint32_t next_seq;
	bool skipping;           /* inside an over-long line */
	size_t bad_lines;        /* lines that did not parse */
	bool full;               /* VG_PERFMAP_MAX_ENTRIES reached */
	struct vg_perfmap_chunk *chunks;   /* name storage */

	/* The file of a live target (vg_perfmap_open_target). */
	char path[96];           /* /proc/MMPID/root/tmp/perf-NSPID.map */
	char label[48];          /* "[perf-NSPID.map]": the answers' image */
	uid_t owner;             /* the target's user: the file must be its or root's */
	uint64_t dev, inode, consumed;
	uint64_t checked_ns;     /* last look at the file (0: never) */
	bool exists;
};

/* Parses the complete lines of buf[0, len) into m (a last line without
 * its newline is left for the next call: the writer may be mid-line).
 * Returns the bytes consumed.  Indexing is deferred to the next lookup. */
size_t vg_perfmap_feed(struct vg_perfmap *m, const char *buf, size_t len);

/* The entry that names addr (the latest line covering it), or NULL.
 * Sorts m first if lines were fed since the last lookup; NULL also when
 * that runs out of memory. */
const struct vg_perfmap_entry *vg_perfmap_lookup(struct vg_perfmap *m, uint64_t addr);

/* For the process whose /proc entry is mm_pid (thread-group pid pid):
 * the map file under its root, named by its pid in its own PID namespace
 * (the last NSpid of /proc/PID/status).  Reads nothing yet. */
int vg_perfmap_open_target(struct vg_perfmap *m, pid_t pid, pid_t mm_pid,
			   struct vg_error *err);

/* Reads what was appended since the last call, at most once per
 * min_interval_ns (0: now).  A file replaced (another inode) or truncated
 * is read again from its start.  0, or -errno when it cannot be read
 * (ENOENT: no map, the usual case); err says why. */
int vg_perfmap_update(struct vg_perfmap *m, uint64_t now_ns, uint64_t min_interval_ns,
		      struct vg_error *err);

void vg_perfmap_free(struct vg_perfmap *m);

#endif
