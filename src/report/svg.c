/* svg.c - the flame graph as one SVG document.
 *
 * Layout is done here (x from the samples before a frame among its
 * siblings, y from its depth), so the picture is right without script;
 * the script only re-lays out on zoom and search.  Each frame carries its
 * sample start, count and depth as data-* attributes, the only state the
 * script needs.  Frames narrower than 0.1 pixel are left out with their
 * subtrees (FlameGraph's --minwidth), which keeps a huge profile's file
 * small; the footer says how many. */
#include "report/svg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

#define IMAGE_W 1200.0
#define PAD_X 10.0
#define FRAME_H 17
#define FONT_SIZE 12
#define TOP 54        /* title and search box */
#define BOTTOM 34     /* details line */
#define MIN_WIDTH 0.1 /* pixels */
/* Average glyph width of Verdana relative to its size: how many
 * characters of a label fit in a frame. */
#define CHAR_W (FONT_SIZE * 0.59)

struct svg {
	FILE *out;
	const struct vg_stacks *v;
	uint64_t total;
	uint32_t max_depth;
	size_t omitted;
};

/* Text for XML content or an attribute value: markup characters as
 * entities, control characters (not allowed in XML 1.0) and invalid UTF-8
 * bytes as visible escapes.  max_chars > 0 cuts the text to that many
 * characters, the last two being "..". */
static void put_text(FILE *out, const char *s, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0, total = 0;

	if (max_chars) {
		for (const unsigned char *q = p; *q;) {
			size_t n = vg_utf8_seq(q);

			q += n ? n : 1;
			total++;
		}
	}
	while (*p) {
		size_t n = vg_utf8_seq(p);

		if (max_chars && total > max_chars && chars + 2 >= max_chars) {
			fputs("..", out);
			return;
		}
		chars++;
		if (!n) {
			fprintf(out, "\\x%02x", *p++);
			continue;
		}
		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\%03o", *p);
			else
				fwrite(p, 1, n, out);
		}
		p += n;
	}
}

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* FlameGraph's palettes: warm by default, aqua for inlined frames,
 * orange for the kernel; the shade follows the name, so a function keeps
 * its color from one graph to the next. */
static void color(const struct vg_stack_frame *f, const char *name, char *buf,
		  size_t size)
{
	uint32_t h = hash_name(name);
	double v1 = (h & 0xff) / 255.0, v2 = (h >> 8 & 0xff) / 255.0,
	       v3 = (h >> 16 & 0xff) / 255.0;

	if (!f)
		snprintf(buf, size, "rgb(200,200,200)");
	else if (f->inlined)
		snprintf(buf, size, "rgb(%d,%d,%d)", (int)(50 + 60 * v1),
			 (int)(165 + 55 * v2), (int)(165 + 55 * v2));
	else if (f->kernel)
		snprintf(buf, size, "rgb(%d,%d,%d)", (int)(200 + 55 * v1),
			 (int)(110 + 60 * v2), (int)(20 + 30 * v3));
	else
		snprintf(buf, size, "rgb(%d,%d,%d)", (int)(205 + 50 * v3),
			 (int)(230 * v1), (int)(55 * v2));
}

static int frame(struct svg *g, uint32_t id, uint64_t start)
{
	const struct vg_stack_node *node = vg_stacks_node(g->v, id);
	const struct vg_stack_frame *f = node->frame == VG_STACKS_NONE ? NULL
					 : vg_stacks_frame(g->v, node->frame);
	const char *name = f ? vg_stacks_string(g->v, f->name) : "all";
	double width = (IMAGE_W - 2 * PAD_X) * (double)node->total / (double)g->total;
	double x = PAD_X + (IMAGE_W - 2 * PAD_X) * (double)start / (double)g->total;
	double y = TOP + (double)(g->max_depth - node->depth) * FRAME_H;
	size_t fit = width > 6 ? (size_t)((width - 6) / CHAR_W) : 0;
	char fill[32];
	uint32_t *kids;
	size_t n;
	int rc;

	if (width < MIN_WIDTH) {
		g->omitted++;
		return 0;
	}
	color(f, name, fill, sizeof(fill));
	fprintf(g->out, "<g class=\"f%s%s\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64
		"\" data-d=\"%" PRIu32 "\" data-l=\"", f && f->inlined ? " inl" : "",
		f && f->kernel ? " k" : "", start, node->total, node->depth);
	put_text(g->out, name, 0);
	fputs("\"><title>", g->out);
	put_text(g->out, name, 0);
	if (f && f->inlined)
		fputs(" [inlined]", g->out);
	if (f && f->kernel)
		fputs(" [kernel]", g->out);
	if (f && f->file) {
		fputs(" \xe2\x80\x94 ", g->out); /* an em dash */
		put_text(g->out, vg_stacks_string(g->v, f->file), 0);
	}
	fprintf(g->out, " (%" PRIu64 " samples, %.2f%%)</title>", node->total,
		100.0 * (double)node->total / (double)g->total);
	fprintf(g->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
		x, y, width, FRAME_H - 1, fill, x + 3, y + FRAME_H - 5);
	if (fit >= 3)
		put_text(g->out, name, fit);
	fputs("</text></g>\n", g->out);

	if ((rc = vg_stacks_children(g->v, id, &kids, &n)) < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = frame(g, kids[i], start);
		start += vg_stacks_node(g->v, kids[i])->total;
	}
	free(kids);
	return rc;
}

