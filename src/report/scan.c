/* scan.c - `vigil scan` as JSON and as a table: matches, a snapshot,
 * pointer chains. */
#include "report/scan.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "report/json.h"
#include "report/text.h"
#include "scan/locate.h"
#include "sym/dwname.h"

static cJSON *oom(struct vg_error *err)
{
	vg_error_set(err, -ENOMEM, "out of memory building the JSON report");
	return NULL;
}

static int out_status(FILE *out)
{
	return ferror(out) ? -EIO : 0;
}

static double rate_gbps(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (double)bytes / seconds / 1e9 : 0;
}

/* "g_root" or "g_root+16". */
static const char *symbol_text(const char *name, uint64_t off, char *buf, size_t size)
{
	if (off)
		snprintf(buf, size, "%s+%" PRIu64, name, off);
	else
		snprintf(buf, size, "%s", name);
	return buf;
}

/* The value at index i as text: a number, the pattern's text (str), or
 * hex (bytes). */
static void value_text(const struct vg_match_set *set, const struct vg_scan_value *pattern,
		       size_t i, char *buf, size_t size)
{
	const uint8_t *v = set->value + i * set->value_size;

	if (!vg_scan_type_is_pattern(set->type)) {
		vg_scan_format_number(set->type, v, buf, size);
		return;
	}
	{
		size_t len = pattern ? vg_match_set_len(set, pattern, i) : set->value_size;
		size_t o = 0;

		if (set->type == VG_SCAN_STR && set->variant && set->variant[i] == 0 && len < size) {
			memcpy(buf, v, len);
			buf[len] = '\0';
			return;
		}
		if (set->type == VG_SCAN_STR && set->variant && set->variant[i] == 1) {
			/* UTF-16LE of text that was given as UTF-8: ASCII is
			 * common and shown as is, anything else as hex. */
			bool ascii = true;

			for (size_t k = 0; k + 1 < len && ascii; k += 2)
				ascii = v[k] >= 0x20 && v[k] < 0x7f && v[k + 1] == 0;
			if (ascii && len / 2 < size) {
				for (size_t k = 0; k + 1 < len; k += 2)
					buf[o++] = (char)v[k];
				buf[o] = '\0';
				return;
			}
		}
		for (size_t k = 0; k < len && o + 3 < size; k++)
			o += (size_t)snprintf(buf + o, size - o, "%02x", v[k]);
		buf[o] = '\0';
	}
}

static const char *encoding_of(const struct vg_match_set *set, size_t i)
{
	if (set->type == VG_SCAN_STR && set->variant)
		return set->variant[i] ? "utf-16le" : "utf-8";
	return NULL;
}

static size_t watch_len(const struct vg_match_set *set, uint64_t addr)
{
	size_t w = vg_scan_type_width(set->type);

	return (w == 1 || w == 2 || w == 4 || w == 8) && addr % w == 0 ? w : 1;
}

/* A namer for t's images (DWARF looked up from its root), or NULL: the
 * matches are then named by symbol only. */
static struct vg_dwnamer *namer_for(const struct vg_target *t)
{
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root", (int)t->mm_pid);
	return vg_dwnamer_new(root);
}

/* loc's expression into buf (g_table[3].count), or NULL when DWARF does
 * not name it. */
static const char *expression_of(struct vg_dwnamer *nm, const struct vg_location *loc,
				 uint64_t len, char *buf, size_t size)
{
	if (!loc->symbol || !loc->image)
		return NULL;
	return vg_dwnamer_name(nm, loc->image, loc->static_offset, len, buf, size) == 1 ?
	       buf : NULL;
}

/* The bytes match i covers: its type's width, a pattern's length. */
static uint64_t match_width(const struct vg_match_set *set, const struct vg_scan_value *pattern,
			    size_t i)
{
	if (!vg_scan_type_is_pattern(set->type))
		return vg_scan_type_width(set->type);
	return pattern ? vg_match_set_len(set, pattern, i) : set->value_size;
}

