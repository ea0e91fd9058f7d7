// SPDX-License-Identifier: GPL-2.0
/* The thread timeline's kernel side: system calls of the traced classes (file, net, lock,
 * sched), on-CPU intervals and run-queue waits from the scheduler, D-state sleeps. By default
 * a system call is seen only when it blocks: at sched_switch, from the task's user registers
 * (orig_ax is the call, di.. its arguments), until the task is switched in again; no system
 * call tracepoint is on, so calls that do not block cost nothing. With syscall_hooks (the
 * opt-in --all-syscalls) every traced call is followed from sys_enter to sys_exit instead, at
 * the cost of the kernel's system call tracepoints. Filtered in the kernel by the shared
 * targets and a minimum duration; shorter intervals are counted per thread in gt_tl_start.
 * User space (bpf/threads.c) sets the knobs below before load. */
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
/* True: system calls from sys_enter to sys_exit (all of them, the tracepoint floor); false:
 * blocking system calls only, from sched_switch. */
const volatile bool syscall_hooks = false;
/* Blocking mode's sampler (gt_tl_sample, a CPU clock per CPU): its period; it sees the calls
 * that run long without blocking. */
const volatile __u64 sample_period_ns = 1000000000 / 199;
/* The oncpu class: on-CPU, run-queue and D-state intervals are sent. */
const volatile bool sched_states = true;

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

/* Blocking mode: each thread's record of its blocked call, built when it blocks (in its own
 * context, where its user stack and memory can be read) and sent when it is switched in again
 * if it lasted the minimum duration. Entries are reused call after call and go with the
 * thread; user space sizes the map. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct tl_rec_buf);
} gt_tl_stash SEC(".maps");

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

/* Sends record r with its r->stk.ustack_len user frames (and the stack copy after them). */
static __always_inline void emit(struct tl_rec *r)
{
	__u32 nu = r->stk.ustack_len;
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

/* The file of the current task's descriptor fd, NULL if none. */
static __always_inline struct file *file_of_fd(__u64 fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **arr;
	struct file *f = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	arr = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]))
		return NULL;
	return f;
}