/* The interaction, kept in one string: no file to ship beside the SVG.
 * It must never contain the CDATA terminator. */
static const char script[] =
"var W = IMAGE_W, PX = PAD_X, CW = CHAR_W, FRAMES = [], ZOOMED = null;\n"
"function num(g, k) { return +g.getAttribute('data-' + k); }\n"
"function fit(g) {\n"
"  var r = g.querySelector('rect'), t = g.querySelector('text');\n"
"  var w = +r.getAttribute('width'), l = g.getAttribute('data-l');\n"
"  var max = Math.floor((w - 6) / CW);\n"
"  t.setAttribute('x', +r.getAttribute('x') + 3);\n"
"  t.textContent = max < 3 ? '' : l.length <= max ? l : l.slice(0, max - 2) + '..';\n"
"}\n"
"function zoom(z) {\n"
"  var s = num(z, 's'), n = num(z, 'n'), d = num(z, 'd');\n"
"  ZOOMED = z;\n"
"  FRAMES.forEach(function (g) {\n"
"    var gs = num(g, 's'), gn = num(g, 'n'), gd = num(g, 'd');\n"
"    var r = g.querySelector('rect');\n"
"    g.classList.remove('anc');\n"
"    if (gd >= d && gs >= s && gs + gn <= s + n) {\n"
"      g.style.display = '';\n"
"      r.setAttribute('x', PX + (gs - s) / n * (W - 2 * PX));\n"
"      r.setAttribute('width', gn / n * (W - 2 * PX));\n"
"    } else if (gd < d && gs <= s && gs + gn >= s + n) {\n"
"      g.style.display = '';\n"
"      g.classList.add('anc');\n"
"      r.setAttribute('x', PX);\n"
"      r.setAttribute('width', W - 2 * PX);\n"
"    } else {\n"
"      g.style.display = 'none';\n"
"    }\n"
"    fit(g);\n"
"  });\n"
"  document.getElementById('unzoom').style.opacity = d > 0 ? 1 : 0;\n"
"}\n"
"function search(term) {\n"
"  var re = null, hits = [], total = num(FRAMES[0], 'n');\n"
"  if (term) { try { re = new RegExp(term); } catch (e) { re = null; } }\n"
"  FRAMES.forEach(function (g) {\n"
"    var r = g.querySelector('rect'), l = g.getAttribute('data-l');\n"
"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
"    var hit = term && (re ? re.test(l) : l.indexOf(term) >= 0);\n"
"    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
"    if (hit) hits.push([num(g, 's'), num(g, 'n')]);\n"
"  });\n"
"  hits.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
"  var covered = 0, end = -1;\n"
"  hits.forEach(function (h) {\n"
"    if (h[0] >= end) { covered += h[1]; end = h[0] + h[1]; }\n"
"  });\n"
"  document.getElementById('matched').textContent = term ?\n"
"    'Matched: ' + (100 * covered / total).toFixed(2) + '%' : '';\n"
"}\n"
"window.addEventListener('load', function () {\n"
"  FRAMES = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  var details = document.getElementById('details');\n"
"  FRAMES.forEach(function (g) {\n"
"    var title = g.querySelector('title').textContent;\n"
"    g.addEventListener('mouseover', function () { details.textContent = title; });\n"
"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"    g.addEventListener('click', function () { zoom(g); });\n"
"  });\n"
"  document.getElementById('unzoom').addEventListener('click', function () {\n"
"    zoom(FRAMES[0]);\n"
"  });\n"
"  var box = document.getElementById('search');\n"
"  if (box) box.addEventListener('input', function () { search(box.value); });\n"
"});\n";

