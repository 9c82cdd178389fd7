/* parse.c - recursive descent over the expression text (parse.h). */
#include "expr/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

struct parser {
	struct vg_expr *e;
	const char *s;
	size_t pos;
	struct vg_error *err;
	int depth;
	bool failed;
	vg_expr_is_type_fn is_type;
	void *is_type_ctx;
};

#define MAX_DEPTH 200   /* "((((...": no stack overflow on hostile input */

static int fail(struct parser *p, size_t at, const char *what)
{
	/* A long expression is quoted by its start: the column says where. */
	const char *more = strlen(p->s) > 80 ? "..." : "";

	if (!p->failed) {
		if (p->s[at])
			vg_error_set(p->err, -EINVAL, "%.80s%s: syntax error at column %zu ('%.12s'): %s",
				     p->s, more, at + 1, p->s + at, what);
		else
			vg_error_set(p->err, -EINVAL, "%.80s%s: syntax error at the end: %s", p->s, more, what);
	}
	p->failed = true;
	return -EINVAL;
}

static void skip_space(struct parser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
		p->pos++;
}

static bool peek(struct parser *p, const char *tok)
{
	skip_space(p);
	return strncmp(p->s + p->pos, tok, strlen(tok)) == 0;
}

static bool accept(struct parser *p, const char *tok)
{
	if (!peek(p, tok))
		return false;
	p->pos += strlen(tok);
	return true;
}

static struct vg_expr_node *node(struct parser *p, enum vg_expr_op op, size_t start)
{
	struct vg_expr_node *n;

	if (p->failed)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n || VG_GROW(p->e->nodes, p->e->cap_nodes, p->e->n_nodes + 1) < 0) {
		free(n);
		vg_error_set(p->err, -ENOMEM, "out of memory parsing an expression");
		p->failed = true;
		return NULL;
	}
	p->e->nodes[p->e->n_nodes++] = n;
	n->op = op;
	n->start = start;
	n->end = p->pos;
	return n;
}

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* NAME, with C++ '::' parts and a '~' of a destructor never needed. */
static char *identifier(struct parser *p)
{
	size_t start;

	skip_space(p);
	start = p->pos;
	if (!ident_start(p->s[p->pos]))
		return NULL;
	for (;;) {
		while (ident_char(p->s[p->pos]))
			p->pos++;
		if (p->s[p->pos] == ':' && p->s[p->pos + 1] == ':' && ident_start(p->s[p->pos + 2]))
			p->pos += 2;
		else
			break;
	}
	return strndup(p->s + start, p->pos - start);
}

static bool is_keyword(const char *w)
{
	static const char *const kw[] = { "struct", "union", "enum", "class", "unsigned",
		"signed", "short", "long", "int", "char", "float", "double", "void", "_Bool",
		"bool", "const", "volatile", "sizeof" };

	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (strcmp(w, kw[i]) == 0)
			return true;
	return false;
}

static bool word_at(struct parser *p, size_t at, const char *w)
{
	size_t n = strlen(w);

	return strncmp(p->s + at, w, n) == 0 && !ident_char(p->s[at + n]);
}

/* A type name at p->pos (after '(' or sizeof '(').  Returns 1 and fills
 * tn when one is there, 0 (position unchanged) when it is not a type. */
