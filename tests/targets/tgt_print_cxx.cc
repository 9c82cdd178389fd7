// tgt_print_cxx - C++ data for `vigil print`: a namespace variable of a
// class with two base classes (one with a vtable), a class name used
// without a keyword in sizeof.
// usage: tgt_print_cxx TRUTHFILE
// Writes "expect TAB EXPR TAB TEXT" lines (vigil's layout of its own
// values; gdb's, but for base class names, which vigil does not qualify)
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
};
Derived g_obj;
int g_plain = 5;
}  // namespace app

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
	fprintf(f, "expect\tapp::g_obj\t{<Base> = {_vptr.Base = %p <vtable for app::Derived+16>, id = 7}, "
		   "<Mid> = {tag = 3}, ratio = 1.5, name = %p \"derived\"}\n",
		vptr, (const void *)app::g_obj.name);
	fprintf(f, "offset Mid %zu\n", (size_t)((const char *)mid - (const char *)&app::g_obj));
	fprintf(f, "offset ratio %zu\n", (size_t)((const char *)&app::g_obj.ratio - (const char *)&app::g_obj));
	fprintf(f, "state ready\n");
	fclose(f);
	if (rename(tmp, argv[1]) != 0)
		return 99;
	for (;;)
		pause();
}
