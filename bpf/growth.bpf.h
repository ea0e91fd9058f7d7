/* SPDX-License-Identifier: GPL-2.0 */
/* The growth probe's programs, part of bpf/profile.bpf.c (its ring buffer, record scratch,
 * counters and stack taking): anonymous memory a target maps and gives back, from the
 * syscalls' classic tracepoints (no kprobes). A private anonymous mmap or a brk that moves the
 * break up is a GT_EV_GROWTH record with the user stack of the call; a munmap, a brk that
 * moves it down, or a MAP_FIXED mapping of a file over memory is a GT_EV_UNMAP record of the
 * range, which user space (model/growth.c) takes back from the stacks that mapped it. Each
 * syscall's entry keeps its arguments by thread for its exit, which knows whether it worked.
 * Include after the definitions of profile.bpf.c it uses. */
#ifndef GALATOP_BPF_GROWTH_BPF_H
#define GALATOP_BPF_GROWTH_BPF_H

#define GT_MAP_SHARED 0x01
#define GT_MAP_PRIVATE 0x02
#define GT_MAP_TYPE 0x0f
#define GT_MAP_FIXED 0x10
#define GT_MAP_ANONYMOUS 0x20
#define GT_MAP_FIXED_NOREPLACE 0x100000

enum { GROWTH_MMAP_ANON = 1, GROWTH_MMAP_OVER, GROWTH_BRK, GROWTH_MUNMAP };

/* A syscall between its entry and its exit, by thread. */
struct gt_growth_call {
	__u64 addr; /* mmap MAP_FIXED, munmap: the range's start; brk: the break before */
	__u64 len;
	__u32 kind; /* GROWTH_* */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct gt_growth_call);
} gt_growth_calls SEC(".maps");

static __always_inline void growth_enter(struct gt_growth_call *call)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;

	if (!current_passes(pid_tgid >> 32, tid))
		return;
	bpf_map_update_elem(&gt_growth_calls, &tid, call, BPF_ANY);
}

/* A page-rounded length, as the kernel maps it. */
static __always_inline __u64 growth_pages(__u64 len)
{
	return (len + GT_PAGE - 1) & ~(__u64)(GT_PAGE - 1);
}

static __always_inline void growth_unmap(__u64 pid_tgid, __u64 addr, __u64 len,
					 struct gt_counters *c)
{
	struct gt_event *e = bpf_ringbuf_reserve(&gt_events, GT_EVENT_HDR_SIZE, 0);

	if (!e) {
		COUNT(c, drops);
		return;
	}
	fill_header(e, GT_EV_UNMAP, pid_tgid, bpf_ktime_get_ns());
	e->value = len;
	e->aux = addr;
	bpf_ringbuf_submit(e, wakeup_flags());
	COUNT(c, growth_unmaps);
}

static __always_inline void growth_map(void *ctx, __u64 pid_tgid, __u64 addr, __u64 len,
				       struct gt_counters *c)
{
	struct gt_event *e = scratch(SLOT_GROWTH);

	if (!e)
		return;
	fill_header(e, GT_EV_GROWTH, pid_tgid, bpf_ktime_get_ns());
	e->value = len;
	e->aux = addr;
	take_stacks(ctx, e, c, false, user_stacks);
	emit(e, c);
	COUNT(c, growth_maps);
}

/* The exit of a call of kind (or, for mmap, kind2) kept at its entry: what it did, once it
 * worked. A call of another kind kept for the thread is stale (its exit was missed: the exit
 * programs attached after it began) and is dropped. */
static __always_inline void growth_exit(void *ctx, long ret, __u32 kind, __u32 kind2)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), r = (__u64)ret;
	__u32 tid = (__u32)pid_tgid;
	struct gt_growth_call *p = bpf_map_lookup_elem(&gt_growth_calls, &tid), call;
	struct gt_counters *c;

	if (!p)
		return;
	call = *p;
	bpf_map_delete_elem(&gt_growth_calls, &tid);
	if (call.kind != kind && call.kind != kind2)
		return;
	if (ret < 0 && ret > -4096)
		return; /* an error number: nothing changed */
	c = counters();
	COUNT(c, total);
	switch (call.kind) {
	case GROWTH_MMAP_ANON:
		growth_map(ctx, pid_tgid, r, call.len, c);
		break;
	case GROWTH_MMAP_OVER:
		growth_unmap(pid_tgid, r, call.len, c);
		break;
	case GROWTH_MUNMAP:
		growth_unmap(pid_tgid, call.addr, call.len, c);
		break;
	case GROWTH_BRK:
		/* The break moved from call.addr to ret (unchanged when it failed or was asked). */
		if (r > call.addr)
			growth_map(ctx, pid_tgid, call.addr, r - call.addr, c);
		else if (r < call.addr)
			growth_unmap(pid_tgid, r, call.addr - r, c);
		break;
	}
}

SEC("tracepoint/syscalls/sys_enter_mmap")
int gt_gmmap(struct trace_event_raw_sys_enter *args)
{
	__u64 flags = args->args[3];
	struct gt_growth_call call = { .addr = args->args[0], .len = growth_pages(args->args[1]) };

	if ((flags & GT_MAP_ANONYMOUS) && (flags & GT_MAP_TYPE) == GT_MAP_PRIVATE)
		call.kind = GROWTH_MMAP_ANON;
	else if ((flags & GT_MAP_FIXED) && !(flags & GT_MAP_FIXED_NOREPLACE))
		call.kind = GROWTH_MMAP_OVER; /* whatever was there is gone */
	else
		return 0;
	growth_enter(&call);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_munmap")
int gt_gmunmap(struct trace_event_raw_sys_enter *args)
{
	struct gt_growth_call call = { .addr = args->args[0], .len = growth_pages(args->args[1]),
				       .kind = GROWTH_MUNMAP };

	growth_enter(&call);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_brk")
int gt_gbrk(struct trace_event_raw_sys_enter *args)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct gt_growth_call call = { .addr = BPF_CORE_READ(task, mm, brk), .kind = GROWTH_BRK };

	growth_enter(&call);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int gt_gmmap_ret(struct trace_event_raw_sys_exit *args)
{
	growth_exit(args, args->ret, GROWTH_MMAP_ANON, GROWTH_MMAP_OVER);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_munmap")
int gt_gmunmap_ret(struct trace_event_raw_sys_exit *args)
{
	growth_exit(args, args->ret, GROWTH_MUNMAP, GROWTH_MUNMAP);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_brk")
int gt_gbrk_ret(struct trace_event_raw_sys_exit *args)
{
	growth_exit(args, args->ret, GROWTH_BRK, GROWTH_BRK);
	return 0;
}

#endif
