/* test_expr_parse.c - the expression parser of `vigil print` (user
 * input): each expression's tree written back as an S-expression, C
 * precedence, casts told from parenthesized names, scopes, and one clear
 * error (column, what was expected) for every malformed one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "expr/parse.h"

static const char *const op_names[] = {
	[VG_E_NUM] = "num", [VG_E_VAR] = "var", [VG_E_MEMBER] = ".", [VG_E_ARROW] = "->",
	[VG_E_INDEX] = "[]", [VG_E_DEREF] = "*", [VG_E_ADDR] = "&", [VG_E_NEG] = "neg",
	[VG_E_POS] = "pos", [VG_E_NOT] = "!", [VG_E_BITNOT] = "~", [VG_E_ADD] = "+",
	[VG_E_SUB] = "-", [VG_E_MUL] = "mul", [VG_E_DIV] = "/", [VG_E_MOD] = "%",
	[VG_E_SHL] = "<<", [VG_E_SHR] = ">>", [VG_E_AND] = "and", [VG_E_OR] = "|",
	[VG_E_XOR] = "^", [VG_E_CAST] = "cast", [VG_E_SIZEOF_EXPR] = "sizeof",
	[VG_E_SIZEOF_TYPE] = "sizeof-type",
};

static size_t dump(const struct vg_expr_node *n, char *buf, size_t size)
{
	size_t len = 0;

	switch (n->op) {
	case VG_E_NUM:
		return (size_t)snprintf(buf, size, "%llu", (unsigned long long)n->num);
	case VG_E_VAR:
		return (size_t)snprintf(buf, size, "%s%s%s", n->scope ? n->scope : "",
					n->scope ? ":" : "", n->name);
	default:
		break;
	}
	len += (size_t)snprintf(buf + len, size - len, "(%s", op_names[n->op]);
	if (n->op == VG_E_CAST || n->op == VG_E_SIZEOF_TYPE) {
		len += (size_t)snprintf(buf + len, size - len, " <%s", n->type.base);
		for (unsigned i = 0; i < n->type.n_ptr; i++)
			len += (size_t)snprintf(buf + len, size - len, "*");
		len += (size_t)snprintf(buf + len, size - len, ">");
	}
	if (n->a) {
		len += (size_t)snprintf(buf + len, size - len, " ");
		len += dump(n->a, buf + len, size - len);
	}
	if (n->name)
		len += (size_t)snprintf(buf + len, size - len, " %s", n->name);
	if (n->b) {
		len += (size_t)snprintf(buf + len, size - len, " ");
		len += dump(n->b, buf + len, size - len);
	}
	len += (size_t)snprintf(buf + len, size - len, ")");
	return len;
}

static void test_trees(void **state)
{
	static const struct { const char *in, *want; } cases[] = {
		{ "g_config", "g_config" },
		{ "  g_config  ", "g_config" },
		{ "cfg->limits.max", "(. (-> cfg limits) max)" },
		{ "a[i + 1].b", "(. ([] a (+ i 1)) b)" },
		{ "*p->next", "(* (-> p next))" },
		{ "&g_table[2]", "(& ([] g_table 2))" },
		{ "1 + 2 * 3", "(+ 1 (mul 2 3))" },
		{ "1 - 2 - 3", "(- (- 1 2) 3)" },
		{ "1 << 2 + 3", "(<< 1 (+ 2 3))" },
		{ "a | b & c ^ d", "(| a (^ (and b c) d))" },
		{ "-x * 2", "(mul (neg x) 2)" },
		{ "!x", "(! x)" },
		{ "~0x10", "(~ 16)" },
		{ "(struct conn *)0x55d0", "(cast <struct conn*> 21968)" },
		{ "*(struct node *)p", "(* (cast <struct node*> p))" },
		{ "(unsigned long)x", "(cast <unsigned long> x)" },
		{ "(size_t)x", "(cast <size_t> x)" },
		{ "(const char **)p", "(cast <char**> p)" },
		{ "(x)", "x" },
		{ "(x) - 1", "(- x 1)" },
		{ "(x)[2]", "([] x 2)" },
		{ "sizeof(struct config)", "(sizeof-type <struct config>)" },
		{ "sizeof g_table", "(sizeof g_table)" },
		{ "sizeof(g_table)", "(sizeof g_table)" },
		{ "sizeof(int) * 2", "(mul (sizeof-type <int>) 2)" },
		{ "libc.so.6:program_invocation_name", "libc.so.6:program_invocation_name" },
		{ "conn.c:count + 1", "(+ conn.c:count 1)" },
		{ "ns::inner::value", "ns::inner::value" },
		{ "010", "8" },
		{ "10UL", "10" },
		{ "p->a[1][2]", "([] ([] (-> p a) 1) 2)" },
	};
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vg_expr *e = NULL;
		struct vg_error err = { 0 };

		if (vg_expr_parse(cases[i].in, &e, &err) < 0)
			fail_msg("'%s': %s", cases[i].in, err.msg);
		dump(e->root, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("'%s': got %s, want %s", cases[i].in, buf, cases[i].want);
		vg_expr_free(e);
	}
}

/* The names a target's DWARF would call types, for the cast/parenthesis
 * ambiguity of C: "(my_t)*p" is a cast, "(n) * 2" a product. */
static bool fake_is_type(const char *name, void *ctx)
{
	(void)ctx;
	return strcmp(name, "my_t") == 0 || strcmp(name, "cfg_t") == 0 ||
	       strcmp(name, "ns::Type") == 0;
}

