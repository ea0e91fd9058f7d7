/* What a view shows of a profile: a filter that rebuilds a display tree (hide kernel frames,
 * regroup the roots (thread/process/command/none), keep one pid/comm/container, keep a zoom's
 * prefix, keep stacks with search matches), the checks of the values a person types for it,
 * and frame matching for search. */
#ifndef GALATOP_MODEL_FILTER_H
#define GALATOP_MODEL_FILTER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "group.h"
#include "profile.h"

#define FILTER_PID_MAX 4194304u /* PID_MAX_LIMIT on 64-bit Linux */

struct profile_filter {
	bool hide_kernel;     /* drop kernel frames */
	bool regroup;	      /* rewrite the identity roots for group (false: as recorded) */
	enum group_by group;  /* thread, process, command or none (model/group.h) */
	uint32_t pid;	      /* keep stacks under this [PID]comm root; 0 = any */
	char comm[16];	      /* keep stacks under a process root with this comm; "" = any */
	char container[65];   /* keep stacks under [Con]/[Pod] roots with this name/id; "" = any */
	const uint8_t *only;  /* keep stacks with a frame whose bit is set; NULL = all */
	uint32_t only_nbits;  /* frames covered by only */
	const uint32_t *prefix; /* keep stacks starting with these frames (a zoom); NULL = all */
	size_t prefix_n;
};

/* True when f changes anything (the display tree must be rebuilt). */
bool profile_filter__active(const struct profile_filter *f);
/* Returns a new profile over src's frame table holding the stacks of src that f keeps,
 * transformed as f says; a two-column (diff) profile keeps both columns. Caller frees with
 * profile__free. NULL on ENOMEM. */
struct profile *profile__filter(const struct profile *src, const struct profile_filter *f);
/* True when any frame of the profile is a thread frame (H has something to do). */
bool profile__has_threads(const struct profile *p);

/* Input checks for the prompts: 0 when s is valid, else -EINVAL with the reason in why. */
int filter_check_pid(const char *s, uint32_t *pid, const char **why);
int filter_check_comm(const char *s, const char **why);
int filter_check_container(const char *s, const char **why);
/* Whether the container or pod called name[0..len) is the one the prompt asked for (want):
 * the same name, or hex ids of 12 digits or more where one is a prefix of the other. */
bool filter_container_matches(const char *name, size_t len, const char *want);

/* Sets bit id of bits for each frame id in [from, to) whose name matches re (when re) or
 * whose name string id equals name_id (when re is NULL). bits must hold to bits. */
void frames__match(const struct frames *ft, const regex_t *re, uint32_t name_id,
		      uint8_t *bits, uint32_t from, uint32_t to);
static inline bool bits_test(const uint8_t *bits, uint32_t nbits, uint32_t i)
{
	return bits && i < nbits && (bits[i >> 3] >> (i & 7) & 1);
}
/* Value under node covered by matching frames, each stack counted once (a match under a
 * match adds nothing). */
double profile__matched_total(const struct profile *p, uint32_t node, const uint8_t *bits,
			 uint32_t nbits);

#endif
