/* fde.c - see fde.h.  The .eh_frame format is the LSB's ("Exception Frame"):
 * a sequence of CIEs and FDEs, each a 4-byte length (0xffffffff: an 8-byte
 * length follows; 0: terminator), then a 4-byte id (0 for a CIE; for an
 * FDE, the distance back to its CIE).  A CIE's augmentation "z..." gives
 * the data length, and 'R' the encoding of its FDEs' initial_location;
 * address_range uses the same format without the application (pcrel). */
#include "elf/fde.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/ranges.h"

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10

/* Remembered CIEs (offset -> FDE pointer encoding): few per file. */
struct cie {
	size_t off;
	uint8_t enc;
};

struct cur {
	const uint8_t *p, *end;
};

static bool get_u(struct cur *c, size_t n, uint64_t *v)
{
	*v = 0;
	if ((size_t)(c->end - c->p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		*v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return true;
}

static bool get_leb(struct cur *c, bool sign, uint64_t *v)
{
	unsigned shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (c->p == c->end || shift >= 64)
			return false;
		b = *c->p++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		*v |= ~0ull << shift;
	return true;
}

/* One encoded pointer at c; field_addr is its static address (pcrel). */
static bool get_ptr(struct cur *c, uint8_t enc, uint64_t field_addr, bool apply,
		    uint64_t *v)
{
	uint64_t x;
	bool ok;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		ok = get_u(c, 8, &x);
		break;
	case DW_EH_PE_udata4:
		ok = get_u(c, 4, &x);
		break;
	case DW_EH_PE_sdata4:
		ok = get_u(c, 4, &x);
		x = (uint64_t)(int64_t)(int32_t)(uint32_t)x;
		break;
	case DW_EH_PE_udata2:
		ok = get_u(c, 2, &x);
		break;
	case DW_EH_PE_sdata2:
		ok = get_u(c, 2, &x);
		x = (uint64_t)(int64_t)(int16_t)(uint16_t)x;
		break;
	case DW_EH_PE_uleb128:
		ok = get_leb(c, false, &x);
		break;
	case DW_EH_PE_sleb128:
		ok = get_leb(c, true, &x);
		break;
	default:
		return false;
	}
	if (!ok)
		return false;
	if (apply) {
		switch (enc & 0x70) {
		case 0:
			break;
		case DW_EH_PE_pcrel:
			x += field_addr;
			break;
		default:   /* textrel, datarel, funcrel: not in .eh_frame FDEs */
			return false;
		}
	}
	*v = x;
	return true;
}

/* The FDE pointer encoding of the CIE whose body (after the id) is c. */
static bool parse_cie(struct cur c, uint8_t *enc)
{
	const char *aug;
	size_t alen;
	uint64_t v, version, aug_len;
	struct cur ad;

	*enc = DW_EH_PE_absptr;
	if (!get_u(&c, 1, &version) || (version != 1 && version != 3))
		return false;
	aug = (const char *)c.p;
	alen = strnlen(aug, (size_t)(c.end - c.p));
	if (alen == (size_t)(c.end - c.p))
		return false;
	c.p += alen + 1;
	if (!get_leb(&c, false, &v) || !get_leb(&c, true, &v))
		return false;
	if (version == 1 ? !get_u(&c, 1, &v) : !get_leb(&c, false, &v))
		return false;
	if (aug[0] != 'z')
		return aug[0] == '\0';
	if (!get_leb(&c, false, &aug_len) || aug_len > (uint64_t)(c.end - c.p))
		return false;
	ad = (struct cur){ c.p, c.p + aug_len };
	for (size_t i = 1; i < alen; i++) {
		uint64_t e, skip;

		switch (aug[i]) {
		case 'R':
			if (!get_u(&ad, 1, &e))
				return false;
			*enc = (uint8_t)e;
			break;
		case 'L':
			if (!get_u(&ad, 1, &e))
				return false;
			break;
		case 'P':
			if (!get_u(&ad, 1, &e) ||
			    !get_ptr(&ad, (uint8_t)e & 0x7f, 0, false, &skip))
				return false;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return true;   /* unknown: the rest cannot be read, 'R' may be known */
		}
	}
	return true;
}

static int cmp_range(const void *a, const void *b)
{
	const struct vg_fde_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

int vg_fde_table_build(const uint8_t *data, size_t size, uint64_t addr,
		       struct vg_fde_table *t)
{
	struct cie *cies = NULL;
	size_t n_cies = 0, cap_cies = 0, cap = 0, off = 0;

	memset(t, 0, sizeof(*t));
	while (off + 4 <= size) {
		struct cur c = { data + off, data + size };
		uint64_t len, id;
		size_t body, next;

		if (!get_u(&c, 4, &len) || len == 0)
			break;
		if (len == 0xffffffffu && !get_u(&c, 8, &len))
			break;
		body = (size_t)(c.p - data);
		if (len > size - body || len < 4)
			break;
		next = body + (size_t)len;
		c.end = data + next;
		if (!get_u(&c, 4, &id))
			break;
		if (id == 0) {
			uint8_t enc;

			if (parse_cie(c, &enc)) {
				if (n_cies == cap_cies) {
					size_t nc = cap_cies ? cap_cies * 2 : 16;
					struct cie *ns = realloc(cies, nc * sizeof(*ns));

					if (!ns)
						goto oom;
					cies = ns;
					cap_cies = nc;
				}
				cies[n_cies++] = (struct cie){ off, enc };
			}
		} else if (id <= body) {
			size_t cie_off = body - (size_t)id;
			uint64_t start, range;
			const struct cie *ci = NULL;
			uint64_t field;

			for (size_t k = n_cies; k > 0; k--) {
				if (cies[k - 1].off == cie_off) {
					ci = &cies[k - 1];
					break;
				}
			}
			field = addr + (uint64_t)(c.p - data);
			if (ci && get_ptr(&c, ci->enc, field, true, &start) &&
			    get_ptr(&c, ci->enc, 0, false, &range) && range &&
			    start + range > start) {
				if (t->n == cap) {
					size_t nc = cap ? cap * 2 : 256;
					struct vg_fde_range *nr;

					if (nc > SIZE_MAX / sizeof(*nr) ||
					    !(nr = realloc(t->r, nc * sizeof(*nr))))
						goto oom;
					t->r = nr;
					cap = nc;
				}
				t->r[t->n++] = (struct vg_fde_range){ start, start + range };
			}
		}
		off = next;
	}
	free(cies);
	if (t->n)
		qsort(t->r, t->n, sizeof(*t->r), cmp_range);
	return 0;
oom:
	free(cies);
	vg_fde_table_release(t);
	return -ENOMEM;
}

void vg_fde_table_release(struct vg_fde_table *t)
{
	free(t->r);
	t->r = NULL;
	t->n = 0;
}

bool vg_fde_table_find(const struct vg_fde_table *t, uint64_t vaddr,
		       struct vg_fde_range *out)
{
	/* start is the first field (t->r may be NULL when empty). */
	_Static_assert(offsetof(struct vg_fde_range, start) == 0, "start first");
	size_t lo = vg_sorted_count_le(t->r, sizeof(*t->r), t->n, vaddr);

	/* FDEs do not overlap in linked code; a few steps back cover the
	 * odd file where they do (a nested range sorted after its parent). */
	for (size_t k = lo, steps = 0; k > 0 && steps < 8; k--, steps++) {
		if (vaddr < t->r[k - 1].end) {
			*out = t->r[k - 1];
			return true;
		}
	}
	return false;
}
