/* Lock hints over a thread timeline: a wait-for graph from the futex waits in progress whose
 * owner was read from the lock word (a cycle is a deadlock), contention per waiting thread
 * (more than a third of its time spent waiting for locks another thread holds), and, where no
 * owner could be read, the heuristic of several threads of one process stuck in long lock
 * waits (TL_EV_LOCKWAIT: not condition-variable waits, which idle workers sit in) with no CPU
 * time. Pure: reads the timeline only. Algorithm: docs/threads.md. */
#ifndef GALATOP_MODEL_LOCKHINT_H
#define GALATOP_MODEL_LOCKHINT_H

#include <stddef.h>
#include <stdint.h>

#include "timeline.h"

enum tl_hint_kind { TL_HINT_DEADLOCK = 0, TL_HINT_CONTENTION };

#define TL_HINT_TIDS 8
#define TL_HINT_SUSPECT_NS 1000000000ull /* owner unknown: waits this long look stuck */

struct tl_hint {
	enum tl_hint_kind kind;
	uint32_t tids[TL_HINT_TIDS]; /* the threads involved: waiters (and holder, last) */
	size_t ntids;
	double share;		     /* contention: waited time / observed time */
	char text[1024];	     /* one line: "deadlock: ..." or "contention: ..." */
};

/* Computes the hints of tl into out[0..max) (deadlocks first); returns how many there are
 * (may exceed max: only max are written). */
size_t tl_hints(const struct timeline *tl, struct tl_hint *out, size_t max);

#endif
