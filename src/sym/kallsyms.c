/* kallsyms.c - the kernel's symbol table, from the text of /proc/kallsyms.
 *
 * Each line is "ADDRESS TYPE NAME" or "ADDRESS TYPE NAME\t[MODULE]".  The
 * file has no size in stat, so it is read in a loop into one buffer, which
 * then becomes the arena: separators are overwritten with NULs in place and
 * every name and module points into it (no allocation per line).  The ~120k
 * symbols are sorted by address (kallsyms lists vmlinux in order already,
 * so the sort is usually skipped), one symbol is kept per address (global
 * text first: T, t, W, w, then the rest, then file order), and each gets
 * the distance to the next as its size, capped at a module boundary.
 *
 * The kernel decides per reader whether to show addresses
 * (kallsyms_show_value: kptr_restrict, perf_event_paranoid and CAP_SYSLOG of
 * the opener); when it does not, every address reads 0 and the table is
 * empty with one sentence naming the setting that hid them.  Reading the
 * real file takes ~50 ms of kernel time for 5 MB; parsing adds less.
 * Does not read /proc/modules or vmlinux, and never prints. */
#include "sym/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KALLSYMS_PATH "/proc/kallsyms"
#define KALLSYMS_MAX_BYTES (256u << 20)
#define KERNEL_HALF 0xffff800000000000ull

struct vg_kallsyms {
	struct vg_ksym *syms;   /* sorted, strictly increasing addresses */
	size_t n;
	size_t malformed;
	char *text;             /* the file's bytes: names and modules */
	char why[512];          /* non-empty when the table is empty */
};

bool vg_addr_is_kernel(uint64_t addr)
{
	return addr >= KERNEL_HALF;
}

/* ---- parsing one line ---- */

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Parse line[0..len) (no '\n') in place into *s; false when malformed. */
static bool parse_line(char *line, size_t len, struct vg_ksym *s)
{
	char *p = line, *end = line + len, *name, *tab = NULL;
	uint64_t addr = 0;
	int digits = 0, v;

	while (p < end && (v = hex_value((unsigned char)*p)) >= 0) {
		if (++digits > 16)
			return false;
		addr = addr << 4 | (uint64_t)v;
		p++;
	}
	if (digits == 0 || end - p < 4 || p[0] != ' ' || p[1] <= ' ' ||
	    p[1] > '~' || p[2] != ' ')
		return false;
	s->addr = addr;
	s->type = p[1];
	name = p + 3;
	for (p = name; p < end; p++) {
		if (*p == '\t') {
			tab = p;
			break;
		}
		if (*p == '\0' || *p == ' ')
			return false;
	}
	if (p == name)
		return false;
	s->name = name;
	s->module = NULL;
	if (!tab) {
		*end = '\0';
		return true;
	}
	/* "\t[module]" to the end of the line */
	if (end - tab < 4 || tab[1] != '[' || end[-1] != ']')
		return false;
	for (p = tab + 2; p < end - 1; p++)
		if (*p == '\0' || *p == ']' || *p == '[' || *p <= ' ')
			return false;
	*tab = '\0';
	end[-1] = '\0';
	s->module = tab + 2;
	return true;
}

/* ---- ordering and sizes ---- */

/* Which of several symbols at one address names it: global text first. */
static int type_rank(char type)
{
	switch (type) {
	case 'T': return 0;
	case 't': return 1;
	case 'W': return 2;
	case 'w': return 3;
	default:  return 4;
	}
}

/* By address, then file order: names point into the buffer in file order,
 * which makes qsort stable. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct vg_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

static bool same_module(const struct vg_ksym *a, const struct vg_ksym *b)
{
	if (!a->module || !b->module)
		return a->module == b->module;
	return strcmp(a->module, b->module) == 0;
}

static void sort_dedupe_size(struct vg_kallsyms *k)
{
	size_t w = 0;
	bool sorted = true;

	for (size_t i = 1; i < k->n && sorted; i++)
		sorted = k->syms[i - 1].addr <= k->syms[i].addr;
	if (!sorted)
		qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
	/* One symbol per address: the best rank, the first of equals. */
	for (size_t i = 0; i < k->n; i++) {
		if (w > 0 && k->syms[w - 1].addr == k->syms[i].addr) {
			if (type_rank(k->syms[i].type) <
			    type_rank(k->syms[w - 1].type))
				k->syms[w - 1] = k->syms[i];
			continue;
		}
		k->syms[w++] = k->syms[i];
	}
	k->n = w;
	for (size_t i = 0; i < k->n; i++) {
		struct vg_ksym *s = &k->syms[i], *next = s + 1;

		if (i + 1 == k->n) {
			/* addr + size - 1 must not wrap */
			s->size = s->addr > UINT64_MAX - VG_KSYM_BOUNDARY_CAP + 1
				? UINT64_MAX - s->addr + 1 : VG_KSYM_BOUNDARY_CAP;
			continue;
		}
		s->size = next->addr - s->addr;
		/* vmlinux's last symbol is followed by a module's first, and
		 * modules by each other, with unknown space in between. */
		if (!same_module(s, next) && s->size > VG_KSYM_BOUNDARY_CAP)
			s->size = VG_KSYM_BOUNDARY_CAP;
	}
}

