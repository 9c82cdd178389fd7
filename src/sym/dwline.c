/* dwline.c - one CU's DWARF line program, decoded as libdw 0.188 decodes
 * it (dwline.h says why not through libdw).  Every rule below is libdw's
 * rule for the same input; wherever libdw would fail, truncate a value to
 * a narrower field or take a path this file does not model, the answer
 * is DWLINE_USE_LIBDW and the caller asks libdw instead, so the rows the
 * index gets are libdw's rows either way. */
#include "sym/dwline.h"

#include <dwarf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over [p, end); every read checks its bounds. */
struct cursor {
	const uint8_t *p, *end;
};

static bool read_u8(struct cursor *c, uint8_t *v)
{
	if (c->p >= c->end)
		return false;
	*v = *c->p++;
	return true;
}

static bool read_fixed(struct cursor *c, unsigned n, uint64_t *v)
{
	uint64_t x = 0;

	if ((size_t)(c->end - c->p) < n || n > 8)
		return false;
	for (unsigned i = 0; i < n; i++)
		x |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	*v = x;
	return true;
}

/* At most 10 bytes and 64 bits; anything longer is not modelled. */
static bool read_uleb(struct cursor *c, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64 && c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;

		if (shift == 63 && (b & 0x7e))
			return false;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static bool read_sleb(struct cursor *c, int64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (c->p >= c->end || shift >= 63)
			return false;  /* short, or longer than modelled */
		b = *c->p++;
		x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (b & 0x40)
		x |= ~0ull << shift;
	*v = (int64_t)x;
	return true;
}

/* A NUL-terminated string at off of a string section, or NULL. */
static const char *section_string(const uint8_t *sec, size_t size, uint64_t off)
{
	if (!sec || off >= size || !memchr(sec + off, '\0', size - off))
		return NULL;
	return (const char *)sec + off;
}

/* One attribute value of a DWARF 5 directory or file entry: its string
 * (path forms) or number (index forms), skipped otherwise.  false: a
 * form this file does not model, or the bytes run out. */
static bool read_form(const struct dwline_sections *sec, struct cursor *c,
		      uint64_t form, const char **str, uint64_t *num)
{
	uint64_t v, len;
	const uint8_t *nul;

	*str = NULL;
	switch (form) {
	case DW_FORM_string:
		nul = memchr(c->p, '\0', (size_t)(c->end - c->p));
		if (!nul)
			return false;
		*str = (const char *)c->p;
		c->p = nul + 1;
		return true;
	case DW_FORM_line_strp:
	case DW_FORM_strp:
		if (!read_fixed(c, 4, &v))
			return false;
		*str = form == DW_FORM_line_strp
			       ? section_string(sec->line_str, sec->line_str_size, v)
			       : section_string(sec->str, sec->str_size, v);
		return *str != NULL;
	case DW_FORM_udata:
		return read_uleb(c, num);
	case DW_FORM_data1:
		return read_fixed(c, 1, num);
	case DW_FORM_data2:
		return read_fixed(c, 2, num);
	case DW_FORM_data4:
		return read_fixed(c, 4, num);
	case DW_FORM_data8:
		return read_fixed(c, 8, num);
	case DW_FORM_data16:
		if (c->end - c->p < 16)
			return false;
		c->p += 16;
		*num = UINT64_MAX;  /* not an index */
		return true;
	case DW_FORM_block:
		if (!read_uleb(c, &len) || len > (uint64_t)(c->end - c->p))
			return false;
		c->p += len;
		*num = UINT64_MAX;
		return true;
	default:
		return false;
	}
}

/* DWARF 5's entry formats: which entry holds the path and which the
 * directory index.  false: too many, an unmodelled form, or short. */
struct entry_format {
	uint8_t n;
	uint64_t form[256];
	int path, index;
};

static bool read_formats(struct cursor *c, struct entry_format *f)
{
	f->path = f->index = -1;
	if (!read_u8(c, &f->n))
		return false;
	for (unsigned i = 0; i < f->n; i++) {
		uint64_t desc, form;

		if (!read_uleb(c, &desc) || !read_uleb(c, &form))
			return false;
		switch (form) {
		case DW_FORM_string: case DW_FORM_line_strp: case DW_FORM_strp:
		case DW_FORM_udata: case DW_FORM_data1: case DW_FORM_data2:
		case DW_FORM_data4: case DW_FORM_data8: case DW_FORM_data16:
		case DW_FORM_block:
			break;
		default:
			return false;
		}
		f->form[i] = form;
		if (desc == DW_LNCT_path)
			f->path = (int)i;
		else if (desc == DW_LNCT_directory_index)
			f->index = (int)i;
	}
	return true;
}

/* One directory or file entry: its path and directory index. */
static bool read_entry(const struct dwline_sections *sec, struct cursor *c,
		       const struct entry_format *f, const char **path,
		       uint64_t *index)
{
	*path = NULL;
	*index = UINT64_MAX;
	for (unsigned m = 0; m < f->n; m++) {
		const char *s;
		uint64_t num = UINT64_MAX;

		if (!read_form(sec, c, f->form[m], &s, &num))
			return false;
		if ((int)m == f->path)
			*path = s;
		else if ((int)m == f->index) {
			if (s || num == UINT64_MAX)
				return false;  /* not a number form */
			*index = num;
		}
	}
	return *path != NULL;
}

static int read_files_v5(const struct dwline_sections *sec, struct cursor *c,
			 struct dwline_header *h)
{
	struct entry_format f;
	const char **dirs = NULL;
	uint64_t ndirs, nfiles;
	int rc = DWLINE_USE_LIBDW;

	if (!read_formats(c, &f) || (f.n && f.path < 0) ||
	    !read_uleb(c, &ndirs) || (!f.n && ndirs) ||
	    (f.n && ndirs > (uint64_t)(c->end - c->p) / f.n))
		return DWLINE_USE_LIBDW;
	dirs = malloc((ndirs ? ndirs : 1) * sizeof(*dirs));
	if (!dirs)
		return -ENOMEM;
	for (uint64_t i = 0; i < ndirs; i++) {
		uint64_t unused;

		if (!read_entry(sec, c, &f, &dirs[i], &unused))
			goto out;
	}
	if (!read_formats(c, &f) || (f.n && (f.path < 0 || f.index < 0)) ||
	    !read_uleb(c, &nfiles) || (!f.n && nfiles) ||
	    (f.n && nfiles > (uint64_t)(c->end - c->p) / f.n))
		goto out;
	h->files = malloc((nfiles ? nfiles : 1) * sizeof(*h->files));
	if (!h->files) {
		rc = -ENOMEM;
		goto out;
	}
	/* Entry 0 stays libdw's "???" only when there are no files. */
	h->files[0] = (struct dwline_file){ NULL, "???" };
	h->n_files = nfiles ? nfiles : 1;
	for (uint64_t i = 0; i < nfiles; i++) {
		const char *name;
		uint64_t di;

		if (!read_entry(sec, c, &f, &name, &di) || di >= ndirs)
			goto out;
		h->files[i] = (struct dwline_file){ name[0] == '/' ? NULL : dirs[di], name };
	}
	rc = DWLINE_OK;
out:
	free(dirs);
	return rc;
}

static int read_files_v4(struct cursor *c, const char *comp_dir,
			 struct dwline_header *h)
{
	const char **dirs;
	size_t ndirs = 1, nfiles = 1, cap;
	const uint8_t *p = c->p;

	/* Directories: strings up to an empty one; 0 is comp_dir. */
	while (p < c->end && *p) {
		const uint8_t *nul = memchr(p, '\0', (size_t)(c->end - p));

		if (!nul)
			return DWLINE_USE_LIBDW;
		ndirs++;
		p = nul + 1;
	}
	if (p >= c->end)
		return DWLINE_USE_LIBDW;
	dirs = malloc(ndirs * sizeof(*dirs));
	if (!dirs)
		return -ENOMEM;
	dirs[0] = comp_dir;
	for (size_t i = 1; i < ndirs; i++) {
		dirs[i] = (const char *)c->p;
		c->p += strlen(dirs[i]) + 1;
	}
	c->p++;
	/* Files: at most one per 4 bytes of what is left. */
	cap = (size_t)(c->end - c->p) / 4 + 1;
	h->files = malloc(cap * sizeof(*h->files));
	if (!h->files) {
		free(dirs);
		return -ENOMEM;
	}
	h->files[0] = (struct dwline_file){ NULL, "???" };
	if (c->p >= c->end)
		goto bad;
	while (c->p < c->end && *c->p) {
		const char *name = (const char *)c->p;
		const uint8_t *nul = memchr(c->p, '\0', (size_t)(c->end - c->p));
		uint64_t di, unused;

		if (!nul || nfiles >= cap)
			goto bad;
		c->p = nul + 1;
		if (!read_uleb(c, &di) || di >= ndirs || !read_uleb(c, &unused) ||
		    !read_uleb(c, &unused))
			goto bad;
		h->files[nfiles++] = (struct dwline_file){ name[0] == '/' ? NULL : dirs[di], name };
	}
	if (c->p >= c->end)
		goto bad;
	c->p++;
	h->n_files = nfiles;
	free(dirs);
	return DWLINE_OK;
bad:
	free(dirs);
	return DWLINE_USE_LIBDW;
}

void dwline_header_free(struct dwline_header *h)
{
	free(h->files);
	h->files = NULL;
	h->n_files = 0;
}

int dwline_header_read(const struct dwline_sections *sec, uint64_t offset,
		       unsigned address_size, const char *comp_dir,
		       struct dwline_header *h)
{
	struct cursor c, hc;
	uint64_t unit_len, version, header_len;
	uint8_t max_ops = 1, u8;
	int rc;

	memset(h, 0, sizeof(*h));
	if (!sec->line || offset >= sec->line_size || (address_size != 4 && address_size != 8))
		return DWLINE_USE_LIBDW;
	c = (struct cursor){ sec->line + offset, sec->line + sec->line_size };
	/* 64-bit DWARF is not modelled. */
	if (!read_fixed(&c, 4, &unit_len) || unit_len >= 0xfffffff0u ||
	    unit_len > (uint64_t)(c.end - c.p))
		return DWLINE_USE_LIBDW;
	c.end = c.p + unit_len;
	if (!read_fixed(&c, 2, &version) || version < 2 || version > 5)
		return DWLINE_USE_LIBDW;
	h->version = (unsigned)version;
	h->address_size = address_size;
	if (version >= 5) {
		uint8_t asz, seg;

		if (!read_u8(&c, &asz) || !read_u8(&c, &seg) || asz != address_size || seg)
			return DWLINE_USE_LIBDW;
	}
	if (!read_fixed(&c, 4, &header_len) || header_len > (uint64_t)(c.end - c.p))
		return DWLINE_USE_LIBDW;
	h->program = c.p + header_len;
	h->end = c.end;
	hc = (struct cursor){ c.p, h->program };
	if (!read_u8(&hc, &h->min_insn_len) || (version >= 4 && !read_u8(&hc, &max_ops)) ||
	    max_ops != 1)  /* VLIW op_index: not modelled */
		return DWLINE_USE_LIBDW;
	if (!read_u8(&hc, &h->default_is_stmt) || h->default_is_stmt > 1 ||
	    !read_u8(&hc, &u8) || !read_u8(&hc, &h->line_range) ||
	    !read_u8(&hc, &h->opcode_base) || h->opcode_base == 0)
		return DWLINE_USE_LIBDW;
	h->line_base = (int8_t)u8;
	if ((size_t)(hc.end - hc.p) < (size_t)h->opcode_base - 1)
		return DWLINE_USE_LIBDW;
	h->opcode_lengths = hc.p;
	hc.p += h->opcode_base - 1;
	rc = version >= 5 ? read_files_v5(sec, &hc, h) : read_files_v4(&hc, comp_dir, h);
	/* The table must end where the header says (libdw also reads a
	 * 4-byte CUBIN extension there: not modelled). */
	if (rc == DWLINE_OK && hc.p != hc.end)
		rc = DWLINE_USE_LIBDW;
	if (rc != DWLINE_OK)
		dwline_header_free(h);
	return rc;
}

/* The length libdw requires of standard opcode op (op < opcode_base). */
static bool std_len_is(const struct dwline_header *h, unsigned op, uint8_t want)
{
	return op < h->opcode_base && h->opcode_lengths[op - 1] == want;
}

int dwline_run(const struct dwline_header *h, dwline_emit_fn emit, void *arg)
{
	struct cursor c = { h->program, h->end };
	uint64_t addr = 0;
	uint64_t file = 1, column = 0;
	int64_t line = 1;
	int rc;
	/* What each special opcode adds, worked out once: two divisions per
	 * row were a tenth of the decoding. */
	struct { int line; uint32_t addr; } special[256];

	for (unsigned op = h->opcode_base; op < 256 && h->line_range; op++) {
		unsigned adj = op - h->opcode_base;

		special[op].line = h->line_base + (int)(adj % h->line_range);
		special[op].addr = h->min_insn_len * (adj / h->line_range);
	}

#define EMIT(end_seq)                                                               \
	do {                                                                        \
		if (line < INT_MIN || line > INT_MAX || column > 0xffff ||          \
		    file > UINT32_MAX)                                              \
			return DWLINE_USE_LIBDW;                                    \
		if ((rc = emit(arg, addr, (uint32_t)file, line > 0 ? (uint32_t)line : 0, \
			       (uint32_t)column, end_seq)) != 0)                    \
			return rc;                                                  \
	} while (0)

	while (c.p < c.end) {
		uint8_t op = *c.p++;
		uint64_t u;
		int64_t s;

		if (op >= h->opcode_base) {
			if (!h->line_range)
				return DWLINE_USE_LIBDW;
			line += special[op].line;
			addr += special[op].addr;
			EMIT(false);
		} else if (op == 0) {
			uint8_t len, sub;

			/* libdw reads the length as one byte. */
			if (c.end - c.p < 2)
				return DWLINE_USE_LIBDW;
			len = *c.p++;
			if (len == 0 || (len & 0x80) || (size_t)(c.end - c.p) < len)
				return DWLINE_USE_LIBDW;
			sub = *c.p++;
			switch (sub) {
			case DW_LNE_end_sequence:
				if (len != 1)
					return DWLINE_USE_LIBDW;
				EMIT(true);
				addr = 0;
				file = 1;
				line = 1;
				column = 0;
				break;
			case DW_LNE_set_address:
				if (len != 1 + h->address_size ||
				    !read_fixed(&c, h->address_size, &addr))
					return DWLINE_USE_LIBDW;
				break;
			case DW_LNE_set_discriminator: {
				const uint8_t *at = c.p;

				if (!std_len_is(h, DW_LNE_set_discriminator, 1) ||
				    !read_uleb(&c, &u) || (size_t)(c.p - at) != len - 1u)
					return DWLINE_USE_LIBDW;
				break;
			}
			case DW_LNE_define_file:
				return DWLINE_USE_LIBDW;
			default:
				if (sub >= DW_LNE_lo_user)  /* vendor rows: libdw's own */
					return DWLINE_USE_LIBDW;
				c.p += len - 1;
				break;
			}
		} else if (op <= DW_LNS_set_isa) {
			switch (op) {
			case DW_LNS_copy:
				if (!std_len_is(h, op, 0))
					return DWLINE_USE_LIBDW;
				EMIT(false);
				break;
			case DW_LNS_advance_pc:
				/* libdw multiplies in 32 bits: a product that
				 * would wrap there is not modelled. */
				if (!std_len_is(h, op, 1) || !read_uleb(&c, &u) ||
				    (uint64_t)h->min_insn_len * u > UINT32_MAX)
					return DWLINE_USE_LIBDW;
				addr += (uint64_t)h->min_insn_len * u;
				break;
			case DW_LNS_advance_line:
				if (!std_len_is(h, op, 1) || !read_sleb(&c, &s) ||
				    s < INT_MIN || s > INT_MAX)
					return DWLINE_USE_LIBDW;
				line += s;
				break;
			case DW_LNS_set_file:
				if (!std_len_is(h, op, 1) || !read_uleb(&c, &file) || file > UINT32_MAX)
					return DWLINE_USE_LIBDW;
				break;
			case DW_LNS_set_column:
				if (!std_len_is(h, op, 1) || !read_uleb(&c, &column) ||
				    column > UINT32_MAX)
					return DWLINE_USE_LIBDW;
				break;
			case DW_LNS_negate_stmt:
			case DW_LNS_set_basic_block:
			case DW_LNS_set_prologue_end:
			case DW_LNS_set_epilogue_begin:
				if (!std_len_is(h, op, 0))
					return DWLINE_USE_LIBDW;
				break;
			case DW_LNS_const_add_pc:
				if (!std_len_is(h, op, 0) || !h->line_range)
					return DWLINE_USE_LIBDW;
				addr += (uint64_t)h->min_insn_len *
					((255u - h->opcode_base) / h->line_range);
				break;
			case DW_LNS_fixed_advance_pc:
				if (!std_len_is(h, op, 1) || !read_fixed(&c, 2, &u))
					return DWLINE_USE_LIBDW;
				addr += u;
				break;
			case DW_LNS_set_isa:
				if (!std_len_is(h, op, 1) || !read_uleb(&c, &u) || u > 255)
					return DWLINE_USE_LIBDW;
				break;
			}
		} else {
			/* A standard opcode newer than DWARF 5: its operands
			 * are skipped, as libdw skips them. */
			for (unsigned n = h->opcode_lengths[op - 1]; n > 0; n--)
				if (!read_uleb(&c, &u))
					return DWLINE_USE_LIBDW;
		}
	}
#undef EMIT
	return DWLINE_OK;
}
