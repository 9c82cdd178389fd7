/* cjson.c - the cJSON functions vigil calls, each loading libcjson on the
 * first call (dlopen) and forwarding to it.
 *
 * Linked, the library cost every vigil run its load before main: a C
 * hello world linked with -lcjson took 0.12-0.18 ms longer from spawn to
 * first byte (three interleaved rounds of 80 on a VM), some 3% of a
 * one-address `vigil sym PID ADDR`, which prints text and never builds
 * JSON.  Callers use cJSON by its own names through <cjson/cJSON.h>;
 * these definitions are what they link to, and a cJSON function used
 * without one here is a link error, not a silent gap.  The soname is the
 * one the build found (meson.build), so the loaded library is the ABI the
 * header describes.
 *
 * libcjson is a dependency of the package, as a linked library was: when
 * it cannot be loaded, the first JSON call ends vigil with a one-line
 * error and exit status 1 (VG_EXIT_RUNTIME), where ld.so would have
 * refused to start it.  This is the one error (VIGIL_VERBOSE notes
 * aside) printed below src/cli/: a cJSON call has no error to return it
 * through. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/dynlib.h"
#include "util/error.h"

#ifndef VG_CJSON_SONAME
#error "VG_CJSON_SONAME: meson.build reads it from the libcjson.so it found"
#endif

static struct {
	cJSON *(*add_array_to_object)(cJSON *, const char *);
	cJSON *(*add_bool_to_object)(cJSON *, const char *, cJSON_bool);
	cJSON_bool (*add_item_to_array)(cJSON *, cJSON *);
	cJSON_bool (*add_item_to_object)(cJSON *, const char *, cJSON *);
	cJSON *(*add_null_to_object)(cJSON *, const char *);
	cJSON *(*add_number_to_object)(cJSON *, const char *, double);
	cJSON *(*add_object_to_object)(cJSON *, const char *);
	cJSON *(*add_string_to_object)(cJSON *, const char *, const char *);
	cJSON *(*create_array)(void);
	cJSON *(*create_null)(void);
	cJSON *(*create_number)(double);
	cJSON *(*create_object)(void);
	cJSON *(*create_raw)(const char *);
	cJSON *(*create_string)(const char *);
	cJSON *(*create_true)(void);
	void (*delete_item)(cJSON *);
	void (*delete_from_object_cs)(cJSON *, const char *);
	cJSON *(*detach_via_pointer)(cJSON *, cJSON *);
	cJSON *(*duplicate)(const cJSON *, cJSON_bool);
	int (*get_array_size)(const cJSON *);
	cJSON *(*get_array_item)(const cJSON *, int);
	cJSON *(*get_object_item)(const cJSON *, const char *);
	cJSON *(*get_object_item_cs)(const cJSON *, const char *);
	cJSON_bool (*is_array)(const cJSON *);
	cJSON_bool (*is_bool)(const cJSON *);
	cJSON_bool (*is_number)(const cJSON *);
	cJSON_bool (*is_object)(const cJSON *);
	cJSON_bool (*is_true)(const cJSON *);
	cJSON *(*parse)(const char *);
	char *(*print)(const cJSON *);
	cJSON_bool (*print_preallocated)(cJSON *, char *, int, cJSON_bool);
	char *(*print_unformatted)(const cJSON *);
	cJSON_bool (*replace_in_object_cs)(cJSON *, const char *, cJSON *);
	double (*set_number_helper)(cJSON *, double);
	void (*free_fn)(void *);
} cj;
static const char *const cj_soname[] = { VG_CJSON_SONAME };
static const struct vg_dynlib_fn cj_fns[] = {
	{ "cJSON_AddArrayToObject", (void **)&cj.add_array_to_object },
	{ "cJSON_AddBoolToObject", (void **)&cj.add_bool_to_object },
	{ "cJSON_AddItemToArray", (void **)&cj.add_item_to_array },
	{ "cJSON_AddItemToObject", (void **)&cj.add_item_to_object },
	{ "cJSON_AddNullToObject", (void **)&cj.add_null_to_object },
	{ "cJSON_AddNumberToObject", (void **)&cj.add_number_to_object },
	{ "cJSON_AddObjectToObject", (void **)&cj.add_object_to_object },
	{ "cJSON_AddStringToObject", (void **)&cj.add_string_to_object },
	{ "cJSON_CreateArray", (void **)&cj.create_array },
	{ "cJSON_CreateNull", (void **)&cj.create_null },
	{ "cJSON_CreateNumber", (void **)&cj.create_number },
	{ "cJSON_CreateObject", (void **)&cj.create_object },
	{ "cJSON_CreateRaw", (void **)&cj.create_raw },
	{ "cJSON_CreateString", (void **)&cj.create_string },
	{ "cJSON_CreateTrue", (void **)&cj.create_true },
	{ "cJSON_Delete", (void **)&cj.delete_item },
	{ "cJSON_DeleteItemFromObjectCaseSensitive", (void **)&cj.delete_from_object_cs },
	{ "cJSON_DetachItemViaPointer", (void **)&cj.detach_via_pointer },
	{ "cJSON_Duplicate", (void **)&cj.duplicate },
	{ "cJSON_GetArraySize", (void **)&cj.get_array_size },
	{ "cJSON_GetArrayItem", (void **)&cj.get_array_item },
	{ "cJSON_GetObjectItem", (void **)&cj.get_object_item },
	{ "cJSON_GetObjectItemCaseSensitive", (void **)&cj.get_object_item_cs },
	{ "cJSON_IsArray", (void **)&cj.is_array },
	{ "cJSON_IsBool", (void **)&cj.is_bool },
	{ "cJSON_IsNumber", (void **)&cj.is_number },
	{ "cJSON_IsObject", (void **)&cj.is_object },
	{ "cJSON_IsTrue", (void **)&cj.is_true },
	{ "cJSON_Parse", (void **)&cj.parse },
	{ "cJSON_Print", (void **)&cj.print },
	{ "cJSON_PrintPreallocated", (void **)&cj.print_preallocated },
	{ "cJSON_PrintUnformatted", (void **)&cj.print_unformatted },
	{ "cJSON_ReplaceItemInObjectCaseSensitive", (void **)&cj.replace_in_object_cs },
	{ "cJSON_SetNumberHelper", (void **)&cj.set_number_helper },
	{ "cJSON_free", (void **)&cj.free_fn },
};
static struct vg_dynlib cj_lib = VG_DYNLIB(cj_soname, cj_fns);

/* The library's functions, loaded on the first call; the end of vigil
 * when it cannot be (see the top of this file). */
