/* Loader of bpf/threads.bpf.c, the thread timeline probes: system calls by class (those that
 * block, seen at sched_switch; or, with all_syscalls, every call from sys_enter to sys_exit),
 * on-CPU intervals, run-queue waits and D-state sleeps of the targets, delivered as struct tl_rec
 * records; calls in progress and short-call counts are read from the kernel's maps on demand.
 * Nothing is pinned: everything goes away when the process exits. */
#ifndef GALATOP_BPF_THREADS_H
#define GALATOP_BPF_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/probes.h"
#include "bpf/tl_event.h"

/* Probe classes, as gala-gopher's tprofiling names them (oncpu, syscall_file, ...). */
enum tl_probe_class {
	TL_PROBE_ONCPU = 1, /* sched_switch + wakeups: on-CPU, run-queue, D state */
	TL_PROBE_FILE = 2,
	TL_PROBE_NET = 4,
	TL_PROBE_LOCK = 8,
	TL_PROBE_SCHED = 16,
	TL_PROBE_ALL = 31,
};

struct tl_probe_opts {
	const struct probe_opts *targets; /* pids, tids, comm, cgroups (other fields unused) */
	unsigned classes;		  /* TL_PROBE_* mask; 0 = all */
	uint64_t min_dur_ns;		  /* shorter intervals are only counted; 0 = 10 us */
	bool user_stacks;		  /* user stack of each system call sent */
	unsigned ustack_copy;		  /* DWARF mode: user registers + this many stack bytes
					   * (8..GT_USTACK_MAX) per call; 0 = frame pointers */
	size_t ringbuf_bytes;		  /* 0 = 8 MiB (32 MiB with ustack_copy) */
	bool all_syscalls;		  /* every traced call from sys_enter to sys_exit (the
					   * kernel's system call tracepoints: a cost on every call
					   * of the machine); false: the calls that block, from
					   * sched_switch to the switch back in */
};

struct tl_probe_stats {
	uint64_t events, drops, shorter, lost_user;
};

struct tl_probes;

/* Called for every checked record during tl_probes__poll; r is valid during the call only. */
typedef void (*tl_record_fn)(void *ctx, const struct tl_rec *r);

/* Loads and attaches the probes of o->classes. NULL with a one-line reason in err when nothing
 * could run; probes that could not attach are named in tl_probes__warnings. */
struct tl_probes *tl_probes__open(const struct tl_probe_opts *o, tl_record_fn fn, void *ctx,
				  char *err, size_t errlen);
/* One line per probe that could not run; "" if none. Owned by p. */
const char *tl_probes__warnings(const struct tl_probes *p);
/* An fd readable when records wait (epoll); owned by p. */
int tl_probes__fd(const struct tl_probes *p);
/* Waits up to timeout_ms (0: no wait) and drains the records. Count or -errno. */
int tl_probes__poll(struct tl_probes *p, int timeout_ms);
/* Drains what waits without waiting, until deadline_ns (see drain__consume). Count or -errno. */
int tl_probes__consume(struct tl_probes *p, uint64_t deadline_ns);
/* Adds a target process (as probes__add_pid). 0 or -errno. */
int tl_probes__add_pid(struct tl_probes *p, int tgid);
/* The class (enum tl_rec_kind) system call nr is traced as, or -1 when it is not traced. */
int tl_probes__syscall_kind(const struct tl_probes *p, unsigned nr);
/* Records a call that thread tid entered before the probes attached (from /proc), so that its
 * exit is seen and it shows in progress meanwhile. 0 or -errno (-EEXIST: already seen). */
int tl_probes__seed(struct tl_probes *p, uint32_t tid, const struct tl_start *s);
/* Calls fn for each traced system call in progress (tid and its entry state). */
void tl_probes__in_progress(struct tl_probes *p,
			    void (*fn)(void *ctx, uint32_t tid, const struct tl_start *s),
			    void *ctx);
/* Copies the user stack stackid (from a tl_start) into ips, innermost first; the number of
 * frames, 0 when unknown. */
size_t tl_probes__stack(struct tl_probes *p, int stackid, uint64_t *ips, size_t max);
/* Calls fn for each thread's short-call counters (cumulative since the probes started). */
void tl_probes__shorts(struct tl_probes *p,
		       void (*fn)(void *ctx, uint32_t tid, uint32_t pid, const struct tl_short *s),
		       void *ctx);
void tl_probes__stats(const struct tl_probes *p, struct tl_probe_stats *st);
/* Detaches and frees everything; NULL is a no-op. */
void tl_probes__free(struct tl_probes *p);

/* Name of a traced x86_64 system call ("write"), NULL for others. */
const char *tl_syscall_name(unsigned nr);
/* Parses a class name (oncpu, file, net, lock, sched; the syscall_ prefix is accepted);
 * TL_PROBE_* or 0. */
unsigned tl_probe_class_parse(const char *s);

#endif
