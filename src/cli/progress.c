/* progress.c - see progress.h. */
#include "cli/progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* bytes as "512.0 KiB" / "3.4 GiB". */
static void human(char *buf, size_t size, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (bytes >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s", bytes, unit[u]);
}

static void print_line(void *arg, const char *what, uint64_t done, uint64_t total, double seconds)
{
	char d[32], t[32];

	(void)arg;
	human(d, sizeof(d), (double)done);
	if (total) {
		human(t, sizeof(t), (double)total);
		fprintf(stderr, "\r# %s: %s of %s (%.0f%%), %.2f GB/s\033[K", what, d, t,
			100.0 * (double)done / (double)total, seconds > 0 ? (double)done / seconds / 1e9 : 0);
	} else {
		fprintf(stderr, "\r# %s: %s, %.2f GB/s\033[K", what, d,
			seconds > 0 ? (double)done / seconds / 1e9 : 0);
	}
	fflush(stderr);
}

struct vg_progress *cli_progress(struct vg_progress *p, bool off, const char *what)
{
	memset(p, 0, sizeof(*p));
	if (off || !isatty(STDERR_FILENO))
		return NULL;
	p->report = print_line;
	p->what = what;
	return p;
}

void cli_progress_done(struct vg_progress *p)
{
	if (p && __atomic_load_n(&p->reported, __ATOMIC_RELAXED))
		fputs("\r\033[K", stderr);
}