static cJSON *match_json(const struct vg_match_set *set, const struct vg_scan_value *pattern,
			 size_t i, const struct vg_maps *maps, const struct vg_images *imgs,
			 struct vg_dwnamer *nm)
{
	const char *expr;
	cJSON *m = cJSON_CreateObject();
	struct vg_location loc;
	char text[1024];

	if (!m)
		return NULL;
	vg_locate(maps, imgs, set->addr[i], &loc);
	vg_json_add_addr(m, "address", set->addr[i]);
	if (loc.region) {
		cJSON_AddItemToObject(m, "region", vg_json_region(loc.region));
		cJSON_AddStringToObject(m, "perms", loc.region->perms);
	} else {
		cJSON_AddNullToObject(m, "region");
		cJSON_AddNullToObject(m, "perms");
	}
	if (loc.image) {
		vg_json_add_text(m, "image", loc.image->path);
		vg_json_add_addr(m, "static_offset", loc.static_offset);
	} else {
		cJSON_AddNullToObject(m, "image");
		cJSON_AddNullToObject(m, "static_offset");
	}
	if (loc.symbol) {
		vg_json_add_text(m, "symbol", symbol_text(loc.symbol, loc.symbol_offset, text, sizeof(text)));
	} else {
		cJSON_AddNullToObject(m, "symbol");
	}
	expr = expression_of(nm, &loc, match_width(set, pattern, i), text, sizeof(text));
	if (expr)
		vg_json_add_text(m, "expression", expr);
	else
		cJSON_AddNullToObject(m, "expression");
	value_text(set, pattern, i, text, sizeof(text));
	vg_json_add_text(m, "value", text);
	if (encoding_of(set, i))
		cJSON_AddStringToObject(m, "encoding", encoding_of(set, i));
	vg_json_add_text(m, "watch", loc.watch_spec);
	return m;
}

static void summary_json(cJSON *doc, const struct vg_report_scan_meta *sm)
{
	cJSON *s = cJSON_AddObjectToObject(doc, "scan");

	cJSON_AddStringToObject(s, "mode", sm->mode);
	cJSON_AddStringToObject(s, "type", vg_scan_type_name(sm->type));
	if (sm->value_text)
		vg_json_add_text(s, "value", sm->value_text);
	else
		cJSON_AddNullToObject(s, "value");
	if (sm->op)
		cJSON_AddStringToObject(s, "op", sm->op);
	else
		cJSON_AddNullToObject(s, "op");
	if (sm->operand)
		vg_json_add_text(s, "operand", sm->operand);
	cJSON_AddBoolToObject(s, "aligned", sm->aligned);
	if (!sm->regions)
		cJSON_AddNullToObject(s, "regions");
	else
		vg_json_add_text(s, "regions", sm->regions);
	if (sm->from)
		vg_json_add_text(s, "from", sm->from);
	else
		cJSON_AddNullToObject(s, "from");
	if (sm->saved_to)
		vg_json_add_text(s, "saved_to", sm->saved_to);
	else
		cJSON_AddNullToObject(s, "saved_to");
	cJSON_AddNumberToObject(s, "generation", sm->generation);
}

