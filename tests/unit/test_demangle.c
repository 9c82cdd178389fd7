/* test_demangle.c - vg_demangle against what llvm-symbolizer-14 prints
 * (every C++ and Rust v0 expectation below is llvm-cxxfilt-14's output for
 * the mangled name beside it), Rust legacy names without their hash (as
 * rustfilt prints them), and NULL for everything that is not mangled.
 * The Rust names come from rustc 1.95 (-C symbol-mangling-version=v0 and the
 * default legacy mangling) on a small crate "t" and a std HashMap program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sym/demangle.h"

struct demangle_case {
	const char *mangled;
	const char *want;
};

static void check_cases(const struct demangle_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *got = vg_demangle(cases[i].mangled);

		if (!got)
			fail_msg("%s: got NULL, want '%s'", cases[i].mangled,
				 cases[i].want);
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("%s:\n got '%s'\nwant '%s'", cases[i].mangled,
				 got, cases[i].want);
		free(got);
	}
}

#define CHECK(cases) check_cases(cases, sizeof(cases) / sizeof(cases[0]))

static void test_cxx_functions(void **state)
{
	static const struct demangle_case cases[] = {
		{ "_ZN3foo3barEv", "foo::bar()" },
		{ "_Z4funcPFviE", "func(void (*)(int))" },
		{ "_ZN12_GLOBAL__N_13bazEv", "(anonymous namespace)::baz()" },
		{ "_ZZ4mainE1x", "main::x" },
		{ "_ZL6statici", "static(int)" },
		{ "_ZTV1A", "vtable for A" },
		{ "_ZTI1A", "typeinfo for A" },
		{ "_ZN3FooIA4_iE3barE", "Foo<int [4]>::bar" },
	};

	(void)state;
	CHECK(cases);
}

static void test_cxx_templates_and_std(void **state)
{
	static const struct demangle_case cases[] = {
		{ "_Z1fIiEvT_", "void f<int>(int)" },
		{ "_ZNKSt6vectorIiSaIiEE4sizeEv",
		  "std::vector<int, std::allocator<int> >::size() const" },
		{ "_ZSt4cout", "std::cout" },
		{ "_ZNSt8ios_base4InitC1Ev", "std::ios_base::Init::Init()" },
		{ "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC1EPKcRKS3_",
		  "std::__cxx11::basic_string<char, std::char_traits<char>, "
		  "std::allocator<char> >::basic_string(char const*, "
		  "std::allocator<char> const&)" },
		{ "_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
		  "std::basic_ostream<char, std::char_traits<char> >& "
		  "std::operator<<<std::char_traits<char> >(std::basic_ostream<char, "
		  "std::char_traits<char> >&, char const*)" },
		{ "_ZNSolsEDn", "std::ostream::operator<<(std::nullptr_t)" },
		{ "_Z10takes_nullDn", "takes_null(std::nullptr_t)" },
		/* An unnamed type is a substitution candidate (libiberty
		 * alone says ios_base::{unnamed type#1}& for RS2_). */
		{ "_ZSt10__exchangeIiNSt8ios_baseUt_EET_RS2_OT0_",
		  "int std::__exchange<int, std::ios_base::'unnamed'>(int&, std::ios_base::'unnamed'&&)" },
		{ "_ZN1AUt0_E", "A::'unnamed0'" },
		/* "Ut_" inside an identifier is not an unnamed type. */
		{ "_Z6fooUt_v", "fooUt_()" },
	};

	(void)state;
	CHECK(cases);
}

static void test_cxx_operators(void **state)
{
	static const struct demangle_case cases[] = {
		{ "_ZplRK1AS1_", "operator+(A const&, A const&)" },
		{ "_ZN1AcvbEv", "A::operator bool()" },
		{ "_ZN1AclEv", "A::operator()()" },
		{ "_Znwm", "operator new(unsigned long)" },
		{ "_ZdlPv", "operator delete(void*)" },
		/* libiberty spaces these ("operator<< <A>"), LLVM does not */
		{ "_ZlsI1AEbT_i", "bool operator<<<A>(A, int)" },
		{ "_ZltI1AEbT_l", "bool operator<<A>(A, long)" },
	};

	(void)state;
	CHECK(cases);
}

