/* truth.c - see truth.h.  Uses dl_iterate_phdr (the dynamic linker's own
 * view of every loaded object: dlpi_addr is the exact load bias) and reads
 * each object's NT_GNU_BUILD_ID note from its own memory. */
#include "truth.h"

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

void truth_init(unsigned max_seconds)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(max_seconds);
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "target: %s '%s' failed\n", what, path);
	exit(99);
}

FILE *truth_begin(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		die("open", tmp);
	return f;
}

void truth_end(FILE *f, const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0)
		die("write", tmp);
	if (rename(tmp, path) != 0)
		die("rename", path);
}

static void canonical(const char *name, char *out, size_t size)
{
	char buf[PATH_MAX];
	if (!name || !*name) {
		ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		snprintf(out, size, "%s", buf);
	} else if (name[0] == '/' && realpath(name, buf)) {
		snprintf(out, size, "%s", buf);
	} else {
		snprintf(out, size, "%s", name);
	}
}

static void build_id(const struct dl_phdr_info *info, char *out, size_t size)
{
	snprintf(out, size, "-");
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof(*n);
			const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && desc + n->n_descsz <= end) {
				size_t o = 0;
				for (unsigned j = 0; j < n->n_descsz && o + 3 <= size; j++)
					o += snprintf(out + o, size - o, "%02x", desc[j]);
				return;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
}

static int one_object(struct dl_phdr_info *info, size_t sz, void *data)
{
	FILE *f = data;
	char path[PATH_MAX], bid[256];
	const char *kind = "other";
	if (!info->dlpi_name || !*info->dlpi_name)
		kind = "main";
	else if (info->dlpi_name[0] == '/')
		kind = "lib";
	canonical(info->dlpi_name, path, sizeof(path));
	build_id(info, bid, sizeof(bid));
	fprintf(f, "obj %s 0x%llx %s %s\n", kind,
		(unsigned long long)info->dlpi_addr, bid, path);
	return 0;
}

void truth_objects(FILE *f)
{
	fprintf(f, "pid %d\n", (int)getpid());
	dl_iterate_phdr(one_object, f);
}

void truth_symbol(FILE *f, const char *name, const volatile void *addr,
		  size_t size)
{
	Dl_info info;
	struct link_map *lm = NULL;
	char path[PATH_MAX];
	uintptr_t a = (uintptr_t)addr;
	if (!dladdr1((const void *)a, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) {
		fprintf(stderr, "target: dladdr1 failed for %s\n", name);
		exit(99);
	}
	canonical(lm->l_name, path, sizeof(path));
	fprintf(f, "sym %s 0x%llx 0x%llx %zu ", name, (unsigned long long)a,
		(unsigned long long)(a - lm->l_addr), size);
	for (size_t i = 0; i < size; i++)
		fprintf(f, "%02x", ((const volatile unsigned char *)addr)[i]);
	fprintf(f, " %s\n", path);
}

void truth_frame(FILE *f, const char *name, int idx, const char *function,
		 const char *file, int line, int inlined)
{
	const char *slash = strrchr(file, '/');
	fprintf(f, "frame %s %d %s %s %d %d\n", name, idx, function,
		slash ? slash + 1 : file, line, inlined ? 1 : 0);
}

void *truth_load_vgtestlib(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "target: %s\n", dlerror());
		exit(99);
	}
	void *counter = dlsym(h, "vglib_counter");
	if (!counter) {
		fprintf(stderr, "target: no vglib_counter in '%s'\n", path);
		exit(99);
	}
	return counter;
}

void truth_wait_forever(void)
{
	for (;;)
		pause();
}

/* The file offset of a runtime address in the main executable. */
struct find_off {
	uintptr_t addr;
	long long off;
	uintptr_t bias;
};

static int find_off_cb(struct dl_phdr_info *info, size_t sz, void *data)
{
	struct find_off *fo = data;
	(void)sz;
	if (info->dlpi_name && *info->dlpi_name)
		return 0;                      /* the main program only */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && fo->addr >= lo && fo->addr < lo + ph->p_filesz) {
			fo->off = (long long)(fo->addr - lo + ph->p_offset);
			fo->bias = info->dlpi_addr;
			return 1;
		}
	}
	return 0;
}

void truth_emu(FILE *f, const char *name, const void *label)
{
	struct find_off fo = { (uintptr_t)label, -1, 0 };
	char exe[PATH_MAX];
	dl_iterate_phdr(find_off_cb, &fo);
	if (fo.off < 0 || !realpath("/proc/self/exe", exe)) {
		fprintf(stderr, "target: no file offset for label %s\n", name);
		exit(99);
	}
	fprintf(f, "emu %s 0x%llx 0x%llx 0x%llx %s\n", name, fo.off,
		(unsigned long long)(uintptr_t)label,
		(unsigned long long)((uintptr_t)label - fo.bias), exe);
}

/* Whether thread tid is inside system call nr now. */
static int in_syscall(pid_t tid, long nr)
{
	char path[64], buf[256];
	FILE *f;
	long got = -2;

	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof buf, f))
		got = strncmp(buf, "running", 7) == 0 ? -2 : atol(buf);
	fclose(f);
	return got == nr;
}

void truth_wait_in_syscall(pid_t tid, long nr)
{
	for (int tries = 0; !in_syscall(tid, nr); tries++) {
		if (tries > 5000) {
			fprintf(stderr, "target: thread %d not in system call %ld after 5 s\n", (int)tid, nr);
			exit(99);
		}
		usleep(1000);
	}
}
