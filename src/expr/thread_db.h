/* thread_db.h - libthread_db, loaded on first use instead of linked
 * (thread_db.c says why). */
#ifndef VG_THREAD_DB_H
#define VG_THREAD_DB_H

#include <stdbool.h>

/* Load the library now if it is not yet: true when its functions work.
 * Otherwise *why (if why) says why in one sentence, and every td_ call
 * answers TD_NOLIBTHREAD. */
bool vg_thread_db_load(const char **why);

#endif
