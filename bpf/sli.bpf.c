// SPDX-License-Identifier: GPL-2.0
/* galatop's SLI probes: the time tasks lose to the scheduler, memory and block I/O, measured
 * with tracepoints only (tp_btf) and aggregated in the kernel: totals per thread and log-linear
 * histograms per process, read by user space (bpf/sli.c) every refresh. Correct with schedstats
 * and delay accounting off (swap-in alone needs delay accounting; see docs/sli.md). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kabi.h"
#include "sli_event.h"
#include "targets.bpf.h"

const volatile __u64 longsys_ns = 10000000;
const volatile bool longsys_on = true;	      /* the system call hooks run */
const volatile bool swapin_delayacct = false; /* delays->swapin_delay is kept (delayacct on) */
const volatile bool swapin_faults = false;    /* swap-in from major faults (no delayacct) */
const volatile bool follow_children = false;  /* new processes of target pids become targets */

/* Off-CPU states remembered at switch-out, closed at wakeup. */
enum { OFF_NONE, OFF_SLEEP, OFF_BLOCK, OFF_IOWAIT };

#define PENDING 16		   /* histogram rows a task fills between flushes */
#define FLUSH_NS 100000000ull	   /* a task's delays reach the maps within 100 ms */
#define PENDING_FULL 0xfff0	   /* a pending count this high is flushed before it overflows */

/* A pending histogram row's key: its SLI and row (struct gt_sli_hkey). */
#define PEND_KEY(sli, row) ((__u32)(sli) << 16 | (row))

/* Per-task timing state and delays not yet in the maps; freed with the task. What every
 * context switch touches comes first, and the keys of the pending histogram rows apart from
 * their counts, so that finding a row reads one cache line. */
struct tstate {
	__u64 off_ts;	   /* switched out asleep */
	__u64 rundelay;	   /* sched_info.run_delay after the last switch-in */
	__u64 swapin;	   /* delays->swapin_delay at the last switch-in */
	__u64 flush_ts;	   /* the last flush, in sched_now's clock */
	__u64 sys_ts;	   /* entry of the system call it left the CPU in (see sys_slot) */
	__u64 sys_jiffies;
	__u32 off_kind;	   /* OFF_* of off_ts */
	__u32 seen;	   /* rundelay and swapin hold a baseline */
	__u32 npend;	   /* pending histogram rows */
	__u32 full;	   /* a pending count reached PENDING_FULL */
	__u32 key[PENDING];	   /* PEND_KEY of each pending row */
	__u64 ns[GT_SLI_MAX];	   /* pending totals */
	__u32 count[GT_SLI_MAX];
	__u16 n[PENDING][GT_SLI_HSUB]; /* pending counts of each row's buckets */
	__u64 reclaim_ts;  /* direct or memcg reclaim entry */
	__u64 compact_ts;  /* compaction entry */
	__u64 fault_ts;	   /* page fault entry (swapin_faults) */
	__u64 fault_addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tstate);
} gt_sli_state SEC(".maps");

/* Preallocated: an update in the scheduler's hot path must not depend on an allocation that
 * can fail there (about 3.5 MB and 5 MB). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct gt_sli_thread);
} gt_sli_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct gt_sli_hkey);
	__type(value, struct gt_sli_hrow);
} gt_sli_hist SEC(".maps");

/* A new histogram row starts from this. */
const struct gt_sli_hrow zero_row = {};

/* Block requests in flight: who issued them and since when. */
struct bio_start {
	__u64 ts;
	__u64 rq_start; /* the request's start_time_ns: tells a reused request address apart */
	__u64 cgroup_id;
	__u32 tgid, tid;
	char comm[GT_SLI_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct bio_start);
} gt_sli_bio SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gt_sli_counters);
} gt_sli_counters SEC(".maps");

/* The system call in flight on each CPU: its thread and entry time. sched_switch parks it in
 * the thread's state when the thread leaves the CPU and brings it back when it returns, so
 * sys_enter and sys_exit, which run on every system call of the machine, touch no task storage
 * and no hash map (a per-CPU array lookup is inlined), and read the clock once per call. */
struct sys_slot {
	__u64 ts;
	__u64 jiffies;
	__u32 tid;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sys_slot);
} gt_sli_sys SEC(".maps");

/* The kernel's tick rate, from its config (0 when libbpf cannot find it): a system call that
 * did not span enough jiffies cannot be long, and its exit needs no clock read. */
