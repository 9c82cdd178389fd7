/* scanset.c - scan sets on disk, and the file framing snapshots share.
 *
 * Format (docs/scan-formats.md): the 24-byte common header, the identity,
 * type, VALUE text, generation and creation time, then the matches as
 * columns: every address as an unsigned LEB128 delta from the previous one
 * (the first from 0), then every value (value_size bytes each), then for
 * str/bytes one variant byte per match; a CRC32 ends the file.  Dense
 * matches cost 1-2 bytes per address.  Columns rather than records because
 * each loop then does one thing, and the values of numbers stay aligned
 * on load.
 *
 * Reads and writes stream through util/binfile.c.  A loaded set is handed
 * back only after the CRC matched: a truncated or corrupt file is refused,
 * never half-loaded. */
#include "scan/scanset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "util/binfile.h"

static const char SET_MAGIC[8] = { 'V', 'I', 'G', 'I', 'L', 'S', 'E', 'T' };
#define SET_VERSION 1u
/* A value is at most the UTF-16 form of a 255-byte VALUE text. */
#define MAX_VALUE_SIZE 1024u

/* ---- scan sets ---- */

static bool type_valid(uint32_t t)
{
	return t <= VG_SCAN_BYTES;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int vg_scanset_save(const char *path, const struct vg_scanset_meta *meta,
		    const struct vg_match_set *set, struct vg_error *err)
{
	struct vg_binw w;
	char comm[16] = { 0 };
	size_t tlen = strnlen(meta->value_text, sizeof(meta->value_text) - 1);
	uint64_t prev = 0;
	int rc;

	if (set->type != meta->type)
		return vg_error_set(err, -EINVAL, "cannot write scan set '%s': "
				    "the matches are %s but the header says %s",
				    path, vg_scan_type_name(set->type),
				    vg_scan_type_name(meta->type));
	if (set->value_size == 0 || set->value_size > MAX_VALUE_SIZE ||
	    (vg_scan_type_width(set->type) &&
	     set->value_size != vg_scan_type_width(set->type)))
		return vg_error_set(err, -EINVAL, "cannot write scan set '%s': "
				    "value size %zu does not fit type %s",
				    path, set->value_size,
				    vg_scan_type_name(set->type));
	rc = vg_binw_open(&w, path, SET_MAGIC, SET_VERSION, VG_BIN_CRC32, err);
	if (rc)
		return rc;
	memcpy(comm, meta->id.comm, strnlen(meta->id.comm, sizeof(comm)));
	vg_binw_u32(&w, (uint32_t)meta->id.pid);
	vg_binw_u64(&w, meta->id.start_time);
	vg_binw_put(&w, comm, sizeof(comm));
	vg_binw_u64(&w, meta->created_ns ? meta->created_ns : realtime_ns());
	vg_binw_u32(&w, meta->generation);
	vg_binw_u32(&w, (uint32_t)meta->type);
	vg_binw_u16(&w, (uint16_t)tlen);
	vg_binw_put(&w, meta->value_text, tlen);
	vg_binw_u32(&w, (uint32_t)set->value_size);
	vg_binw_u64(&w, set->n);
	for (size_t i = 0; i < set->n; i++) {
		if (i > 0 && set->addr[i] < prev) {
			vg_binw_abort(&w);
			return vg_error_set(err, -EINVAL, "cannot write scan set "
					    "'%s': addresses are not ascending "
					    "at match %zu", path, i);
		}
		vg_binw_uleb(&w, set->addr[i] - prev);
		prev = set->addr[i];
	}
	if (set->n)
		vg_binw_put(&w, set->value, set->n * set->value_size);
	if (vg_scan_type_is_pattern(set->type) && set->n) {
		if (set->variant) {
			vg_binw_put(&w, set->variant, set->n);
		} else {
			for (size_t i = 0; i < set->n; i++)
				vg_binw_u8(&w, 0);
		}
	}
	return vg_binw_commit(&w, "scan set", err);
}

/* Memory for the arrays of a loaded set.  On this kind of VM a 4 KiB page
 * fault costs ~25 us: faulting the 13 MB of a million u32 matches took
 * ~85 ms against 3 ms of decoding.  Transparent huge pages (asked for
 * with madvise, the common "madvise" THP mode) cut that 3-10x.  The block
 * comes from posix_memalign, so free() and realloc() take it as usual. */
static void *big_alloc(size_t size)
{
	const size_t huge = (size_t)2 << 20;
	void *p;

	if (size < 2 * huge)
		return malloc(size);
	if (posix_memalign(&p, huge, size) != 0)
		return NULL;
	madvise(p, size, MADV_HUGEPAGE);   /* a hint: failure is harmless */
	return p;
}

/* The arrays are allocated at their final size and handed to set (whose
 * fields are public; vg_match_set_clear frees them): pushing a million
 * matches one by one costs more than the whole decoding. */
static int load_matches(struct vg_binr *r, struct vg_match_set *set,
			uint64_t n, struct vg_error *err)
{
	size_t vs = set->value_size;
	bool var = vg_scan_type_is_pattern(set->type);
	uint64_t a = 0;

	/* Each match takes at least 1 address byte + its value (+ variant):
	 * a count the remaining bytes cannot hold is refused before any
	 * allocation it would ask for. */
	if (n > vg_binr_left(r) / (1 + vs + (var ? 1 : 0)))
		return vg_binr_corrupt(r, err, "match count larger than the file");
	if (n == 0)
		return 0;
	set->addr = big_alloc(n * sizeof(*set->addr));
	set->value = big_alloc(n * vs);
	set->variant = var ? big_alloc(n) : NULL;
	set->cap = n;
	if (!set->addr || !set->value || (var && !set->variant)) {
		vg_binr_close(r);
		return vg_error_set(err, -ENOMEM, "out of memory loading %llu "
				    "matches", (unsigned long long)n);
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t d;

		if (!vg_binr_uleb(r, &d))
			return vg_binr_corrupt(r, err, "its contents do not "
					       "match their own counts");
		if (__builtin_add_overflow(a, d, &a))
			return vg_binr_corrupt(r, err, "addresses out of range");
		set->addr[i] = a;
	}
	if (!vg_binr_get(r, set->value, n * vs) ||
	    (var && !vg_binr_get(r, set->variant, n)))
		return vg_binr_corrupt(r, err, "its contents do not match their "
				       "own counts");
	for (uint64_t i = 0; var && i < n; i++)
		if (set->variant[i] > 1)
			return vg_binr_corrupt(r, err, "unknown string variant");
	set->n = n;
	return 0;
}

int vg_scanset_load(const char *path, struct vg_scanset_meta *meta,
		    struct vg_match_set *set, struct vg_error *err)
{
	struct vg_binr r;
	uint32_t pid, type, vs, gen;
	uint16_t tlen;
	char comm[16];
	uint64_t n;
	int rc;

	memset(meta, 0, sizeof(*meta));
	vg_match_set_init(set, VG_SCAN_U8, 1);
	rc = vg_binr_open(&r, path, SET_MAGIC, SET_VERSION, SET_VERSION, 0,
			  "scan set", err);
	if (rc)
		return rc;
	if (!vg_binr_u32(&r, &pid) || !vg_binr_u64(&r, &meta->id.start_time) ||
	    !vg_binr_get(&r, comm, sizeof(comm)) ||
	    !vg_binr_u64(&r, &meta->created_ns) || !vg_binr_u32(&r, &gen) ||
	    !vg_binr_u32(&r, &type) || !vg_binr_u16(&r, &tlen))
		return vg_binr_corrupt(&r, err, "header cut short");
	if (!type_valid(type))
		return vg_binr_corrupt(&r, err, "unknown value type");
	if (tlen >= sizeof(meta->value_text) ||
	    !vg_binr_get(&r, meta->value_text, tlen) || !vg_binr_u32(&r, &vs) ||
	    !vg_binr_u64(&r, &n))
		return vg_binr_corrupt(&r, err, "header cut short");
	meta->value_text[tlen] = '\0';
	meta->id.pid = (pid_t)pid;
	memcpy(meta->id.comm, comm, sizeof(comm));
	meta->id.comm[16] = '\0';
	meta->generation = gen;
	meta->type = (enum vg_scan_type)type;
	if (vs == 0 || vs > MAX_VALUE_SIZE ||
	    (vg_scan_type_width(meta->type) &&
	     vs != vg_scan_type_width(meta->type)))
		return vg_binr_corrupt(&r, err, "value size does not fit the type");
	vg_match_set_clear(set);
	vg_match_set_init(set, meta->type, vs);
	rc = load_matches(&r, set, n, err);
	if (rc == 0)
		rc = vg_binr_finish(&r, err);
	if (rc) {
		vg_match_set_clear(set);
		vg_match_set_init(set, meta->type, vs);
	}
	return rc;
}