/* Fills the socket fields of r when file f is a socket. */
static __always_inline bool sock_of_file(struct tl_rec *r, struct file *f)
{
	struct socket *so;
	struct sock *sk;
	__u16 family;

	if (!f || (BPF_CORE_READ(f, f_inode, i_mode) & GT_S_IFMT) != GT_S_IFSOCK)
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

#define PATH_STEPS 24 /* dentries and mount crossings walked from a file up */

/* Puts the path of file f into r->path (TLF_PATH): its names up to the root of the task's
 * file system, across mounts; pipes as "pipe:[inode]" and anonymous inodes as
 * "anon_inode:NAME", as /proc/PID/fd shows them. Read in the kernel while the descriptor is
 * certainly open: the file may be closed by the time user space sees the record. The tail of
 * b (where the stack copy goes later) holds the path being put together (each name read with
 * room for a whole one), the dentries walked and the length so far: in map memory, the verifier
 * does not follow each value through the loops. A function of its own, verified once. */
__noinline int tl_path_of_file(struct tl_rec_buf *b, __u64 file)
{
	struct file *f = (struct file *)file;
	struct dentry *d = BPF_CORE_READ(f, f_path.dentry), *up;
	struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
	struct mount *m = container_of(vm, struct mount, mnt), *pm;
	/* The task's root (chroot, a container's mount namespace): names stop there, as they do
	 * in /proc/PID/fd for a reader in the same root. */
	struct task_struct *task = bpf_get_current_task_btf();
	struct dentry *root_d = BPF_CORE_READ(task, fs, root.dentry);
	struct vfsmount *root_m = BPF_CORE_READ(task, fs, root.mnt);
	struct tl_rec *r;
	volatile __u64 *names;
	volatile __u32 *offp;
	__u32 off;
	char *tmp;
	long got;

	if (!b || !d)
		return 0;
	r = &b->r;
	tmp = (char *)b->tail;
	names = (volatile __u64 *)(tmp + 2 * TL_PATH_LEN);
	offp = (volatile __u32 *)(names + PATH_STEPS);
	if (BPF_CORE_READ(d, d_op, d_dname)) {
		unsigned long magic = BPF_CORE_READ(d, d_sb, s_magic);
		__u64 arg = BPF_CORE_READ(f, f_inode, i_ino);

		if (magic == GT_PIPEFS_MAGIC)
			got = bpf_snprintf(r->path, sizeof(r->path), "pipe:[%lu]", &arg, sizeof(arg));
		else if (magic == GT_ANON_INODE_FS_MAGIC) {
			arg = (__u64)BPF_CORE_READ(d, d_name.name);
			got = bpf_snprintf(r->path, sizeof(r->path), "anon_inode:%s", &arg, sizeof(arg));
		} else
			return 0;
		if (got > 0)
			r->flags |= TLF_PATH;
		return 0;
	}
	for (int i = 0; i < PATH_STEPS; i++)
		names[i] = 0;
	for (int i = 0; i < PATH_STEPS; i++) {
		if (d == root_d && &m->mnt == root_m)
			break;
		if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
			pm = BPF_CORE_READ(m, mnt_parent);
			if (!pm || pm == m)
				break;
			d = BPF_CORE_READ(m, mnt_mountpoint);
			m = pm;
			continue;
		}
		up = BPF_CORE_READ(d, d_parent);
		if (!up || up == d)
			break;
		names[i] = (__u64)d;
		d = up;
	}
	*offp = 0;
	for (int j = PATH_STEPS - 1; j >= 0; j--) {
		if (!names[j])
			continue;
		off = *offp;
		if (off > TL_PATH_LEN - 2)
			break;
		tmp[off & (TL_PATH_LEN - 1)] = '/';
		off++;
		got = bpf_probe_read_kernel_str(&tmp[off & (TL_PATH_LEN - 1)], TL_PATH_LEN,
						BPF_CORE_READ((struct dentry *)names[j], d_name.name));
		if (got <= 1)
			break;
		*offp = off + got - 1;
	}
	off = *offp;
	if (off) {
		if (off > TL_PATH_LEN - 1)
			off = TL_PATH_LEN - 1;
		barrier_var(off);
		tmp[off & (TL_PATH_LEN - 1)] = 0;
		bpf_probe_read_kernel(r->path, sizeof(r->path), tmp);
		r->flags |= TLF_PATH;
	}
	return 0;
}

static __always_inline bool is_wait_cmd(__u32 cmd)
{
	return cmd == GT_FUTEX_WAIT || cmd == GT_FUTEX_WAIT_BITSET || cmd == GT_FUTEX_LOCK_PI ||
	       cmd == GT_FUTEX_LOCK_PI2;
}

/* Starts thread entry sp's call nr of class k at ts, with its arguments from the task's user
 * registers (the current task's: futex owners and stacks are read from its memory). */
static __always_inline void call_begin(void *ctx, struct tl_start *sp, __u32 tgid, long id, __u8 k,
				       struct pt_regs *regs, __u64 ts)
{
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
	sp->ts = ts;
}

/* Whether the kernel counts call id in the task's read or write calls as it ends: call_key then
 * tells each call of it from the next. */
static __always_inline bool counted_call(long id)
{
	return id == GT_NR_READ || id == GT_NR_WRITE || id == GT_NR_PREAD64 ||
	       id == GT_NR_PWRITE64 || id == GT_NR_READV || id == GT_NR_WRITEV;
}

/* Copies the fields of thread entry s into record r (built with rec_init). */
static __always_inline void rec_from_entry(struct tl_rec *r, const struct tl_start *s)
{
	r->nr = s->nr;
	r->arg0 = s->arg0;
	r->call_key = !syscall_hooks && counted_call(s->nr) ? s->call_key : 0;
	r->flags = s->flags;
	r->futex_op = s->futex_op;
	r->owner = s->owner;
	r->futex_val = s->futex_val;
}

