// tgt_print_cxx - C++ data for `vigil print`: a namespace variable of a
// class with two base classes (one with a vtable), a class name used
// without a keyword in sizeof, a class's static data member, variables of
// a nested namespace (a struct, an enum class) and casts to a
// namespace-qualified type.
// usage: tgt_print_cxx TRUTHFILE
// Writes "expect TAB EXPR TAB TEXT" lines (vigil's layout of its own
// values: gdb's, names qualified by namespace and static data members
// shown in their class's value, as gdb does)
// and "size"/"offset" lines for the JSON, then waits until killed.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace app {
struct Base {
	int id = 7;
	virtual ~Base() {}
};
struct Mid {
	short tag = 3;
};
class Derived : public Base, public Mid {
public:
	double ratio = 1.5;
	const char *name = "derived";
	static int s_instances;
};
int Derived::s_instances = 2;
Derived g_obj;
int g_plain = 5;
namespace inner {
struct Point {
	int x, y;
};
enum class Color { red, green = 4 };
enum Shade { light = 1, dark = 2 };
Point g_point = { 3, -4 };
Color g_color = Color::green;
Shade g_shade = dark;
}  // namespace inner
}  // namespace app
namespace {
// An anonymous namespace: found by its bare name, as in C++ and gdb.
int g_anon = 9;
}  // namespace

int main(int argc, char **argv)
{
	if (argc < 2)
		return 99;
	alarm(120);
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return 99;
	void *vptr = *reinterpret_cast<void **>(&app::g_obj);
	const app::Mid *mid = &app::g_obj;
	fprintf(f, "pid %d\n", (int)getpid());
	fprintf(f, "expect\tapp::g_plain\t5\n");
	fprintf(f, "expect\tapp::g_obj.ratio\t1.5\n");
	fprintf(f, "expect\tapp::g_obj.id + app::g_obj.tag\t10\n");
	fprintf(f, "expect\tsizeof(app::Derived)\t%zu\n", sizeof(app::Derived));
	fprintf(f, "expect\tapp::g_obj\t{<app::Base> = {_vptr.Base = %p <vtable for app::Derived+16>, id = 7}, "
		   "<app::Mid> = {tag = 3}, ratio = 1.5, name = %p \"derived\", static s_instances = %d}\n",
		vptr, (const void *)app::g_obj.name, app::Derived::s_instances);
	fprintf(f, "expect\tapp::Derived::s_instances\t%d\n", app::Derived::s_instances);
	fprintf(f, "expect\tg_anon\t%d\n", g_anon);
	fprintf(f, "expect\tapp::inner::g_point\t{x = %d, y = %d}\n", app::inner::g_point.x, app::inner::g_point.y);
	fprintf(f, "expect\tapp::inner::g_color\tapp::inner::Color::green\n");
	fprintf(f, "expect\tapp::inner::g_shade\tapp::inner::dark\n");
	fprintf(f, "expect\t*(app::inner::Point *)%p\t{x = %d, y = %d}\n", (void *)&app::inner::g_point,
		app::inner::g_point.x, app::inner::g_point.y);
	fprintf(f, "expect\t&app::g_obj\t(class app::Derived *) %p <app::g_obj>\n", (void *)&app::g_obj);
	fprintf(f, "expect\t&app::inner::g_point\t(struct app::inner::Point *) %p <app::inner::g_point>\n",
		(void *)&app::inner::g_point);
	fprintf(f, "expect\t((app::inner::Point *)%p)->y\t%d\n", (void *)&app::inner::g_point, app::inner::g_point.y);
	fprintf(f, "static s_instances %p\n", (void *)&app::Derived::s_instances);
	fprintf(f, "offset Mid %zu\n", (size_t)((const char *)mid - (const char *)&app::g_obj));
	fprintf(f, "offset ratio %zu\n", (size_t)((const char *)&app::g_obj.ratio - (const char *)&app::g_obj));
	fprintf(f, "state ready\n");
	fclose(f);
	if (rename(tmp, argv[1]) != 0)
		return 99;
	for (;;)
		pause();
}
