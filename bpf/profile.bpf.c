// SPDX-License-Identifier: GPL-2.0
/* galatop's kernel side: on-CPU sampling, off-CPU blocking, user page faults, allocations not
 * freed (leak.bpf.h), anonymous memory mapped (growth.bpf.h) and process exec/exit, all filtered in the kernel before any stack is taken, all writing variable-length
 * struct gt_event records into one ring buffer. User space (bpf/probes.c) picks the programs
 * to load with autoload and sets the const volatile knobs below before load; the CPU set
 * (gt_cpus) is a map it may change while the probes run. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kabi.h"
#include "gt_event.h"
#include "targets.bpf.h"
#include "ustack.bpf.h"
#include "python.bpf.h"

/* Targets (filter_*, gt_pids, current_passes) come from targets.bpf.h. */
const volatile bool follow_children = false;
const volatile bool no_idle = false;
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile __u64 min_block_ns = 1000000;
const volatile __u64 max_block_ns = ~0ULL;
const volatile __u32 state_filter = 0; /* 0: any state; else a mask of task states */
/* Records wake the reader only once this much is waiting: user space drains on its own
 * schedule, so a wakeup per record would cost a context switch per sample. */
const volatile __u64 wakeup_bytes = 0;
/* Off-CPU and page-fault records per second per CPU past which only 1 event in n is taken, with
 * weight n (n adapts every RATE_WINDOW_NS); 0: every event. */
const volatile __u32 event_rate = 0;
/* DWARF mode: user stacks are this many bytes of stack copied with the user registers instead
 * of a frame-pointer walk; 0 = frame pointers. */
const volatile __u32 ustack_copy = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* resized by user space */
} gt_events SEC(".maps");

static __always_inline __u64 wakeup_flags(void)
{
	return bpf_ringbuf_query(&gt_events, BPF_RB_AVAIL_DATA) >= wakeup_bytes
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gt_counters);
} gt_counters SEC(".maps");

/* A record with room for the Python frames, the user registers and the stack copy after its
 * stacks, wherever those end; the copy goes a page at a time, so the last chunk may reach one
 * page past the limit. */
#define PAGE 4096
#define PY_BYTES (GT_PY_MAX_FRAMES * sizeof(struct gt_pyframe))
struct gt_record_buf {
	struct gt_event e;
	__u8 tail[PY_BYTES + sizeof(struct gt_uregs) + GT_USTACK_MAX + PAGE];
};

/* One record under construction per CPU and per program kind: a CPU-clock sample can interrupt
 * a tp_btf program on the same CPU, so they must not share a slot. */
enum { SLOT_ONCPU, SLOT_OFFCPU, SLOT_MEM, SLOT_LEAK, SLOT_GROWTH, NR_SLOTS };
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_SLOTS);
	__type(key, __u32);
	__type(value, struct gt_record_buf);
} gt_scratch SEC(".maps");

/* Off-CPU: the record built at switch-out (stacks, switch-out time), keyed by tid, emitted and
 * deleted at switch-in. Not preallocated: only threads that are blocked right now use memory.
 * No BTF value type: in DWARF mode user space grows the value by the user stack copy
 * (sizeof(struct gt_uregs) + ustack_copy), so FP mode keeps its small entries. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct gt_event));
} gt_offcpu_start SEC(".maps");

/* The CPUs whose events are taken (value 1), one entry per possible CPU, sized and filled by
 * user space. A map, not rodata: the live view changes it at run time (probes__set_cpus). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} gt_cpus SEC(".maps");

/* Per-CPU event sampling state, [GT_RATE_OFFCPU] and [GT_RATE_MEM]. */
struct gt_rate {
	__u64 win_start; /* start of the current window */
	__u64 seen;	 /* events in it */
	__u64 period;	 /* take 1 in period */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct gt_rate);
} gt_rates SEC(".maps");

#define RATE_WINDOW_NS 100000000ull

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline bool cpu_passes(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u8 *on = bpf_map_lookup_elem(&gt_cpus, &cpu);

	return on && *on;
}

static __always_inline struct gt_counters *counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gt_counters, &zero);
}

#define COUNT(c, field)                                                                            \
	do {                                                                                       \
		if (c)                                                                             \
			__sync_fetch_and_add(&(c)->field, 1);                                      \
	} while (0)

/* The weight of the current event of a kind (GT_RATE_*): 1 when every event is taken, n when
 * each is taken with probability 1/n, 0 when this one is left out. Each window's n comes from the last window's rate;
 * within a window n doubles whenever the events taken pass the allowance (a sudden storm). */
