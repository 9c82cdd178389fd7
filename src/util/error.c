/* error.c - fills struct vg_error; never prints. */
#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

enum vg_exit vg_error_exit_for_code(int code)
{
	switch (-code) {
	case 0:
		return VG_EXIT_OK;
	case EPERM:
	case EACCES:
		return VG_EXIT_PERM;
	case ESRCH:
		return VG_EXIT_GONE;
	case EINVAL:
	case EFAULT:
	case ENOEXEC:
	case ERANGE:
	case ENXIO:
	case ENOENT:
		return VG_EXIT_USAGE;
	default:
		return VG_EXIT_RUNTIME;
	}
}

static int fill(struct vg_error *err, int code, const char *fmt, va_list ap)
{
	err->code = code;
	err->exit = vg_error_exit_for_code(code);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return code;
}

int vg_error_set(struct vg_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code != 0)
		return code;
	va_start(ap, fmt);
	fill(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int vg_error_reset(struct vg_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	va_start(ap, fmt);
	fill(err, code, fmt, ap);
	va_end(ap);
	return code;
}

void vg_error_set_exit(struct vg_error *err, enum vg_exit exit)
{
	if (err)
		err->exit = exit;
}

void vg_error_clear(struct vg_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->exit = VG_EXIT_OK;
	err->msg[0] = '\0';
}