cJSON *vg_report_scan_matches_json(const struct vg_target *t, const struct vg_report_scan_meta *sm,
				   const struct vg_match_set *set,
				   const struct vg_scan_value *pattern,
				   const struct vg_scan_stats *st, const struct vg_maps *maps,
				   const struct vg_images *imgs, struct vg_error *err)
{
	cJSON *doc = vg_json_report_new("live_scan", t);
	cJSON *arr;
	size_t listed = set->n < sm->max_list ? set->n : sm->max_list;
	struct vg_dwnamer *nm;

	if (!doc)
		return oom(err);
	summary_json(doc, sm);
	cJSON_AddNumberToObject(doc, "matches_total", (double)set->n);
	cJSON_AddNumberToObject(doc, "matches_listed", (double)listed);
	cJSON_AddNumberToObject(doc, "bytes_scanned", (double)st->bytes_scanned);
	cJSON_AddNumberToObject(doc, "regions_scanned", (double)st->regions_scanned);
	cJSON_AddNumberToObject(doc, "regions_skipped", (double)st->regions_skipped);
	cJSON_AddNumberToObject(doc, "bytes_skipped", (double)st->bytes_skipped);
	cJSON_AddNumberToObject(doc, "regions_too_large", (double)st->regions_too_large);
	cJSON_AddNumberToObject(doc, "matches_unreadable", (double)st->matches_unreadable);
	cJSON_AddBoolToObject(doc, "interrupted", st->interrupted);
	cJSON_AddNumberToObject(doc, "seconds", st->seconds);
	cJSON_AddNumberToObject(doc, "gb_per_s", rate_gbps(st->bytes_scanned, st->seconds));
	arr = cJSON_AddArrayToObject(doc, "matches");
	nm = listed ? namer_for(t) : NULL;
	for (size_t i = 0; arr && i < listed; i++)
		cJSON_AddItemToArray(arr, match_json(set, pattern, i, maps, imgs, nm));
	vg_dwnamer_free(nm);
	return doc;
}

int vg_report_scan_matches_table(FILE *out, const struct vg_target *t,
				 const struct vg_report_scan_meta *sm, const struct vg_match_set *set,
				 const struct vg_scan_value *pattern, const struct vg_scan_stats *st,
				 const struct vg_maps *maps, const struct vg_images *imgs)
{
	size_t listed = set->n < sm->max_list ? set->n : sm->max_list;
	struct vg_location loc;
	struct vg_dwnamer *nm = listed ? namer_for(t) : NULL;
	char text[1024];

	fprintf(out, "# pid %d: %s %s", (int)t->pid, sm->mode, vg_scan_type_name(sm->type));
	if (sm->op)
		fprintf(out, " --%s%s%s", sm->op, sm->operand ? " " : "", sm->operand ? sm->operand : "");
	else if (sm->value_text) {
		fputc(' ', out);
		vg_text_put(out, sm->value_text);
	}
	if (strcmp(sm->mode, "narrow") == 0)
		/* Only the saved addresses were read: regions and rates
		 * would describe nothing. */
		fprintf(out, ": the saved addresses re-read in %.3f s", st->seconds);
	else
		fprintf(out, "%s: %" PRIu64 " regions, %.1f MiB in %.3f s (%.2f GB/s)", sm->aligned ? " (aligned)" : "",
		             st->regions_scanned, (double)st->bytes_scanned / 1048576.0, st->seconds,
		             rate_gbps(st->bytes_scanned, st->seconds));
	if (st->regions_skipped > st->regions_too_large || st->bytes_skipped)
		fprintf(out, ", %" PRIu64 " regions and %" PRIu64 " bytes unreadable (skipped)",
		             st->regions_skipped - st->regions_too_large, st->bytes_skipped);
	if (st->regions_too_large)
		fprintf(out, ", %" PRIu64 " region%s over 64 GiB not read (a sanitizer's shadow?)",
		             st->regions_too_large, st->regions_too_large == 1 ? "" : "s");
	if (st->matches_unreadable)
		fprintf(out, ", %" PRIu64 " matches no longer readable (dropped)", st->matches_unreadable);
	fprintf(out, "\n%zu match%s%s\n", set->n, set->n == 1 ? "" : "es",
	             st->interrupted ? " (interrupted: the scan is incomplete)" : "");
	if (listed)
		fprintf(out, "%-18s  %-20s  %-4s  %-36s  %s\n", "ADDRESS", "VALUE", "PERM", "WHERE", "GLOBAL");
	for (size_t i = 0; i < listed; i++) {
		vg_locate(maps, imgs, set->addr[i], &loc);
		value_text(set, pattern, i, text, sizeof(text));
		fprintf(out, "0x%016" PRIx64 "  ", set->addr[i]);
		vg_text_put(out, text);
		fprintf(out, "%*s  %-4s  ", (int)(strlen(text) < 20 ? 20 - strlen(text) : 0), "",
		             loc.region ? loc.region->perms : "----");
		if (loc.image) {
			const char *base = strrchr(loc.image->path, '/');

			snprintf(text, sizeof(text), "%s+0x%" PRIx64, base ? base + 1 : loc.image->path,
				 loc.static_offset);
		} else if (loc.region) {
			snprintf(text, sizeof(text), "%s",
				 loc.region->path[0] ? loc.region->path : vg_region_kind_name(loc.region->kind));
		} else {
			snprintf(text, sizeof(text), "(unmapped now)");
		}
		vg_text_put(out, text);
		fprintf(out, "%*s  ", (int)(strlen(text) < 36 ? 36 - strlen(text) : 0), "");
		if (expression_of(nm, &loc, match_width(set, pattern, i), text, sizeof(text))) {
			vg_text_put(out, text);
		} else if (loc.symbol) {
			vg_text_put(out, loc.symbol);
			if (loc.symbol_offset)
				fprintf(out, "+%" PRIu64, loc.symbol_offset);
		} else {
			fputc('-', out);
		}
		fputc('\n', out);
	}
	vg_dwnamer_free(nm);
	if (listed < set->n)
		fprintf(out, "... %zu more (--max-list N lists more; --save FILE keeps them all)\n", set->n - listed);
	if (set->n == 1) {
		vg_locate(maps, imgs, set->addr[0], &loc);
		fprintf(out, "watch it: vigil watch %d ", (int)t->pid);
		vg_text_put(out, loc.watch_spec);
		fprintf(out, " --len %zu\n", watch_len(set, set->addr[0]));
	}
	if (sm->saved_to && !st->interrupted)
		fprintf(out, "# saved to %s\n", sm->saved_to);
	return out_status(out);
}

