/* fuzz_kallsyms.c - libFuzzer harness for the /proc/kallsyms text parser.
 *
 * Any input must either be rejected with -EINVAL and a message naming a line
 * (or -ENOMEM), or give a table that keeps the parser's promises: empty
 * exactly when it says why, every symbol in the kernel half with a size that
 * is > 0 and does not wrap, a name without blanks, a module without
 * brackets, and lookups that agree with each other (a symbol's own address
 * finds it, its end finds a later symbol or none).  Probes are the
 * addresses written in the input, +-1.  Built by tests/fuzz/run.sh. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_symbol(const struct vg_kallsyms *k, const struct vg_ksym *s)
{
	struct vg_ksym again;

	if (!vg_addr_is_kernel(s->addr) || s->size == 0 ||
	    s->addr + (s->size - 1) < s->addr)
		abort();
	if (!s->name || !s->name[0] || strpbrk(s->name, " \t\n"))
		abort();
	if (s->module && (!s->module[0] || strpbrk(s->module, "[] \t\n")))
		abort();
	if (s->type <= ' ' || s->type > '~')
		abort();
	if (vg_kallsyms_lookup(k, s->addr, &again) != 0 ||
	    again.addr != s->addr || strcmp(again.name, s->name) != 0)
		abort();
	if (s->addr + (s->size - 1) != UINT64_MAX &&
	    vg_kallsyms_lookup(k, s->addr + s->size, &again) == 0 &&
	    again.addr <= s->addr)
		abort();
}

static void probe(const struct vg_kallsyms *k, uint64_t a)
{
	struct vg_ksym s;
	int r = vg_kallsyms_lookup(k, a, &s);

	if (r == 0) {
		if (a < s.addr || a - s.addr >= s.size)
			abort();
		check_symbol(k, &s);
	} else if (r != -ENOENT) {
		abort();
	}
}

/* The hex number at the start of each line. */
static void probe_written_addresses(const struct vg_kallsyms *k,
				    const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		uint64_t a = 0;

		for (const char *q = p; q < end && q - p < 16; q++) {
			int v = (*q >= '0' && *q <= '9') ? *q - '0'
				: ((*q | 0x20) >= 'a' && (*q | 0x20) <= 'f')
				? (*q | 0x20) - 'a' + 10 : -1;

			if (v < 0)
				break;
			a = a << 4 | (uint64_t)v;
		}
		probe(k, a);
		probe(k, a - 1);
		probe(k, a + 1);
		p = nl ? nl + 1 : end;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_error err = { 0 };
	struct vg_kallsyms *k = NULL;
	int r = vg_kallsyms_parse((const char *)data, size, "fuzz", &k, &err);

	if (r != 0) {
		if (k || !((r == -EINVAL && strstr(err.msg, "line ")) || r == -ENOMEM))
			abort();
		return 0;
	}
	if (!k || (vg_kallsyms_count(k) == 0) != (vg_kallsyms_why(k) != NULL))
		abort();
	if (vg_kallsyms_count(k) > size / 6 + 1)
		abort();
	probe_written_addresses(k, (const char *)data, size);
	probe(k, 0);
	probe(k, 0xffff800000000000ull);
	probe(k, UINT64_MAX);
	if (size >= 8) {
		uint64_t a;

		memcpy(&a, data + size - 8, sizeof(a));
		probe(k, a);
	}
	vg_kallsyms_free(k);
	return 0;
}
