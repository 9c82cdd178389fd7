/* test_mem.c - vg_mem_* against a forked child whose memory layout and
 * contents the child itself reports (addresses through a pipe, contents by
 * construction).  Every byte and every source is asserted exactly. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"

#define PG 4096u
#define ANON_PAGES 4
#define FILE_PAGES 3

/* What the child reports. */
struct layout {
	uint64_t anon;      /* ANON_PAGES pages, byte i = pat_anon(i) */
	uint64_t guard;     /* 3 pages: A, PROT_NONE (holding B), C */
	uint64_t tail;      /* 2 pages readable, then an unmapped page */
	uint64_t file_ro;   /* FILE_PAGES pages, private read-only map of the file */
	uint64_t file_cow;  /* same file, private rw, first byte written by the child */
};

struct child {
	pid_t pid;
	struct layout l;
	char path[64];
	struct vg_target *t;
	struct vg_maps *maps;
	struct vg_mem *m;
};

static uint8_t pat_anon(size_t i) { return (uint8_t)(i * 7 + 3); }
static uint8_t pat_file(size_t i) { return (uint8_t)(i * 13 + 5); }
static uint8_t pat_guard(size_t i) { return (uint8_t)(0xA0 + i / PG); }  /* A0 A1 A2 per page */

static void *map_or_die(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		_exit(99);
	return p;
}

static void child_main(int wfd, const char *path)
{
	struct layout l;
	uint8_t *p;
	size_t i;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	p = map_or_die(ANON_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	for (i = 0; i < ANON_PAGES * PG; i++)
		p[i] = pat_anon(i);
	l.anon = (uintptr_t)p;

	p = map_or_die(3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	for (i = 0; i < 3 * PG; i++)
		p[i] = pat_guard(i);
	if (mprotect(p + PG, PG, PROT_NONE))
		_exit(99);
	l.guard = (uintptr_t)p;

	p = map_or_die(3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	for (i = 0; i < 2 * PG; i++)
		p[i] = pat_anon(i);
	if (munmap(p + 2 * PG, PG))
		_exit(99);
	l.tail = (uintptr_t)p;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(99);
	l.file_ro = (uintptr_t)map_or_die(FILE_PAGES * PG, PROT_READ, MAP_PRIVATE, fd);
	p = map_or_die(FILE_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
	p[0] = 0xEE;  /* copy-on-write: this mapping now has an anonymous page */
	l.file_cow = (uintptr_t)p;
	close(fd);

	if (write(wfd, &l, sizeof(l)) != (ssize_t)sizeof(l))
		_exit(99);
	for (;;)
		pause();
}

static int setup_child(void **state)
{
	struct child *c = calloc(1, sizeof(*c));
	uint8_t buf[FILE_PAGES * PG];
	int fd;
	size_t i;

	if (!c)
		return -1;
	snprintf(c->path, sizeof(c->path), "/tmp/vg_test_mem_XXXXXX");
	fd = mkstemp(c->path);
	if (fd < 0)
		return -1;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = pat_file(i);
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return -1;
	close(fd);
	c->pid = tu_fork_pipe(&fd);
	if (c->pid < 0)
		return -1;
	if (c->pid == 0)
		child_main(fd, c->path);
	if (read(fd, &c->l, sizeof(c->l)) != (ssize_t)sizeof(c->l)) {
		close(fd);
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		return -1;
	}
	close(fd);
	if (vg_target_open(c->pid, &c->t, NULL) || vg_maps_read(c->pid, &c->maps, NULL) ||
	    vg_mem_open(c->t, c->maps, &c->m, NULL))
		return -1;
	*state = c;
	return 0;
}

static int teardown_child(void **state)
{
	struct child *c = *state;

	if (!c)
		return 0;
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	vg_mem_free(c->m);
	vg_maps_free(c->maps);
	vg_target_free(c->t);
	unlink(c->path);
	free(c);
	return 0;
}

static void assert_seg(const struct vg_mem_result *r, size_t i, uint64_t addr,
		       size_t len, enum vg_mem_source src)
{
	assert_true(i < r->n_seg);
	assert_int_equal(r->seg[i].addr, addr);
	assert_int_equal(r->seg[i].len, len);
	assert_string_equal(vg_mem_source_name(r->seg[i].source), vg_mem_source_name(src));
}

static void test_normal_read(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	uint8_t buf[ANON_PAGES * PG];
	size_t i;

	memset(buf, 0x55, sizeof(buf));
	assert_int_equal(vg_mem_read(c->m, c->l.anon, buf, sizeof(buf), &r, &err), 0);
	assert_int_equal(r.bytes_read, sizeof(buf));
	assert_int_equal(r.error, 0);
	assert_int_equal(r.n_seg, 1);
	assert_seg(&r, 0, c->l.anon, sizeof(buf), VG_MEM_VM_READV);
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], pat_anon(i));

	/* unaligned, small */
	assert_int_equal(vg_mem_read(c->m, c->l.anon + 4093, buf, 7, &r, &err), 0);
	for (i = 0; i < 7; i++)
		assert_int_equal(buf[i], pat_anon(4093 + i));
	assert_seg(&r, 0, c->l.anon + 4093, 7, VG_MEM_VM_READV);
	assert_int_equal(vg_mem_read(c->m, c->l.anon, buf, 0, &r, &err), 0);
	assert_int_equal(r.bytes_read, 0);
	assert_int_equal(r.n_seg, 0);
}

/* /proc/PID/mem uses FOLL_FORCE: it serves the PROT_NONE page with the bytes
 * the child wrote there before mprotect().  process_vm_readv cannot. */
static void test_prot_none_served_by_proc_mem(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	uint8_t buf[3 * PG];
	size_t i;

	assert_int_equal(vg_mem_read(c->m, c->l.guard, buf, sizeof(buf), &r, &err), 0);
	assert_int_equal(r.bytes_read, sizeof(buf));
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], pat_guard(i));
	assert_int_equal(r.n_seg, 3);
	assert_seg(&r, 0, c->l.guard, PG, VG_MEM_VM_READV);
	assert_seg(&r, 1, c->l.guard + PG, PG, VG_MEM_PROC_MEM);
	assert_seg(&r, 2, c->l.guard + 2 * PG, PG, VG_MEM_VM_READV);
}