cJSON *vg_report_scan_snapshot_json(const struct vg_target *t, const char *regions,
				    const char *path, const struct vg_snapshot_stats *st,
				    struct vg_error *err)
{
	cJSON *doc = vg_json_report_new("live_scan", t);
	cJSON *s;

	if (!doc)
		return oom(err);
	s = cJSON_AddObjectToObject(doc, "scan");
	cJSON_AddStringToObject(s, "mode", "snapshot");
	vg_json_add_text(s, "regions", regions);
	vg_json_add_text(s, "saved_to", path);
	cJSON_AddNumberToObject(doc, "regions_captured", (double)st->regions);
	cJSON_AddNumberToObject(doc, "bytes", (double)st->bytes);
	cJSON_AddNumberToObject(doc, "bytes_compressed", (double)st->bytes_compressed);
	cJSON_AddNumberToObject(doc, "regions_skipped", (double)st->regions_skipped);
	cJSON_AddNumberToObject(doc, "bytes_skipped", (double)st->bytes_skipped);
	cJSON_AddBoolToObject(doc, "interrupted", st->interrupted);
	cJSON_AddNumberToObject(doc, "seconds", st->seconds);
	cJSON_AddNumberToObject(doc, "gb_per_s", rate_gbps(st->bytes, st->seconds));
	return doc;
}

int vg_report_scan_snapshot_table(FILE *out, const struct vg_target *t, const char *path,
				  const struct vg_snapshot_stats *st)
{
	fprintf(out, "# pid %d: snapshot of %" PRIu64 " regions, %.1f MiB in %.3f s (%.2f GB/s), %.1f MiB on disk",
	             (int)t->pid, st->regions, (double)st->bytes / 1048576.0, st->seconds,
	             rate_gbps(st->bytes, st->seconds), (double)st->bytes_compressed / 1048576.0);
	if (st->regions_skipped || st->bytes_skipped)
		fprintf(out, ", %" PRIu64 " regions and %" PRIu64 " bytes unreadable (skipped)",
		             st->regions_skipped, st->bytes_skipped);
	fprintf(out, "\n# saved to %s; next: vigil scan %d --from %s --type TYPE --changed\n",
	             path, (int)t->pid, path);
	return out_status(out);
}

