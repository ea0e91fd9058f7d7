/* Loader of galatop's kernel probes (bpf/profile.bpf.c): loads and attaches the requested
 * probes with their in-kernel filters, then delivers struct gt_event records to a callback.
 * With bpf/, the only code that touches libbpf. Nothing is pinned: every program, link and
 * perf event is an fd of this process and goes away when it exits, however it exits. */
#ifndef GALATOP_BPF_PROBES_H
#define GALATOP_BPF_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/gt_event.h"
#include "bpf/sideband.h"

enum probe_type {
	PROBE_ONCPU = 1,  /* CPU-clock sampling, kernel + user stacks */
	PROBE_OFFCPU = 2, /* time blocked between switch-out and switch-in, stacks at switch-out */
	PROBE_MEM = 4,	  /* user page faults, user stacks */
	PROBE_THREADS = 8, /* the thread timeline family (bpf/threads.h), opened by the session */
	PROBE_LEAK = 16,   /* allocations not freed: uprobes on the allocators (bpf/leak.h) */
	PROBE_GROWTH = 32, /* anonymous memory mapped and not unmapped: brk/mmap/munmap syscall
			    * tracepoints (bpf/growth.bpf.h) */
};

/* Off-CPU state_filter bits (the kernel's task states). */
#define PROBE_STATE_INTERRUPTIBLE 1u
#define PROBE_STATE_UNINTERRUPTIBLE 2u

/* Start from probe_opts__init(), then set what you need. Zero numeric fields mean the
 * documented defaults; but a zeroed struct asks for no stacks. Targets (pids, tids,
 * comm, cgroup_ids) combine as a union; none means every task. Arrays are copied during
 * probes__open; the caller keeps ownership. */
struct probe_opts {
	unsigned types;	       /* PROBE_* mask; 0 = PROBE_ONCPU */
	unsigned load_types;   /* PROBE_* loaded at open too but attached by probes__attach only */
	unsigned freq;	       /* oncpu samples per second per CPU; 0 = 99 */
	bool fixed_period;     /* oncpu: sample every 1/freq s exactly, as perf does; by default
				* each CPU's rate is redrawn within +-25% of freq at random
				* moments, so periodic work cannot alias (bpf/period_jitter.h) */
	const uint8_t *cpus;   /* events on CPU c are taken when cpus[c] != 0 (c < ncpus);
				* NULL = every CPU; oncpu samples only these CPUs */
	size_t ncpus;
	bool cpus_switchable;  /* probes__set_cpus may widen the set later: oncpu samples every
				* online CPU and the kernel drops what the set leaves out */
	bool kernel_stacks;    /* capture kernel stacks (oncpu, offcpu) */
	bool user_stacks;      /* capture user stacks */
	bool no_idle;	       /* oncpu: drop samples of the idle task (pid 0) */
	uint64_t min_block_us; /* offcpu: shortest block reported; 0 = 1000 */
	uint64_t max_block_us; /* offcpu: longest block reported; 0 = unlimited */
	unsigned state_filter; /* offcpu: PROBE_STATE_* mask; 0 = any state (incl. preempted) */
	const int *pids;       /* target processes (tgids) */
	size_t npids;
	const int *tids; /* target threads */
	size_t ntids;
	const char *comm;	    /* target command name, exact match on its first 15 bytes */
	const uint64_t *cgroup_ids; /* target cgroup v2 ids; each matches its whole subtree */
	size_t ncgroups;
	bool follow_children; /* new processes forked by a target pid become targets; turns on
			       * the pid filter even with npids == 0 (see probes__add_pid) */
	size_t ringbuf_bytes; /* ring buffer size, rounded up to a power of two; 0 = 8 MiB
			       * (32 MiB with ustack_copy) */
	unsigned ustack_copy; /* DWARF mode: user stacks are the user registers plus this many
			       * bytes of user stack (8..GT_USTACK_MAX, a multiple of 8), for
			       * user-space unwinding; 0 = frame-pointer user stacks */
	bool include_self;    /* galatop's own threads are targets too (default: never) */
	unsigned event_rate;  /* offcpu, mem: records per second per CPU past which the kernel
			       * takes 1 event in n, weighted n (adapted every 100 ms); 0 = all */
	uint64_t leak_sample; /* leak: mean bytes allocated between two sampled allocations
			       * (Poisson by bytes); 0 = 512 KiB, 1 = every allocation */
	bool leak_uretprobe;  /* leak: an entry uprobe and a uretprobe per function even where the
			       * kernel has uprobe.session (one program whose return part runs
			       * only for the calls that need it) */
	size_t leak_max_live; /* leak: sampled allocations tracked at once; 0 = 65536 (1 << 20
			       * when every allocation is taken); past it they are dropped */
	int leak_preload_pid; /* leak: a process about to run with the in-process sampler
			       * preloaded from leak_preload (bpf/leak.h), 0: none */
	const char *leak_preload;
	const int *leak_inject; /* leak: running processes the in-process sampler at
				 * leak_inject_lib is injected into when leak attaches (their
				 * markers probed, not their allocator: probes__leak_inject) */
	size_t nleak_inject;
	const char *leak_inject_lib;
	sideband_fn task_fn;  /* when set, gets every process's mappings, forks, execs and exits
			       * (bpf/sideband.h) with the probes' ctx, each one before the
			       * records taken after it */
};

