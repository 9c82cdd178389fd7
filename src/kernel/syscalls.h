/* syscalls.h - x86-64 system call names and numbers.
 *
 * Shared by watch and stack.  perf's sampled user registers show
 * rax = -ENOSYS while a system call runs (the entry code overwrites it; the
 * number is in orig_ax, which perf does not expose), so a kernel write names
 * its system call from the kernel callchain (__x64_sys_read, __do_sys_read,
 * ksys_read ...) and this table gives the number; stack names the number
 * /proc/TID/syscall shows.  The table is generated at build time from the
 * installed <asm/unistd_64.h>. */
#ifndef VG_SYSCALLS_H
#define VG_SYSCALLS_H

#include <stdbool.h>
#include <stddef.h>

/* Number of a system call name ("read" -> 0), or -1. */
int vg_syscall_number(const char *name);
/* Name of a number, or NULL.  Both directions also know the calls added
 * after the build's <asm/unistd_64.h> (451 cachestat .. 470 listns). */
const char *vg_syscall_name(int nr);
/* The name, or "syscall_NNN" (in buf) for a number no table knows, e.g.
 * one a newer kernel added; "syscall_unknown" for nr < 0. */
const char *vg_syscall_label(int nr, char *buf, size_t size);
/* The system call a kernel function implements, from the entry-point
 * naming conventions: "__x64_sys_read", "__do_sys_read", "__se_sys_read",
 * "__ia32_sys_read", "ksys_read" -> "read" (copied into name, NUL-ended),
 * ignoring a compiler clone suffix ("__do_sys_openat.isra.0"); false for
 * any other symbol, a name not in the table, or one that does not fit. */
bool vg_syscall_from_kernel_symbol(const char *symbol, char *name, size_t size);

#endif