static void test_prot_none_vm_readv_only(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	uint8_t buf[3 * PG];
	char want[256];
	size_t i;

	memset(buf, 0x55, sizeof(buf));
	vg_mem_set_sources(c->m, VG_MEM_SRC_VM_READV);
	assert_int_equal(vg_mem_read(c->m, c->l.guard + 100, buf, 2 * PG, &r, &err), -EFAULT);
	assert_int_equal(r.bytes_read, PG - 100);
	assert_int_equal(r.error, -EFAULT);
	assert_int_equal(err.exit, VG_EXIT_USAGE);
	for (i = 0; i < PG - 100; i++)
		assert_int_equal(buf[i], pat_guard(100 + i));
	for (; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0x55);
	snprintf(want, sizeof(want),
		 "cannot read at 0x%llx: region 0x%llx-0x%llx is not readable (---p) in pid %d",
		 (unsigned long long)(c->l.guard + PG), (unsigned long long)(c->l.guard + PG),
		 (unsigned long long)(c->l.guard + 2 * PG), (int)c->pid);
	assert_non_null(strstr(err.msg, want));
}

static void test_read_off_the_end(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	uint8_t buf[600];
	uint64_t start = c->l.tail + 2 * PG - 100;
	char want[256];
	size_t i;

	memset(buf, 0xCC, sizeof(buf));
	assert_int_equal(vg_mem_read(c->m, start, buf, 300, &r, &err), -EFAULT);
	assert_int_equal(r.bytes_read, 100);
	assert_int_equal(r.error, -EFAULT);
	assert_int_equal(r.n_seg, 1);
	assert_seg(&r, 0, start, 100, VG_MEM_VM_READV);
	for (i = 0; i < 100; i++)
		assert_int_equal(buf[i], pat_anon(2 * PG - 100 + i));
	for (; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xCC);  /* never zero-filled */
	snprintf(want, sizeof(want), "cannot read at 0x%llx: address not mapped in pid %d",
		 (unsigned long long)(c->l.tail + 2 * PG), (int)c->pid);
	assert_non_null(strstr(err.msg, want));
	assert_int_equal(err.exit, VG_EXIT_USAGE);

	/* starting in the hole: nothing */
	vg_error_clear(&err);
	assert_int_equal(vg_mem_read(c->m, c->l.tail + 2 * PG, buf, 8, &r, &err), -EFAULT);
	assert_int_equal(r.bytes_read, 0);
	assert_int_equal(r.n_seg, 0);
}

