/* Thread timelines: per-thread lanes of raw intervals (on-CPU, run-queue waits, system calls by
 * class, D-state sleeps), kept unmerged in memory capped as a whole (the oldest intervals go
 * first, and are counted), with calls still in progress kept apart as growing bars; queries by
 * time range and totals by kind per thread. Pure data: no I/O; strings are sanitized when they
 * enter. Times are nanoseconds of one monotonic clock; wall_offset maps them to UNIX time. */
#ifndef GALATOP_MODEL_TIMELINE_H
#define GALATOP_MODEL_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

/* What a thread does in an interval (the order of bpf/tl_event.h's enum tl_rec_kind). */
enum tl_kind { TL_ONCPU = 0, TL_RUNQ, TL_FILE, TL_NET, TL_LOCK, TL_SCHED, TL_DSTATE, TL_KIND_MAX };

#define TL_EV_OPEN 1u  /* still in progress: end is the timeline's now */
#define TL_EV_OWNER 2u /* owner holds the lock's owner tid, read from the lock word */
#define TL_EV_LOCKWAIT 4u /* a lock wait (contended lock word, PI futex), not a condition wait */
#define TL_EV_SAMPLED 8u  /* a call seen running by the sampler: start and end to its period */
#define TL_EV_ALL 15u	  /* every flag above */

#define TL_DEFAULT_MEM (64ul << 20)

struct tl_event {
	uint64_t start, end; /* ns */
	uint32_t name;	     /* strtab id: system call name, or "oncpu", "runq", "dstate" */
	uint32_t attr;	     /* strtab id: file.path or sock.conn text; 0 = none */
	uint32_t stack;	     /* strtab id: user stack, root first, ';'-separated; 0 = none */
	uint32_t count;	     /* calls this interval stands for (1 when raw) */
	uint64_t addr;	     /* futex address (lock) */
	uint32_t owner;	     /* lock owner tid (TL_EV_OWNER), else 0 */
	uint32_t op;	     /* futex op */
	uint8_t kind;	     /* enum tl_kind */
	uint8_t flags;	     /* TL_EV_* */
	uint16_t pad;
	uint32_t tid; /* the thread (filled by the queries; ignored by timeline__add) */
};

struct tl_thread {
	uint32_t tid, pid;
	uint32_t comm;	     /* strtab id */
	uint64_t first;	     /* earliest start seen (ns) */
	uint64_t ended;	     /* when the thread exited (ns); 0 = alive, or not known */
	uint64_t tot_ns[TL_KIND_MAX], tot_count[TL_KIND_MAX]; /* every interval added */
	uint64_t short_ns[TL_KIND_MAX], short_count[TL_KIND_MAX]; /* below the minimum duration */
	/* The lane: ev[lo..n) sorted by start. */
	struct tl_event *ev;
	size_t lo, n, cap;
	uint64_t max_dur;
};

struct tl_process {
	uint32_t pid;
	uint32_t name;	    /* strtab id: process command name */
	uint32_t container; /* strtab id: container name, 0 = none */
	uint32_t container_id; /* strtab id: container id, 0 = none */
};

struct timeline;

/* Creates an empty timeline whose intervals use at most mem_cap bytes (0 = 64 MiB). NULL on
 * ENOMEM. */
struct timeline *timeline__new(size_t mem_cap);
/* Frees it; NULL is a no-op. */
void timeline__free(struct timeline *tl);
/* The string table of names, attributes and stacks; owned by tl. */
struct strtab *timeline__strtab(struct timeline *tl);
const struct strtab *timeline__strtab_c(const struct timeline *tl);
/* Sanitizes s[0..len) and interns it; the id, or (uint32_t)-1 on ENOMEM. */
uint32_t timeline__intern(struct timeline *tl, const char *s, size_t len);

/* The index of thread tid (created with pid and comm if new; comm renamed if it changed);
 * -ENOMEM, or -EINVAL for tid 0. */
long timeline__thread_get(struct timeline *tl, uint32_t pid, uint32_t tid, const char *comm,
			  size_t commlen);
/* The index of thread tid, or -1. */
long timeline__thread_find(const struct timeline *tl, uint32_t tid);
size_t timeline__nthreads(const struct timeline *tl);
/* Notes that thread i exited at time when (ns, > 0); a later timeline__thread_get of the same
 * tid in another process makes it a live thread again (the tid was reused). */
void timeline__thread_end(struct timeline *tl, size_t i, uint64_t when);
const struct tl_thread *timeline__thread(const struct timeline *tl, size_t i);
/* Names process pid and its container (strings sanitized; NULL = none). 0 or -ENOMEM. */
int timeline__process_set(struct timeline *tl, uint32_t pid, const char *name,
			  const char *container, const char *container_id);
size_t timeline__nprocesses(const struct timeline *tl);
const struct tl_process *timeline__process(const struct timeline *tl, size_t i);
const struct tl_process *timeline__process_find(const struct timeline *tl, uint32_t pid);