/* The --follow form of a chain, when one exists: watch --follow takes one
 * dereference, so a depth-1 chain from a named slot is exact; a deeper one
 * is given from its last slot's current address (valid until a pointer
 * above it changes). */
static bool follow_spec(const struct vg_ptr_chain *c, uint64_t last_slot, char *buf, size_t size)
{
	if (c->depth == 1) {
		char sym[600];

		if (c->base_symbol && c->image && c->image->is_main)
			snprintf(buf, size, "%s+%" PRIu64,
				 symbol_text(c->base_symbol, c->base_symbol_offset, sym, sizeof(sym)),
				 c->offsets[0]);
		else if (c->image && c->image->is_main)
			snprintf(buf, size, "@0x%" PRIx64 "+%" PRIu64, c->base_static, c->offsets[0]);
		else
			snprintf(buf, size, "0x%" PRIx64 "+%" PRIu64, c->base_address, c->offsets[0]);
		return true;
	}
	snprintf(buf, size, "0x%" PRIx64 "+%" PRIu64, last_slot, c->offsets[c->depth - 1]);
	return false;
}

/* Current address of the slot holding the last pointer of a chain:
 * *(...*(base)+off0...)+off[depth-2]. */
static int chain_last_slot(struct vg_mem *mem, const struct vg_ptr_chain *c, uint64_t *slot)
{
	uint64_t at = c->base_address;

	for (unsigned i = 0; i + 1 < c->depth; i++) {
		uint64_t p;
		struct vg_mem_result res;

		if (vg_mem_read(mem, at, &p, sizeof(p), &res, NULL) < 0)
			return -EFAULT;
		at = p + c->offsets[i];
	}
	*slot = at;
	return 0;
}

cJSON *vg_report_scan_pointers_json(const struct vg_target *t,
				    const struct vg_report_scan_ptr_meta *m,
				    const struct vg_ptr_chain *chains, size_t n,
				    const struct vg_ptr_stats *st, struct vg_mem *mem,
				    struct vg_error *err)
{
	const struct vg_ptr_opts *o = m->opts;
	size_t listed = n < m->max_list ? n : m->max_list;
	char expr[1024], follow[1024], base[512];
	cJSON *doc = vg_json_report_new("live_scan", t);
	cJSON *s, *arr;

	if (!doc)
		return oom(err);
	s = cJSON_AddObjectToObject(doc, "scan");
	cJSON_AddStringToObject(s, "mode", "pointers");
	vg_json_add_addr(s, "target", o->target);
	vg_json_add_text(s, "target_input", m->target_input);
	cJSON_AddNumberToObject(s, "depth", o->depth);
	cJSON_AddNumberToObject(s, "max_offset", (double)o->max_offset);
	cJSON_AddNumberToObject(doc, "bytes_scanned", (double)st->bytes_scanned);
	cJSON_AddNumberToObject(doc, "pointers", (double)st->pointers);
	cJSON_AddNumberToObject(doc, "regions_skipped", (double)st->regions_skipped);
	cJSON_AddNumberToObject(doc, "chains_total", (double)st->chains_found);
	if (st->any_complete)
		cJSON_AddNumberToObject(doc, "max_offset_complete", (double)st->max_offset_complete);
	else
		cJSON_AddNullToObject(doc, "max_offset_complete");
	cJSON_AddNumberToObject(doc, "chains_listed", (double)listed);
	cJSON_AddBoolToObject(doc, "truncated", st->truncated);
	cJSON_AddBoolToObject(doc, "frontier_capped", st->frontier_capped);
	cJSON_AddNumberToObject(doc, "regions_too_large", (double)st->regions_too_large);
	cJSON_AddBoolToObject(doc, "interrupted", st->interrupted);
	cJSON_AddNumberToObject(doc, "seconds", st->seconds);
	arr = cJSON_AddArrayToObject(doc, "chains");
	for (size_t i = 0; arr && i < listed; i++) {
		const struct vg_ptr_chain *c = &chains[i];
		cJSON *j = cJSON_CreateObject(), *offs;
		uint64_t slot = 0;
		bool exact;

		vg_json_add_text(j, "base", vg_ptr_chain_base(c, base, sizeof(base)));
		vg_json_add_addr(j, "base_address", c->base_address);
		if (c->base_symbol) {
			char sym[600];

			vg_json_add_text(j, "base_symbol", symbol_text(c->base_symbol,
				c->base_symbol_offset, sym, sizeof(sym)));
		} else {
			cJSON_AddNullToObject(j, "base_symbol");
		}
		offs = cJSON_AddArrayToObject(j, "offsets");
		for (unsigned k = 0; k < c->depth; k++)
			cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)c->offsets[k]));
		vg_json_add_text(j, "expression", vg_ptr_chain_expression(c, expr, sizeof(expr)));
		cJSON_AddNumberToObject(j, "depth", c->depth);
		if (chain_last_slot(mem, c, &slot) == 0) {
			exact = follow_spec(c, slot, follow, sizeof(follow));
			vg_json_add_text(j, "watch_follow", follow);
			cJSON_AddBoolToObject(j, "watch_follow_survives_rebinding", exact);
		} else {
			cJSON_AddNullToObject(j, "watch_follow");
		}
		cJSON_AddItemToArray(arr, j);
	}
	return doc;
}

