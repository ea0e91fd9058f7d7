// SPDX-License-Identifier: GPL-2.0
/* galatop's SLI probes: the time tasks lose to the scheduler, memory and block I/O, measured
 * with tracepoints only (tp_btf) and aggregated in the kernel: totals per thread and log-linear
 * histograms per process, read by user space (bpf/sli.c) every refresh. Correct with schedstats
 * and delay accounting off (swap-in alone needs delay accounting; see docs/sli.md). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sli_event.h"
#include "targets.bpf.h"

#define TASK_RUNNING 0x0
#define TASK_INTERRUPTIBLE 0x1
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_NOLOAD 0x400
#define TASK_DEAD 0x80

const volatile __u64 longsys_ns = 10000000;
const volatile bool swapin_delayacct = false; /* delays->swapin_delay is kept (delayacct on) */
const volatile bool follow_children = false;  /* new processes of target pids become targets */

/* Off-CPU states remembered at switch-out, closed at wakeup. */
enum { OFF_NONE, OFF_SLEEP, OFF_BLOCK, OFF_IOWAIT };

#define PENDING 8		/* distinct histogram buckets a task keeps between flushes */
#define FLUSH_NS 100000000ull	/* a task's pending delays reach the maps within 100 ms */

struct pending {
	__u16 sli, bucket;
	__u32 n;
};

/* Per-task timing state and delays not yet in the maps; freed with the task. */
struct tstate {
	__u64 ns[GT_SLI_MAX];	   /* pending totals */
	__u32 count[GT_SLI_MAX];
	struct pending pend[PENDING];
	__u32 npend;
	__u64 flush_ts;
	__u64 wait_ts;	   /* became runnable (wakeup, preemption), not yet on CPU */
	__u64 off_ts;	   /* switched out asleep */
	__u64 rundelay;	   /* sched_info.run_delay at the last switch-out */
	__u64 swapin;	   /* delays->swapin_delay at the last switch-out */
	__u64 sys_ts;	   /* current system call entry */
	__u64 reclaim_ts;  /* direct or memcg reclaim entry */
	__u64 compact_ts;  /* compaction entry */
	__u32 off_kind;	   /* OFF_* of off_ts */
	__u32 seen;	   /* rundelay and swapin hold a baseline */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tstate);
} gt_sli_state SEC(".maps");

/* Preallocated: an update in the scheduler's hot path must not depend on an allocation that
 * can fail there (about 3.5 MB and 4.5 MB). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct gt_sli_thread);
} gt_sli_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct gt_sli_hkey);
	__type(value, __u64);
} gt_sli_hist SEC(".maps");

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

static __always_inline struct gt_sli_counters *counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gt_sli_counters, &zero);
}

/* model/hist.h's hist_index (5 sub-bucket bits) without __builtin_clzll, which BPF lacks. */
static __always_inline __u32 bucket_of(__u64 v)
{
	__u32 e = 0;

	if (v < 32)
		return (__u32)v;
	if (v >> 32) { v >>= 32; e += 32; }
	if (v >> 16) { v >>= 16; e += 16; }
	if (v >> 8) { v >>= 8; e += 8; }
	if (v >> 4) { v >>= 4; e += 4; }
	if (v >> 2) { v >>= 2; e += 2; }
	if (v >> 1) { e += 1; }
	return e;
}

