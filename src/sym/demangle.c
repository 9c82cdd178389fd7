/* demangle.c - mangled C++ and Rust names to readable ones, through
 * libiberty's cplus_demangle (binutils, gdb).
 *
 * The output is meant to read like llvm-symbolizer-14's, which the --style
 * llvm batch format reproduces.  libiberty and LLVM's demangler agree on
 * most names; the differences that occur in real code are rewritten after
 * libiberty, which leaves 78 of libstdc++'s 5891 exported names spelled
 * differently from llvm-cxxfilt-14 (69 of them transaction clones):
 *   clone suffixes   "f() [clone .cold] [clone .1]"  ->  "f() (.cold.1)"
 *   nullptr_t        "decltype(nullptr)"             ->  "std::nullptr_t"
 *   operator< <T>    "operator<< <A>(A, int)"        ->  "operator<<<A>(A, int)"
 *   closures         "main::{lambda(int)#2}"         ->  "main::'lambda0'(int)"
 *                    "A::{unnamed type#1}"           ->  "A::'unnamed'"
 *   generic lambdas  "{lambda(auto:1)#1}"            ->  "'lambda'(auto)"
 * and a suffix libiberty refuses ("_ZN3foo3barE.cold", "_Z1fv.A") or drops
 * (Rust v0 "_RNvC1a1f.llvm.7") is printed after the name as LLVM does:
 * "foo::bar (.cold)", "a::f (.llvm.7)".
 * Rust legacy names ("_ZN...17h<16 hex>E") deliberately differ from
 * llvm-symbolizer-14, which does not know them and prints
 * "Point$LT$T$GT$::sum::h49194c8c1cb59da7": libiberty (auto style) tries Rust
 * first and prints "Point<T>::sum" without the hash, like rustfilt.
 * Not rewritten (rare, and LLVM 14 is the odd one out): vector types, GCC
 * transaction clones (LLVM leaves them mangled), ABI-tagged constructors
 * (LLVM 14 prints "failure[abi:cxx11]::(...)").
 *
 * Only "_Z" and "_R" prefixes are demangled.  "__Z" is Mach-O's extra
 * underscore, which ELF has not; llvm-symbolizer prints such a name as is.
 *
 * Names come from target-controlled ELF files.  libiberty keeps its
 * recursion limit (DMGL_NO_RECURSE_LIMIT is never passed), with which it
 * also refuses Itanium names over 1024 bytes (its arrays live on the stack,
 * 2 per input byte; GCC PR 87675): those stay mangled, where LLVM would
 * demangle them.  None of libstdc++'s or LLVM's 44k exported names is that
 * long.  Rust v0 names have no such bound in libiberty, so every input is
 * capped at VG_DEMANGLE_MAX_INPUT bytes before libiberty sees it. */
#include "sym/demangle.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

/* Longer names are not demangled at all (libiberty itself stops Itanium
 * names at 1024 bytes). */
#define VG_DEMANGLE_MAX_INPUT 4096

/* DMGL_AUTO: libiberty tries Rust (legacy and v0) before Itanium, since
 * legacy Rust names are valid Itanium names too.  No DMGL_VERBOSE: it would
 * print Rust crate hashes ("core[c1f1a4ba060b9bfa]::fmt") and legacy hashes. */
#define DMGL_OPTS (DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO)

