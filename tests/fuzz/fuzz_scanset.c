/* fuzz_scanset.c - libFuzzer harness for the scan set and snapshot readers.
 *
 * A scan set or snapshot is a file the user hands back to vigil, possibly
 * truncated, corrupted or from another version.  Any input must either be
 * refused with an error sentence, or load into a set that keeps the
 * reader's promises: addresses strictly ascending, a value size that fits
 * the type, variants only for str/bytes.  The snapshot reader is asked for
 * its identity only (pid 0: no live memory is read).  Built by
 * tests/fuzz/run.sh, not by Meson. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scan/scanset.h"
#include "scan/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_set(const struct vg_scanset_meta *meta, const struct vg_match_set *set)
{
	size_t w = vg_scan_type_width(meta->type);

	if (set->type != meta->type)
		abort();
	if (w && set->value_size != w)
		abort();
	if ((meta->type == VG_SCAN_STR || meta->type == VG_SCAN_BYTES) != (set->variant != NULL) && set->n)
		abort();
	for (size_t i = 1; i < set->n; i++)
		if (set->addr[i] <= set->addr[i - 1])
			abort();
	if (memchr(meta->value_text, '\0', sizeof(meta->value_text)) == NULL)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("scanset", MFD_CLOEXEC);
	char path[64];
	struct vg_scanset_meta meta;
	struct vg_match_set set;
	struct vg_scan_identity id;
	struct vg_narrow n;
	struct vg_scan_stats st;
	struct vg_error err = { 0 };

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&set, 0, sizeof(set));
	if (vg_scanset_load(path, &meta, &set, &err) == 0)
		check_set(&meta, &set);
	else if (err.msg[0] == '\0')
		abort();   /* refused without a sentence */
	vg_match_set_clear(&set);

	memset(&set, 0, sizeof(set));
	memset(&n, 0, sizeof(n));
	n.op = VG_NARROW_CHANGED;
	memset(&err, 0, sizeof(err));
	if (vg_snapshot_compare(path, 0, NULL, VG_SCAN_U32, true, &n, &id, &set, &st, &err) < 0 &&
	    err.msg[0] == '\0')
		abort();
	vg_match_set_clear(&set);
	close(fd);
	return 0;
}