static __always_inline __u64 rate_weight(__u32 kind, __u64 now, struct gt_counters *c)
{
	__u64 allowance = (__u64)event_rate * RATE_WINDOW_NS / 1000000000ull;
	struct gt_rate *r;
	__u64 w;

	if (!event_rate || kind > GT_RATE_MEM)
		return 1;
	r = bpf_map_lookup_elem(&gt_rates, &kind);
	if (!r)
		return 1;
	if (!allowance)
		allowance = 1;
	if (now - r->win_start >= RATE_WINDOW_NS) {
		r->period = r->seen > allowance ? (r->seen + allowance - 1) / allowance : 1;
		r->seen = 0;
		r->win_start = now;
	}
	if (!r->period)
		r->period = 1;
	r->seen++;
	if (r->seen > allowance * r->period * 2 && r->period < (1u << 20))
		r->period *= 2;
	w = r->period;
	if (c)
		c->period[kind] = w;
	/* A random 1 in w, not every w-th: a program's own rhythm (300 faults here, 100 there)
	 * must not line up with the sampling. */
	if (w > 1 && bpf_get_prandom_u32() % w) {
		if (c)
			__sync_fetch_and_add(&c->skipped[kind], 1);
		return 0;
	}
	return w;
}

static __always_inline void fill_header(struct gt_event *e, __u32 type, __u64 pid_tgid, __u64 ts)
{
	e->type = type;
	e->cpu = bpf_get_smp_processor_id();
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->ts_ns = ts;
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->value = 1;
	e->aux = 0;
	e->kstack_len = 0;
	e->ustack_len = 0;
	e->flags = 0;
	e->pystack_len = 0;
	e->pad16 = 0;
	e->pad32 = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
}

static __always_inline bool current_is_kthread(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, flags) & GT_PF_KTHREAD;
}

/* Kernel frames into stack[0..), user frames right after them, then the Python frames of a
 * CPython thread (python.bpf.h), then in DWARF mode the user registers and stack copy; kernel
 * threads have no user stack, so none is asked for. */
static __always_inline void take_stacks(void *ctx, struct gt_event *e, struct gt_counters *c,
					bool kstack, bool ustack)
{
	__u32 nk = 0, nu = 0;
	long n;

	if (kstack) {
		n = bpf_get_stack(ctx, e->stack, GT_MAX_STACK * sizeof(__u64), 0);
		if (n < 0) {
			e->flags |= GT_EVF_KSTACK_FAIL;
			COUNT(c, kstack_fail);
		} else {
			nk = n / sizeof(__u64);
		}
	}
	if (nk > GT_MAX_STACK)
		nk = GT_MAX_STACK;
	if (ustack && ustack_copy && !current_is_kthread()) {
		py_take(e, nk, c);
		copy_ustack(e, nk + 2 * (__u32)e->pystack_len, ustack_copy,
			    2 * GT_MAX_STACK + 2 * GT_PY_MAX_FRAMES);
	} else if (ustack && !current_is_kthread()) {
		n = bpf_get_stack(ctx, &e->stack[nk], GT_MAX_STACK * sizeof(__u64),
				  BPF_F_USER_STACK);
		if (n < 0) {
			e->flags |= GT_EVF_USTACK_FAIL;
			COUNT(c, ustack_fail);
		} else {
			nu = n / sizeof(__u64);
		}
	}
	if (nu > GT_MAX_STACK)
		nu = GT_MAX_STACK;
	e->kstack_len = nk;
	e->ustack_len = nu;
	if (ustack && !ustack_copy && !current_is_kthread())
		py_take(e, nk + nu, c);
}

/* The used part of a record: header + stacks + Python frames + user stack copy. */
static __always_inline __u64 record_len(struct gt_event *e)
{
	__u64 nk = e->kstack_len, nu = e->ustack_len, np = e->pystack_len, len;

	if (nk > GT_MAX_STACK)
		nk = GT_MAX_STACK;
	if (nu > GT_MAX_STACK)
		nu = GT_MAX_STACK;
	if (np > GT_PY_MAX_FRAMES)
		np = GT_PY_MAX_FRAMES;
	len = GT_EVENT_HDR_SIZE + (nk + nu) * sizeof(__u64) + np * sizeof(struct gt_pyframe);
	if (ustack_copy && (e->flags & GT_EVF_UREGS)) {
		struct gt_uregs *u = (struct gt_uregs *)((__u8 *)e->stack + (nk + nu) * sizeof(__u64) +
							 np * sizeof(struct gt_pyframe));
		__u64 size = u->size;

		if (size > ustack_copy)
			size = ustack_copy;
		len += sizeof(*u) + size;
	}
	return len;
}

/* Sends the used part of a record to user space. */
static __always_inline void emit(struct gt_event *e, struct gt_counters *c)
{
	if (bpf_ringbuf_output(&gt_events, e, record_len(e), wakeup_flags()))
		COUNT(c, drops);
	else
		COUNT(c, samples);
}

static __always_inline struct gt_event *scratch(__u32 slot)
{
	return bpf_map_lookup_elem(&gt_scratch, &slot);
}

