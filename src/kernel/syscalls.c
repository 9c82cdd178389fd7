/* syscalls.c - x86-64 system call names and numbers, and the system call a
 * kernel entry point implements.
 *
 * The tables come from kernel/syscall_table.h, which gen-syscalls.sh writes
 * at build time from the installed <asm/unistd_64.h>: one array sorted by
 * name (binary search) and one indexed by number.  Kernel symbols are
 * matched by prefix only; the remainder must then be a name in the table,
 * so helpers that share a prefix (ksys_sync_helper) do not pass.  Calls
 * newer than the build's headers come from a small table here, and a
 * number nobody knows is printed "syscall_NNN".  Nothing here reads /proc
 * or allocates. */
#include "kernel/syscalls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The name in place: a pointer here would be relocated at every start
 * of the position-independent executable, each page of the tables
 * copied on that first write (~25 us a page where a hypervisor keeps
 * shadow page tables; `-no-pie` took 0.4 ms off `vigil --version` for
 * its 17 such pages).  The generator checks that every name fits. */
struct vg_syscall_entry {
	char name[28];
	int nr;
};

#include "kernel/syscall_table.h"

#define N_BY_NAME (sizeof vg_syscalls_by_name / sizeof vg_syscalls_by_name[0])
#define N_BY_NR (sizeof vg_syscalls_by_nr / sizeof vg_syscalls_by_nr[0])

/* x86-64 system calls newer than the oldest headers vigil builds with
 * (Debian 12's linux-libc-dev stops at 450): the running kernel may have
 * them (6.18 has 470).  Numbers from arch/x86/entry/syscalls/
 * syscall_64.tbl; the generated table wins where it has an entry. */
static const struct vg_syscall_entry newer[] = {
	{ "cachestat", 451 },        { "fchmodat2", 452 },       /* 6.5 */
	{ "map_shadow_stack", 453 }, { "futex_wake", 454 },      /* 6.6 */
	{ "futex_wait", 455 },       { "futex_requeue", 456 },
	{ "statmount", 457 },        { "listmount", 458 },       /* 6.8 */
	{ "lsm_get_self_attr", 459 }, { "lsm_set_self_attr", 460 },
	{ "lsm_list_modules", 461 }, { "mseal", 462 },           /* 6.10 */
	{ "setxattrat", 463 },       { "getxattrat", 464 },      /* 6.13 */
	{ "listxattrat", 465 },      { "removexattrat", 466 },
	{ "open_tree_attr", 467 },                               /* 6.15 */
	{ "file_getattr", 468 },     { "file_setattr", 469 },    /* 6.17 */
	{ "listns", 470 },                                       /* 6.18 */
};
#define N_NEWER (sizeof newer / sizeof newer[0])

static int cmp_entry(const void *key, const void *elem)
{
	return strcmp(key, ((const struct vg_syscall_entry *)elem)->name);
}

/* Lookup of name[0..len), which need not be NUL-ended. */
static int number_of(const char *name, size_t len)
{
	char buf[64];
	const struct vg_syscall_entry *e;

	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, name, len);
	buf[len] = '\0';
	e = bsearch(buf, vg_syscalls_by_name, N_BY_NAME,
		    sizeof vg_syscalls_by_name[0], cmp_entry);
	if (e)
		return e->nr;
	for (size_t i = 0; i < N_NEWER; i++)
		if (strcmp(newer[i].name, buf) == 0)
			return newer[i].nr;
	return -1;
}

int vg_syscall_number(const char *name)
{
	return name ? number_of(name, strlen(name)) : -1;
}

const char *vg_syscall_name(int nr)
{
	if (nr < 0)
		return NULL;
	if ((size_t)nr < N_BY_NR && vg_syscalls_by_nr[nr])
		return vg_syscalls_by_name[vg_syscalls_by_nr[nr] - 1].name;
	for (size_t i = 0; i < N_NEWER; i++)
		if (newer[i].nr == nr)
			return newer[i].name;
	return NULL;
}

const char *vg_syscall_label(int nr, char *buf, size_t size)
{
	const char *name = vg_syscall_name(nr);

	if (name)
		return name;
	if (nr < 0)
		snprintf(buf, size, "syscall_unknown");
	else
		snprintf(buf, size, "syscall_%d", nr);
	return buf;
}

bool vg_syscall_from_kernel_symbol(const char *symbol, char *name, size_t size)
{
	/* The wrappers SYSCALL_DEFINEx generates (arch/x86/include/asm/
	 * syscall_wrapper.h) and the ksys_ helpers the kernel's own callers
	 * share with the entry points. */
	static const char *const prefixes[] = {
		"__x64_sys_", "__do_sys_", "__se_sys_", "__ia32_sys_", "ksys_",
	};
	const char *rest = NULL, *dot;
	size_t len;

	if (!symbol)
		return false;
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		size_t n = strlen(prefixes[i]);

		if (strncmp(symbol, prefixes[i], n) == 0) {
			rest = symbol + n;
			break;
		}
	}
	if (!rest)
		return false;
	/* GCC's clones keep the name and add a suffix (__do_sys_openat.isra.0,
	 * ksys_write.cold): the system call is the part before it. */
	dot = strchr(rest, '.');
	len = dot ? (size_t)(dot - rest) : strlen(rest);
	if (number_of(rest, len) < 0 || len >= size)
		return false;
	memcpy(name, rest, len);
	name[len] = '\0';
	return true;
}
