/* Grouping of stacks by who ran them (--group, `H`): the identity frames at the root of a stack
 * ([Pod], [Con], [PID]comm, thread) rewritten for one of four views. */
#ifndef GALATOP_MODEL_GROUP_H
#define GALATOP_MODEL_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "frames.h"
#include "profile.h"

enum group_by {
	GROUP_PROCESS = 0, /* [PID]comm: one root per process (gala-gopher's stackprobe) */
	GROUP_THREAD,	  /* [PID]comm then [TID]name: a root per thread under its process */
	GROUP_COMMAND,	  /* comm: every process of the same name under one root (perf+flamegraph.pl) */
	GROUP_NONE,	  /* no identity frames: stacks of every process merged */
	GROUP_MAX
};

/* Name of g ("thread", "process", "command", "none"). */
const char *group_by_str(enum group_by g);
/* Parses group_by_str's output; -1 when s names none. */
int group_by_parse(const char *s);
/* The process root's name for g: "[PID]comm" (thread, process) or "comm" (command), into buf
 * (cap bytes, NUL-terminated); returns its length, as snprintf. */
int group_process_name(enum group_by g, uint32_t pid, const char *comm, char *buf, size_t cap);
/* Rewrites the identity frames leading frames[0..depth) for g into out (room for depth ids; may
 * be frames itself). A thread frame is one of kind FRAME_THREAD or a process frame right under
 * another (folded files cannot tell them apart); command roots are interned into ft. Returns
 * the new depth, or -ENOMEM. */
long group_stack(struct frames *ft, enum group_by g, const uint32_t *frames, size_t depth,
		 uint32_t *out);

#endif
