// tgt_cxx - C++ for the symbolizer's differential test (sym_oracle.sh):
// demangled names (namespaces, templates, operators), lambdas and member
// functions of function-local classes (gcc nests their definitions in the
// class, inside the function), and STL algorithms inlined into them.
// Built -O2 -g.  Runs a little work and exits; it is only read as a file.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace vg {

template <typename T>
__attribute__((always_inline)) inline T mix(T a, T b)
{
	return (a * 31) ^ (b + 7);
}

template <typename T>
struct accumulator {
	T total{};
	__attribute__((noinline)) void add(T v) { total = mix(total, v); }
	accumulator &operator+=(T v) { add(v); return *this; }
};

__attribute__((noinline)) int sorted_sum(std::vector<int> &v)
{
	std::sort(v.begin(), v.end(), [](int a, int b) { return mix(a, 3) < mix(b, 3); });
	accumulator<int> acc;
	for (int x : v)
		acc += x;
	return acc.total;
}

__attribute__((noinline)) long local_class(int n)
{
	struct counter {
		long sum = 0;
		__attribute__((noinline)) void bump(int v) { sum += mix<long>(v, sum); }
	} c;
	for (int i = 0; i < n; i++)
		c.bump(i);
	auto twice = [&c](int v) __attribute__((noinline)) { c.bump(v); c.bump(mix(v, v)); return c.sum; };
	return twice(n);
}

__attribute__((noinline)) size_t word_counts(const std::vector<std::string> &words)
{
	std::map<std::string, int> counts;
	for (const auto &w : words)
		counts[w]++;
	size_t best = 0;
	for (const auto &kv : counts)
		best = std::max(best, kv.first.size() * (size_t)kv.second);
	return best;
}

// One body, many instantiations: enough distinct code (std::sort, std::map
// and lambdas for each type) for 10,000 sampled instructions.
template <typename T>
__attribute__((noinline)) double work(int n)
{
	std::vector<T> v;
	for (int i = 0; i < n; i++)
		v.push_back(static_cast<T>((i * 7919) % 1009));
	std::stable_sort(v.begin(), v.end(), [](T a, T b) { return mix<T>(a, 1) < mix<T>(b, 1); });
	std::map<T, int> seen;
	for (T x : v)
		seen[x]++;
	accumulator<T> acc;
	for (const auto &kv : seen)
		acc += kv.first;
	auto it = std::lower_bound(v.begin(), v.end(), static_cast<T>(n / 2));
	return static_cast<double>(acc.total) + static_cast<double>(it - v.begin());
}

__attribute__((noinline)) double all_work(int n)
{
	return work<int>(n) + work<long>(n) + work<short>(n) + work<unsigned>(n) +
	       work<unsigned long>(n) + work<long long>(n) + work<unsigned short>(n) +
	       work<signed char>(n) + work<unsigned char>(n) + work<char>(n);
}

} // namespace vg

int main(int argc, char **argv)
{
	std::vector<int> v;
	for (int i = 0; i < 1000; i++)
		v.push_back((i * 7919) % 1009);
	std::vector<std::string> words = {"alpha", "beta", "alpha", argc > 1 ? argv[1] : "gamma"};
	std::printf("%d %ld %zu %g\n", vg::sorted_sum(v), vg::local_class(argc * 100),
		    vg::word_counts(words), vg::all_work(argc * 50));
	return 0;
}