extern unsigned int CONFIG_HZ __kconfig __weak;

/* Now, for the scheduler's programs: the clock of task t's run queue (sched_clock, ns), which
 * the scheduler updated just before its tracepoints fire. It is the clock /proc/PID/schedstat's
 * run_delay is kept with, and cheaper than reading a clock again in the scheduler's hot path.
 * Kernels without group scheduling (no cfs_rq->rq) use the ktime clock instead: one clock per
 * kernel, never a mix. 0 when the run queue cannot be read. */
static __always_inline __u64 sched_now(struct task_struct *t)
{
	if (bpf_core_field_exists(struct cfs_rq, rq))
		return t->se.cfs_rq->rq->clock;
	return bpf_ktime_get_ns();
}

static __always_inline struct sys_slot *sys_slot(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gt_sli_sys, &zero);
}

/* task_passes with direct BTF loads when no target is set (every task but galatop's own):
 * the common case, in the scheduler's hot path, without a probe read. */
static __always_inline bool sli_passes(struct task_struct *t)
{
	if (!targets_any())
		return !exclude_tgid || t->tgid != exclude_tgid;
	return task_passes(t);
}

static __always_inline struct gt_sli_counters *counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gt_sli_counters, &zero);
}

/* floor(log2 v) for v >= 1, without __builtin_clzll, which BPF lacks. */
static __always_inline __u32 log2_of(__u64 v)
{
	__u32 e = 0;

	if (v >> 32) { v >>= 32; e += 32; }
	if (v >> 16) { v >>= 16; e += 16; }
	if (v >> 8) { v >>= 8; e += 8; }
	if (v >> 4) { v >>= 4; e += 4; }
	if (v >> 2) { v >>= 2; e += 2; }
	if (v >> 1) { e += 1; }
	return e;
}

/* model/hist.h's hist_index(v) as its row (hist_index / GT_SLI_HSUB, returned) and its place
 * in the row (*sub). */
static __always_inline __u32 hist_row(__u64 v, __u32 *sub)
{
	__u32 e;

	if (v < GT_SLI_HSUB) {
		*sub = (__u32)v;
		return 0;
	}
	e = log2_of(v);
	*sub = (__u32)(v >> (e - 5)) & (GT_SLI_HSUB - 1);
	return e - 4;
}

/* The v2 cgroup id of t, by direct BTF loads: tp_btf programs may, and they cost a fraction of
 * the probe reads BPF_CORE_READ does (this runs in the scheduler's hot path). */
static __always_inline __u64 task_cgroup_id(struct task_struct *t)
{
	return t->cgroups->dfl_cgrp->kn->id;
}

/* The thread entry of tid, created (named comm) when new; NULL when the map is full. */
static __always_inline struct gt_sli_thread *thread_of(__u32 tid, __u32 tgid, const char *comm)
{
	struct gt_sli_thread *th = bpf_map_lookup_elem(&gt_sli_threads, &tid);

	if (!th) {
		struct gt_sli_thread z = { .tgid = tgid };

		bpf_probe_read_kernel_str(z.comm, sizeof(z.comm), comm);
		bpf_map_update_elem(&gt_sli_threads, &tid, &z, BPF_NOEXIST);
		th = bpf_map_lookup_elem(&gt_sli_threads, &tid);
	}
	return th;
}

/* Row row of process tgid's histogram of sli, created when new; NULL (counted) when the map is
 * full. */
static __always_inline struct gt_sli_hrow *hist_row_of(__u32 tgid, __u32 sli, __u32 row,
						       struct gt_sli_counters *c)
{
	struct gt_sli_hkey hk = { .tgid = tgid, .sli = (__u16)sli, .row = (__u16)row };
	struct gt_sli_hrow *v = bpf_map_lookup_elem(&gt_sli_hist, &hk);

	if (!v) {
		bpf_map_update_elem(&gt_sli_hist, &hk, &zero_row, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&gt_sli_hist, &hk);
		if (!v && c)
			c->drops++;
	}
	return v;
}