/* Adds a finished interval to thread i's lane (start <= end, kind valid, ids from this
 * timeline's table, else -EINVAL); the oldest intervals of all lanes are dropped when the
 * memory cap is reached. 0, -EINVAL or -ENOMEM. */
int timeline__add(struct timeline *tl, size_t i, const struct tl_event *ev);
/* Moves the end of thread i's interval that starts at start and is named name to end (a call
 * seen blocking again before it returned: one interval, its count unchanged). 0, or -ENOENT
 * when no such interval is held (dropped by the memory cap) or end is before its end. */
int timeline__extend(struct timeline *tl, size_t i, uint64_t start, uint32_t name, uint64_t end);
/* Sets thread i's count and time of intervals shorter than the minimum, by kind (cumulative
 * values, as the kernel keeps them). */
void timeline__set_short(struct timeline *tl, size_t i, int kind, uint64_t count, uint64_t ns);
/* Calls in progress: cleared, then added one by one at each refresh (end is ignored: it is
 * now); 0, -EINVAL or -ENOMEM. */
void timeline__open_clear(struct timeline *tl);
int timeline__open_add(struct timeline *tl, size_t i, const struct tl_event *ev);
size_t timeline__nopen(const struct timeline *tl);
/* Open call j, with tid and end (= now) filled. */
struct tl_event timeline__open(const struct timeline *tl, size_t j);

/* The clock: the latest time seen, and the offset from it to UNIX seconds. */
void timeline__set_now(struct timeline *tl, uint64_t now);
uint64_t timeline__now(const struct timeline *tl);
/* The earliest start still held (now when empty). */
uint64_t timeline__start(const struct timeline *tl);
void timeline__set_wall_offset(struct timeline *tl, double unix_minus_mono_s);
double timeline__wall_offset(const struct timeline *tl);
/* The minimum duration the source used (ns), kept for exports; 0 = unknown. */
void timeline__set_min_dur(struct timeline *tl, uint64_t ns);
uint64_t timeline__min_dur(const struct timeline *tl);
/* Which system calls the source saw (shown by the Threads pane), kept for exports. */
enum tl_syscall_mode {
	TL_SYSCALLS_UNKNOWN = 0,
	TL_SYSCALLS_BLOCKING, /* those that block (at sched_switch) and those sampled running long */
	TL_SYSCALLS_ALL,      /* every call from sys_enter to sys_exit (--all-syscalls) */
};
void timeline__set_syscall_mode(struct timeline *tl, enum tl_syscall_mode m);
enum tl_syscall_mode timeline__syscall_mode(const struct timeline *tl);
/* A few words for mode m ("" when unknown). */
const char *tl_syscall_mode_str(enum tl_syscall_mode m);

/* Thread i's lane: its n intervals, oldest first (sorted by start); valid until the next add. */
const struct tl_event *timeline__lane(const struct timeline *tl, size_t i, size_t *n);
/* The lane positions [*from, *to) of intervals of thread i that may overlap [t0, t1). */
void timeline__range(const struct timeline *tl, size_t i, uint64_t t0, uint64_t t1,
		     size_t *from, size_t *to);
/* Time (ns) thread i spent in each kind within [t0, t1), counting open calls up to now;
 * out[TL_KIND_MAX]. */
void timeline__time_by_kind(const struct timeline *tl, size_t i, uint64_t t0, uint64_t t1,
			    uint64_t *out);
/* Time (ns) thread i was busy within [t0, t1): on a CPU or waiting for one, in D state, in
 * file system calls, or waiting for a contended lock (TL_EV_LOCKWAIT). Sleeps, polls, socket
 * calls, reads and writes of pipes, terminals and eventfds, and condition waits (futex waits
 * on an uncontended word) are idle: what a thread pool or a shell does between jobs. */
uint64_t timeline__busy_time(const struct timeline *tl, size_t i, uint64_t t0, uint64_t t1);

struct timeline_stats {
	uint64_t events;  /* intervals held */
	uint64_t dropped; /* intervals dropped by the memory cap */
	size_t mem_bytes, mem_cap;
};
void timeline__stats(const struct timeline *tl, struct timeline_stats *st);
/* Counts n intervals dropped elsewhere (a snapshot's count, a source's ring buffer). */
void timeline__add_dropped(struct timeline *tl, uint64_t n);

/* The futex command of op as a word ("wait", "wake", "lock_pi", ...; "op<N>" when unknown),
 * into buf. */
const char *tl_futex_op_str(uint32_t op, char *buf, size_t n);
/* Collects thread i's intervals that overlap [t0, t1), lane and calls in progress, sorted by
 * start, into a new array *out (caller frees; tid filled). The count, or -ENOMEM. */
long timeline__collect(const struct timeline *tl, size_t i, uint64_t t0, uint64_t t1,
		       struct tl_event **out);

/* "oncpu", "runq", "file", "net", "lock", "sched", "dstate"; and back (-1 if unknown). */
const char *tl_kind_str(int kind);
int tl_kind_parse(const char *s);

#endif
