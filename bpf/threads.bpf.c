// SPDX-License-Identifier: GPL-2.0
/* The thread timeline's kernel side: system calls of the traced classes (file, net, lock,
 * sched) from entry to exit, on-CPU intervals and run-queue waits from the scheduler, D-state
 * sleeps, and the file names of opens. Filtered in the kernel by the shared targets and a
 * minimum duration; shorter intervals are counted per thread in gt_tl_start. User space
 * (bpf/threads.c) sets the knobs below before load. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "kabi.h"
#include "tl_event.h"
#include "targets.bpf.h"
#include "ustack.bpf.h"


const volatile __u64 min_dur_ns = 10000;
/* Class of each system call number plus one; 0: not traced. */
const volatile __u8 sys_kind[TL_SYSCALL_MAX] = {};
const volatile bool user_stacks = true;
/* DWARF mode: user stacks are the user registers and this many bytes of stack, unwound in user
 * space with the binaries' CFI; 0 = frame-pointer stacks in the kernel. */
const volatile __u32 ustack_bytes = 0;
/* False when only net is traced: read/write calls on files are then dropped at exit. */
const volatile bool keep_file = true;
/* Records wake the reader only once this much waits (as in profile.bpf.c). */
const volatile __u64 wakeup_bytes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* resized by user space */
} gt_tl_events SEC(".maps");

/* Each traced thread's call in progress (ts 0: none). Entries stay while the thread lives and
 * are reused call after call: an insert and a delete per call would cost more than the rest. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct tl_start);
} gt_tl_start SEC(".maps");

/* Scheduler state per thread: switch-in time, run-queue and D-state start. */
struct tl_task {
	__u64 oncpu, runq, dstate;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct tl_task);
} gt_tl_task SEC(".maps");

/* User stacks of lock waits at entry, for calls that never return (deadlocks). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, GT_MAX_STACK * sizeof(__u64));
} gt_tl_stacks SEC(".maps");

/* One record under construction per CPU for system calls and one for the scheduler. */
enum { SLOT_SYS, SLOT_SCHED, NR_SLOTS };
/* A record with room for the user registers and stack copy after its (empty) frame list. */
struct tl_rec_buf {
	struct tl_rec r;
	__u8 tail[sizeof(struct gt_uregs) + GT_USTACK_MAX + GT_PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_SLOTS);
	__type(key, __u32);
	__type(value, struct tl_rec_buf);
} gt_tl_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tl_counters);
} gt_tl_counters SEC(".maps");

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline struct tl_counters *counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gt_tl_counters, &zero);
}

#define COUNT(field)                                                                               \
	do {                                                                                       \
		struct tl_counters *c_ = counters();                                               \
		if (c_)                                                                            \
			__sync_fetch_and_add(&c_->field, 1);                                       \
	} while (0)

static __always_inline __u64 wakeup_flags(void)
{
	return bpf_ringbuf_query(&gt_tl_events, BPF_RB_AVAIL_DATA) >= wakeup_bytes
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
}

static __always_inline struct tl_rec *scratch(__u32 slot)
{
	return bpf_map_lookup_elem(&gt_tl_scratch, &slot);
}

/* The per-thread entry of tid (created if new); NULL when the map is full. */
static __always_inline struct tl_start *thread_entry(__u32 tid, __u32 pid)
{
	struct tl_start *sp = bpf_map_lookup_elem(&gt_tl_start, &tid), zero = {};

	if (sp)
		return sp;
	zero.pid = pid;
	zero.sock_fd = -1;
	bpf_map_update_elem(&gt_tl_start, &tid, &zero, BPF_NOEXIST);
	sp = bpf_map_lookup_elem(&gt_tl_start, &tid);
	if (!sp)
		COUNT(drops);
	return sp;
}

/* Counts an interval below the minimum duration in thread entry s. */
static __always_inline void count_short(struct tl_start *s, __u32 kind, __u64 dur)
{
	if (kind >= TLK_MAX || !s)
		return;
	COUNT(shorter);
	__sync_fetch_and_add(&s->shorts.count[kind], 1);
	__sync_fetch_and_add(&s->shorts.ns[kind], dur);
}