static void test_typedef_casts(void **state)
{
	static const struct { const char *in, *want, *untyped; } cases[] = {
		{ "(my_t)*p", "(cast <my_t> (* p))", "(mul my_t p)" },
		{ "(my_t) *p", "(cast <my_t> (* p))", "(mul my_t p)" },
		{ "(my_t)&x", "(cast <my_t> (& x))", "(and my_t x)" },
		{ "(my_t)-x", "(cast <my_t> (neg x))", "(- my_t x)" },
		{ "(my_t)+x", "(cast <my_t> (pos x))", "(+ my_t x)" },
		{ "(my_t)~x", "(cast <my_t> (~ x))", NULL },
		{ "(my_t)!x", "(cast <my_t> (! x))", NULL },
		{ "(my_t)**pp", "(cast <my_t> (* (* pp)))", "(mul my_t (* pp))" },
		{ "(cfg_t *)&x", "(cast <cfg_t*> (& x))", "(cast <cfg_t*> (& x))" },
		{ "-(int)x", "(neg (cast <int> x))", "(neg (cast <int> x))" },
		{ "(ns::Type)*p", "(cast <ns::Type> (* p))", "(mul ns::Type p)" },
		{ "*(ns::Type *)&x", "(* (cast <ns::Type*> (& x)))", "(* (cast <ns::Type*> (& x)))" },
		{ "(n) * 2", "(mul n 2)", "(mul n 2)" },
		{ "(n) - 1", "(- n 1)", "(- n 1)" },
		{ "(n)->next", "(-> n next)", "(-> n next)" },
		{ "(my_t)->x", "(-> my_t x)", "(-> my_t x)" },
		{ "(my_t)x", "(cast <my_t> x)", "(cast <my_t> x)" },
	};
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int typed = 0; typed < 2; typed++) {
			const char *want = typed ? cases[i].want : cases[i].untyped;
			struct vg_expr *e = NULL;
			struct vg_error err = { 0 };

			if (typed ? vg_expr_parse_typed(cases[i].in, fake_is_type, NULL, &e, &err) < 0
				  : vg_expr_parse(cases[i].in, &e, &err) < 0) {
				if (want)
					fail_msg("'%s' (%s): %s", cases[i].in, typed ? "typed" : "untyped", err.msg);
				continue;
			}
			dump(e->root, buf, sizeof(buf));
			if (!want || strcmp(buf, want) != 0)
				fail_msg("'%s' (%s): got %s, want %s", cases[i].in,
					 typed ? "typed" : "untyped", buf, want ? want : "an error");
			vg_expr_free(e);
		}
	}
}

static void test_spans(void **state)
{
	struct vg_expr *e = NULL;
	char buf[128];

	(void)state;
	assert_int_equal(vg_expr_parse("a->b->c.d", &e, NULL), 0);
	assert_string_equal(vg_expr_text(e, e->root, buf, sizeof(buf)), "a->b->c.d");
	assert_string_equal(vg_expr_text(e, e->root->a, buf, sizeof(buf)), "a->b->c");
	assert_string_equal(vg_expr_text(e, e->root->a->a, buf, sizeof(buf)), "a->b");
	vg_expr_free(e);
}

static void test_errors(void **state)
{
	static const struct { const char *in, *msg; } cases[] = {
		{ "", "empty expression" },
		{ "   ", "empty expression" },
		{ "g_config.", "g_config.: syntax error at the end: expected a member name after '.'" },
		{ "p->", "p->: syntax error at the end: expected a member name after '->'" },
		{ "a[1", "a[1: syntax error at the end: expected ']'" },
		{ "(a + 1", "(a + 1: syntax error at the end: expected ')'" },
		{ "a b", "a b: syntax error at column 3 ('b'): expected an operator or the end" },
		{ "1 +", "1 +: syntax error at the end: expected a variable, a number or '('" },
		{ "12abc", "12abc: syntax error at column 3 ('abc'): bad number" },
		{ "99999999999999999999", "99999999999999999999: syntax error at column 1 ('999999999999'): number out of range (at most 64 bits)" },
		{ "a = 1", "a = 1: syntax error at column 3 ('= 1'): expected an operator or the end" },
		{ "f(1)", "f(1): syntax error at column 2 ('(1)'): expected an operator or the end" },
		{ "(struct)x", "(struct)x: syntax error at column 8 (')x'): expected a name after the keyword" },
		{ "int", "int: syntax error at column 1 ('int'): expected a variable, a number or '('" },
		{ "$x", "$x: syntax error at column 1 ('$x'): expected a variable, a number or '('" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vg_expr *e = NULL;
		struct vg_error err = { 0 };
		int r = vg_expr_parse(cases[i].in, &e, &err);

		if (r != -EINVAL)
			fail_msg("'%s': returned %d, want -EINVAL", cases[i].in, r);
		assert_null(e);
		if (strcmp(err.msg, cases[i].msg) != 0)
			fail_msg("'%s': message '%s', want '%s'", cases[i].in, err.msg, cases[i].msg);
	}
}

static void test_deep_nesting(void **state)
{
	char buf[4096];
	struct vg_expr *e = NULL;
	struct vg_error err = { 0 };

	(void)state;
	memset(buf, '(', 1000);
	buf[1000] = 'x';
	memset(buf + 1001, ')', 1000);
	buf[2001] = '\0';
	assert_int_equal(vg_expr_parse(buf, &e, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nested too deeply"));
	memset(buf, '-', 3000);
	strcpy(buf + 3000, "x");
	assert_int_equal(vg_expr_parse(buf, &e, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trees),
		cmocka_unit_test(test_typedef_casts),
		cmocka_unit_test(test_spans),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_deep_nesting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
