/* filter.c - vigil probe --filter: 'arg0 == 5 && len > 4096' parsed into
 * the comparisons the entry program evaluates (bpf.h, struct
 * vg_bpf_filter_term).  A term is LHS OP NUMBER: LHS is argN (0-5, as
 * bpftrace numbers them: arg0 is rdi) or a parameter's DWARF name; OP is
 * one of == != < <= > >=; NUMBER is decimal or 0x hex, negative for a
 * signed parameter.  Terms are joined by && (at most four).  Each term
 * compares the register as the parameter's type holds it (its size,
 * signed or not); an argN with no DWARF type is the raw 64-bit register,
 * unsigned. */
#include "probe/filter.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/number.h"


static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int parse_op(const char **pp, uint32_t *op)
{
	static const struct { const char *s; uint32_t op; } ops[] = {
		{ "==", VG_FILTER_EQ }, { "!=", VG_FILTER_NE }, { "<=", VG_FILTER_LE },
		{ ">=", VG_FILTER_GE }, { "<", VG_FILTER_LT }, { ">", VG_FILTER_GT },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(*pp, ops[i].s, strlen(ops[i].s))) {
			*pp += strlen(ops[i].s);
			*op = ops[i].op;
			return 0;
		}
	return -1;
}

/* The parameter LHS names: argN or a DWARF name. */
static int lhs_param(const char *name, const struct vg_sym_param *params, size_t n_params,
		     struct vg_sym_param *out, struct vg_error *err)
{
	if (!strncmp(name, "arg", 3) && name[3] >= '0' && name[3] <= '5' && !name[4]) {
		unsigned reg = (unsigned)(name[3] - '0');

		*out = (struct vg_sym_param){ .kind = VG_PARAM_UNKNOWN, .size = 8, .reg = reg };
		for (size_t i = 0; i < n_params; i++)
			if (params[i].reg == reg)
				*out = params[i];
		return 0;
	}
	for (size_t i = 0; i < n_params; i++)
		if (params[i].name[0] && !strcmp(params[i].name, name)) {
			*out = params[i];
			return 0;
		}
	{
		char names[256] = "";
		size_t len = 0;

		for (size_t i = 0; i < n_params && len < sizeof(names); i++)
			if (params[i].name[0])
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
							len ? ", " : "", params[i].name);
		return vg_error_set(err, -EINVAL, "--filter: no parameter '%s' (%s%s; or arg0..arg5)",
				    name, len ? "the function's parameters: " : "no DWARF parameter names",
				    names);
	}
}

int vg_probe_filter_parse(const char *expr, const struct vg_sym_param *params, size_t n_params,
			  struct vg_bpf_filter_term *terms, size_t *n, struct vg_error *err)
{
	const char *p = expr;

	*n = 0;
	for (;;) {
		char name[64], num[32];
		size_t len = 0;
		struct vg_sym_param param = { .size = 8 };
		struct vg_bpf_filter_term *t;
		bool neg = false;
		uint64_t v;
		uint32_t op;
		int r;

		p = skip_space(p);
		while ((isalnum((unsigned char)*p) || *p == '_') && len + 1 < sizeof(name))
			name[len++] = *p++;
		name[len] = '\0';
		if (!len || isdigit((unsigned char)name[0]))
			return vg_error_set(err, -EINVAL, "--filter '%s': expected argN or a parameter "
					    "name at '%s'", expr, p);
		p = skip_space(p);
		if (parse_op(&p, &op) < 0)
			return vg_error_set(err, -EINVAL, "--filter '%s': expected ==, !=, <, <=, > or >= "
					    "after '%s'", expr, name);
		p = skip_space(p);
		if (*p == '-') {
			neg = true;
			p++;
		}
		for (len = 0; isalnum((unsigned char)*p) && len + 1 < sizeof(num); )
			num[len++] = *p++;
		num[len] = '\0';
		if (!len || vg_parse_u64(num, 0, &v) < 0)
			return vg_error_set(err, -EINVAL, "--filter '%s': expected a number (decimal or "
					    "0xHEX) after '%s'", expr, name);
		r = lhs_param(name, params, n_params, &param, err);
		if (r < 0)
			return r;
		if (neg && (param.kind != VG_PARAM_SIGNED || v > (uint64_t)INT64_MAX + 1))
			return vg_error_set(err, -EINVAL, "--filter '%s': '%s' is %s: it holds no -%s",
					    expr, name, param.kind == VG_PARAM_SIGNED ? "signed" : "not signed", num);
		if (*n == VG_BPF_FILTER_MAX_TERMS)
			return vg_error_set(err, -EINVAL, "--filter '%s': at most %d terms joined by &&",
					    expr, VG_BPF_FILTER_MAX_TERMS);
		t = &terms[(*n)++];
		t->reg = param.reg < 6 ? param.reg : 0;
		t->bits = param.size && param.size < 8 ? param.size * 8u : 64u;
		t->is_signed = param.kind == VG_PARAM_SIGNED;
		t->op = op;
		t->value = neg ? (uint64_t)0 - v : v;
		p = skip_space(p);
		if (!*p)
			return 0;
		if (p[0] != '&' || p[1] != '&')
			return vg_error_set(err, -EINVAL, "--filter '%s': expected && or the end at '%s'",
					    expr, p);
		p += 2;
	}
}