/* Aggregated kernel counters (see struct gt_counters). */
struct probe_stats {
	uint64_t total, samples, drops, kstack_fail, ustack_fail, filtered;
	uint64_t lost_user; /* records dropped by user space as malformed */
	uint64_t py_walks, py_no_tstate; /* samples with CPython frames read; samples of a CPython
					  * process in a thread without a Python state */
	uint64_t sb_events, sb_lost; /* side-band events handed out, lost (ring full) */
	/* Event sampling, [GT_RATE_OFFCPU] and [GT_RATE_MEM]: events left out, and the largest
	 * current 1-in-n over the CPUs (0 or 1: every event taken). */
	uint64_t skipped[2], period[2];
	/* leak: allocation calls of targets, allocations sampled, frees of sampled ones,
	 * sampled ones lost (live set or ring buffer full); allocator files probed. */
	uint64_t leak_calls, leak_sampled, leak_frees, leak_drops, leak_files;
	uint64_t leak_marker_files; /* leak: files of the in-process sampler, markers probed */
	/* growth: mappings and unmaps of anonymous memory recorded. */
	uint64_t growth_maps, growth_unmaps;
	uint64_t period_rearms;	 /* oncpu: randomized period restarts so far (0: fixed period) */
	uint64_t period_refused; /* oncpu: period changes the kernel refused */
};

struct probes;

struct bpf_link;
/* Appends link to the array *links of *n links (every probe family keeps its links so); on
 * ENOMEM the link is destroyed. 0 or -ENOMEM. */
int probe_links_add(struct bpf_link ***links, size_t *n, struct bpf_link *link);

struct bpf_program;
struct perf_event_attr;
/* Opens a perf event of attr on each CPU whose flag is set in cpus[ncpus] (cpus NULL: every
 * online CPU) and attaches prog to it, appending the links (they own the perf fds) to *links of
 * *n; when fds is not NULL (room for ncpus), the perf fds of the events opened go there in
 * order. Attached if any CPU did: 0, else -errno of the last failure. */
int probe_attach_cpu_events(struct bpf_program *prog, struct perf_event_attr *attr,
			    const uint8_t *cpus, int ncpus, struct bpf_link ***links, size_t *n,
			    int *fds);

/* Fills o with the defaults: oncpu at 99 Hz on all CPUs, kernel and user stacks, offcpu blocks
 * of 1 ms and more in any state, no targets. */
void probe_opts__init(struct probe_opts *o);

/* Whether size bytes at data make a well-formed record: header, the stacks it announces and,
 * with GT_EVF_UREGS, the registers and the stack copy. 0 or -EINVAL. */
int probe_record_check(const void *data, size_t size);

/* Called from probes__poll for every sample, exec and exit record (each one has passed
 * probe_record_check). The record lives in the ring buffer and is only valid during the call. */
typedef void (*probe_event_fn)(void *ctx, const struct gt_event *ev);

/* A ring buffer size: want (0 = 8 MiB, 32 MiB with dwarf) rounded up to a power of two pages. */
size_t probes_ringbuf_size(size_t want, bool dwarf);

/* Checks privileges, loads and attaches (o NULL = probe_opts__init defaults) the requested probes
 * plus the exec/exit (and, with follow_children, fork) tracepoints. A probe that cannot run
 * (missing tracepoint, perf_event_open failure, verifier rejection) leaves one line naming it in
 * probes__warnings() and the others go on. Returns NULL only if no requested probe could
 * attach, with a one-line reason in err. Caller frees with probes__free(). */
struct probes *probes__open(const struct probe_opts *o, probe_event_fn fn, void *ctx, char *err,
			    size_t errlen);

