/* error.h - one error value with a sentence, filled where the context is known.
 *
 * Library functions return 0 or a negative errno and, when given a non-NULL
 * struct vg_error, fill it with a sentence that names what failed, on what,
 * and what to do.  Only src/cli/ prints it.  The errno chosen decides the exit
 * class (see vg_error_exit_code); pick it deliberately:
 *   -EPERM, -EACCES                      missing permission or capability (3)
 *   -ESRCH                               target gone or changed (4)
 *   -EINVAL, -EFAULT, -ENOEXEC, -ERANGE,
 *   -ENXIO, -ENOENT                      bad input from the user (2)
 *   anything else                        runtime failure (1)
 * A caller that knows better overrides the class with vg_error_set_exit(). */
#ifndef VG_ERROR_H
#define VG_ERROR_H

#include <stddef.h>

enum vg_exit {
	VG_EXIT_OK = 0,
	VG_EXIT_RUNTIME = 1,
	VG_EXIT_USAGE = 2,
	VG_EXIT_PERM = 3,
	VG_EXIT_GONE = 4,
};

struct vg_error {
	int code;            /* negative errno, 0 when unset */
	enum vg_exit exit;   /* exit class, derived from code unless overridden */
	char msg[768];
};

/* Fill err (if non-NULL) and return code, so callers can write
 * `return vg_error_set(err, -ENOENT, "cannot open '%s'", p);`.
 * A second call on an already-set error keeps the first sentence: the
 * innermost failure is the most specific one. */
int vg_error_set(struct vg_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Replace the message even if one is already set (used to add context). */
int vg_error_reset(struct vg_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void vg_error_set_exit(struct vg_error *err, enum vg_exit exit);
void vg_error_clear(struct vg_error *err);
enum vg_exit vg_error_exit_for_code(int code);

#endif
