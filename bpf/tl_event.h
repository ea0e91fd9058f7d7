/* Records shared by bpf/threads.bpf.c (the thread timeline probes) and user space: fixed-width
 * fields, no pointers, so the header compiles for -target bpf (with vmlinux.h) and the host. */
#ifndef GALATOP_BPF_TL_EVENT_H
#define GALATOP_BPF_TL_EVENT_H

#include "gt_event.h"

/* What a thread does in an interval; the order is the model's enum tl_kind. */
enum tl_rec_kind {
	TLK_ONCPU = 0, /* running on a CPU (switch-in to switch-out) */
	TLK_RUNQ,      /* runnable, waiting for a CPU (wakeup or preemption to switch-in) */
	TLK_FILE,      /* file system calls (read/write family on non-sockets, sync, fsync...) */
	TLK_NET,       /* socket calls, and read/write family calls on sockets */
	TLK_LOCK,      /* futex */
	TLK_SCHED,     /* sleeps and waits: nanosleep, poll, epoll_wait, wait4, sched_yield... */
	TLK_DSTATE,    /* off CPU in uninterruptible sleep (D state) until woken */
	TLK_MAX
};

enum tl_rec_type {
	TLR_EVENT = 1, /* one interval of a thread (struct tl_rec) */
	TLR_OPENAT,    /* an open/openat/creat that returned fd: path holds its file name */
	TLR_EXIT,      /* the thread exited at end (header only) */
};

#define TL_SYSCALL_MAX 512	/* syscall numbers the classifier covers */
#define TL_NR_NONE 0xffff	/* interval not from a system call (oncpu, runq, D state) */
#define TL_PATH_LEN 256

/* tl_rec.flags */
#define TLF_SOCK 1u	    /* sock_* fields hold the socket of the call's fd */
#define TLF_OWNER_MUTEX 2u  /* owner read from a glibc mutex word (__owner, 8 bytes on) */
#define TLF_OWNER_PI 4u	    /* owner read from a PI futex value (FUTEX_TID_MASK) */
#define TLF_OPEN 8u	    /* still in progress (user space builds these from gt_tl_start) */
#define TLF_SEEDED 16u	    /* entered before the probes attached: user space seeded the entry */
#define TLF_PATH 32u	    /* TLR_EVENT: path holds the file of the call's fd (or an open's name) */
#define TLF_NOSTASH 64u	    /* blocking mode: the call's record could not be stashed */
#define TLF_SAMPLED 128u    /* blocking mode: first seen running by the sampler, start (and end
			     * unless it blocked) known to one sampling period */

/* One interval. A user stack (frame addresses, innermost first) may follow in stk: its
 * kstack_len is 0 and ustack_len frames are sent. */
struct tl_rec {
	__u32 type; /* enum tl_rec_type */
	__u32 pid;
	__u32 tid;
	__u16 nr;   /* syscall number, TL_NR_NONE for scheduler intervals */
	__u8 kind;  /* enum tl_rec_kind */
	__u8 flags; /* TLF_* */
	__u64 start, end; /* bpf_ktime_get_ns() */
	__s64 ret;	  /* the call's return value */
	__u64 arg0;	  /* fd, or futex address */
	/* Blocking mode, a read or write call (the kernel counts them as they end): what tells
	 * this call from the thread's next one from the same place (tl_start.call_key); two
	 * intervals with the same key are one call that blocked twice. 0 otherwise. */
	__u64 call_key;
	__u32 futex_op;	  /* futex op (cmd with flags) */
	__u32 owner;	  /* futex owner tid read at entry (TLF_OWNER_*), else 0 */
	__u32 futex_val;  /* the futex call's expected value (2: glibc lock wait) */
	__u16 sock_family, sock_type; /* AF_INET/AF_INET6, SOCK_STREAM/SOCK_DGRAM */
	__u16 sport, dport;	      /* host byte order */
	__u8 saddr[16], daddr[16];    /* IPv4 in the first 4 bytes */
	char comm[GT_COMM_LEN];
	char path[TL_PATH_LEN]; /* TLR_OPENAT: the file name as passed; TLF_PATH: see there */
	struct gt_event stk;	/* header fields pid/tid/flags/ustack_len + user frames */
};

#define TL_REC_HDR_SIZE __builtin_offsetof(struct tl_rec, stk)

/* Per thread (map gt_tl_start): the call in progress (ts 0: none), which user space reads to
 * show growing bars and to find deadlocks; and the intervals shorter than the minimum duration,
 * counted, not sent. */
struct tl_start {
	__u64 ts;
	__u64 arg0;
	__u32 pid;
	__u16 nr;
	__u8 kind;
	__u8 flags;
	__u32 futex_op;
	__u32 owner;
	__u32 futex_val;
	__s32 stackid; /* user stack at entry in gt_tl_stacks (futex waits), -1 if none */
	__u64 path_ptr; /* open/openat: the user pointer to the file name */
	__s32 sock_fd;	/* the last fd checked for being a socket, -1 none */
	__u32 sock_is;	/* whether it was one */
	struct tl_short {
		__u64 count[TLK_MAX];
		__u64 ns[TLK_MAX];
	} shorts;
	/* Blocking mode: the thread's last switch-in, the user stack pointer of its call and
	 * whether the call is one it was preempted in (TLS_*). */
	__u64 last_in;
	__u64 call_sp;
	__u32 state;
	__u32 pad;
	/* The thread's read and write call counts and user time when its call was seen: a
	 * change says a later sight is another call from the same place. */
	__u64 call_key;
};

/* tl_start.state */
#define TLS_PREEMPTED 1u /* preempted in the call: it does not end at the switch back in */
#define TLS_RESUMED 2u	 /* and back on a CPU: whether the call goes on is not known yet */
#define TLS_SAMPLED 4u	 /* running in the call, seen by the sampler (last_in: its last sight) */

/* Per-CPU counters of the family. */
struct tl_counters {
	__u64 events;  /* records written */
	__u64 drops;   /* records lost: ring buffer full or a state map full */
	__u64 shorter; /* intervals below the minimum duration, counted in gt_tl_start */
};

#endif