static void put_header(struct svg *g, const struct vg_stacks_meta *m, double height)
{
	char title[200];

	if (m && m->pid)
		snprintf(title, sizeof(title), "vigil profile: pid %" PRId32 " (%.100s)%s%.40s",
			 m->pid, m->comm ? m->comm : "?", m->event ? ", " : "",
			 m->event ? m->event : "");
	else if (m && m->comm)   /* several processes: comm names them */
		snprintf(title, sizeof(title), "vigil profile: %.120s%s%.40s", m->comm,
			 m->event ? ", " : "", m->event ? m->event : "");
	else
		snprintf(title, sizeof(title), "vigil profile");
	fprintf(g->out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>\n"
		"text { font-family: Verdana, sans-serif; font-size: %dpx; fill: rgb(0,0,0); }\n"
		"g.f text { pointer-events: none; }\n"
		"g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; }\n"
		"g.anc rect { opacity: 0.5; }\n"
		"#title { font-size: 17px; }\n"
		"#unzoom { cursor: pointer; opacity: 0; }\n"
		"input { font: 12px Verdana, sans-serif; width: 240px; }\n"
		"</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n"
		"var IMAGE_W = %.1f, PAD_X = %.1f, CHAR_W = %.3f;\n%s]]></script>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(248,248,240)\"/>\n"
		"<text id=\"title\" x=\"%.1f\" y=\"22\" text-anchor=\"middle\">",
		IMAGE_W, height, IMAGE_W, height, FONT_SIZE, IMAGE_W, PAD_X, CHAR_W, script,
		IMAGE_W / 2);
	put_text(g->out, title, 0);
	fprintf(g->out, "</text>\n"
		"<text id=\"unzoom\" x=\"%.1f\" y=\"44\">Reset Zoom</text>\n"
		"<foreignObject x=\"%.1f\" y=\"28\" width=\"260\" height=\"24\">"
		"<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
		"placeholder=\"search (regex)\"/></foreignObject>\n"
		"<text id=\"matched\" x=\"%.1f\" y=\"44\" text-anchor=\"end\"> </text>\n",
		PAD_X, IMAGE_W - PAD_X - 260 - 110, IMAGE_W - PAD_X);
}

int vg_svg_write(FILE *out, const struct vg_stacks *s, const struct vg_stack_write_opts *o,
		 struct vg_error *err)
{
	const struct vg_stacks_meta *meta = o ? o->meta : NULL;
	struct svg g = {.out = out};
	struct vg_stacks *v;
	const struct vg_stack_thread *all;
	double height;
	int rc = vg_stacks_by_function(s, true, &v, err);

	if (rc < 0)
		return rc;
	g.v = v;
	g.total = vg_stacks_total(v);
	for (size_t i = 0; i < vg_stacks_n_nodes(v); i++)
		if (vg_stacks_node(v, (uint32_t)i)->depth > g.max_depth)
			g.max_depth = vg_stacks_node(v, (uint32_t)i)->depth;
	height = TOP + (double)(g.max_depth + 1) * FRAME_H + BOTTOM;
	errno = 0;
	put_header(&g, meta, height);
	all = vg_stacks_thread(v, 0);
	if (all && g.total)
		rc = frame(&g, all->root, 0);
	else
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">no samples</text>\n",
			IMAGE_W / 2, TOP + FRAME_H);
	fprintf(out, "<text id=\"details\" x=\"%.1f\" y=\"%.1f\"> </text>\n", PAD_X,
		height - 12);
	if (g.omitted)
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%zu frames "
			"narrower than %.1f px not drawn</text>\n", IMAGE_W - PAD_X,
			height - 12, g.omitted, MIN_WIDTH);
	fputs("</svg>\n", out);
	vg_stacks_free(v);
	if (rc < 0)
		return vg_error_set(err, rc, "cannot write the flame graph: out of memory");
	if (fflush(out) != 0 || ferror(out))
		return vg_error_set(err, errno ? -errno : -EIO,
				    "cannot write the flame graph: %s",
				    strerror(errno ? errno : EIO));
	return 0;
}