static void test_file_source_only(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	uint8_t buf[FILE_PAGES * PG];
	size_t i;

	vg_mem_set_sources(c->m, VG_MEM_SRC_FILE);
	memset(buf, 0x55, sizeof(buf));
	assert_int_equal(vg_mem_read(c->m, c->l.file_ro, buf, sizeof(buf), &r, &err), 0);
	assert_int_equal(r.n_seg, 1);
	assert_seg(&r, 0, c->l.file_ro, sizeof(buf), VG_MEM_FILE);
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], pat_file(i));

	/* unaligned inside the mapping */
	assert_int_equal(vg_mem_read(c->m, c->l.file_ro + PG + 17, buf, 33, &r, &err), 0);
	for (i = 0; i < 33; i++)
		assert_int_equal(buf[i], pat_file(PG + 17 + i));

	/* an anonymous region has no file */
	assert_int_equal(vg_mem_read(c->m, c->l.anon, buf, 16, &r, &err), -EFAULT);
	assert_int_equal(r.bytes_read, 0);
	assert_non_null(strstr(err.msg, "no enabled source could read region"));

	/* a private mapping the child wrote to is no longer the file's */
	vg_error_clear(&err);
	assert_int_equal(vg_mem_read(c->m, c->l.file_cow + PG, buf, 16, &r, &err), -EFAULT);
	assert_int_equal(r.bytes_read, 0);

	/* and through the normal sources it shows the write */
	vg_mem_set_sources(c->m, VG_MEM_SRC_ALL);
	assert_int_equal(vg_mem_read(c->m, c->l.file_cow, buf, 2, &r, &err), 0);
	assert_int_equal(buf[0], 0xEE);
	assert_int_equal(buf[1], pat_file(1));
}

/* A seccomp profile that refuses process_vm_readv (EPERM, as Docker's
 * default does without CAP_SYS_PTRACE): /proc/PID/mem serves the bytes, and
 * a real hole further on is still a hole (exit 2), not a permission stop. */
static int read_with_vm_readv_refused(struct child *c)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	struct vg_mem *m = NULL;
	uint8_t buf[300];
	uint64_t start = c->l.tail + 2 * PG - 100;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return 10;
	if (vg_mem_open(c->t, c->maps, &m, &err) < 0)
		return 11;
	if (vg_mem_read(m, start, buf, sizeof(buf), &r, &err) != -EFAULT)
		return 12;
	if (r.bytes_read != 100 || r.n_seg != 1 || r.seg[0].source != VG_MEM_PROC_MEM)
		return 13;
	if (err.exit != VG_EXIT_USAGE || !strstr(err.msg, "address not mapped"))
		return 14;
	for (size_t i = 0; i < 100; i++)
		if (buf[i] != pat_anon(2 * PG - 100 + i))
			return 15;
	vg_mem_free(m);
	return 0;
}