static void need(void)
{
	const char *why = NULL;

	if (vg_dynlib_get(&cj_lib, &why))
		return;
	fflush(stdout);
	fprintf(stderr, "vigil: error: JSON needs libcjson: %s; install it (apt-get install libcjson1)\n",
		why ? why : "it could not be loaded");
	exit(VG_EXIT_RUNTIME);
}

cJSON *cJSON_AddArrayToObject(cJSON *const object, const char *const name)
{
	need();
	return cj.add_array_to_object(object, name);
}

cJSON *cJSON_AddBoolToObject(cJSON *const object, const char *const name, const cJSON_bool boolean)
{
	need();
	return cj.add_bool_to_object(object, name, boolean);
}

cJSON_bool cJSON_AddItemToArray(cJSON *array, cJSON *item)
{
	need();
	return cj.add_item_to_array(array, item);
}

cJSON_bool cJSON_AddItemToObject(cJSON *object, const char *string, cJSON *item)
{
	need();
	return cj.add_item_to_object(object, string, item);
}

cJSON *cJSON_AddNullToObject(cJSON *const object, const char *const name)
{
	need();
	return cj.add_null_to_object(object, name);
}

cJSON *cJSON_AddNumberToObject(cJSON *const object, const char *const name, const double number)
{
	need();
	return cj.add_number_to_object(object, name, number);
}