static void test_cxx_closures_and_clones(void **state)
{
	static const struct demangle_case cases[] = {
		{ "_ZZ4mainENKUlvE_clEv", "main::'lambda'()::operator()() const" },
		{ "_Z4callIZ4mainEUlidE0_EiT_",
		  "int call<main::'lambda0'(int, double)>(main::'lambda0'(int, double))" },
		{ "_Z4callIZZ4mainENKUliE4_clEiEUlidE0_EiT_",
		  "int call<main::'lambda4'(int)::operator()(int) const::"
		  "'lambda0'(int, double)>(main::'lambda4'(int)::operator()(int) "
		  "const::'lambda0'(int, double))" },
		{ "_ZN9__gnu_cxx5__ops15_Iter_comp_iterIZ4mainEUliiE3_EC1ES2_",
		  "__gnu_cxx::__ops::_Iter_comp_iter<main::'lambda3'(int, int)>::"
		  "_Iter_comp_iter(main::'lambda3'(int, int))" },
		{ "_Z1fN1AUt_E", "f(A::'unnamed')" },
		{ "_Z1fN1AUt1_E", "f(A::'unnamed1')" },
		/* GCC's clones: one suffix in parentheses, as LLVM prints it */
		{ "_Z3foov.cold", "foo() (.cold)" },
		{ "_Z3fooi.isra.0", "foo(int) (.isra.0)" },
		{ "_Z3fooi.part.0.cold", "foo(int) (.part.0.cold)" },
		{ "_ZN3foo3barEv.llvm.123456", "foo::bar() (.llvm.123456)" },
		/* suffixes libiberty's clone grammar refuses */
		{ "_ZN3foo3barE.cold", "foo::bar (.cold)" },
		{ "_Z3foov.A", "foo() (.A)" },
	};

	(void)state;
	CHECK(cases);
}

static void test_rust_legacy(void **state)
{
	/* llvm-symbolizer-14 would print "t::outer::Point$LT$T$GT$::sum::
	 * h49194c8c1cb59da7": it does not know legacy Rust. */
	static const struct demangle_case cases[] = {
		{ "_ZN1t5outer14Point$LT$T$GT$3sum17h49194c8c1cb59da7E",
		  "t::outer::Point<T>::sum" },
		{ "_ZN1t5outer7generic17hd52bcf20c305551cE", "t::outer::generic" },
		{ "_ZN61_$LT$t..outer..Point$LT$u8$GT$$u20$as$u20$t..outer..Speak$GT$5speak17h50a12e0888eb4505E",
		  "<t::outer::Point<u8> as t::outer::Speak>::speak" },
		{ "_ZN3std2rt10lang_start17h0123456789abcdefE.llvm.99",
		  "std::rt::lang_start" },
	};
	char *got;

	(void)state;
	CHECK(cases);
	/* Not 16 hex digits: not a legacy hash, so an Itanium name. */
	got = vg_demangle("_ZN5hello17h0123456789abcdeXE");
	assert_non_null(got);
	assert_string_equal(got, "hello::h0123456789abcdeX");
	free(got);
}

static void test_rust_v0(void **state)
{
	static const struct demangle_case cases[] = {
		{ "_RINvNtCsciGn5CcqV8B_1t5outer7genericKj4_EB4_",
		  "t::outer::generic::<4>" },
		{ "_RNvMNtCsciGn5CcqV8B_1t5outerINtB2_5PointhE3sumB4_",
		  "<t::outer::Point<u8>>::sum" },
		{ "_RNvMNtCsciGn5CcqV8B_1t5outerINtB2_5PointxE3sumB4_",
		  "<t::outer::Point<i64>>::sum" },
		{ "_RNvXs_NtCsciGn5CcqV8B_1t5outerINtB4_5PointhENtB4_5Speak5speak",
		  "<t::outer::Point<u8> as t::outer::Speak>::speak" },
		{ "_RINvMNtNtCsgEmfK2I1SDS_4core3fmt2rtNtB3_8Argument9new_debugINtNtNtNtCsjrHSEGnQ3l9_3std11collections4hash3map7HashMapNtNtCslNYArtu3iFV_5alloc6string6StringINtNtB1U_3vec3VecmEEECs32gj3y4fnmh_4main",
		  "<core::fmt::rt::Argument>::new_debug::<std::collections::hash::"
		  "map::HashMap<alloc::string::String, alloc::vec::Vec<u32>>>" },
		{ "_RINvMs6_NtCsgvbsrvnw3yD_9hashbrown3rawINtB6_8RawTableTNtNtCslNYArtu3iFV_5alloc6string6StringINtNtBU_3vec3VecmEEE7reserveNCINvNtB8_3map11make_hasherBQ_B1s_NtNtNtCsjrHSEGnQ3l9_3std4hash6random11RandomStateE0ECs32gj3y4fnmh_4main",
		  "<hashbrown::raw::RawTable<(alloc::string::String, alloc::vec::"
		  "Vec<u32>)>>::reserve::<hashbrown::map::make_hasher<alloc::string::"
		  "String, alloc::vec::Vec<u32>, std::hash::random::RandomState>::"
		  "{closure#0}>" },
		{ "_RNvNtNtCsjrHSEGnQ3l9_3std2io5stdio19OUTPUT_CAPTURE_USED.0",
		  "std::io::stdio::OUTPUT_CAPTURE_USED (.0)" },
		{ "_RNvC1a1f.llvm.123", "a::f (.llvm.123)" },
	};

	(void)state;
	CHECK(cases);
}