static void test_vm_readv_refused(void **state)
{
	struct child *c = *state;
	int status;
	pid_t p = fork();

	assert_true(p >= 0);
	if (p == 0)
		_exit(read_with_vm_readv_refused(c));
	assert_int_equal(waitpid(p, &status, 0), p);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_proc_mem_source_only(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	uint8_t buf[ANON_PAGES * PG];
	size_t i;

	vg_mem_set_sources(c->m, VG_MEM_SRC_PROC_MEM);
	assert_int_equal(vg_mem_read(c->m, c->l.anon, buf, sizeof(buf), &r, &err), 0);
	assert_int_equal(r.n_seg, 1);
	assert_seg(&r, 0, c->l.anon, sizeof(buf), VG_MEM_PROC_MEM);
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], pat_anon(i));

	/* the whole guard region, PROT_NONE included, in one segment */
	assert_int_equal(vg_mem_read(c->m, c->l.guard, buf, 3 * PG, &r, &err), 0);
	assert_int_equal(r.n_seg, 1);
	assert_seg(&r, 0, c->l.guard, 3 * PG, VG_MEM_PROC_MEM);
	for (i = 0; i < 3 * PG; i++)
		assert_int_equal(buf[i], pat_guard(i));

	/* the file mapping too (the page cache behind it) */
	assert_int_equal(vg_mem_read(c->m, c->l.file_ro, buf, FILE_PAGES * PG, &r, &err), 0);
	assert_seg(&r, 0, c->l.file_ro, FILE_PAGES * PG, VG_MEM_PROC_MEM);
	for (i = 0; i < FILE_PAGES * PG; i++)
		assert_int_equal(buf[i], pat_file(i));

	/* and it stops at the same hole */
	assert_int_equal(vg_mem_read(c->m, c->l.tail + PG, buf, 2 * PG, &r, &err), -EFAULT);
	assert_int_equal(r.bytes_read, PG);
}

#define NREQ 3000
#define BAD 1500

static void test_readv_many(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_req *q = calloc(NREQ, sizeof(*q));
	uint8_t *bufs = malloc(NREQ * 8);
	size_t i, j;

	assert_non_null(q);
	assert_non_null(bufs);
	memset(bufs, 0x55, NREQ * 8);
	for (i = 0; i < NREQ; i++) {
		q[i].addr = c->l.anon + (i * 5) % (ANON_PAGES * PG - 8);
		q[i].buf = bufs + i * 8;
		q[i].len = 1 + i % 8;
	}
	q[BAD].addr = c->l.tail + 2 * PG;  /* the unmapped page */
	/* one PROT_NONE request right after the bad one: served by /proc/PID/mem */
	q[BAD + 1].addr = c->l.guard + PG + 8;
	assert_int_equal(vg_mem_readv(c->m, q, NREQ, &err), 0);
	for (i = 0; i < NREQ; i++) {
		if (i == BAD) {
			assert_int_equal(q[i].bytes_read, 0);
			assert_int_equal(q[i].source, VG_MEM_NONE);
			for (j = 0; j < 8; j++)
				assert_int_equal(bufs[i * 8 + j], 0x55);
			continue;
		}
		assert_int_equal(q[i].bytes_read, q[i].len);
		if (i == BAD + 1) {
			assert_int_equal(q[i].source, VG_MEM_PROC_MEM);
			for (j = 0; j < q[i].len; j++)
				assert_int_equal(bufs[i * 8 + j], 0xA1);
			continue;
		}
		assert_int_equal(q[i].source, VG_MEM_VM_READV);
		for (j = 0; j < q[i].len; j++)
			assert_int_equal(bufs[i * 8 + j], pat_anon((i * 5) % (ANON_PAGES * PG - 8) + j));
	}
	free(q);
	free(bufs);
}