/* Attaches a probe type loaded at open (probe_opts.load_types) but not attached: a few ms, no
 * verifier. 0 (also when attached already), or -errno with one line in err naming it. */
int probes__attach(struct probes *p, unsigned type, char *err, size_t errlen);

/* Detaches a stack probe type (its links and perf events go; its programs stay loaded, so
 * probes__attach brings it back in a few ms): its records stop, what was read stays. 0 (also
 * when not attached), or -EINVAL for a bit that is no stack type. */
int probes__detach(struct probes *p, unsigned type);

/* Newline-separated warnings from probes__open, one line per probe that could not run, quoting
 * libbpf's reason; "" if none. Owned by p. */
const char *probes__warnings(const struct probes *p);

/* Probe types that actually attached (PROBE_* mask). */
unsigned probes__types(const struct probes *p);
/* Probe types whose programs loaded, attached or not (PROBE_* mask). */
unsigned probes__loaded(const struct probes *p);

/* An epoll fd that becomes readable when records wait, for an outer poll loop; owned by p. */
int probes__fd(const struct probes *p);

/* Waits up to timeout_ms (0: no wait, -1: forever) and drains the ring buffer, calling fn for
 * each record. Returns the number of records or -errno (-EINTR when a signal interrupted). */
int probes__poll(struct probes *p, int timeout_ms);
/* Drains what waits without waiting, until deadline_ns (CLOCK_MONOTONIC; see drain__consume).
 * Returns the number of records or -errno. */
int probes__consume(struct probes *p, uint64_t deadline_ns);

/* Adds a target process at run time. Returns 0, -EINVAL if the pid filter is off (open with
 * pids or follow_children), -E2BIG past the kernel's largest pid, or another -errno. */
int probes__add_pid(struct probes *p, int tgid);

/* Takes events only on the CPUs c with cpus[c] != 0 (c < n) from now on; cpus NULL = every
 * CPU. Events already in the ring buffer stay. oncpu samples only the CPUs it was opened on
 * (every online one with cpus_switchable). 0, -EINVAL (no CPU in the set) or -errno. */
int probes__set_cpus(struct probes *p, const uint8_t *cpus, size_t n);

/* Has the probes walk the interpreter frames of CPython process tgid (bpf/python.bpf.h) laid
 * out as pp says (symbols/python.h finds it), until it execs or exits. 0 or -errno. */
int probes__add_python(struct probes *p, int tgid, const struct gt_py_proc *pp);

/* leak: probes the allocators of processes pids[0..n) (NULL: the targets; every process when
 * the targets are not processes only) not probed yet, or with again every one (dlopen). The
 * number of allocator files newly probed; 0 when the leak probe is not attached. */
int probes__leak_scan(struct probes *p, const int *pids, size_t n, bool again);
/* leak: process tgid exited: its own probes (targets that are processes) go. */
void probes__leak_exit(struct probes *p, int tgid);
/* leak: takes the sampled block addr of process tgid out of the kernel's live set (its exit
 * or exec freed it). 0 or -errno (-ENOENT: not there). */
int probes__leak_forget(struct probes *p, uint32_t tgid, uint64_t addr);
/* leak: no more records from now on (a recording stopping): what is outstanding now is what
 * the records read so far say. */
void probes__leak_pause(struct probes *p);
/* leak: the mean bytes between samples in use (1: every allocation). */
uint64_t probes__leak_sample(const struct probes *p);
/* leak: whether its probes are uprobe.session ones (the return probe runs for the calls that
 * need it only), else an entry uprobe and a uretprobe per function. */
bool probes__leak_session(const struct probes *p);
/* leak: the sampler could not be injected into process pid (one of leak_inject), or was
 * taken out: its allocator gets the uprobes now. 0 or -errno. */
int probes__leak_uninject(struct probes *p, int pid);
/* leak: how process pid's allocations are seen (LEAK_PATH_* in bpf/leak.h). */
int probes__leak_path(const struct probes *p, int pid);
/* leak: whether target process pid could not be hooked (no allocator probed in it), with
 * the reason in why; 0 when hooked, 1 when not, -errno when it cannot be told. */
int probes__leak_unhooked(const struct probes *p, int pid, char *why, size_t len);

/* Sums the per-CPU counters into st. */
void probes__stats(const struct probes *p, struct probe_stats *st);

/* Detaches and frees everything; NULL is a no-op. */
void probes__free(struct probes *p);

#endif