static int type_name(struct parser *p, struct vg_expr_typename *tn, bool need_star_or_follow)
{
	static const char *const base_words[] = { "unsigned", "signed", "short", "long",
		"int", "char", "float", "double", "void", "_Bool", "bool" };
	size_t save = p->pos;
	char buf[256] = "";
	size_t n = 0;
	bool any = false;

	skip_space(p);
	while (word_at(p, p->pos, "const") || word_at(p, p->pos, "volatile")) {
		p->pos += word_at(p, p->pos, "const") ? 5 : 8;
		skip_space(p);
	}
	for (const char *const *kw = (const char *const[]){ "struct", "union", "enum", "class", NULL }; *kw; kw++) {
		if (word_at(p, p->pos, *kw)) {
			char *id;

			p->pos += strlen(*kw);
			id = identifier(p);
			if (!id) {
				fail(p, p->pos, "expected a name after the keyword");
				return -EINVAL;
			}
			snprintf(buf, sizeof(buf), "%s %s", *kw, id);
			free(id);
			any = true;
			break;
		}
	}
	if (!any) {
		for (;;) {
			bool hit = false;

			skip_space(p);
			for (size_t i = 0; i < sizeof(base_words) / sizeof(base_words[0]); i++) {
				if (word_at(p, p->pos, base_words[i])) {
					n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " " : "", base_words[i]);
					p->pos += strlen(base_words[i]);
					hit = any = true;
					break;
				}
			}
			if (!hit || n >= sizeof(buf) - 1)
				break;
		}
	}
	if (!any) {
		/* A typedef name is a type only where the context says so. */
		size_t at = p->pos;
		char *id = identifier(p);
		size_t after;

		if (!id || is_keyword(id)) {
			free(id);
			p->pos = save;
			return 0;
		}
		skip_space(p);
		after = p->pos;
		/* sizeof(NAME) is an expression; eval.c falls back to a type. */
		if (!need_star_or_follow && p->s[after] != '*') {
			free(id);
			p->pos = save;
			return 0;
		}
		if (need_star_or_follow && p->s[after] != '*') {
			const char *q = p->s + after;

			if (*q != ')') {
				free(id);
				p->pos = save;
				return 0;
			}
			q++;
			while (*q == ' ' || *q == '\t')
				q++;
			/* "(T)*p" or "(n) * 2": only the target's types can tell;
			 * "->" after ')' is never a cast. */
			if (!(isalnum((unsigned char)*q) || *q == '_' || *q == '(') &&
			    !(*q && strchr("*&-+~!", *q) && !(q[0] == '-' && q[1] == '>') &&
			      p->is_type && p->is_type(id, p->is_type_ctx))) {
				free(id);
				p->pos = save;
				return 0;
			}
		}
		(void)at;
		snprintf(buf, sizeof(buf), "%s", id);
		free(id);
	}
	while (word_at(p, p->pos, "const") || word_at(p, p->pos, "volatile"))
		p->pos += word_at(p, p->pos, "const") ? 5 : 8;
	tn->n_ptr = 0;
	while (accept(p, "*")) {
		tn->n_ptr++;
		skip_space(p);
		while (word_at(p, p->pos, "const") || word_at(p, p->pos, "volatile")) {
			p->pos += word_at(p, p->pos, "const") ? 5 : 8;
			skip_space(p);
		}
	}
	tn->base = strdup(buf);
	if (!tn->base) {
		vg_error_set(p->err, -ENOMEM, "out of memory parsing an expression");
		p->failed = true;
		return -ENOMEM;
	}
	return 1;
}

static struct vg_expr_node *expr(struct parser *p, int min_prec);
static struct vg_expr_node *unary(struct parser *p);

static struct vg_expr_node *number(struct parser *p)
{
	size_t start = p->pos;
	const char *s = p->s + p->pos;
	char *end;
	unsigned long long v;
	struct vg_expr_node *n;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE) {
		fail(p, start, "number out of range (at most 64 bits)");
		return NULL;
	}
	/* C suffixes change nothing here. */
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	if (ident_char(*end)) {
		fail(p, (size_t)(end - p->s), "bad number");
		return NULL;
	}
	p->pos = (size_t)(end - p->s);
	n = node(p, VG_E_NUM, start);
	if (n)
		n->num = v;
	return n;
}

/* "libc.so.6:name" or "conn.c:name": the scope, if one is written here. */
static char *scope_prefix(struct parser *p)
{
	size_t i = p->pos;

	while (isalnum((unsigned char)p->s[i]) || (p->s[i] && strchr("_.+-/", p->s[i])))
		i++;
	if (i == p->pos || p->s[i] != ':' || p->s[i + 1] == ':' || !ident_start(p->s[i + 1]))
		return NULL;
	char *scope = strndup(p->s + p->pos, i - p->pos);

	p->pos = i + 1;
	return scope;
}