/* ---- why the table is empty ---- */

/* First line of a small /proc/sys file as an int, or -1. */
static int read_sysctl(const char *path)
{
	char buf[32];
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	return atoi(buf);
}

/* Does this process have CAP_SYSLOG in its effective set? */
static bool has_cap_syslog(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return false;
	return data[CAP_TO_INDEX(CAP_SYSLOG)].effective & CAP_TO_MASK(CAP_SYSLOG);
}

/* The sentence for a file whose addresses all read 0, naming the setting
 * that hid them (mirrors the kernel's kallsyms_show_value()). */
static void explain_zeroes(struct vg_kallsyms *k, const char *origin, bool live)
{
	int restrict_level, paranoid;
	bool cap;

	if (!live) {
		snprintf(k->why, sizeof(k->why),
			 "'%s' shows every address as 0: it was read under "
			 "kernel.kptr_restrict or without CAP_SYSLOG", origin);
		return;
	}
	restrict_level = read_sysctl("/proc/sys/kernel/kptr_restrict");
	paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid");
	cap = has_cap_syslog();
	if (restrict_level < 0) {
		snprintf(k->why, sizeof(k->why),
			 "'%s' shows every address as 0 (kernel.kptr_restrict, "
			 "or no CAP_SYSLOG); run as root or set "
			 "kernel.kptr_restrict=0", origin);
	} else if (restrict_level >= 2) {
		snprintf(k->why, sizeof(k->why),
			 "'%s' shows every address as 0: kernel.kptr_restrict=%d "
			 "hides them from every process, root included; set "
			 "kernel.kptr_restrict=1 (then run with CAP_SYSLOG) or 0",
			 origin, restrict_level);
	} else if (cap) {
		snprintf(k->why, sizeof(k->why),
			 "'%s' shows every address as 0 although vigil has "
			 "CAP_SYSLOG: kernel.kptr_restrict=%d wants it in the "
			 "initial user namespace (is vigil in a container?); run "
			 "it as root on the host", origin, restrict_level);
	} else if (restrict_level == 1) {
		snprintf(k->why, sizeof(k->why),
			 "'%s' shows every address as 0: kernel.kptr_restrict=1 "
			 "hides them from processes without CAP_SYSLOG, and vigil "
			 "runs without it; run as root or set "
			 "kernel.kptr_restrict=0", origin);
	} else if (restrict_level == 0 && paranoid > 1) {
		snprintf(k->why, sizeof(k->why),
			 "'%s' shows every address as 0: with "
			 "kernel.perf_event_paranoid=%d, processes without "
			 "CAP_SYSLOG see them only if kernel.perf_event_paranoid "
			 "is 1 or less; run as root or set it to 1",
			 origin, paranoid);
	} else {
		snprintf(k->why, sizeof(k->why),
			 "'%s' shows every address as 0 although "
			 "kernel.kptr_restrict=0 and kernel.perf_event_paranoid=%d "
			 "allow it (a lockdown or security module?)",
			 origin, paranoid);
	}
}

/* ---- building the table ---- */

/* Up to 40 bytes of line for a message, unprintable bytes as '?'. */
static void excerpt(char *dst, size_t dst_size, const char *line, size_t len)
{
	size_t n = len < dst_size - 1 ? len : dst_size - 1;

	for (size_t i = 0; i < n; i++)
		dst[i] = (line[i] >= ' ' && line[i] <= '~') ? line[i] : '?';
	dst[n] = '\0';
}

/* Parse text[0..len), which k takes over (text has room for a NUL at
 * text[len]). */
static int build(struct vg_kallsyms *k, char *text, size_t len,
		 const char *origin, bool live, struct vg_error *err)
{
	size_t lines = 0, parsed = 0, nonzero = 0, first_bad = 0;
	size_t first_bad_len = 0;
	char *first_bad_text = NULL;
	char *p = text, *end = text + len;

	k->text = text;
	text[len] = '\0';
	for (char *q = text; q < end; lines++) {
		char *nl = memchr(q, '\n', (size_t)(end - q));

		q = nl ? nl + 1 : end;
	}
	if (lines == 0) {
		snprintf(k->why, sizeof(k->why), "'%s' is empty", origin);
		return 0;
	}
	k->syms = calloc(lines, sizeof(*k->syms));
	if (!k->syms)
		return vg_error_set(err, -ENOMEM,
				    "cannot allocate %zu kernel symbols", lines);
	for (size_t line_no = 1; p < end; line_no++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *line_end = nl ? nl : end;
		struct vg_ksym s;

		if (!parse_line(p, (size_t)(line_end - p), &s)) {
			if (k->malformed++ == 0) {
				first_bad = line_no;
				first_bad_text = p;
				first_bad_len = (size_t)(line_end - p);
			}
		} else {
			parsed++;
			if (s.addr != 0)
				nonzero++;
			if (vg_addr_is_kernel(s.addr))
				k->syms[k->n++] = s;
		}
		p = nl ? nl + 1 : end;
	}
	if (parsed == 0) {
		char ex[41];

		excerpt(ex, sizeof(ex), first_bad_text, first_bad_len);
		return vg_error_set(err, -EINVAL,
				    "'%s' is not a kallsyms file: line %zu ('%s') "
				    "is not 'ADDRESS TYPE NAME [MODULE]'",
				    origin, first_bad, ex);
	}
	if (nonzero == 0) {
		k->n = 0;
		explain_zeroes(k, origin, live);
		return 0;
	}
	if (k->n == 0) {
		snprintf(k->why, sizeof(k->why),
			 "'%s' lists no address in the kernel half "
			 "(0xffff800000000000 and up)", origin);
		return 0;
	}
	sort_dedupe_size(k);
	return 0;
}

