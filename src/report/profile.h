/* profile.h - the report of `vigil profile`: its JSON document
 * (docs/json-schema/live_profile.json: observation, threads, functions
 * and up to 10,000 stacks) and the meta every stack writer
 * (stack_format.h) is given for it. */
#ifndef VG_REPORT_PROFILE_H
#define VG_REPORT_PROFILE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "profile/profile.h"
#include "stacktrie/stacks.h"
#include "target/target.h"
#include "util/error.h"

/* Fill m from the stopped profile p of t: event, rate, the nanoseconds a
 * sample stands for (clock events), wall-clock start, duration, losses,
 * and how many stacks were cut before their outermost frame and why.  The
 * why text is written to why (size bytes), which m->stacks_cut_why then
 * points into; m borrows strings from p and t. */
void vg_report_profile_meta(const struct vg_profile *p, const struct vg_target *t,
			    struct vg_stacks_meta *m, char *why, size_t size);

/* The JSON document of the stopped profile p of t (the common header is
 * built here: call it when the observation is over).  Caller owns it;
 * NULL with err filled on allocation failure. */
cJSON *vg_report_profile_json(const struct vg_profile *p, const struct vg_target *t,
			      struct vg_error *err);

/* The JSON document of several processes profiled in one run (profile
 * -p A,B): the header names the first process; observation is the
 * processes' own summed (samples, losses, coverage; the run's duration
 * and stop); processes[] gives each its pid, comm, samples, share, whether
 * it lived to the end and its own observation (its stop_reason and
 * duration_ms say when it exited); threads[] carry their pid; functions[]
 * and stacks[] are of merged, whose stacks start at each process's root
 * frame (vg_stacks_graft).  NULL with err filled on allocation failure. */
cJSON *vg_report_profiles_json(const struct vg_profile *const *ps,
			       const struct vg_target *const *ts, size_t n,
			       const struct vg_stacks *merged, enum vg_stop stop,
			       uint64_t duration_ns, struct vg_error *err);

#endif
