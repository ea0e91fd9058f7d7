/* User side of the target filter in bpf/targets.bpf.h, for every probe family's loader: sizes
 * and fills the target maps of a loaded object and sets its filter knobs. */
#ifndef GALATOP_BPF_TARGETS_H
#define GALATOP_BPF_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "bpf/gt_event.h"
#include "bpf/probes.h"

struct bpf_object;

/* Whether the pid set is on: pids were given, or children are followed into it. */
static inline bool targets_pid_filter(const struct probe_opts *o)
{
	return o->npids || o->follow_children;
}

/* Sets the filter knobs in a skeleton's rodata before load (the skeleton types differ per
 * family, the field names do not). */
#define TARGETS_SET_RODATA(rodata, o)                                                              \
	do {                                                                                       \
		(rodata)->filter_pids_enabled = targets_pid_filter(o);                             \
		(rodata)->filter_tids_enabled = (o)->ntids > 0;                                    \
		(rodata)->filter_cgroups_enabled = (o)->ncgroups > 0;                              \
		(rodata)->exclude_tgid = (o)->include_self ? 0 : (__u32)getpid();                  \
		if ((o)->comm && (o)->comm[0]) {                                                   \
			(rodata)->filter_comm_enabled = true;                                      \
			strncpy((char *)(rodata)->target_comm, (o)->comm, GT_COMM_LEN - 1);        \
		}                                                                                  \
	} while (0)

/* Sizes the target maps of obj before load (the pid set, when on, holds every possible pid).
 * 0 or -errno. */
int targets_size(struct bpf_object *obj, const struct probe_opts *o);
/* Fills the target maps of the loaded obj from o. 0 or -errno. */
int targets_fill(struct bpf_object *obj, const struct probe_opts *o);
/* Adds one pid to the loaded obj's pid set. 0 or -errno (-E2BIG past the kernel's largest pid). */
int targets_add_pid(struct bpf_object *obj, int tgid);

#endif