int vg_report_scan_pointers_table(FILE *out, const struct vg_target *t,
				  const struct vg_report_scan_ptr_meta *m,
				  const struct vg_ptr_chain *chains, size_t n,
				  const struct vg_ptr_stats *st, struct vg_mem *mem)
{
	const struct vg_ptr_opts *o = m->opts;
	size_t listed = n < m->max_list ? n : m->max_list;
	char expr[1024], follow[1024], base[512];

	fprintf(out, "# pid %d: pointer chains to 0x%" PRIx64 " (depth <= %u, offsets <= %" PRIu64 "): %" PRIu64 " pointers in %.1f MiB, %.3f s\n",
	             (int)t->pid, o->target, o->depth, o->max_offset, st->pointers,
	             (double)st->bytes_scanned / 1048576.0, st->seconds);
	fprintf(out, "%" PRIu64 " chain%s%s%s%s\n", st->chains_found, st->chains_found == 1 ? "" : "s",
	             st->truncated ? " (stopped at --max-chains)" : "",
	             st->frontier_capped ? " (a lower bound: a level had too many candidates and was cut)" : "",
	             st->interrupted ? " (interrupted: the search is incomplete)" : "");
	if (st->regions_too_large)
		fprintf(out, "# %" PRIu64 " sparse regions too large to search were skipped\n",
		             st->regions_too_large);
	if (!st->any_complete)
		fprintf(out, "# no search was complete, not even with offsets <= %" PRIu64 ": give a smaller --depth or --max-offset\n",
		             o->max_offset < VG_PTR_FIRST_LIMIT ? o->max_offset : (uint64_t)VG_PTR_FIRST_LIMIT);
	else if (st->max_offset_complete < o->max_offset)
		fprintf(out, "# complete for offsets <= %" PRIu64 "; the search with larger ones was cut: chains needing them may be missing\n",
		             st->max_offset_complete);
	for (size_t i = 0; i < listed; i++) {
		uint64_t slot;

		fprintf(out, "  depth %u  ", chains[i].depth);
		vg_text_put(out, vg_ptr_chain_expression(&chains[i], expr, sizeof(expr)));
		fprintf(out, "   base ");
		vg_text_put(out, vg_ptr_chain_base(&chains[i], base, sizeof(base)));
		if (chain_last_slot(mem, &chains[i], &slot) == 0) {
			bool exact = follow_spec(&chains[i], slot, follow, sizeof(follow));

			fprintf(out, "   watch: --follow ");
			vg_text_put(out, follow);
			if (!exact)
				fputs(" (as of now)", out);
		}
		fputc('\n', out);
	}
	if (listed < n)
		fprintf(out, "... %zu more (--max-list N)\n", n - listed);
	return out_status(out);
}