static __always_inline __u32 hist_bucket(__u64 v)
{
	__u32 e = bucket_of(v);

	if (v < 32)
		return (__u32)v;
	return (e - 5 + 1) * 32 + (__u32)(v >> (e - 5)) - 32;
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

/* Adds n delays to bucket of process tgid's histogram of sli. */
static __always_inline void hist_add(__u32 tgid, __u32 sli, __u32 bucket, __u64 n,
				     struct gt_sli_counters *c)
{
	struct gt_sli_hkey hk = { .tgid = tgid, .sli = (__u16)sli, .bucket = (__u16)bucket };
	__u64 *v = bpf_map_lookup_elem(&gt_sli_hist, &hk);

	if (v) {
		__sync_fetch_and_add(v, n);
	} else if (bpf_map_update_elem(&gt_sli_hist, &hk, &n, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&gt_sli_hist, &hk);
		if (v)
			__sync_fetch_and_add(v, n);
		else if (c)
			c->drops++;
	}
}

/* Adds one delay of ns straight to the maps (block requests, completed away from the task). */
static __always_inline void charge(__u32 tid, __u32 tgid, __u64 cgroup_id, const char *comm,
				   __u32 sli, __u64 ns)
{
	struct gt_sli_counters *c = counters();
	struct gt_sli_thread *th;

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
	hist_add(tgid, sli, hist_bucket(ns), 1, c);
	if (c)
		c->events++;
}

/* Moves task t's pending delays into the maps. */
static __always_inline void flush(struct task_struct *t, struct tstate *s, __u64 now)
{
	struct gt_sli_counters *c = counters();
	__u32 tgid = t->tgid, events = 0;
	struct gt_sli_thread *th;

	s->flush_ts = now;
	th = thread_of(t->pid, tgid, t->comm);
	if (!th) {
		/* Kept for the next flush; only what overflows the pending buckets is lost. */
		if (c)
			c->drops++;
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
	for (int i = 0; i < PENDING; i++) {
		if (i >= s->npend)
			break;
		hist_add(tgid, s->pend[i].sli, s->pend[i].bucket, s->pend[i].n, c);
	}
	__builtin_memset(s->ns, 0, sizeof(s->ns));
	__builtin_memset(s->count, 0, sizeof(s->count));
	s->npend = 0;
	if (c)
		c->events += events;
}

/* Adds one delay of ns to task t's pending delays: the maps are updated at most every
 * FLUSH_NS per task (and at its exit), not at every event, which the scheduler's hot path
 * could not afford. */
static __always_inline void charge_task(struct task_struct *t, struct tstate *s, __u32 sli,
					__u64 ns, __u64 now)
{
	__u32 bucket = hist_bucket(ns), i;

	if (sli >= GT_SLI_MAX)
		return;
	s->ns[sli] += ns;
	s->count[sli]++;
	for (i = 0; i < PENDING; i++) {
		if (i >= s->npend)
			break;
		if (s->pend[i].sli == sli && s->pend[i].bucket == bucket) {
			s->pend[i].n++;
			break;
		}
	}
	if (i >= s->npend) {
		if (s->npend >= PENDING)
			flush(t, s, now); /* room for this one; totals go along */
		i = s->npend;
		if (i >= PENDING) {
			struct gt_sli_counters *c = counters();

			if (c)
				c->drops++; /* the maps refused the flush: this bucket is lost */
		} else {
			s->pend[i].sli = (__u16)sli;
			s->pend[i].bucket = (__u16)bucket;
			s->pend[i].n = 1;
			s->npend = i + 1;
		}
	}
	if (now - s->flush_ts >= FLUSH_NS)
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

/* A woken task: its sleep ends and its wait for a CPU begins. */
static __always_inline void on_wakeup(struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns();
	struct tstate *s;

	if (!p->pid || !task_passes(p))
		return;
	s = state_of(p);
	if (!s)
		return;
	if (s->off_ts) {
		charge_task(p, s, off_sli(s->off_kind), now - s->off_ts, now);
		s->off_ts = 0;
	}
	s->wait_ts = now;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(gt_sli_wakeup, struct task_struct *p)
{
	on_wakeup(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(gt_sli_wakeup_new, struct task_struct *p)
{
	on_wakeup(p);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gt_sli_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct tstate *s;

	/* Switch-out of prev (not its last one: its exit flushed what it had). */
	if (prev->pid && !(prev_state & TASK_DEAD) && task_passes(prev)) {
		s = state_of(prev);
		if (s) {
			__u64 rd = prev->sched_info.run_delay;
			__u64 sw = 0;

			if (swapin_delayacct) {
				struct task_delay_info *d = prev->delays;

				if (d)
					sw = d->swapin_delay;
			}
			if (s->seen) {
				if (rd > s->rundelay)
					charge_task(prev, s, GT_SLI_CPU_RUNDELAY, rd - s->rundelay, now);
				if (sw > s->swapin)
					charge_task(prev, s, GT_SLI_MEM_SWAPIN, sw - s->swapin, now);
			}
			s->rundelay = rd;
			s->swapin = sw;
			s->seen = 1;
			if (preempt || prev_state == TASK_RUNNING) {
				s->wait_ts = now;
				s->off_ts = 0;
			} else if (prev_state & TASK_INTERRUPTIBLE) {
				s->off_ts = now;
				s->off_kind = OFF_SLEEP;
			} else if ((prev_state & TASK_UNINTERRUPTIBLE) && !(prev_state & TASK_NOLOAD)) {
				s->off_ts = now;
				s->off_kind = BPF_CORE_READ_BITFIELD(prev, in_iowait) ? OFF_IOWAIT
											   : OFF_BLOCK;
			} else {
				s->off_ts = 0; /* idle kernel threads, stopped, traced, dead */
			}
		}
	}

	/* Switch-in of next: its wait for a CPU ends. A sleep still open missed its wakeup (the
	 * wakeup program found the task storage busy: it ran nested in another program on that
	 * CPU); it is closed here, its wait for the CPU included. */
	if (next->pid && task_passes(next)) {
		s = bpf_task_storage_get(&gt_sli_state, next, NULL, 0);
		if (s) {
			if (s->wait_ts)
				charge_task(next, s, GT_SLI_CPU_WAIT, now - s->wait_ts, now);
			else if (s->off_ts)
				charge_task(next, s, off_sli(s->off_kind), now - s->off_ts, now);
			s->wait_ts = 0;
			s->off_ts = 0;
		}
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(gt_sli_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct tstate *s;

	if (!task_passes(t))
		return 0;
	s = state_of(t);
	if (s)
		s->sys_ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(gt_sli_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct tstate *s = bpf_task_storage_get(&gt_sli_state, t, NULL, 0);
	__u64 now, d;

	if (!s || !s->sys_ts)
		return 0;
	now = bpf_ktime_get_ns();
	d = now - s->sys_ts;
	s->sys_ts = 0;
	if (d >= longsys_ns)
		charge_task(t, s, GT_SLI_CPU_LONGSYS, d, now);
	return 0;
}

/* Begin/end pairs on the current task (reclaim, compaction). */
static __always_inline void span_begin(int which)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct tstate *s;

	if (!task_passes(t))
		return;
	s = state_of(t);
	if (!s)
		return;
	if (which == GT_SLI_MEM_RECLAIM)
		s->reclaim_ts = bpf_ktime_get_ns();
	else
		s->compact_ts = bpf_ktime_get_ns();
}

static __always_inline void span_end(int which)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct tstate *s = bpf_task_storage_get(&gt_sli_state, t, NULL, 0);
	__u64 *ts;

	if (!s)
		return;
	ts = which == GT_SLI_MEM_RECLAIM ? &s->reclaim_ts : &s->compact_ts;
	if (*ts) {
		__u64 now = bpf_ktime_get_ns();

		charge_task(t, s, which, now - *ts, now);
	}
	*ts = 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int gt_sli_dreclaim_begin(__u64 *ctx)
{
	span_begin(GT_SLI_MEM_RECLAIM);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int gt_sli_dreclaim_end(__u64 *ctx)
{
	span_end(GT_SLI_MEM_RECLAIM);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int gt_sli_mreclaim_begin(__u64 *ctx)
{
	span_begin(GT_SLI_MEM_RECLAIM);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int gt_sli_mreclaim_end(__u64 *ctx)
{
	span_end(GT_SLI_MEM_RECLAIM);
	return 0;
}

SEC("tp_btf/mm_compaction_begin")
int gt_sli_compact_begin(__u64 *ctx)
{
	span_begin(GT_SLI_MEM_COMPACT);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int gt_sli_compact_end(__u64 *ctx)
{
	span_end(GT_SLI_MEM_COMPACT);
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
		flush(p, s, bpf_ktime_get_ns());
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