static struct vg_expr_node *primary(struct parser *p)
{
	size_t start;
	struct vg_expr_node *n;
	char *scope, *id;

	skip_space(p);
	start = p->pos;
	if (isdigit((unsigned char)p->s[p->pos]))
		return number(p);
	if (accept(p, "(")) {
		n = expr(p, 0);
		if (!n)
			return NULL;
		if (!accept(p, ")")) {
			fail(p, p->pos, "expected ')'");
			return NULL;
		}
		/* The span includes the parentheses. */
		n->start = start;
		n->end = p->pos;
		return n;
	}
	scope = scope_prefix(p);
	id = identifier(p);
	if (!id || is_keyword(id)) {
		free(scope);
		free(id);
		fail(p, start, "expected a variable, a number or '('");
		return NULL;
	}
	n = node(p, VG_E_VAR, start);
	if (!n) {
		free(scope);
		free(id);
		return NULL;
	}
	n->name = id;
	n->scope = scope;
	return n;
}

static struct vg_expr_node *postfix(struct parser *p)
{
	size_t start;
	struct vg_expr_node *n;

	skip_space(p);
	start = p->pos;
	n = primary(p);
	while (n) {
		enum vg_expr_op op;
		struct vg_expr_node *m;

		if (accept(p, "->"))
			op = VG_E_ARROW;
		else if (accept(p, "."))
			op = VG_E_MEMBER;
		else if (accept(p, "["))
			op = VG_E_INDEX;
		else
			break;
		if (op == VG_E_INDEX) {
			struct vg_expr_node *i = expr(p, 0);

			if (!i)
				return NULL;
			if (!accept(p, "]")) {
				fail(p, p->pos, "expected ']'");
				return NULL;
			}
			m = node(p, op, start);
			if (!m)
				return NULL;
			m->a = n;
			m->b = i;
		} else {
			char *id = identifier(p);

			if (!id) {
				fail(p, p->pos, op == VG_E_ARROW ? "expected a member name after '->'"
								 : "expected a member name after '.'");
				return NULL;
			}
			m = node(p, op, start);
			if (!m) {
				free(id);
				return NULL;
			}
			m->a = n;
			m->name = id;
		}
		n = m;
	}
	return n;
}

static struct vg_expr_node *unary(struct parser *p)
{
	static const struct { const char *tok; enum vg_expr_op op; } ops[] = {
		{ "-", VG_E_NEG }, { "+", VG_E_POS }, { "~", VG_E_BITNOT }, { "!", VG_E_NOT },
		{ "*", VG_E_DEREF }, { "&", VG_E_ADDR },
	};
	struct vg_expr_node *n, *a;
	size_t start;

	if (++p->depth > MAX_DEPTH) {
		fail(p, p->pos, "expression nested too deeply");
		return NULL;
	}
	skip_space(p);
	start = p->pos;
	if (word_at(p, p->pos, "sizeof")) {
		struct vg_expr_typename tn = { 0 };
		size_t save;

		p->pos += 6;
		save = p->pos;
		if (accept(p, "(")) {
			int r = type_name(p, &tn, false);

			if (r < 0)
				return NULL;
			if (r > 0) {
				if (!accept(p, ")")) {
					free(tn.base);
					fail(p, p->pos, "expected ')' after the type");
					return NULL;
				}
				n = node(p, VG_E_SIZEOF_TYPE, start);
				if (!n)
					free(tn.base);
				else
					n->type = tn;
				p->depth--;
				return n;
			}
			p->pos = save;
		}
		a = unary(p);
		n = a ? node(p, VG_E_SIZEOF_EXPR, start) : NULL;
		if (n)
			n->a = a;
		p->depth--;
		return n;
	}
	if (peek(p, "(")) {
		struct vg_expr_typename tn = { 0 };
		size_t save = p->pos;
		int r;

		p->pos++;
		r = type_name(p, &tn, true);
		if (r < 0)
			return NULL;
		if (r > 0) {
			if (!accept(p, ")")) {
				free(tn.base);
				fail(p, p->pos, "expected ')' after the type of a cast");
				return NULL;
			}
			a = unary(p);
			n = a ? node(p, VG_E_CAST, start) : NULL;
			if (!n) {
				free(tn.base);
				return NULL;
			}
			n->type = tn;
			n->a = a;
			p->depth--;
			return n;
		}
		p->pos = save;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		/* "->" is not a minus. */
		if (peek(p, ops[i].tok) && !peek(p, "->")) {
			p->pos += strlen(ops[i].tok);
			a = unary(p);
			n = a ? node(p, ops[i].op, start) : NULL;
			if (n)
				n->a = a;
			p->depth--;
			return n;
		}
	}
	n = postfix(p);
	p->depth--;
	return n;
}

