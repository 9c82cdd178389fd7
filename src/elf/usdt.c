/* usdt.c - an ELF image's USDT probes from its .note.stapsdt notes (the
 * layout sys/sdt.h emits; see usdt.h).  The notes are on-disk data of the
 * target's files: every length and string is checked against the section
 * (tests/fuzz/fuzz_usdt.c). */
#include "elf/usdt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>
#include <libelf.h>

#include "util/vec.h"

#define NT_STAPSDT 3

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The NUL-terminated string at *p within end, copied (truncated) into
 * buf; false when it has no NUL before end. */
static bool take_string(const uint8_t **p, const uint8_t *end, char *buf, size_t size)
{
	const uint8_t *nul = memchr(*p, 0, (size_t)(end - *p));
	size_t n;

	if (!nul)
		return false;
	n = (size_t)(nul - *p);
	if (n >= size)
		n = size - 1;
	memcpy(buf, *p, n);
	buf[n] = '\0';
	*p = nul + 1;
	return true;
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

int vg_usdt_parse_notes(const void *data, size_t len, uint64_t base_addr, bool have_base,
			int (*cb)(const struct vg_usdt_probe *p, void *arg), void *arg, size_t *bad)
{
	const uint8_t *d = data;
	size_t off = 0, n_bad = 0;
	int r = 0;

	while (r == 0 && len - off >= 12) {
		uint32_t namesz = le32(d + off), descsz = le32(d + off + 4), type = le32(d + off + 8);
		size_t name_off = off + 12, desc_off, next;
		struct vg_usdt_probe p;
		const uint8_t *s, *end;

		if (namesz > len - name_off || align4(namesz) > len - name_off) {
			n_bad++;
			break;
		}
		desc_off = name_off + align4(namesz);
		if (descsz > len - desc_off) {
			n_bad++;
			break;
		}
		next = desc_off + descsz;
		next = align4(next) <= len ? align4(next) : len;
		if (type != NT_STAPSDT || namesz != 8 || memcmp(d + name_off, "stapsdt", 8) != 0) {
			off = next;
			continue;
		}
		memset(&p, 0, sizeof(p));
		s = d + desc_off;
		end = s + descsz;
		if (descsz < 24) {
			n_bad++;
			off = next;
			continue;
		}
		p.pc = le64(s);
		p.semaphore = le64(s + 16);
		if (have_base) {
			uint64_t note_base = le64(s + 8);

			p.pc += base_addr - note_base;
			if (p.semaphore)
				p.semaphore += base_addr - note_base;
		}
		s += 24;
		if (!take_string(&s, end, p.provider, sizeof(p.provider)) ||
		    !take_string(&s, end, p.name, sizeof(p.name)) ||
		    !take_string(&s, end, p.args, sizeof(p.args)) || !p.provider[0] || !p.name[0]) {
			n_bad++;
			off = next;
			continue;
		}
		r = cb(&p, arg);
		off = next;
	}
	if (bad)
		*bad = n_bad;
	return r;
}

struct collect {
	struct vg_usdt_probe *v;
	size_t n, cap;
};

static int collect_one(const struct vg_usdt_probe *p, void *arg)
{
	struct collect *c = arg;

	if (VG_GROW(c->v, c->cap, c->n + 1) < 0)
		return -ENOMEM;
	c->v[c->n++] = *p;
	return 0;
}

int vg_usdt_image_probes(const struct vg_image *img, struct vg_usdt_probe **out, size_t *n,
			 struct vg_error *err)
{
	Elf *elf = vg_image_elf(img);
	Elf_Scn *scn = NULL, *notes = NULL;
	uint64_t base = 0;
	bool have_base = false;
	size_t shstrndx;
	struct collect c = { 0 };
	int r = 0;

	*out = NULL;
	*n = 0;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".note.stapsdt") && sh.sh_type == SHT_NOTE)
			notes = scn;
		else if (!strcmp(name, ".stapsdt.base")) {
			base = sh.sh_addr;
			have_base = true;
		}
	}
	if (notes) {
		Elf_Data *data = elf_getdata(notes, NULL);

		if (data && data->d_buf && data->d_size)
			r = vg_usdt_parse_notes(data->d_buf, data->d_size, base, have_base, collect_one, &c, NULL);
	}
	if (r < 0) {
		free(c.v);
		return vg_error_set(err, r, "out of memory");
	}
	*out = c.v;
	*n = c.n;
	return 0;
}

/* x86-64 register names by width: 64, 32, 16, 8 bits. */
static const char *const reg_names[16][4] = {
	{ "rax", "eax", "ax", "al" }, { "rbx", "ebx", "bx", "bl" }, { "rcx", "ecx", "cx", "cl" },
	{ "rdx", "edx", "dx", "dl" }, { "rsi", "esi", "si", "sil" }, { "rdi", "edi", "di", "dil" },
	{ "rbp", "ebp", "bp", "bpl" }, { "rsp", "esp", "sp", "spl" },
	{ "r8", "r8d", "r8w", "r8b" }, { "r9", "r9d", "r9w", "r9b" }, { "r10", "r10d", "r10w", "r10b" },
	{ "r11", "r11d", "r11w", "r11b" }, { "r12", "r12d", "r12w", "r12b" },
	{ "r13", "r13d", "r13w", "r13b" }, { "r14", "r14d", "r14w", "r14b" },
	{ "r15", "r15d", "r15w", "r15b" },
};

static int reg_by_name(const char *name, size_t len)
{
	for (int r = 0; r < 16; r++)
		for (int w = 0; w < 4; w++)
			if (strlen(reg_names[r][w]) == len && !memcmp(reg_names[r][w], name, len))
				return r;
	return -1;
}

int vg_usdt_args_parse(const char *spec, struct vg_usdt_arg *args, size_t max, size_t *n)
{
	const char *p = spec;

	*n = 0;
	while (*n < max) {
		struct vg_usdt_arg a = { .reg = -1 };
		const char *op;
		unsigned size = 0;

		while (*p == ' ')
			p++;
		if (!*p)
			return 0;
		if (*p == '-') {
			a.is_signed = true;
			p++;
		}
		while (*p >= '0' && *p <= '9' && size < 100)
			size = size * 10 + (unsigned)(*p++ - '0');
		if (*p != '@' || (size != 1 && size != 2 && size != 4 && size != 8))
			return -EINVAL;
		a.size = (uint8_t)size;
		op = ++p;
		while (*p && *p != ' ')
			p++;
		if (op[0] == '%' && p - op > 1) {
			a.reg = reg_by_name(op + 1, (size_t)(p - op - 1));
		} else if (p - op >= 4 && p[-1] == ')') {
			/* DISP(%reg): a decimal displacement (gas writes it so),
			 * one base register, no index. */
			const char *q = op, *open;
			bool neg = *q == '-';
			uint64_t d = 0;

			q += neg || *q == '+';
			while (*q >= '0' && *q <= '9' && d < (1ull << 40))
				d = d * 10 + (uint64_t)(*q++ - '0');
			open = q;
			if (*open == '(' && open[1] == '%' && p - 1 > open + 2) {
				a.reg = reg_by_name(open + 2, (size_t)(p - 1 - (open + 2)));
				a.mem = a.reg >= 0;
				a.disp = neg ? -(int64_t)d : (int64_t)d;
				if (a.mem)
					snprintf(a.operand, sizeof(a.operand), "%.*s", (int)(p - op), op);
			}
		}
		if (a.reg >= 0)
			snprintf(a.reg_name, sizeof(a.reg_name), "%s", reg_names[a.reg][0]);
		args[(*n)++] = a;
	}
	return 0;
}