cJSON *cJSON_AddObjectToObject(cJSON *const object, const char *const name)
{
	need();
	return cj.add_object_to_object(object, name);
}

cJSON *cJSON_AddStringToObject(cJSON *const object, const char *const name,
			       const char *const string)
{
	need();
	return cj.add_string_to_object(object, name, string);
}

cJSON *cJSON_CreateArray(void)
{
	need();
	return cj.create_array();
}

cJSON *cJSON_CreateNull(void)
{
	need();
	return cj.create_null();
}

cJSON *cJSON_CreateNumber(double num)
{
	need();
	return cj.create_number(num);
}

cJSON *cJSON_CreateObject(void)
{
	need();
	return cj.create_object();
}

cJSON *cJSON_CreateRaw(const char *raw)
{
	need();
	return cj.create_raw(raw);
}

cJSON *cJSON_CreateString(const char *string)
{
	need();
	return cj.create_string(string);
}

cJSON *cJSON_CreateTrue(void)
{
	need();
	return cj.create_true();
}

void cJSON_Delete(cJSON *item)
{
	/* Nothing was made without the library: nothing to free. */
	if (item) {
		need();
		cj.delete_item(item);
	}
}

void cJSON_DeleteItemFromObjectCaseSensitive(cJSON *object, const char *string)
{
	need();
	cj.delete_from_object_cs(object, string);
}

cJSON *cJSON_DetachItemViaPointer(cJSON *parent, cJSON *const item)
{
	need();
	return cj.detach_via_pointer(parent, item);
}

cJSON *cJSON_Duplicate(const cJSON *item, cJSON_bool recurse)
{
	need();
	return cj.duplicate(item, recurse);
}

int cJSON_GetArraySize(const cJSON *array)
{
	need();
	return cj.get_array_size(array);
}

cJSON *cJSON_GetArrayItem(const cJSON *array, int index)
{
	need();
	return cj.get_array_item(array, index);
}

cJSON *cJSON_GetObjectItem(const cJSON *const object, const char *const string)
{
	need();
	return cj.get_object_item(object, string);
}

cJSON *cJSON_GetObjectItemCaseSensitive(const cJSON *const object, const char *const string)
{
	need();
	return cj.get_object_item_cs(object, string);
}

cJSON_bool cJSON_IsArray(const cJSON *const item)
{
	need();
	return cj.is_array(item);
}

cJSON_bool cJSON_IsBool(const cJSON *const item)
{
	need();
	return cj.is_bool(item);
}

cJSON_bool cJSON_IsNumber(const cJSON *const item)
{
	need();
	return cj.is_number(item);
}

cJSON_bool cJSON_IsObject(const cJSON *const item)
{
	need();
	return cj.is_object(item);
}

cJSON_bool cJSON_IsTrue(const cJSON *const item)
{
	need();
	return cj.is_true(item);
}

cJSON *cJSON_Parse(const char *value)
{
	need();
	return cj.parse(value);
}

char *cJSON_Print(const cJSON *item)
{
	need();
	return cj.print(item);
}

cJSON_bool cJSON_PrintPreallocated(cJSON *item, char *buffer, const int length,
				   const cJSON_bool format)
{
	need();
	return cj.print_preallocated(item, buffer, length, format);
}

char *cJSON_PrintUnformatted(const cJSON *item)
{
	need();
	return cj.print_unformatted(item);
}

cJSON_bool cJSON_ReplaceItemInObjectCaseSensitive(cJSON *object, const char *string,
						  cJSON *newitem)
{
	need();
	return cj.replace_in_object_cs(object, string, newitem);
}

double cJSON_SetNumberHelper(cJSON *object, double number)
{
	need();
	return cj.set_number_helper(object, number);
}

void cJSON_free(void *object)
{
	if (object) {
		need();
		cj.free_fn(object);
	}
}