static void test_not_mangled(void **state)
{
	static const char *const plain[] = {
		"main", "printf", "_start", "__libc_start_main", "_init",
		"do_sys_openat2", "_", "", "Z3foov", "__Z3foov" /* Mach-O */,
		"_D3foo3barFZv" /* D is not asked for */,
	};

	(void)state;
	assert_null(vg_demangle(NULL));
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (vg_demangle(plain[i]))
			fail_msg("'%s' demangled", plain[i]);
}

static void test_garbage(void **state)
{
	static const char *const bad[] = {
		"_Z", "_ZN", "_R", "_RNv", "_RNvC1a1fE", "_Z3fo", "_ZZZZZZZZ",
		"_ZN3foo", "_Z\xff\xfe", "_R\x01\x02", "_ZNSt", "_Z9999999999999999999a",
		"_RINvB0_E", "_ZN5hello39666u7d7h0123456789abcdefE",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *got = vg_demangle(bad[i]);

		if (got) {
			fail_msg("'%s' demangled to '%s'", bad[i], got);
			free(got);
		}
	}
}

/* An Itanium identifier may hold any byte, brackets and spaces too, so a
 * name can read like libiberty's clone groups without being one.  Such an
 * identifier is printed as it is (the first one overran the heap). */
static void test_identifiers_like_clone_groups(void **state)
{
	static const struct demangle_case cases[] = {
		{ "_Z13x [clone a]b]", "x [clone a]b]" },
		{ "_Z14x [clone .a]b]", "x [clone .a]b]" },
		{ "_Z10x [clone ]", "x [clone ]" },
		{ "_Z11x [clone a]", "x [clone a]" },
		{ "_Z9[clone .]", "[clone .]" },
		{ "_Z14x [clone .a]]]v.cold", "x [clone .a]]]() (.cold)" },
	};

	(void)state;
	CHECK(cases);
}

/* prefix + decimal n + n letters + suffix. */
static char *long_identifier(const char *prefix, size_t n, const char *suffix)
{
	char *name = malloc(n + 64);
	int head;

	assert_non_null(name);
	head = sprintf(name, "%s%zu", prefix, n);
	memset(name + head, 'a', n);
	strcpy(name + head + n, suffix);
	return name;
}

/* Target-controlled names are capped at 4096 bytes before libiberty (Rust
 * v0 has no other bound); libiberty itself stops Itanium names at 1024. */
static void test_length_cap(void **state)
{
	char *v0_at_cap = long_identifier("_RNvC", 4085, "1f");
	char *v0_over = long_identifier("_RNvC", 4086, "1f");
	char *cxx_at_limit = long_identifier("_Z", 1018, "");
	char *cxx_over = long_identifier("_Z", 1019, "");
	char *got;

	(void)state;
	assert_int_equal(strlen(v0_at_cap), 4096);
	got = vg_demangle(v0_at_cap);
	assert_non_null(got);
	assert_int_equal(strlen(got), 4085 + 3);
	assert_string_equal(got + 4085, "::f");
	free(got);
	assert_int_equal(strlen(v0_over), 4097);
	assert_null(vg_demangle(v0_over));

	assert_int_equal(strlen(cxx_at_limit), 1024);
	got = vg_demangle(cxx_at_limit);
	assert_non_null(got);
	assert_int_equal(strlen(got), 1018);
	free(got);
	assert_int_equal(strlen(cxx_over), 1025);
	assert_null(vg_demangle(cxx_over));
	free(v0_at_cap);
	free(v0_over);
	free(cxx_at_limit);
	free(cxx_over);
}

/* Deep nesting stops at libiberty's recursion limit instead of the stack:
 * llvm-cxxfilt-14 demangles this one, vigil keeps the mangled name. */
static void test_deep_nesting(void **state)
{
	char name[3 + 4 * 1000 + 2] = "_ZN", *got;

	(void)state;
	for (size_t i = 0; i < 1000; i++)
		memcpy(name + 3 + 4 * i, "3foo", 4);
	strcpy(name + 3 + 4 * 1000, "E");
	assert_null(vg_demangle(name));
	/* well within the limit */
	strcpy(name + 3 + 4 * 100, "E");
	got = vg_demangle(name);
	assert_non_null(got);
	assert_int_equal(strlen(got), 100 * 3 + 99 * 2);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx_functions),
		cmocka_unit_test(test_cxx_templates_and_std),
		cmocka_unit_test(test_cxx_operators),
		cmocka_unit_test(test_cxx_closures_and_clones),
		cmocka_unit_test(test_identifiers_like_clone_groups),
		cmocka_unit_test(test_rust_legacy),
		cmocka_unit_test(test_rust_v0),
		cmocka_unit_test(test_not_mangled),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_length_cap),
		cmocka_unit_test(test_deep_nesting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