/* Adds one delay of ns straight to the maps (block requests, completed away from the task). */
static __always_inline void charge(__u32 tid, __u32 tgid, __u64 cgroup_id, const char *comm,
				   __u32 sli, __u64 ns)
{
	struct gt_sli_counters *c = counters();
	struct gt_sli_thread *th;
	struct gt_sli_hrow *v;
	__u32 row, sub;

	if (sli >= GT_SLI_MAX)
		return;
	th = thread_of(tid, tgid, comm);
	if (!th) {
		if (c)
			c->drops++;
		return;
	}
	th->cgroup_id = cgroup_id;
	__sync_fetch_and_add(&th->ns[sli], ns);
	__sync_fetch_and_add(&th->count[sli], 1);
	row = hist_row(ns, &sub);
	v = hist_row_of(tgid, sli, row, c);
	if (v)
		__sync_fetch_and_add(&v->n[sub & (GT_SLI_HSUB - 1)], 1);
	if (c)
		c->events++;
}

/* What flush_row needs of its flush. */
struct flush_ctx {
	struct tstate *s;
	struct gt_sli_counters *c;
	__u32 tgid;
};

/* bpf_loop's callback: moves pending row i of a task into its process's histogram. (A loop of
 * its own: the verifier checks it once, not once per row.) */
static long flush_row(__u64 i, void *arg)
{
	struct flush_ctx *f = arg;
	struct tstate *s = f->s;
	struct gt_sli_hrow *v;

	if (i >= PENDING)
		return 1;
	v = hist_row_of(f->tgid, s->key[i] >> 16, s->key[i] & 0xffff, f->c);
	for (int j = 0; j < GT_SLI_HSUB; j++) {
		if (!s->n[i][j])
			continue;
		if (v)
			__sync_fetch_and_add(&v->n[j], s->n[i][j]);
		s->n[i][j] = 0;
	}
	return 0;
}

/* Moves task t's pending delays into the maps; now (sched_now) times the next flush. */
static __noinline void flush(struct task_struct *t, struct tstate *s, __u64 now)
{
	struct flush_ctx f = { .s = s, .c = counters(), .tgid = t->tgid };
	struct gt_sli_thread *th;
	__u32 events = 0;

	s->flush_ts = now;
	th = thread_of(t->pid, f.tgid, t->comm);
	if (!th) {
		/* Kept for the next flush; the delays that find no room are lost then. */
		if (f.c)
			f.c->drops++;
		return;
	}
	th->cgroup_id = task_cgroup_id(t);
	for (int i = 0; i < GT_SLI_MAX; i++) {
		if (!s->count[i])
			continue;
		__sync_fetch_and_add(&th->ns[i], s->ns[i]);
		__sync_fetch_and_add(&th->count[i], s->count[i]);
		events += s->count[i];
	}
	bpf_loop(s->npend < PENDING ? s->npend : PENDING, flush_row, &f, 0);
	__builtin_memset(s->ns, 0, sizeof(s->ns));
	__builtin_memset(s->count, 0, sizeof(s->count));
	s->npend = 0;
	s->full = 0;
	if (f.c)
		f.c->events += events;
}

/* Adds one delay of ns to a task's pending delays (s): a total and a count in a histogram row.
 * Every program that charges a task ends with settle(), which keeps room in s->key for the
 * three charges one program run makes at most per task. */
static __always_inline void charge_task(struct tstate *s, __u32 sli, __u64 ns)
{
	__u32 sub, row = hist_row(ns, &sub), key = PEND_KEY(sli, row), i;

	if (sli >= GT_SLI_MAX)
		return;
	s->ns[sli] += ns;
	s->count[sli]++;
	for (i = 0; i < PENDING; i++) {
		if (i >= s->npend || s->key[i] == key)
			break;
	}
	if (i >= PENDING)
		return; /* settle() leaves room: not reached */
	/* i, not s->npend, indexes below (the verifier knows the bound of i only). */
	asm volatile("" : "+r"(i));
	if (i >= s->npend) { /* a new row: its counts were zeroed by the last flush */
		s->key[i] = key;
		s->npend = i + 1;
	}
	if (++s->n[i][sub & (GT_SLI_HSUB - 1)] >= PENDING_FULL)
		s->full = 1;
}

/* Ends a program's charges to task t: its pending delays reach the maps at most every FLUSH_NS
 * (and at its exit), not at every event, which the scheduler's hot path could not afford, or
 * sooner when the next run's charges might not fit. now: sched_now(t). */
static __always_inline void settle(struct task_struct *t, struct tstate *s, __u64 now)
{
	if (s->npend > PENDING - 3 || s->full || now - s->flush_ts >= FLUSH_NS)
		flush(t, s, now);
}