static int finish(struct vg_kallsyms *k, int r, struct vg_kallsyms **out)
{
	if (r < 0) {
		vg_kallsyms_free(k);
		return r;
	}
	*out = k;
	return 0;
}

int vg_kallsyms_parse(const char *buf, size_t len, const char *origin,
		      struct vg_kallsyms **out, struct vg_error *err)
{
	struct vg_kallsyms *k;
	char *text;

	*out = NULL;
	if (len > KALLSYMS_MAX_BYTES)
		return vg_error_set(err, -EFBIG, "'%s' is larger than %u MiB",
				    origin, KALLSYMS_MAX_BYTES >> 20);
	k = calloc(1, sizeof(*k));
	text = malloc(len + 1);
	if (!k || !text) {
		free(k);
		free(text);
		return vg_error_set(err, -ENOMEM, "cannot allocate %zu bytes "
				    "for '%s'", len + 1, origin);
	}
	if (len)
		memcpy(text, buf, len);
	return finish(k, build(k, text, len, origin, false, err), out);
}

/* Read all of fd into *text (with one spare byte); 0 or -errno. */
static int read_all(int fd, char **text, size_t *len)
{
	struct stat st;
	size_t cap = 8u << 20, n = 0;
	char *buf;

	/* Regular files (fixtures) have a size; /proc/kallsyms says 0. */
	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    (uint64_t)st.st_size < KALLSYMS_MAX_BYTES)
		cap = (size_t)st.st_size + 2;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t got;

		if (n + 1 >= cap) {
			char *bigger;

			if (cap > KALLSYMS_MAX_BYTES) {
				free(buf);
				return -EFBIG;
			}
			bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				return -ENOMEM;
			}
			buf = bigger;
			cap *= 2;
		}
		got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;

			free(buf);
			return -e;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	*text = buf;
	*len = n;
	return 0;
}

int vg_kallsyms_load(const char *path, struct vg_kallsyms **out,
		     struct vg_error *err)
{
	struct vg_kallsyms *k;
	const char *origin = path ? path : KALLSYMS_PATH;
	bool live = strcmp(origin, KALLSYMS_PATH) == 0;
	char *text = NULL;
	size_t len = 0;
	int fd, r;

	*out = NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return vg_error_set(err, -ENOMEM, "cannot allocate a kallsyms table");
	fd = open(origin, O_RDONLY | O_CLOEXEC);
	r = fd < 0 ? -errno : read_all(fd, &text, &len);
	if (fd >= 0)
		close(fd);
	if (r == -ENOMEM || r == -EFBIG) {
		vg_kallsyms_free(k);
		return r == -ENOMEM
			? vg_error_set(err, r, "cannot allocate memory for '%s'", origin)
			: vg_error_set(err, r, "'%s' is larger than %u MiB",
				       origin, KALLSYMS_MAX_BYTES >> 20);
	}
	if (r < 0) {
		/* Not an error: kernel frames are then unnamed, once. */
		snprintf(k->why, sizeof(k->why), "cannot read '%s': %s",
			 origin, strerror(-r));
		*out = k;
		return 0;
	}
	return finish(k, build(k, text, len, origin, live, err), out);
}

struct vg_kallsyms *vg_kallsyms_free(struct vg_kallsyms *k)
{
	if (!k)
		return NULL;
	free(k->syms);
	free(k->text);
	free(k);
	return NULL;
}

int vg_kallsyms_lookup(const struct vg_kallsyms *k, uint64_t addr,
		       struct vg_ksym *sym)
{
	size_t lo = 0, hi;
	const struct vg_ksym *s;

	if (!k || k->n == 0)
		return -ENOENT;
	/* First symbol above addr; the candidate is the one before it. */
	hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	s = &k->syms[lo - 1];
	if (addr - s->addr >= s->size)
		return -ENOENT;
	if (sym)
		*sym = *s;
	return 0;
}

size_t vg_kallsyms_count(const struct vg_kallsyms *k)
{
	return k ? k->n : 0;
}

size_t vg_kallsyms_malformed(const struct vg_kallsyms *k)
{
	return k ? k->malformed : 0;
}

const char *vg_kallsyms_why(const struct vg_kallsyms *k)
{
	if (!k)
		return NULL;
	return k->n == 0 ? k->why : NULL;
}