static const struct { const char *tok; enum vg_expr_op op; int prec; } binops[] = {
	{ "<<", VG_E_SHL, 4 }, { ">>", VG_E_SHR, 4 },
	{ "|", VG_E_OR, 1 }, { "^", VG_E_XOR, 2 }, { "&", VG_E_AND, 3 },
	{ "+", VG_E_ADD, 5 }, { "-", VG_E_SUB, 5 },
	{ "*", VG_E_MUL, 6 }, { "/", VG_E_DIV, 6 }, { "%", VG_E_MOD, 6 },
};

static struct vg_expr_node *expr(struct parser *p, int min_prec)
{
	size_t start;
	struct vg_expr_node *lhs;

	skip_space(p);
	start = p->pos;
	lhs = unary(p);
	while (lhs) {
		size_t i;

		for (i = 0; i < sizeof(binops) / sizeof(binops[0]); i++)
			if (peek(p, binops[i].tok) && binops[i].prec >= min_prec)
				break;
		if (i == sizeof(binops) / sizeof(binops[0]))
			break;
		p->pos += strlen(binops[i].tok);
		struct vg_expr_node *rhs = expr(p, binops[i].prec + 1);
		struct vg_expr_node *n = rhs ? node(p, binops[i].op, start) : NULL;

		if (!n)
			return NULL;
		n->a = lhs;
		n->b = rhs;
		lhs = n;
	}
	return lhs;
}

int vg_expr_parse(const char *text, struct vg_expr **out, struct vg_error *err)
{
	return vg_expr_parse_typed(text, NULL, NULL, out, err);
}

int vg_expr_parse_typed(const char *text, vg_expr_is_type_fn is_type, void *ctx,
			struct vg_expr **out, struct vg_error *err)
{
	struct parser p = { .s = text, .err = err, .is_type = is_type, .is_type_ctx = ctx };
	struct vg_expr *e;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->text = strdup(text))) {
		free(e);
		return vg_error_set(err, -ENOMEM, "out of memory parsing an expression");
	}
	p.e = e;
	p.s = e->text;
	skip_space(&p);
	if (!p.s[p.pos]) {
		vg_expr_free(e);
		return vg_error_set(err, -EINVAL, "empty expression");
	}
	e->root = expr(&p, 0);
	skip_space(&p);
	if (e->root && p.s[p.pos])
		fail(&p, p.pos, "expected an operator or the end");
	if (p.failed || !e->root) {
		int r = err && err->code ? err->code : -EINVAL;

		vg_expr_free(e);
		return r;
	}
	*out = e;
	return 0;
}

struct vg_expr *vg_expr_free(struct vg_expr *e)
{
	if (!e)
		return NULL;
	for (size_t i = 0; i < e->n_nodes; i++) {
		free(e->nodes[i]->name);
		free(e->nodes[i]->scope);
		free(e->nodes[i]->type.base);
		free(e->nodes[i]);
	}
	free(e->nodes);
	free(e->text);
	free(e);
	return NULL;
}

char *vg_expr_text(const struct vg_expr *e, const struct vg_expr_node *n, char *buf, size_t size)
{
	size_t len = n->end - n->start;
	const char *s = e->text + n->start;

	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	snprintf(buf, size, "%.*s", (int)len, s);
	return buf;
}