/* The current task's user stack into r (frames, or registers and a stack copy). */
static __always_inline void rec_ustack(void *ctx, struct tl_rec *r)
{
	long n;

	if (!user_stacks)
		return;
	if (ustack_bytes) {
		copy_ustack(&r->stk, 0, ustack_bytes, 2 * GT_MAX_STACK);
		return;
	}
	n = bpf_get_stack(ctx, r->stk.stack, GT_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
	if (n < 0)
		r->stk.flags |= GT_EVF_USTACK_FAIL;
	else
		r->stk.ustack_len = n / sizeof(__u64) > GT_MAX_STACK ? GT_MAX_STACK
								     : n / sizeof(__u64);
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
	if (sp)
		call_begin(ctx, sp, tgid, id, k, regs, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(gt_tl_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now;
	__u32 tgid = pid_tgid >> 32, tid = pid_tgid;
	struct tl_start *s = bpf_map_lookup_elem(&gt_tl_start, &tid);
	struct tl_rec *r;
	__u64 dur;
	__u32 kind;

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
	rec_from_entry(r, s);
	r->ret = ret;
	dur = now - s->ts;
	if (kind == TLK_FILE && s->nr != GT_NR_SYNC) {
		/* Short calls on the same fd as the last check take its answer: a loop of small
		 * reads or writes need not walk the fd table each time. */
		if (dur < min_dur_ns && s->sock_fd == (__s32)s->arg0 && s->arg0 < 0x7fffffff) {
			if (s->sock_is)
				kind = TLK_NET;
		} else {
			s->sock_is = sock_of_file(r, file_of_fd(s->arg0));
			s->sock_fd = (__s32)s->arg0;
			if (s->sock_is)
				kind = TLK_NET;
		}
	} else if (kind == TLK_NET)
		sock_of_file(r, file_of_fd((s->nr == GT_NR_ACCEPT || s->nr == GT_NR_ACCEPT4) &&
						   ret >= 0
					       ? ret
					       : s->arg0));
	r->kind = kind;
	if (kind == TLK_FILE && !keep_file)
		goto out;
	if (dur < min_dur_ns) {
		count_short(s, kind, dur);
		goto out;
	}
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	rec_ustack(ctx, r);
	emit(r);
out:
	s->ts = 0;
	return 0;
}

/* The record stash of thread tid (created if new); NULL when the map is full. */
static __always_inline struct tl_rec_buf *stash_entry(__u32 tid)
{
	struct tl_rec_buf *b = bpf_map_lookup_elem(&gt_tl_stash, &tid);
	struct tl_rec *any;

	if (b)
		return b;
	any = scratch(SLOT_SCHED); /* any value will do: every field is set before use */
	if (!any)
		return NULL;
	bpf_map_update_elem(&gt_tl_stash, &tid, any, BPF_NOEXIST);
	b = bpf_map_lookup_elem(&gt_tl_stash, &tid);
	if (!b)
		COUNT(drops);
	return b;
}

/* Global functions (verified once each, not with every path of their callers) take the
 * program's context and trusted kernel pointers when their arguments are tagged so. */
#define GT_ARG_CTX __attribute__((btf_decl_tag("arg:ctx")))
#define GT_ARG_TRUSTED __attribute__((btf_decl_tag("arg:trusted")))

/* A call a thread was preempted in goes on when the thread blocks in it (same call, same user
 * stack pointer) within this long of getting its CPU back (any time for a read or write call,
 * told from the next by the task's counts of them). */
#define PREEMPT_RUN_NS 1000000

/* Blocking mode: ends thread entry s's call (of task t) at end: sent from the thread's stash
 * (or, seeded from /proc or without a stash, from its entry) when it lasted long enough. */
static __always_inline void block_finish(struct tl_start *s, struct task_struct *t, __u32 tid,
					 __u64 end)
{
	struct tl_rec_buf *b;
	struct tl_rec *r;
	__u64 dur = end - s->ts;

	s->state = 0;
	if (dur < min_dur_ns) {
		count_short(s, s->kind, dur);
		goto out;
	}
	b = s->flags & (TLF_SEEDED | TLF_NOSTASH) ? NULL : bpf_map_lookup_elem(&gt_tl_stash, &tid);

	if (b && b->r.start == s->ts) {

		b->r.end = end;
		emit(&b->r);
		goto out;
	}
	r = scratch(SLOT_SCHED);
	if (!r)
		goto out;
	rec_init(r, s->pid, tid, s->kind, s->ts, end);
	rec_from_entry(r, s);
	BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
	emit(r);
out:
	s->ts = 0;
}

/* Whether user registers regs are those of a traced system call in progress (its number in
 * *id, its class plus one in *k): orig_ax the call, ax still -ENOSYS (set at entry, replaced by
 * the result at exit) and the instruction before ip a `syscall` (an exception from user mode
 * also fills orig_ax, with its error code). */
static __always_inline bool in_call(struct pt_regs *regs, long *id, __u8 *k)
{
	__u16 insn = 0;

	*id = regs->orig_ax;
	*k = 0;
	if (*id < 0 || *id >= TL_SYSCALL_MAX)
		return false;
	*k = sys_kind[*id];
	return *k && regs->ax == (unsigned long)-GT_ENOSYS &&
	       !bpf_probe_read_user(&insn, sizeof(insn), (void *)(regs->ip - 2)) && insn == 0x050f;
}

/* What tells two calls from the same place apart: the task's read and write call counts (the
 * kernel adds one as each ends) and its user time (grows when a tick finds it in user space). */
static __always_inline __u64 call_key(struct task_struct *t)
{
	__u64 key = BPF_CORE_READ(t, utime);

	if (bpf_core_field_exists(t->ioac))
		key += (BPF_CORE_READ(t, ioac.syscr) + BPF_CORE_READ(t, ioac.syscw)) << 48;
	return key;
}

/* Whether thread entry sp's call is the one regs and key show (call id, same user stack). */
static __always_inline bool same_call(const struct tl_start *sp, bool call, long id,
				      struct pt_regs *regs, __u64 key)
{
	return call && sp->nr == id && sp->call_sp == regs->sp && sp->call_key == key;
}

/* Opens call id (class k plus one) of the current task at now in its thread entry, in state
 * state with flags extra, and builds its record in the thread's stash: the fd's socket or file
 * path, the futex owner, the user stack, read in the thread's own context. */
static __always_inline void call_open(void *ctx, struct task_struct *task, struct pt_regs *regs,
				      long id, __u8 k, __u64 now, __u32 state, __u8 extra)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = pid_tgid, kind;
	struct tl_rec_buf *b;
	struct tl_start *sp;
	struct tl_rec *r;
	struct file *f;

	sp = thread_entry(tid, tgid);
	if (!sp)
		return;
	call_begin(ctx, sp, tgid, id, k, regs, now);
	sp->flags |= extra;
	sp->call_sp = regs->sp;
	sp->call_key = call_key(task);
	sp->last_in = now;
	sp->state = state;
	kind = k - 1;
	b = stash_entry(tid);
	if (!b) {
		sp->flags |= TLF_NOSTASH;
		return;
	}
	r = &b->r;
	rec_init(r, tgid, tid, kind, now, now);
	rec_from_entry(r, sp);
	if (kind == TLK_FILE || kind == TLK_NET) {
		f = id == GT_NR_SYNC ? NULL : file_of_fd(sp->arg0);
		if (sock_of_file(r, f))
			kind = TLK_NET;
		else if (f)
			tl_path_of_file(b, (__u64)f);
		else if (sp->path_ptr &&
			 bpf_probe_read_user_str(r->path, sizeof(r->path), (void *)sp->path_ptr) > 0)
			r->flags |= TLF_PATH; /* an open: the name it was given */
	}
	if (kind == TLK_FILE && !keep_file) {
		sp->ts = 0;
		return;
	}
	r->kind = sp->kind = kind;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	rec_ustack(ctx, r);
}

/* Ends thread entry s's sampled call, which was not running any more at end: it ended after
 * its last sight, within a sampling period of it. Seen once, it is counted as short. */
static __always_inline void sampled_finish(struct tl_start *s, struct task_struct *t, __u32 tid,
					   __u64 end)
{
	if (s->last_in == s->ts)
		end = s->ts;
	else if (end > s->last_in + sample_period_ns)
		end = s->last_in + sample_period_ns;
	block_finish(s, t, tid, end);
}

/* Ends thread entry s's call it was preempted in and got its CPU back at s->last_in: it ended
 * then, or, seen running by the sampler, by now (within a sampling period of its last sight). */
static __always_inline void resumed_finish(struct tl_start *s, struct task_struct *t, __u32 tid,
					   __u64 now)
{
	if (s->flags & TLF_SAMPLED)
		sampled_finish(s, t, tid, now);
	else
		block_finish(s, t, tid, s->last_in);
}

/* When task t, in thread entry s's call since s->ts, came back on a CPU at a switch back in
 * that was not seen: when its time on a CPU since then began (not before the call). */
static __always_inline __u64 unseen_in(const struct tl_start *s, struct task_struct *t, __u64 now)
{
	__u64 ran = BPF_CORE_READ(t, se.sum_exec_runtime) -
		    BPF_CORE_READ(t, se.prev_sum_exec_runtime);

	return ran < now - s->ts ? now - ran : s->ts;
}

/* Blocking mode, at the switch-out of the current task (not exiting): when it is inside a
 * traced system call, the call starts now (or goes on, below) and its record is built in the
 * thread's stash; it ends at the switch back in. A call the thread is preempted in (runnable)
 * does not end at the switch back in: it goes on if the thread blocks in it soon after, else it
 * ended then. One the sampler saw it run in goes on if it is the same call, else it ended. */
__noinline int tl_block_begin(void *ctx GT_ARG_CTX, __u64 now, int preempted)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 pid_tgid = bpf_get_current_pid_tgid(), key = 0;
	__u32 tgid = pid_tgid >> 32, tid = pid_tgid;
	bool call, same = false;
	struct tl_start *sp;
	long id;
	__u8 k;

	if (!current_passes(tgid, tid))
		return 0;
	call = in_call(regs, &id, &k);
	if (call)
		key = call_key(task);
	sp = bpf_map_lookup_elem(&gt_tl_start, &tid);
	if (sp && sp->ts && (sp->state & TLS_SAMPLED)) {
		if (same_call(sp, call, id, regs, key)) {
			sp->state = preempted ? TLS_PREEMPTED : 0; /* it blocks in it */
			return 0;
		}
		sampled_finish(sp, task, tid, now);
	}
	if (sp && sp->ts && !(sp->state & TLS_RESUMED)) {
		/* Its switch back in was not seen (it happens). */
		sp->last_in = unseen_in(sp, task, now);
		if (sp->state & TLS_PREEMPTED)
			sp->state = TLS_RESUMED;
		else
			block_finish(sp, task, tid, sp->last_in);
	}
	if (sp && sp->ts && (sp->state & TLS_RESUMED)) {
		same = same_call(sp, call, id, regs, key) &&
		       (now - sp->last_in < PREEMPT_RUN_NS || counted_call(id));
		if (!same)
			resumed_finish(sp, task, tid, now);
	}
	if (!call)
		return 0;
	if (same) {
		sp->state = preempted ? TLS_PREEMPTED : 0;
		return 0;
	}
	call_open(ctx, task, regs, id, k, now, preempted ? TLS_PREEMPTED : 0, 0);
	return 0;
}

/* Blocking mode, at a sample of the current task (in kernel mode when kernel): a call it runs
 * in without blocking opens at its first sight and goes on while the samples find it in the
 * same call; it ends at the first sample that does not, or at the thread's switch-out. A call
 * it was preempted in and runs again in goes on the same way. */
__noinline int tl_sample(void *ctx GT_ARG_CTX, __u64 now, int kernel)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 pid_tgid = bpf_get_current_pid_tgid(), key = 0;
	__u32 tgid = pid_tgid >> 32, tid = pid_tgid;
	bool call = false;
	struct tl_start *sp;
	long id = -1;
	__u8 k = 0;

	if (!tid || (BPF_CORE_READ(task, flags) & GT_PF_KTHREAD) || !current_passes(tgid, tid))
		return 0;
	if (kernel)
		call = in_call(regs, &id, &k);
	if (call)
		key = call_key(task);
	sp = bpf_map_lookup_elem(&gt_tl_start, &tid);
	if (sp && sp->ts) {
		if (!(sp->state & (TLS_SAMPLED | TLS_RESUMED)))
			return 0; /* blocked, its switch back in unseen: for its switch-out */
		if (same_call(sp, call, id, regs, key)) {
			if (!(sp->flags & TLF_SAMPLED)) {
				/* One it was preempted in: seen running now, it ends as a
				 * sampled call */
				struct tl_rec_buf *b = bpf_map_lookup_elem(&gt_tl_stash, &tid);

				sp->flags |= TLF_SAMPLED;
				if (b && b->r.start == sp->ts)
					b->r.flags |= TLF_SAMPLED;
			}
			sp->state = TLS_SAMPLED;
			sp->last_in = now;
			return 0;
		}
		if (sp->state & TLS_SAMPLED)
			sampled_finish(sp, task, tid, now);
		else
			resumed_finish(sp, task, tid, now);
	} else if (sp && same_call(sp, call, id, regs, key) && now - sp->last_in < PREEMPT_RUN_NS) {
		/* The tail of the call that ended when the thread was switched back in (a pipe
		 * read finishing its copy): the call was counted then; not a second one. */
		return 0;
	}
	if (call)
		call_open(ctx, task, regs, id, k, now, TLS_SAMPLED, TLF_SAMPLED);
	return 0;
}