static __always_inline void emit(struct tl_rec *r, __u32 nu)
{
	__u64 len;

	if (nu > GT_MAX_STACK)
		nu = GT_MAX_STACK;
	len = TL_REC_HDR_SIZE + GT_EVENT_HDR_SIZE + nu * sizeof(__u64);
	if (ustack_bytes && (r->stk.flags & GT_EVF_UREGS)) {
		struct gt_uregs *u = (struct gt_uregs *)((__u8 *)r->stk.stack + nu * sizeof(__u64));
		__u64 size = u->size;

		if (size > ustack_bytes || size > GT_USTACK_MAX)
			size = 0;
		len += sizeof(*u) + size;
	}
	if (bpf_ringbuf_output(&gt_tl_events, r, len, wakeup_flags()))
		COUNT(drops);
	else
		COUNT(events);
}

static __always_inline void rec_init(struct tl_rec *r, __u32 pid, __u32 tid, __u32 kind,
				     __u64 start, __u64 end)
{
	r->type = TLR_EVENT;
	r->pid = pid;
	r->tid = tid;
	r->nr = TL_NR_NONE;
	r->kind = kind;
	r->flags = 0;
	r->start = start;
	r->end = end;
	r->ret = 0;
	r->arg0 = 0;
	r->futex_op = 0;
	r->owner = 0;
	r->futex_val = 0;
	r->sock_family = 0;
	r->sock_type = 0;
	r->sport = 0;
	r->dport = 0;
	r->stk.pid = pid;
	r->stk.tid = tid;
	r->stk.kstack_len = 0;
	r->stk.ustack_len = 0;
	r->stk.flags = 0;
	r->stk.pystack_len = 0;
	r->stk.type = 0;
}

/* Fills the socket fields of r when fd of the current task is a socket. */
static __always_inline bool sock_of_fd(struct tl_rec *r, __u64 fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **arr;
	struct file *f = NULL;
	struct socket *so;
	struct sock *sk;
	unsigned int max;
	__u16 family;

	if (!fdt)
		return false;
	max = BPF_CORE_READ(fdt, max_fds);
	if (fd >= max)
		return false;
	arr = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]) || !f)
		return false;
	if ((BPF_CORE_READ(f, f_inode, i_mode) & GT_S_IFMT) != GT_S_IFSOCK)
		return false;
	r->flags |= TLF_SOCK;
	so = (struct socket *)BPF_CORE_READ(f, private_data);
	sk = BPF_CORE_READ(so, sk);
	if (!sk)
		return true;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	r->sock_family = family;
	r->sock_type = BPF_CORE_READ(sk, sk_type);
	r->sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	r->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (family == GT_AF_INET) {
		bpf_core_read(r->saddr, 4, &sk->__sk_common.skc_rcv_saddr);
		bpf_core_read(r->daddr, 4, &sk->__sk_common.skc_daddr);
	} else if (family == GT_AF_INET6) {
		bpf_core_read(r->saddr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_core_read(r->daddr, 16, &sk->__sk_common.skc_v6_daddr);
	}
	return true;
}

