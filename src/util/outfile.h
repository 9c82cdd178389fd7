/* outfile.h - the files vigil writes for the user (-o, --save, --snapshot).
 *
 * One rule for every output path: vigil replaces only a regular file that
 * the user owns and that has no other name.  A symlink, a device node
 * (/dev/null as root), a FIFO, a socket, a directory, a hard-linked file or
 * another user's file at PATH is refused (-EINVAL, exit 2) and left
 * untouched.  The bytes go to a new file created with O_EXCL in PATH's
 * directory, which is synced and renamed over PATH only when complete, so
 * PATH is either the old file or the whole new one.  A file that holds the
 * target's memory (VG_OUTFILE_PRIVATE: scan sets, snapshots) is 0600
 * whatever the umask. */
#ifndef VG_OUTFILE_H
#define VG_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/error.h"

enum vg_outfile_flags {
	VG_OUTFILE_PRIVATE = 1,      /* mode 0600: the file holds target memory */
};

struct vg_outfile {
	int fd;                      /* the temporary file; -1 when closed */
	FILE *stream;                /* vg_outfile_stream's, or NULL */
	char *path;                  /* the destination */
	char *tmp;                   /* the temporary file, in path's directory */
	int error;                   /* first -errno of a write, 0 */
};

/* May PATH be written?  0 when PATH does not exist and its directory can
 * be written, or is a regular file of the user with one link.  -EINVAL
 * (the sentence names what PATH is), -ENOENT (no such directory), -EACCES
 * or -EROFS (the directory cannot be written); PATH is never changed.
 * Callers check before a long observation, so that a bad path is not
 * discovered only when its result is to be written. */
int vg_outfile_check(const char *path, struct vg_error *err);

/* vg_outfile_check, then create the temporary file (mode 0666 minus the
 * umask, or 0600 with VG_OUTFILE_PRIVATE).  0 or -errno with a sentence;
 * on failure o needs no abort. */
int vg_outfile_open(struct vg_outfile *o, const char *path, unsigned flags,
		    struct vg_error *err);

/* Write n bytes; the first failure is kept in o->error (and returned) and
 * later writes do nothing. */
int vg_outfile_write(struct vg_outfile *o, const void *p, size_t n);

/* A stdio stream over the temporary file (writes go through
 * vg_outfile_write, so a failure's errno is kept, e.g. ENOSPC).  Owned by
 * o: commit or abort closes it.  NULL (o->error set) if out of memory. */
FILE *vg_outfile_stream(struct vg_outfile *o);

/* Flush, fsync, check PATH again (what is there now must still be
 * replaceable) and rename the temporary file over it.  0, or -errno with
 * "cannot write WHAT 'PATH': REASON" (ENOSPC and EIO keep their class);
 * the temporary file is removed on failure.  Frees o either way. */
int vg_outfile_commit(struct vg_outfile *o, const char *what, struct vg_error *err);

/* Remove the temporary file and free o (PATH untouched).  No-op on a
 * closed o. */
void vg_outfile_abort(struct vg_outfile *o);

#endif