SEC("perf_event")
int gt_tl_sample(struct bpf_perf_event_data *ctx)
{
	__u64 cs = *(volatile __u64 *)&ctx->regs.cs; /* the context is read whole words */

	if (syscall_hooks)
		return 0;
	return tl_sample(ctx, bpf_ktime_get_ns(), !(cs & 3)); /* ring 0: the kernel */
}

/* Blocking mode, at the switch-in of task t: its blocked call (if any) ends now; one it was
 * preempted in is left to its next switch-out. */
__noinline int tl_block_end(struct task_struct *t GT_ARG_TRUSTED, __u64 now)
{
	__u32 tid = BPF_CORE_READ(t, pid);
	struct tl_start *s = bpf_map_lookup_elem(&gt_tl_start, &tid);

	if (!s)
		return 0;
	s->last_in = now;
	if (!s->ts)
		return 0;

	if (s->state & TLS_PREEMPTED)
		s->state = TLS_RESUMED;
	else
		block_finish(s, t, tid, now);
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
	__u64 now = bpf_ktime_get_ns();
	struct tl_start *s = syscall_hooks ? NULL : bpf_map_lookup_elem(&gt_tl_start, &tid);
	struct tl_rec *r;

	/* A call still open as the thread ends: one the sampler saw run and that returned with
	 * no sample or switch-out since (the thread ran on to its end), or one it was
	 * preempted in. It ended by now; its record goes before the exit's. */
	if (s && s->ts) {
		if (s->state & TLS_SAMPLED) {
			sampled_finish(s, p, tid, now);
		} else if (s->state & TLS_RESUMED) {
			resumed_finish(s, p, tid, now);
		} else {
			block_finish(s, p, tid, unseen_in(s, p, now)); /* switch back in unseen */
		}
	}
	bpf_map_delete_elem(&gt_tl_start, &tid);
	if (!syscall_hooks)
		bpf_map_delete_elem(&gt_tl_stash, &tid);
	if (!traced_task(p) || !task_passes(p))
		return 0;
	r = scratch(SLOT_SYS);
	if (!r)
		return 0;
	rec_init(r, BPF_CORE_READ(p, tgid), tid, TLK_ONCPU, 0, now);
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
	emit(r);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gt_tl_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct tl_task *t, zero = {};
	__u32 tid;

	if (traced_task(prev)) {
		__u32 state = task_state(prev);

		/* Blocking, yielding the CPU (sched_yield), or preempted (also on its way to
		 * sleep: it may then block right after it is back); runnable counts as
		 * preempted (a switch inside a running call, e.g. cond_resched, is not flagged
		 * preempt) */
		if (!syscall_hooks && !(state & GT_TASK_DEAD))
			tl_block_begin(ctx, now, preempt || !state);
		tid = BPF_CORE_READ(prev, pid);
		t = sched_states ? bpf_map_lookup_elem(&gt_tl_task, &tid) : NULL;
		if (t) {
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
	if (!syscall_hooks)
		tl_block_end(next, now);
	if (!sched_states)
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
