/* maps.c - `vigil maps` as JSON and as a table.
 *
 * The JSON document is a cJSON tree for its header and images, but its
 * regions are streamed: a tree of 10,000 regions would touch ~16 MB of
 * nodes (bench/maps.sh).  cJSON still writes every value; the framing
 * around the regions is the only JSON text written here. */
#include "report/maps.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "report/json.h"
#include "report/text.h"

static cJSON *images_json(const struct vg_images *imgs)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < imgs->n; i++) {
		const struct vg_image *img = imgs->images[i];
		cJSON *o = cJSON_CreateObject();
		char bid[160];

		vg_json_add_text(o, "path", img->path);
		cJSON_AddStringToObject(o, "build_id", vg_image_build_id_hex(img, bid, sizeof(bid)));
		vg_json_add_addr(o, "load_bias", img->bias);
		cJSON_AddStringToObject(o, "bias_method", vg_bias_method_name(img->bias_method));
		cJSON_AddStringToObject(o, "open_via", vg_image_via_name(img->via));
		vg_json_add_text(o, "opened_path", img->open_path);
		cJSON_AddBoolToObject(o, "is_main", img->is_main);
		cJSON_AddBoolToObject(o, "deleted", img->deleted);
		cJSON_AddStringToObject(o, "elf_type", img->e_type == 2 ? "exec" : "dyn");
		vg_json_add_addr(o, "low", img->lo);
		vg_json_add_addr(o, "high", img->hi);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

int vg_report_maps_json(FILE *out, const struct vg_target *t, const struct vg_maps *maps,
			const struct vg_images *imgs, const char *method, struct vg_error *err)
{
	cJSON *doc = vg_json_report_new("maps", t);
	char line[8192], *head;
	size_t n;

	if (!doc)
		return vg_error_set(err, -ENOMEM, "out of memory building the JSON report");
	cJSON_AddStringToObject(doc, "maps_source", method);
	cJSON_AddNumberToObject(doc, "region_count", (double)maps->n);
	cJSON_AddItemToObject(doc, "images", images_json(imgs));
	head = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!head)
		return vg_error_set(err, -ENOMEM, "out of memory building the JSON report");
	/* cJSON ends the object with "\n}": the regions go before that. */
	n = strlen(head);
	while (n && (head[n - 1] == '}' || head[n - 1] == '\n'))
		n--;
	fwrite(head, 1, n, out);
	cJSON_free(head);
	fputs(",\n\t\"regions\":\t[", out);
	for (size_t i = 0; i < maps->n && !ferror(out); i++) {
		cJSON *o = vg_json_region(&maps->regions[i]);
		char *big = NULL;

		fputs(i ? ",\n\t\t" : "\n\t\t", out);
		if (o && cJSON_PrintPreallocated(o, line, sizeof(line), false))
			fputs(line, out);
		else if (o && (big = cJSON_PrintUnformatted(o)))  /* a very long path */
			fputs(big, out);
		else {
			cJSON_Delete(o);
			return vg_error_set(err, -ENOMEM, "out of memory printing a region");
		}
		cJSON_free(big);
		cJSON_Delete(o);
	}
	fputs(maps->n ? "\n\t]\n}\n" : "]\n}\n", out);
	return ferror(out) ? -EIO : 0;
}

int vg_report_maps_table(FILE *out, const struct vg_target *t, const struct vg_maps *maps,
			 const struct vg_images *imgs, const char *method)
{
	fprintf(out, "pid %d (", (int)t->pid);
	vg_text_put(out, t->comm);
	fprintf(out, "): %zu regions, %zu ELF images (maps via %s)\n", maps->n, imgs->n, method);
	for (size_t i = 0; i < maps->n; i++) {
		const struct vg_region *r = &maps->regions[i];

		fprintf(out, "%012" PRIx64 "-%012" PRIx64 " %s %08" PRIx64 " %02x:%02x %-8" PRIu64 " ",
			r->start, r->end, r->perms, r->offset, r->dev_major,
			r->dev_minor, r->inode);
		vg_text_put_path(out, r->path, r->deleted);
		fputc('\n', out);
	}
	fprintf(out, "\nimages:\n");
	for (size_t i = 0; i < imgs->n; i++) {
		const struct vg_image *img = imgs->images[i];
		char bid[160];

		vg_image_build_id_hex(img, bid, sizeof(bid));
		fputs("  ", out);
		vg_text_put_path(out, img->path, img->deleted);
		fprintf(out, "%s  bias 0x%" PRIx64 " (%s)  build-id %s  via %s\n",
			img->is_main ? " [main]" : "",
			img->bias, vg_bias_method_name(img->bias_method),
			bid[0] ? bid : "none", vg_image_via_name(img->via));
	}
	return ferror(out) ? -EIO : 0;
}