SEC("perf_event")
int gt_oncpu(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = pid_tgid;
	struct gt_counters *c = counters();
	struct gt_event *e;

	COUNT(c, total);
	if ((no_idle && !tid) || !cpu_passes() || !current_passes(tgid, tid)) {
		COUNT(c, filtered);
		return 0;
	}
	e = scratch(SLOT_ONCPU);
	if (!e)
		return 0;
	fill_header(e, GT_EV_ONCPU, pid_tgid, bpf_ktime_get_ns());
	take_stacks(ctx, e, c, kernel_stacks, user_stacks && tid);
	emit(e, c);
	return 0;
}

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___old *)t, state);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gt_offcpu, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct gt_counters *c = counters();
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = BPF_CORE_READ(next, pid);
	__u32 tgid, state;
	struct gt_event *e;
	__u64 w;

	/* Switch-in: the blocked time of next is known now. */
	e = bpf_map_lookup_elem(&gt_offcpu_start, &tid);
	if (e) {
		__u64 delta = now - e->ts_ns;

		if (delta >= min_block_ns && delta <= max_block_ns) {
			e->value *= delta / 1000; /* value held the sampling weight */
			e->ts_ns = now;
			emit(e, c);
		} else {
			COUNT(c, filtered);
		}
		bpf_map_delete_elem(&gt_offcpu_start, &tid);
	}

	/* Switch-out: prev is current, so its stacks and filters are taken here. */
	tid = BPF_CORE_READ(prev, pid);
	if (!tid)
		return 0;
	state = task_state(prev);
	if (state & GT_TASK_DEAD) /* its last switch: it never comes back */
		return 0;
	COUNT(c, total);
	tgid = BPF_CORE_READ(prev, tgid);
	if ((state_filter && !(state & state_filter)) || !cpu_passes() ||
	    !current_passes(tgid, tid)) {
		COUNT(c, filtered);
		return 0;
	}
	w = rate_weight(GT_RATE_OFFCPU, now, c);
	if (!w)
		return 0;
	e = scratch(SLOT_OFFCPU);
	if (!e)
		return 0;
	fill_header(e, GT_EV_OFFCPU, (__u64)tgid << 32 | tid, now);
	e->value = w;
	e->aux = state;
	take_stacks(ctx, e, c, kernel_stacks, user_stacks);
	if (bpf_map_update_elem(&gt_offcpu_start, &tid, e, BPF_ANY))
		COUNT(c, drops);
	return 0;
}

static __always_inline int on_fault(void *ctx, __u64 address)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct gt_counters *c = counters();
	__u64 now = bpf_ktime_get_ns(), w;
	struct gt_event *e;

	COUNT(c, total);
	if (!cpu_passes() || !current_passes(pid_tgid >> 32, (__u32)pid_tgid)) {
		COUNT(c, filtered);
		return 0;
	}
	w = rate_weight(GT_RATE_MEM, now, c);
	if (!w)
		return 0;
	e = scratch(SLOT_MEM);
	if (!e)
		return 0;
	fill_header(e, GT_EV_MEM, pid_tgid, now);
	e->value = w;
	e->aux = address;
	take_stacks(ctx, e, c, false, user_stacks);
	emit(e, c);
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(gt_mem_btf, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return on_fault(ctx, address);
}

/* Classic tracepoint layout of exceptions/page_fault_user (x86), for kernels whose BTF lacks
 * btf_trace_page_fault_user. */
struct gt_page_fault_args {
	__u64 common;
	unsigned long address;
	unsigned long ip;
	unsigned long error_code;
};

SEC("tracepoint/exceptions/page_fault_user")
int gt_mem_tp(struct gt_page_fault_args *args)
{
	return on_fault(args, args->address);
}

/* exec and exit records carry no stacks: the header alone. */
static __always_inline void emit_proc(__u32 type, __u64 aux)
{
	struct gt_event *e = bpf_ringbuf_reserve(&gt_events, GT_EVENT_HDR_SIZE, 0);

	if (!e) {
		COUNT(counters(), drops);
		return;
	}
	fill_header(e, type, bpf_get_current_pid_tgid(), bpf_ktime_get_ns());
	e->value = 0;
	e->aux = aux;
	bpf_ringbuf_submit(e, wakeup_flags());
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(gt_proc_exec, struct task_struct *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	bpf_map_delete_elem(&gt_py_procs, &tgid); /* a new image: not the interpreter it was */
	if (current_passes(tgid, (__u32)pid_tgid))
		emit_proc(GT_EV_EXEC, BPF_CORE_READ(p, real_parent, tgid));
	return 0;
}

/* Fires for every thread; the process is gone when the last one leaves (signal->live == 0),
 * which also covers a leader that called pthread_exit before its threads. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(gt_proc_exit, struct task_struct *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (current_passes(tgid, (__u32)pid_tgid))
		emit_proc(GT_EV_EXIT, BPF_CORE_READ(p, exit_code));
	if (filter_pids_enabled)
		targets_pid_drop(tgid);
	bpf_map_delete_elem(&gt_py_procs, &tgid);
	return 0;
}

/* Follows new processes (not threads) of target processes into the pid set. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(gt_proc_fork, struct task_struct *parent, struct task_struct *child)
{
	if (follow_children)
		targets_follow_fork(parent, child);
	return 0;
}

#include "leak.bpf.h"
#include "growth.bpf.h"

char LICENSE[] SEC("license") = "GPL";