static __always_inline struct tstate *state_of(struct task_struct *t)
{
	return bpf_task_storage_get(&gt_sli_state, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

static __always_inline __u32 off_sli(__u32 kind)
{
	return kind == OFF_SLEEP ? GT_SLI_CPU_SLEEP
	       : kind == OFF_IOWAIT ? GT_SLI_CPU_IOWAIT
				    : GT_SLI_CPU_BLOCK;
}

/* Whether a task that leaves the CPU in state prev_state (preempt: by preemption) starts an
 * off-CPU stretch its switch-in will charge (sleep, block, iowait): not when it stays runnable,
 * nor for idle kernel threads (D with TASK_NOLOAD), stopped, traced or dead tasks. */
static __always_inline bool goes_to_sleep(bool preempt, unsigned int prev_state)
{
	if (preempt)
		return false;
	return (prev_state & GT_TASK_INTERRUPTIBLE) ||
	       ((prev_state & GT_TASK_UNINTERRUPTIBLE) && !(prev_state & GT_TASK_NOLOAD));
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gt_sli_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = sched_now(prev->pid ? prev : next); /* the idle task has no cfs_rq */
	struct sys_slot *c = longsys_on ? sys_slot() : NULL;
	struct tstate *s;

	if (!now)
		return 0;

	/* Switch-out of prev: only a task that goes to sleep (or leaves in a system call, when
	 * cpu_longsys runs) has anything to note; a preempted task's wait is read at its
	 * switch-in like every other, so preemptions cost no task storage lookup here. */
	if (prev->pid && (goes_to_sleep(preempt, prev_state) || (c && c->tid == prev->pid)) &&
	    sli_passes(prev)) {
		s = state_of(prev);
		if (s) {
			if (c && c->tid == prev->pid) { /* leaves in a system call: park it */
				s->sys_ts = c->ts;
				s->sys_jiffies = c->jiffies;
				c->tid = 0;
			} else if (c) {
				s->sys_ts = 0;
			}
			if (goes_to_sleep(preempt, prev_state)) {
				s->off_ts = now;
				s->off_kind = (prev_state & GT_TASK_INTERRUPTIBLE) ? OFF_SLEEP
					      : BPF_CORE_READ_BITFIELD(prev, in_iowait) ? OFF_IOWAIT
											 : OFF_BLOCK;
			}
			if (!s->seen) { /* new: the baselines its switch-in reads against */
				s->rundelay = prev->sched_info.run_delay;
				s->swapin = swapin_delayacct && prev->delays ? prev->delays->swapin_delay : 0;
				s->seen = 1;
			}
		}
	}

	/* Switch-in of next: its wait for a CPU ends. The scheduler noted when the task became
	 * runnable (sched_info.last_queued: its wakeup, or its preemption) and adds the wait to
	 * run_delay just after this tracepoint, with this same clock: the wait is run_delay's
	 * growth since the last switch-in, this last stretch included (so a task migrated while
	 * it waited counts both run queues), and a sleep ends where its wait began. No wakeup
	 * hook: two programs less per context switch. cpu_rundelay is the same growth (user space
	 * reports it from cpu_wait's figures), and the swap-in delay that delay accounting added
	 * since the last switch-in is read here too, so that nothing is read at switch-out. */
	if (next->pid && sli_passes(next)) {
		s = state_of(next);
		if (s) {
			__u64 q = next->sched_info.last_queued;
			__u64 rd = next->sched_info.run_delay + (q && q < now ? now - q : 0);
			__u64 wait, sw = 0;

			if (swapin_delayacct) {
				struct task_delay_info *d = next->delays;

				if (d)
					sw = d->swapin_delay;
			}
			/* A task's first run (pcount counts its runs): its whole run_delay, the wait
			 * since its fork, is new. */
			if (!s->seen && !next->sched_info.pcount)
				s->seen = 1; /* against rundelay 0 */
			wait = rd > s->rundelay ? rd - s->rundelay : 0;
			if (c && s->sys_ts) { /* back in its system call */
				c->ts = s->sys_ts;
				c->jiffies = s->sys_jiffies;
				c->tid = next->pid;
				s->sys_ts = 0;
			}
			if (s->seen) {
				if (s->off_ts && now - s->off_ts > wait)
					charge_task(s, off_sli(s->off_kind), now - s->off_ts - wait);
				charge_task(s, GT_SLI_CPU_WAIT, wait);
				if (sw > s->swapin)
					charge_task(s, GT_SLI_MEM_SWAPIN, sw - s->swapin);
			}
			s->rundelay = rd;
			s->swapin = sw;
			s->seen = 1;
			s->off_ts = 0;
			settle(next, s, now);
		}
	}
	return 0;
}

/* System call entry: every call of the machine passes here, so it only notes the thread, the
 * jiffies and the clock in this CPU's slot; targets are checked at exit, for long calls only. */
SEC("tp_btf/sys_enter")
int BPF_PROG(gt_sli_sys_enter, struct pt_regs *regs, long id)
{
	struct sys_slot *c = sys_slot();

	if (!c)
		return 0;
	c->tid = (__u32)bpf_get_current_pid_tgid();
	c->jiffies = bpf_jiffies64();
	c->ts = bpf_ktime_get_ns();
	return 0;
}

/* System call exit: a call that spanned fewer jiffies than longsys_ns (with two ticks to spare
 * for the tick's own lag) returns without reading the clock. */
SEC("tp_btf/sys_exit")
int BPF_PROG(gt_sli_sys_exit, struct pt_regs *regs, long ret)
{
	struct sys_slot *c = sys_slot();
	struct task_struct *t;
	struct tstate *s;
	__u64 now, d;

	if (!c || c->tid != (__u32)bpf_get_current_pid_tgid())
		return 0;
	c->tid = 0;
	if (CONFIG_HZ && (bpf_jiffies64() - c->jiffies + 2) * 1000000000ull < longsys_ns * CONFIG_HZ)
		return 0;
	now = bpf_ktime_get_ns();
	d = now - c->ts;
	if (d < longsys_ns)
		return 0;
	t = bpf_get_current_task_btf();
	if (!sli_passes(t))
		return 0;
	s = state_of(t);
	if (s) {
		charge_task(s, GT_SLI_CPU_LONGSYS, d);
		settle(t, s, sched_now(t));
	}
	return 0;
}

/* Begin/end tracepoint pairs timing the current task (reclaim, compaction): which is the SLI
 * they charge, and picks where the begin waits for its end. */
static __always_inline __u64 *span_ts(struct tstate *s, int which)
{
	return which == GT_SLI_MEM_RECLAIM ? &s->reclaim_ts : &s->compact_ts;
}

static __always_inline void span_begin(int which)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct tstate *s;

	if (!task_passes(t))
		return;
	s = state_of(t);
	if (s)
		*span_ts(s, which) = bpf_ktime_get_ns();
}

static __always_inline void span_end(int which)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct tstate *s = bpf_task_storage_get(&gt_sli_state, t, NULL, 0);
	__u64 *ts;

	if (!s)
		return;
	ts = span_ts(s, which);
	if (*ts) {
		charge_task(s, which, bpf_ktime_get_ns() - *ts);
		settle(t, s, sched_now(t));
	}
	*ts = 0;
}