_Static_assert((DMGL_OPTS & DMGL_NO_RECURSE_LIMIT) == 0,
	       "libiberty's recursion limit must stay on");

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Replace every `from` by the shorter-or-equal `to`, in place. */
static void replace_all(char *s, const char *from, const char *to)
{
	size_t from_len = strlen(from), to_len = strlen(to);
	char *r = s, *w = s;

	while (*r) {
		if (strncmp(r, from, from_len) == 0) {
			memmove(w, to, to_len);
			w += to_len;
			r += from_len;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

/* "f() [clone .part.0] [clone .cold]" -> "f() (.part.0.cold)": libiberty
 * prints one bracket per clone step, LLVM the whole suffix once.
 * libiberty's groups are " [clone .X]" with no bracket in X, but an
 * identifier may hold any byte ("_Z13x [clone a]b]" is "x [clone a]b]"):
 * only groups of that exact shape are joined, so that the copy below,
 * which skips from one ']' to the next group, stays inside the string. */
static void join_clone_suffixes(char *s)
{
	static const char open[] = " [clone ";
	const size_t open_len = sizeof(open) - 1;
	char *first = NULL, *w;
	size_t len = strlen(s);

	/* Peel " [clone .X]" groups from the end to find where they start. */
	while (len > open_len + 1 && s[len - 1] == ']') {
		char *bracket = memrchr(s, '[', len);
		char *g;

		if (!bracket || bracket == s)
			break;
		g = bracket - 1;
		if (strncmp(g, open, open_len) != 0 || g[open_len] != '.' ||
		    memchr(bracket, ']', (size_t)(s + len - 1 - bracket)))
			break;
		first = g;
		len = (size_t)(g - s);
	}
	if (!first)
		return;
	w = first;
	*w++ = ' ';
	*w++ = '(';
	for (char *r = first; *r;) {
		/* r is at " [clone .X]" */
		r += open_len;
		while (*r != ']')
			*w++ = *r++;
		r++;
	}
	*w++ = ')';
	*w = '\0';
}

/* The closing ")#N}" of the "{lambda(" at s: index of its ')' and *n = N,
 * or 0 when it is not a well-formed closure name. */
static size_t lambda_close(const char *s, unsigned long *n)
{
	size_t depth = 0, i = strlen("{lambda");

	for (; s[i]; i++) {
		if (s[i] == '(') {
			depth++;
		} else if (s[i] == ')' && --depth == 0) {
			char *end;

			if (s[i + 1] != '#' || !isdigit((unsigned char)s[i + 2]))
				return 0;
			*n = strtoul(s + i + 2, &end, 10);
			return *end == '}' && end - (s + i + 2) <= 6 && *n >= 1
				? i : 0;
		}
	}
	return 0;
}

/* libiberty numbers closures from 1 ("{lambda()#1}", "{lambda()#2}"),
 * LLVM prints the mangled discriminator ("'lambda'()", "'lambda0'()"). */
static void put_closure_name(char **w, const char *kind, unsigned long n)
{
	*w += n >= 2 ? sprintf(*w, "'%s%lu'", kind, n - 2)
		     : sprintf(*w, "'%s'", kind);
}

/* "{lambda(P)#N}" -> "'lambdaK'(P)", "{unnamed type#N}" -> "'unnamedK'".
 * Every rewrite shortens the text, so it is done in place through a copy
 * of the input; closers of nested lambdas wait on a small stack. */
static void llvm_closure_names(char *s)
{
	static const char unnamed[] = "{unnamed type#";
	size_t closers[16], depth = 0, len = strlen(s);
	char *in, *w = s;

	if (!strstr(s, "{lambda(") && !strstr(s, unnamed))
		return;
	in = strdup(s);
	if (!in)
		return;
	for (size_t r = 0; r < len;) {
		unsigned long n;
		size_t close;
		char *end;

		if (depth && r == closers[depth - 1]) {
			*w++ = ')';
			r = (size_t)(strchr(in + r, '}') - in) + 1;
			depth--;
		} else if (strncmp(in + r, "{lambda(", 8) == 0 &&
			   depth < sizeof(closers) / sizeof(closers[0]) &&
			   (close = lambda_close(in + r, &n)) != 0) {
			closers[depth++] = r + close;
			put_closure_name(&w, "lambda", n);
			*w++ = '(';
			r += 8;
		} else if (strncmp(in + r, unnamed, sizeof(unnamed) - 1) == 0 &&
			   isdigit((unsigned char)in[r + sizeof(unnamed) - 1]) &&
			   (n = strtoul(in + r + sizeof(unnamed) - 1, &end, 10)) >= 1 &&
			   *end == '}' && end - (in + r) <= 24) {
			put_closure_name(&w, "unnamed", n);
			r = (size_t)(end - in) + 1;
		} else {
			*w++ = in[r++];
		}
	}
	*w = '\0';
	free(in);
}

/* Generic lambdas' parameters: libiberty "auto:1", LLVM "auto". */
static void drop_auto_numbers(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		if (strncmp(r, "auto:", 5) == 0 && isdigit((unsigned char)r[5])) {
			memmove(w, "auto", 4);
			w += 4;
			r += 5;
			while (isdigit((unsigned char)*r))
				r++;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

static void llvm_style(char *s)
{
	join_clone_suffixes(s);
	llvm_closure_names(s);
	drop_auto_numbers(s);
	replace_all(s, "decltype(nullptr)", "std::nullptr_t");
	/* libiberty spaces a template list after an operator ending in '<'. */
	replace_all(s, "operator<< <", "operator<<<");
	replace_all(s, "operator< <", "operator<<");
}

/* Demangle name[0..len) and print " (SUFFIX)" after it, SUFFIX being
 * name + len, which starts with the '.'.  NULL when the head does not
 * demangle. */
static char *demangle_with_suffix(const char *name, size_t len)
{
	const char *suffix = name + len;
	size_t suffix_len = strlen(suffix);
	char *head, *out, *joined;
	size_t out_len;

	head = strndup(name, len);
	if (!head)
		return NULL;
	out = cplus_demangle(head, DMGL_OPTS);
	free(head);
	if (!out)
		return NULL;
	out_len = strlen(out);
	joined = malloc(out_len + suffix_len + 4);
	if (joined) {
		memcpy(joined, out, out_len);
		joined[out_len] = ' ';
		joined[out_len + 1] = '(';
		memcpy(joined + out_len + 2, suffix, suffix_len);
		joined[out_len + 2 + suffix_len] = ')';
		joined[out_len + 3 + suffix_len] = '\0';
	}
	free(out);
	return joined;
}

/* libiberty does not enter an unnamed type ("Ut_", "UtN_") among the
 * substitution candidates, so every later S<n>_ of the name points one
 * candidate off ("_ZSt10__exchangeIiNSt8ios_baseUt_EET_RS2_OT0_": its
 * first parameter is int&, libiberty says ios_base::{unnamed type#1}&).
 * The ABI makes an <unnamed-type-name> an <unqualified-name> like any
 * <source-name>, so each one is renamed to a source name libiberty does
 * count ("14__vg_unnamed_1"), and its text put back afterwards.  Kept only
 * when libiberty found unnamed types in the original too, and the rewrite
 * demangles (a "Ut_" inside an identifier breaks its length prefix). */
#define UNNAMED_MARK "__vg_unnamed_"

static char *demangle_unnamed(const char *name)
{
	size_t len = strlen(name), cap = len * 4 + 1, w = 0;
	char *m = malloc(cap), *out, *fixed;
	const char *r;
	size_t n_marks = 0;

	if (!m)
		return NULL;
	for (r = name; *r && w + 40 < cap;) {
		unsigned long k = 0;
		const char *d = r + 2;
		char mark[40];
		int ml;

		if (r[0] == 'U' && r[1] == 't') {
			while (isdigit((unsigned char)*d))
				d++;
			if (*d == '_') {
				if (d > r + 2)
					k = strtoul(r + 2, NULL, 10) + 1;
				ml = snprintf(mark, sizeof(mark), UNNAMED_MARK "%lu", k + 1);
				w += (size_t)sprintf(m + w, "%d%s", ml, mark);
				r = d + 1;
				n_marks++;
				continue;
			}
		}
		m[w++] = *r++;
	}
	m[w] = '\0';
	if (*r || !n_marks) {
		free(m);
		return NULL;
	}
	out = cplus_demangle(m, DMGL_OPTS);
	free(m);
	if (!out || !strstr(out, UNNAMED_MARK)) {
		free(out);
		return NULL;
	}
	/* "__vg_unnamed_N" -> "{unnamed type#N}": at most 3 bytes longer each. */
	fixed = malloc(strlen(out) * 2 + 1);
	if (fixed) {
		char *o = fixed;

		for (const char *p = out; *p;) {
			if (strncmp(p, UNNAMED_MARK, sizeof(UNNAMED_MARK) - 1) == 0 &&
			    isdigit((unsigned char)p[sizeof(UNNAMED_MARK) - 1])) {
				char *end;
				unsigned long n = strtoul(p + sizeof(UNNAMED_MARK) - 1, &end, 10);

				o += sprintf(o, "{unnamed type#%lu}", n);
				p = end;
			} else {
				*o++ = *p++;
			}
		}
		*o = '\0';
	}
	free(out);
	return fixed;
}

char *vg_demangle(const char *name)
{
	const char *dot;
	char *out;

	if (!name || !(has_prefix(name, "_Z") || has_prefix(name, "_R")))
		return NULL;
	if (strnlen(name, VG_DEMANGLE_MAX_INPUT + 1) > VG_DEMANGLE_MAX_INPUT)
		return NULL;
	dot = strchr(name, '.');
	/* v0 names are [_0-9a-zA-Z] only: a '.' starts the suffix, which
	 * libiberty would drop silently. */
	if (name[1] == 'R')
		return dot ? demangle_with_suffix(name, (size_t)(dot - name))
			   : cplus_demangle(name, DMGL_OPTS);
	out = cplus_demangle(name, DMGL_OPTS);
	if (out && strstr(out, "{unnamed type#")) {
		char *fixed = demangle_unnamed(name);

		if (fixed) {
			free(out);
			out = fixed;
		}
	}
	if (out) {
		llvm_style(out);
		return out;
	}
	/* Suffixes libiberty's clone grammar refuses ("_ZN3foo3barE.cold"
	 * on a non-function, ".A"); LLVM demangles up to the first '.'. */
	if (dot && dot > name + 2) {
		out = demangle_with_suffix(name, (size_t)(dot - name));
		if (out)
			llvm_style(out);
	}
	return out;
}
