/* bpf_log.c - where libbpf's messages go (bpf_log.h): a per-thread tail
 * kept during a load, dropped otherwise, never stderr. */
#include "perf/bpf_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

/* The tail of what libbpf said on this thread during the current load
 * (malloc'ed by vg_bpf_log_start: a static-TLS array would sit at the top of
 * every thread's stack of every program linking libvigil). */
#define LOG_TAIL 16384
static _Thread_local char *log_tail;
static _Thread_local size_t log_len;

static int keep_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *text = NULL;
	size_t n, keep = LOG_TAIL - 1;
	int len;

	if (level == LIBBPF_DEBUG || !log_tail)
		return 0;
	/* The verifier's log comes as one message of up to a few hundred
	 * KiB: keep its end. */
	len = vasprintf(&text, fmt, ap);
	if (len <= 0) {
		free(text);
		return 0;
	}
	n = (size_t)len;
	if (n >= keep) {
		memcpy(log_tail, text + n - keep, keep);
		log_len = keep;
	} else {
		if (log_len + n > keep) {
			memmove(log_tail, log_tail + log_len + n - keep, keep - n);
			log_len = keep - n;
		}
		memcpy(log_tail + log_len, text, n);
		log_len += n;
	}
	log_tail[log_len] = '\0';
	free(text);
	return 0;
}

static void set_print(void)
{
	libbpf_set_print(keep_log);
}

void vg_bpf_libbpf_quiet(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, set_print);
}

void vg_bpf_log_start(void)
{
	vg_bpf_libbpf_quiet();
	free(log_tail);
	log_len = 0;
	log_tail = calloc(1, LOG_TAIL);   /* NULL: no reason in the sentence */
}

void vg_bpf_log_end(void)
{
	free(log_tail);
	log_tail = NULL;
	log_len = 0;
}

/* The verifier's reason: the log's last line that is not libbpf's own
 * framing, the closing statistics or blank. */
void vg_bpf_log_reason(char *out, size_t size)
{
	out[0] = '\0';
	if (log_tail)
		vg_bpf_log_reason_of(log_tail, log_len, out, size);
}

void vg_bpf_log_reason_of(const char *log, size_t log_size, char *out, size_t size)
{
	static const char *const skip[] = {
		"processed ", "verification time", "stack depth", "libbpf: ", "-- END",
		"-- BEGIN", "verifier log",
	};
	/* The kernel ends its log with a NUL; what follows is old bytes. */
	const char *end = memchr(log, '\0', log_size);

	out[0] = '\0';
	if (!end)
		end = log + log_size;
	while (end > log) {
		const char *start = end;
		size_t len;
		bool skipped = false;

		while (start > log && start[-1] != '\n')
			start--;
		len = (size_t)(end - start);
		for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
			skipped |= len >= strlen(skip[i]) && memcmp(start, skip[i], strlen(skip[i])) == 0;
		while (len && (start[len - 1] == '\n' || start[len - 1] == ' '))
			len--;
		if (len && !skipped) {
			snprintf(out, size, "%.*s", (int)len, start);
			return;
		}
		end = start > log ? start - 1 : log;
	}
}