/* The programs of one begin/end pair: tracepoints TP_begin and TP_end, charging sli. */
#define SPAN_PROGS(name, tp, sli)                                                                  	SEC("tp_btf/" tp "_begin")                                                                 	int gt_sli_##name##_begin(__u64 *ctx)                                                      	{                                                                                          		span_begin(sli);                                                                   		return 0;                                                                          	}                                                                                          	SEC("tp_btf/" tp "_end")                                                                   	int gt_sli_##name##_end(__u64 *ctx)                                                        	{                                                                                          		span_end(sli);                                                                     		return 0;                                                                          	}

SPAN_PROGS(dreclaim, "mm_vmscan_direct_reclaim", GT_SLI_MEM_RECLAIM)
SPAN_PROGS(mreclaim, "mm_vmscan_memcg_reclaim", GT_SLI_MEM_RECLAIM)
SPAN_PROGS(compact, "mm_compaction", GT_SLI_MEM_COMPACT)

/* Swap-in without delay accounting: a page fault's entry starts the clock; the fault's end,
 * when it was major (the perf event PERF_COUNT_SW_PAGE_FAULTS_MAJ, counted as the fault
 * completes), on anonymous or tmpfs memory (where a major fault means a read from swap or
 * zswap), charges it. Faults of the kernel on user addresses (a read() into a swapped-out
 * buffer) count too; faults of get_user_pages raise no perf event and are missed. Faults
 * are not nested: the entry of each is kept until the next. */
static __always_inline void fault_begin(unsigned long address)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct tstate *s;

	if (!swapin_faults || !t->mm || !sli_passes(t))
		return;
	s = state_of(t);
	if (!s)
		return;
	s->fault_ts = bpf_ktime_get_ns();
	s->fault_addr = address;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(gt_sli_fault_user, unsigned long address)
{
	fault_begin(address);
	return 0;
}

