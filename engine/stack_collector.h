/* Collector: turns raw probe records (struct gt_event) into named stacks in profile trees:
 * identity root frames ([Pod], [Con], [PID]comm, thread), then user frames, then kernel frames,
 * each symbolized once per (pid, address) and interned as a model frame. No libbpf here. */
#ifndef GALATOP_ENGINE_STACK_COLLECTOR_H
#define GALATOP_ENGINE_STACK_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/gt_event.h"
#include "bpf/sideband.h"
#include "model/group.h"
#include "model/leak.h"
#include "model/profile.h"
#include "model/stack_type.h"
#include "symbols/ident.h"
#include "symbols/symbols.h"

struct collector_opts {
	bool threads;	  /* a thread frame under each process frame (as group = GROUP_THREAD) */
	enum group_by group; /* identity roots: [PID]comm + thread, [PID]comm, comm or none */
	bool annotate;	  /* perf-style suffixes: _[k] on kernel frames, _[j] on JIT frames */
	bool mem_bytes;	  /* mem values in bytes (faults x page size) instead of faults */
	bool no_kernel;	  /* drop kernel frames */
	bool no_user;	  /* drop user frames */
	bool no_java_native; /* drop the JVM's own frames (libjvm) between two Java frames */
	unsigned unwind_cache; /* processes whose DWARF unwinding state is kept; 0 = 64 */
	size_t max_stacks;     /* distinct stacks per profile before the rarest are folded into
				* [other] (model/stack_cap.h); 0 = no limit */
	/* Called once per CPython process found among the sampled ones (symbols/python.h), to
	 * have the probes walk its interpreter frames (probes__add_python); NULL: not looked for. */
	int (*python_fn)(void *ctx, int pid, const struct gt_py_proc *pp);
	void *python_ctx;
	/* leak: the sampler's mean bytes (1: every allocation; 0: 512 KiB), the age a block
	 * must reach to be shown, and who is told of each block a process's exit or exec
	 * dropped (to take it out of the kernel's live set; NULL: nobody). */
	uint64_t leak_sample;
	uint64_t leak_min_age_ns;
	void (*leak_forget_fn)(void *ctx, uint32_t tgid, uint64_t addr);
	void *leak_ctx;
};

struct collector_stats {
	uint64_t events;	/* sample records seen */
	uint64_t exec, exit;	/* process events seen */
	uint64_t unknown_frames;/* frames no symbol covered */
	uint64_t truncated;	/* stacks that hit the frame limit */
	uint64_t stack_fail;	/* records whose stack capture failed in the kernel */
	uint64_t unwound;	/* user stacks unwound from a stack copy (DWARF mode) */
	uint64_t unwind_truncated; /* of those, stopped at the end of the copy: [truncated] */
	uint64_t unwind_errors;	/* of those, stopped by an unwinding error: [unwind error] */
	uint64_t unwind_ns;	/* time spent unwinding them */
	uint64_t unwind_replays;/* of those, replayed from a remembered walk (same registers and
				 * stack words) */
	uint64_t folded;	/* stacks folded into [other] by the --max-stacks cap */
	uint64_t java_stacks;	/* user stacks with Java frames (JIT code) */
	uint64_t java_cut;	/* of those, whose outermost frame is Java: the walk stopped in
				 * JIT code (a JVM without -XX:+PreserveFramePointer) */
	uint32_t java_cut_pid;	/* the process of the last such stack */
	uint64_t python_procs;	/* CPython processes found (their frames walked from then on) */
	uint64_t python_stacks;	/* stacks with Python frames merged in */
	uint64_t python_unnamed;/* Python frames whose code object could not be read */
	uint64_t python_ns;	/* time spent naming and merging them */
	uint64_t python_unsupported; /* CPython processes whose frames cannot be walked */
	char python_why[512];	/* why, for the last of them ("" when none) */
};

struct collector;

/* Creates a collector adding to one profile per stack type over ft (borrowed, like sc and ic,
 * which must outlive it). NULL on ENOMEM. */
struct collector *collector__new(struct frames *ft, struct sym_cache *sc, struct ident_cache *ic,
				 const struct collector_opts *o);
/* Frees the collector and its profiles; NULL is a no-op. */
void collector__free(struct collector *c);
/* Handles one record: a sample goes into its profile (a record with a user stack copy is
 * unwound first; a walk cut short gets a [truncated] or [unwind error] frame at its outer end);
 * exec loads the process's maps early; exit forgets the process. */
void collector__event(struct collector *c, const struct gt_event *ev);
/* Most frames collector__stack writes: user (with Python frames merged in) and kernel. */
#define COLLECTOR_MAX_FRAMES (2 * GT_MAX_STACK + GT_PY_MAX_FRAMES + 8)
/* leak: the blocks allocated at least the minimum age before now_ns (CLOCK_MONOTONIC) join
 * the leak profile. */
void collector__leak_age(struct collector *c, uint64_t now_ns);
/* leak: the live set of sampled allocations (model/leak.h); owned by the collector. */
const struct leak_set *collector__leak(const struct collector *c);
/* growth: the anonymous regions mapped and not unmapped yet (model/growth.h); owned by the
 * collector. */
struct growth_set;
const struct growth_set *collector__growth(const struct collector *c);
/* Names the stacks of ev (user frames, then kernel frames; unwound from the stack copy with
 * GT_EVF_UREGS; CPython's frames in place of its interpreter loop) as frames of the
 * collector's table, root first, into out (room for COLLECTOR_MAX_FRAMES); a frame is
 * UINT32_MAX when memory ran out. Returns how many. */
size_t collector__stack(struct collector *c, const struct gt_event *ev, uint32_t *out);
/* Looks for CPython interpreters among pids[0..n) (every process when n is 0) now, rather
 * than at their first samples, and hands each one found to python_fn. */
void collector__python_scan(struct collector *c, const int *pids, size_t n);
/* Handles one side-band event: mappings, forks, execs and exits keep the symbol cache's view
 * of each process as it was when its records were taken (bpf/sideband.h). */
void collector__task(struct collector *c, const struct sb_event *ev);
/* The profile of stack type t (model/stack_type.h); owned by the collector. */
struct profile *collector__profile(struct collector *c, enum stack_type t);
/* Sample values by time since the last collector__clear, for the heat map: ns is the start of
 * a COLLECTOR_TICK_NS-long bucket of the records' monotonic time stamps. */
#define COLLECTOR_TICK_NS 50000000ull
struct collector_tick {
	uint64_t ns;
	double value;
};
/* The ticks of stack type t, in arrival order (mostly time order), *n of them; owned by the
 * collector, valid until the next record or clear. */
const struct collector_tick *collector__ticks(const struct collector *c, enum stack_type t,
					      size_t *n);
/* Empties every profile and tick list (periodic mode), keeping symbol caches. */
void collector__clear(struct collector *c);
/* Moves the collector to a new, empty frame table ft (borrowed): its profiles start empty
 * over it and addresses are symbolized afresh. For long periodic runs, whose old frames
 * (processes long gone) nothing refers to any more. 0, or -ENOMEM (then nothing changed,
 * unless the address caches were being rebuilt: they are empty). */
int collector__set_frames(struct collector *c, struct frames *ft);
/* Fills st with the counters since collector__new (not reset by collector__clear); cannot
 * fail. */
void collector__stats(const struct collector *c, struct collector_stats *st);

#endif