static __always_inline bool is_wait_cmd(__u32 cmd)
{
	return cmd == GT_FUTEX_WAIT || cmd == GT_FUTEX_WAIT_BITSET || cmd == GT_FUTEX_LOCK_PI ||
	       cmd == GT_FUTEX_LOCK_PI2;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(gt_tl_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = pid_tgid;
	struct tl_start *sp;
	__u8 k;

	if (id < 0 || id >= TL_SYSCALL_MAX)
		return 0;
	k = sys_kind[id];
	if (!k || !current_passes(tgid, tid))
		return 0;
	sp = thread_entry(tid, tgid);
	if (!sp)
		return 0;
	sp->pid = tgid;
	sp->nr = id;
	sp->kind = k - 1;
	sp->flags = 0;
	sp->owner = 0;
	sp->futex_op = 0;
	sp->futex_val = 0;
	sp->stackid = -1;
	sp->arg0 = regs->di;
	sp->path_ptr = 0;
	if (id == GT_NR_OPEN || id == GT_NR_CREAT)
		sp->path_ptr = regs->di;
	else if (id == GT_NR_OPENAT)
		sp->path_ptr = regs->si;
	if (id == GT_NR_FUTEX) {
		__u32 op = regs->si, cmd = op & GT_FUTEX_CMD_MASK, word = 0;
		__u64 uaddr = sp->arg0;

		sp->futex_op = op;
		sp->futex_val = regs->dx;
		if (cmd == GT_FUTEX_WAIT || cmd == GT_FUTEX_WAIT_BITSET) {
			/* glibc's pthread_mutex_t: int __lock; unsigned __count; int __owner. */
			if (!bpf_probe_read_user(&word, sizeof(word), (void *)(uaddr + 8)) && word) {
				sp->owner = word;
				sp->flags |= TLF_OWNER_MUTEX;
			}
		} else if (cmd == GT_FUTEX_LOCK_PI || cmd == GT_FUTEX_LOCK_PI2) {
			if (!bpf_probe_read_user(&word, sizeof(word), (void *)uaddr) &&
			    (word & GT_FUTEX_TID_MASK)) {
				sp->owner = word & GT_FUTEX_TID_MASK;
				sp->flags |= TLF_OWNER_PI;
			}
		}
		if (user_stacks && is_wait_cmd(cmd))
			sp->stackid = bpf_get_stackid(ctx, &gt_tl_stacks, BPF_F_USER_STACK);
	}
	sp->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(gt_tl_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now;
	__u32 tgid = pid_tgid >> 32, tid = pid_tgid, nu = 0;
	struct tl_start *s = bpf_map_lookup_elem(&gt_tl_start, &tid);
	struct tl_rec *r;
	__u64 dur;
	__u32 kind;
	long n;

	if (!s || !s->ts)
		return 0;
	now = bpf_ktime_get_ns();
	r = scratch(SLOT_SYS);
	if (!r)
		goto out;
	kind = s->kind;
	if (s->path_ptr && ret >= 0) {
		rec_init(r, tgid, tid, kind, s->ts, now);
		r->type = TLR_OPENAT;
		r->nr = s->nr;
		r->ret = ret;
		bpf_get_current_comm(r->comm, sizeof(r->comm));
		if (bpf_probe_read_user_str(r->path, sizeof(r->path), (void *)s->path_ptr) > 0 &&
		    bpf_ringbuf_output(&gt_tl_events, r, TL_REC_HDR_SIZE, wakeup_flags()))
			COUNT(drops);
	}
	rec_init(r, tgid, tid, kind, s->ts, now);
	r->nr = s->nr;
	r->ret = ret;
	r->arg0 = s->arg0;
	r->flags = s->flags;
	r->futex_op = s->futex_op;
	r->owner = s->owner;
	r->futex_val = s->futex_val;
	dur = now - s->ts;
	if (kind == TLK_FILE && s->nr != GT_NR_SYNC) {
		/* Short calls on the same fd as the last check take its answer: a loop of small
		 * reads or writes need not walk the fd table each time. */
		if (dur < min_dur_ns && s->sock_fd == (__s32)s->arg0 && s->arg0 < 0x7fffffff) {
			if (s->sock_is)
				kind = TLK_NET;
		} else {
			s->sock_is = sock_of_fd(r, s->arg0);
			s->sock_fd = (__s32)s->arg0;
			if (s->sock_is)
				kind = TLK_NET;
		}
	} else if (kind == TLK_NET)
		sock_of_fd(r, (s->nr == GT_NR_ACCEPT || s->nr == GT_NR_ACCEPT4) && ret >= 0 ? ret
										   : s->arg0);
	r->kind = kind;
	if (kind == TLK_FILE && !keep_file)
		goto out;
	if (dur < min_dur_ns) {
		count_short(s, kind, dur);
		goto out;
	}
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	if (user_stacks && ustack_bytes) {
		copy_ustack(&r->stk, 0, ustack_bytes, 2 * GT_MAX_STACK);
	} else if (user_stacks) {
		n = bpf_get_stack(ctx, r->stk.stack, GT_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
		if (n < 0)
			r->stk.flags |= GT_EVF_USTACK_FAIL;
		else
			nu = n / sizeof(__u64);
	}
	if (nu > GT_MAX_STACK)
		nu = GT_MAX_STACK;
	r->stk.ustack_len = nu;
	emit(r, nu);
out:
	s->ts = 0;
	return 0;
}

static __always_inline bool traced_task(struct task_struct *t)
{
	return BPF_CORE_READ(t, pid) && !(BPF_CORE_READ(t, flags) & GT_PF_KTHREAD);
}

/* A thread's entries go with it; user space hears of the exit (the Threads pane folds the
 * processes that ended). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(gt_tl_exit, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct tl_rec *r;

	bpf_map_delete_elem(&gt_tl_start, &tid);
	if (!traced_task(p) || !task_passes(p))
		return 0;
	r = scratch(SLOT_SYS);
	if (!r)
		return 0;
	rec_init(r, BPF_CORE_READ(p, tgid), tid, TLK_ONCPU, 0, bpf_ktime_get_ns());
	r->type = TLR_EXIT;
	BPF_CORE_READ_STR_INTO(&r->comm, p, comm);
	if (bpf_ringbuf_output(&gt_tl_events, r, TL_REC_HDR_SIZE, wakeup_flags()))
		COUNT(drops);
	return 0;
}

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___old *)t, state);
}

/* Sends (or counts, when short) a scheduler interval of task t. */
static __always_inline void sched_interval(struct task_struct *t, __u32 kind, __u64 start,
					   __u64 end)
{
	__u32 tid = BPF_CORE_READ(t, pid), tgid = BPF_CORE_READ(t, tgid);
	struct tl_rec *r;

	if (end - start < min_dur_ns) {
		count_short(thread_entry(tid, tgid), kind, end - start);
		return;
	}
	r = scratch(SLOT_SCHED);
	if (!r)
		return;
	rec_init(r, tgid, tid, kind, start, end);
	BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
	emit(r, 0);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gt_tl_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct tl_task *t, zero = {};
	__u32 tid;

	if (traced_task(prev)) {
		tid = BPF_CORE_READ(prev, pid);
		t = bpf_map_lookup_elem(&gt_tl_task, &tid);
		if (t) {
			__u32 state = task_state(prev);

			if (t->oncpu)
				sched_interval(prev, TLK_ONCPU, t->oncpu, now);
			t->oncpu = 0;
			if (state & GT_TASK_DEAD)
				bpf_map_delete_elem(&gt_tl_task, &tid);
			else if (!state)
				t->runq = now; /* preempted: runnable from now on */
			else if (state & GT_TASK_UNINTERRUPTIBLE)
				t->dstate = now;
		}
	}
	if (!traced_task(next) || !task_passes(next))
		return 0;
	tid = BPF_CORE_READ(next, pid);
	t = bpf_map_lookup_elem(&gt_tl_task, &tid);
	if (!t) {
		if (bpf_map_update_elem(&gt_tl_task, &tid, &zero, BPF_NOEXIST))
			COUNT(drops);
		t = bpf_map_lookup_elem(&gt_tl_task, &tid);
		if (!t)
			return 0;
	}
	if (t->dstate)
		sched_interval(next, TLK_DSTATE, t->dstate, now);
	if (t->runq)
		sched_interval(next, TLK_RUNQ, t->runq, now);
	t->dstate = 0;
	t->runq = 0;
	t->oncpu = now;
	return 0;
}

static __always_inline int on_wakeup(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct tl_task *t = bpf_map_lookup_elem(&gt_tl_task, &tid);
	__u64 now;

	if (!t || t->oncpu)
		return 0;
	now = bpf_ktime_get_ns();
	if (t->dstate)
		sched_interval(p, TLK_DSTATE, t->dstate, now);
	t->dstate = 0;
	t->runq = now;
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(gt_tl_wakeup, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(gt_tl_wakeup_new, struct task_struct *p)
{
	struct tl_task zero = {};
	__u32 tid = BPF_CORE_READ(p, pid);

	if (!traced_task(p) || !task_passes(p))
		return 0;
	zero.runq = bpf_ktime_get_ns();
	bpf_map_update_elem(&gt_tl_task, &tid, &zero, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