/* The kernel's faults on user memory, except those with page faults disabled: the no-fault
 * copies of BPF programs and perf reading a task's user stack (it may be swapped out) raise
 * them, give up at once, and would otherwise hide the entry of the fault in progress. */
SEC("tp_btf/page_fault_kernel")
int BPF_PROG(gt_sli_fault_kernel, unsigned long address)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if ((long)address < 0 || t->pagefault_disabled)
		return 0;
	fault_begin(address);
	return 0;
}

#define TMPFS_MAGIC 0x01021994

/* bpf_find_vma's callback: whether the faulting address lies in anonymous or tmpfs memory. */
static long swap_backed(struct task_struct *t, struct vm_area_struct *vma, void *data)
{
	struct file *f = vma->vm_file;

	*(bool *)data = !f || f->f_inode->i_sb->s_magic == TMPFS_MAGIC;
	return 0;
}

SEC("perf_event")
int gt_sli_majfault(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct tstate *s = bpf_task_storage_get(&gt_sli_state, t, NULL, 0);
	__u64 addr = ctx->addr, ts;
	bool swap = false;

	if (!s || !s->fault_ts)
		return 0;
	ts = s->fault_ts;
	s->fault_ts = 0;
	if ((s->fault_addr ^ addr) >> 12) /* not the fault whose entry was seen */
		return 0;
	if (bpf_find_vma(t, addr, swap_backed, &swap, 0) || !swap) {
		return 0;
	}
	charge_task(s, GT_SLI_MEM_SWAPIN, bpf_ktime_get_ns() - ts);
	settle(t, s, sched_now(t));
	return 0;
}

/* Block requests: the first of insert (scheduler queue) and issue (driver) starts the clock
 * and names the issuer; completion charges it. */
static __always_inline void bio_start(struct request *rq)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct bio_start b = { .ts = bpf_ktime_get_ns() }, *old;
	__u64 key = (__u64)rq;

	b.rq_start = rq->start_time_ns;
	old = bpf_map_lookup_elem(&gt_sli_bio, &key);
	if (old && old->rq_start == b.rq_start)
		return; /* issued after its insert: the clock runs already */
	if (!task_passes(t)) {
		if (old) /* a request that never completed (merged away) left it */
			bpf_map_delete_elem(&gt_sli_bio, &key);
		return;
	}
	b.tgid = t->tgid;
	b.tid = t->pid;
	b.cgroup_id = task_cgroup_id(t);
	bpf_probe_read_kernel_str(b.comm, sizeof(b.comm), t->comm);
	bpf_map_update_elem(&gt_sli_bio, &key, &b, BPF_ANY);
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(gt_sli_rq_insert, struct request *rq)
{
	bio_start(rq);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(gt_sli_rq_issue, struct request *rq)
{
	bio_start(rq);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(gt_sli_rq_complete, struct request *rq)
{
	__u64 key = (__u64)rq;
	struct bio_start *b = bpf_map_lookup_elem(&gt_sli_bio, &key);

	if (!b)
		return 0;
	charge(b->tid, b->tgid, b->cgroup_id, b->comm, GT_SLI_BIO_LATENCY,
	       bpf_ktime_get_ns() - b->ts);
	bpf_map_delete_elem(&gt_sli_bio, &key);
	return 0;
}

/* A thread's totals are final when it exits (its pending delays flushed now); user space reads
 * them once more, then drops them. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(gt_sli_exit, struct task_struct *p)
{
	struct tstate *s = bpf_task_storage_get(&gt_sli_state, p, NULL, 0);
	__u32 tid = p->pid;
	struct gt_sli_thread *th;

	if (s)
		flush(p, s, 0);
	th = bpf_map_lookup_elem(&gt_sli_threads, &tid);
	if (th)
		th->dead = 1;
	return 0;
}

/* A thread's name changes at exec (a forked command starts as its parent's copy). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(gt_sli_exec, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct gt_sli_thread *th = bpf_map_lookup_elem(&gt_sli_threads, &tid);

	if (th)
		bpf_probe_read_kernel_str(th->comm, sizeof(th->comm), p->comm);
	return 0;
}

/* Follows new processes (not threads) of target processes into the pid set. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(gt_sli_fork, struct task_struct *parent, struct task_struct *child)
{
	if (follow_children)
		targets_follow_fork(parent, child);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
