/* text.c - escaping of target text for the table views.
 *
 * A file name may hold a newline, a terminal escape or bytes that are not
 * UTF-8; written as is, it would split a line or garble the terminal.  The
 * escape is the kernel's own octal form, so a path reads as in
 * /proc/PID/maps.  JSON has its own rule (vg_json_add_text). */
#include "report/text.h"

#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

void vg_text_put(FILE *out, const char *s)
{
	/* Unlike the kernel, a backslash is escaped too ("\134"), so that a
	 * name containing the four characters \012 stays distinct. */
	const unsigned char *p = (const unsigned char *)s, *run = p;

	/* Plain runs go out in one fwrite: symbolizer output is mostly
	 * names and paths (a per-character fwrite was a quarter of
	 * `vigil sym`'s time). */
	while (p && *p) {
		size_t n;

		if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
			p++;
			continue;
		}
		n = vg_utf8_seq(p);
		if (n > 1) {
			p += n;
			continue;
		}
		fwrite(run, 1, (size_t)(p - run), out);
		fprintf(out, "\\%03o", *p++);
		run = p;
	}
	if (p && p > run)
		fwrite(run, 1, (size_t)(p - run), out);
}

void vg_text_put_path(FILE *out, const char *path, bool deleted)
{
	static const char suffix[] = " (deleted)";
	size_t n = strlen(path), sl = sizeof(suffix) - 1;

	if (!deleted && n >= sl && strcmp(path + n - sl, suffix) == 0) {
		char *head = strndup(path, n - sl);

		vg_text_put(out, head ? head : "");
		free(head);
		fputs("\\040(deleted)", out);
		return;
	}
	vg_text_put(out, path);
	if (deleted)
		fputs(suffix, out);
}
