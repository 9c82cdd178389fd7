/* cpus.c - sysfs CPU lists. */
#include "perf/cpus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/vec.h"

static int parse_cpu_list(char *p, int **out, size_t *n)
{
	int *cpus = NULL;
	size_t cap = 0, k = 0;

	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0)
			break;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			p = end;
		}
		for (long cpu = a; cpu <= b && cpu < 65536; cpu++) {
			if (VG_GROW(cpus, cap, k + 1) < 0) {
				free(cpus);
				return -ENOMEM;
			}
			cpus[k++] = (int)cpu;
		}
		if (*p == ',')
			p++;
	}
	if (k == 0) {
		free(cpus);
		return -ENOENT;
	}
	*out = cpus;
	*n = k;
	return 0;
}

int vg_cpu_list_read(const char *path, int **out, size_t *n)
{
	char buf[1024];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return -ENOENT;
	buf[len] = '\0';
	return parse_cpu_list(buf, out, n);
}

int vg_cpus_online(int **out, size_t *n, struct vg_error *err)
{
	int r = vg_cpu_list_read("/sys/devices/system/cpu/online", out, n);

	if (r == -ENOENT) {
		char buf[32];
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		snprintf(buf, sizeof(buf), "0-%ld", c > 0 ? c - 1 : 0);
		r = parse_cpu_list(buf, out, n);
	}
	if (r == -ENOMEM)
		return vg_error_set(err, r, "out of memory listing CPUs");
	if (r < 0)
		return vg_error_set(err, r, "no online CPU found in /sys/devices/system/cpu/online");
	return 0;
}