static void test_readv_request_crossing_hole(void **state)
{
	struct child *c = *state;
	struct vg_mem_req q[3];
	uint8_t b[3][64];

	memset(b, 0x55, sizeof(b));
	q[0] = (struct vg_mem_req){ .addr = c->l.anon, .buf = b[0], .len = 64 };
	q[1] = (struct vg_mem_req){ .addr = c->l.tail + 2 * PG - 10, .buf = b[1], .len = 64 };
	q[2] = (struct vg_mem_req){ .addr = c->l.anon + 64, .buf = b[2], .len = 64 };
	assert_int_equal(vg_mem_readv(c->m, q, 3, NULL), 0);
	assert_int_equal(q[0].bytes_read, 64);
	assert_int_equal(q[1].bytes_read, 10);
	assert_int_equal(q[1].source, VG_MEM_VM_READV);
	assert_int_equal(b[1][9], pat_anon(2 * PG - 1));
	assert_int_equal(b[1][10], 0x55);
	assert_int_equal(q[2].bytes_read, 64);
	assert_int_equal(b[2][0], pat_anon(64));
}

static void test_read_after_exit(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	struct vg_mem_req q = { 0 };
	uint8_t buf[64];
	char want[128];

	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	assert_int_equal(vg_mem_read(c->m, c->l.anon, buf, sizeof(buf), &r, &err), -ESRCH);
	assert_int_equal(r.bytes_read, 0);
	assert_int_equal(r.error, -ESRCH);
	assert_int_equal(err.exit, VG_EXIT_GONE);
	snprintf(want, sizeof(want), "pid %d exited while being read", (int)c->pid);
	assert_string_equal(err.msg, want);

	/* every source alone says the same */
	vg_error_clear(&err);
	vg_mem_set_sources(c->m, VG_MEM_SRC_PROC_MEM);
	assert_int_equal(vg_mem_read(c->m, c->l.anon, buf, sizeof(buf), &r, &err), -ESRCH);
	vg_mem_set_sources(c->m, VG_MEM_SRC_FILE);
	assert_int_equal(vg_mem_read(c->m, c->l.file_ro, buf, sizeof(buf), &r, &err), -ESRCH);
	vg_mem_set_sources(c->m, VG_MEM_SRC_ALL);

	q.addr = c->l.anon;
	q.buf = buf;
	q.len = 8;
	assert_int_equal(vg_mem_readv(c->m, &q, 1, &err), -ESRCH);
	assert_int_equal(q.bytes_read, 0);
	c->pid = 0;
}

/* Killed while zombie (not reaped): process_vm_readv says ESRCH too. */
static void test_read_zombie(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	siginfo_t si;
	uint8_t buf[8];

	kill(c->pid, SIGKILL);
	assert_int_equal(waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(vg_mem_read(c->m, c->l.anon, buf, sizeof(buf), &r, &err), -ESRCH);
	assert_int_equal(err.exit, VG_EXIT_GONE);
}

static void test_bad_input(void **state)
{
	struct child *c = *state;
	struct vg_error err = { 0 };
	struct vg_mem_result r;
	uint8_t buf[16];

	assert_int_equal(vg_mem_read(c->m, UINT64_MAX - 3, buf, 16, &r, &err), -EINVAL);
	assert_null(vg_mem_free(NULL));
	assert_string_equal(vg_mem_source_name(VG_MEM_NONE), "none");
	assert_string_equal(vg_mem_source_name(VG_MEM_FILE), "image_file");
}

#define CHILD_TEST(f) cmocka_unit_test_setup_teardown(f, setup_child, teardown_child)

int main(void)
{
	const struct CMUnitTest tests[] = {
		CHILD_TEST(test_normal_read),
		CHILD_TEST(test_prot_none_served_by_proc_mem),
		CHILD_TEST(test_prot_none_vm_readv_only),
		CHILD_TEST(test_read_off_the_end),
		CHILD_TEST(test_file_source_only),
		CHILD_TEST(test_proc_mem_source_only),
		CHILD_TEST(test_vm_readv_refused),
		CHILD_TEST(test_readv_many),
		CHILD_TEST(test_readv_request_crossing_hole),
		CHILD_TEST(test_read_after_exit),
		CHILD_TEST(test_read_zombie),
		CHILD_TEST(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
