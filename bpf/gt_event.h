/* Records and counters shared by bpf/profile.bpf.c and user space: fixed-width fields, no
 * pointers, so the same header compiles for -target bpf (with vmlinux.h) and for the host. */
#ifndef GALATOP_BPF_GT_EVENT_H
#define GALATOP_BPF_GT_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define GT_MAX_STACK 127 /* frames per stack (kernel, user), as perf's default limit */
#define GT_COMM_LEN 16
#define GT_MAX_CGROUP_DEPTH 16 /* ancestors checked by the cgroup filter */
#define GT_USTACK_MAX 16384	/* most user stack bytes copied per record (DWARF unwinding) */
#define GT_PY_MAX_FRAMES 128	/* Python frames per record (bpf/python.bpf.h) */

enum gt_event_type {
	GT_EV_ONCPU = 1,  /* value: 1 CPU-clock sample */
	GT_EV_OFFCPU = 2, /* value: microseconds blocked; aux: task state at switch-out */
	GT_EV_MEM = 3,	  /* value: 1 user page fault; aux: faulting address */
	GT_EV_EXEC = 4,	  /* no stacks; aux: parent tgid */
	GT_EV_EXIT = 5,	  /* last thread of a process exited; no stacks; aux: exit code */
	GT_EV_LEAK = 6,	  /* a sampled allocation: value: its size in bytes; aux: its address;
			   * user stack taken at the allocator's return */
	GT_EV_FREE = 7,	  /* a sampled allocation freed (or moved by realloc); no stacks;
			   * aux: its address */
	GT_EV_GROWTH = 8, /* anonymous memory mapped (private mmap, brk up): value: bytes;
			   * aux: start address; user stack at the syscall's return */
	GT_EV_UNMAP = 9,  /* anonymous memory given back (munmap, brk down): value: bytes;
			   * aux: start address; no stacks */
};

/* One ring-buffer record. Records are variable length: only the first
 * kstack_len + ustack_len entries of stack[] are sent, kernel frames first (innermost first),
 * then user frames (innermost first); then pystack_len struct gt_pyframe (the Python frames of
 * a CPython thread, innermost first); with GT_EVF_UREGS a struct gt_uregs and its stack copy
 * follow right after those. */
struct gt_event {
	__u32 type;	 /* enum gt_event_type */
	__u32 cpu;	 /* CPU the sample or switch-out happened on */
	__u32 pid;	 /* tgid */
	__u32 tid;	 /* kernel pid of the thread */
	__u64 ts_ns;	 /* bpf_ktime_get_ns() (CLOCK_MONOTONIC); offcpu: switch-in time */
	__u64 cgroup_id; /* cgroup v2 id of the thread (inode number of its directory) */
	__u64 value;
	__u64 aux;
	__u16 kstack_len; /* frames in stack[] that are kernel addresses */
	__u16 ustack_len; /* frames after those that are user addresses */
	__u32 flags;	  /* GT_EVF_* */
	char comm[GT_COMM_LEN];
	__u16 pystack_len; /* struct gt_pyframe after the stacks, at most GT_PY_MAX_FRAMES */
	__u16 pad16;
	__u32 pad32;
	__u64 stack[2 * GT_MAX_STACK];
};

/* One frame of CPython's interpreter frame chain, as read at the sample: its code object and
 * the offset in code units of its current instruction (symbols/python.h names it). */
struct gt_pyframe {
	__u64 code;  /* address of the PyCodeObject (3.13: f_executable, checked in user space) */
	__s32 lasti; /* instruction pointer - start of the code, in 2-byte code units */
	__u32 flags; /* GT_PYF_* */
};

/* The frame is the first of one C-level call of the interpreter loop (_PyEval_EvalFrameDefault):
 * the frames from the previous entry (or the innermost) up to this one ran in that one call. */
#define GT_PYF_ENTRY 1u
/* The walk stopped at GT_PY_MAX_FRAMES with frames left: the outermost ones are missing. */
#define GT_PYF_TRUNCATED 2u

#define GT_EVENT_HDR_SIZE __builtin_offsetof(struct gt_event, stack)

#define GT_EVF_KSTACK_FAIL 1u /* kernel stack wanted but bpf_get_stack failed */
#define GT_EVF_USTACK_FAIL 2u /* user stack wanted but bpf_get_stack failed */
#define GT_EVF_UREGS 4u	      /* user registers and a user stack copy follow the stacks */
#define GT_EVF_USTACK_FULL 8u /* the copy stopped at the size limit, not at the stack's end */

/* User registers at the sample and uregs.size bytes of the user stack from sp upwards, for
 * unwinding in user space with the binaries' CFI (x86_64: rip, rsp, rbp suffice). */
struct gt_uregs {
	__u64 ip, sp, bp;
	__u32 size; /* stack bytes that follow, at most GT_USTACK_MAX */
	__u32 pad;
};

/* The user registers of a record with GT_EVF_UREGS (host side; the record must have been
 * checked to hold them, see probe_record_check). */
static inline const struct gt_uregs *gt_event_uregs(const struct gt_event *e)
{
	return (const struct gt_uregs *)((const char *)e->stack +
					 (e->kstack_len + e->ustack_len) * sizeof(__u64) +
					 e->pystack_len * sizeof(struct gt_pyframe));
}

/* The Python frames of a record (pystack_len of them, checked by probe_record_check). */
static inline const struct gt_pyframe *gt_event_pyframes(const struct gt_event *e)
{
	return (const struct gt_pyframe *)(e->stack + e->kstack_len + e->ustack_len);
}

/* Where a CPython process keeps its threads and frames: the value of gt_py_procs (key: tgid),
 * filled by user space from the interpreter's version (symbols/python.h). Offsets in bytes. */
#define GT_PY_NONE 0xffffffffu /* field absent in this version */
struct gt_py_proc {
	__u64 runtime;		 /* address of _PyRuntime in the process */
	__u32 interp_head;	 /* _PyRuntimeState.interpreters.head */
	__u32 interp_next;	 /* PyInterpreterState.next */
	__u32 interp_threads;	 /* PyInterpreterState.threads.head */
	__u32 tstate_next;	 /* PyThreadState.next */
	__u32 tstate_native_tid; /* PyThreadState.native_thread_id (the thread's gettid()) */
	__u32 tstate_cframe;	 /* PyThreadState.cframe (3.11, 3.12); GT_PY_NONE: none (3.13) */
	__u32 current_frame;	 /* _PyCFrame.current_frame, or PyThreadState.current_frame */
	__u32 frame_code;	 /* _PyInterpreterFrame.f_code (3.13: f_executable) */
	__u32 frame_previous;	 /* _PyInterpreterFrame.previous */
	__u32 frame_instr;	 /* _PyInterpreterFrame.prev_instr (3.13: instr_ptr) */
	__u32 frame_owner;	 /* _PyInterpreterFrame.owner */
	__u32 frame_is_entry;	 /* _PyInterpreterFrame.is_entry (3.11); GT_PY_NONE: entries are
				  * marked by shim frames owned by the C stack (3.12+) */
	__u32 code_start;	 /* PyCodeObject.co_code_adaptive: the first code unit */
	__u32 pad;
};

/* Per-CPU counters, one map entry summed by user space. */
struct gt_counters {
	__u64 total;	   /* probe hits (sampling/switch/fault), before filtering */
	__u64 filtered;	   /* hits rejected by the pid/tid/comm/cgroup/state/block filters */
	__u64 samples;	   /* records written to the ring buffer */
	__u64 drops;	   /* records lost: ring buffer full, or offcpu start map full */
	__u64 kstack_fail; /* kernel stack captures that failed */
	__u64 ustack_fail; /* user stack captures that failed */
	/* Event sampling (--event-rate), [GT_RATE_OFFCPU] and [GT_RATE_MEM]: events that passed
	 * the filters but were left out, and the current 1-in-n (per CPU; 0 or 1: every one). */
	__u64 skipped[2];
	__u64 period[2];
	__u64 py_walks;	   /* samples of CPython threads whose interpreter frames were read */
	__u64 py_no_tstate; /* samples of CPython processes in a thread with no Python state */
	/* The leak probe (bpf/leak.bpf.h): allocation calls of targets seen, allocations
	 * sampled (records written), frees of sampled allocations, and sampled allocations
	 * lost (the live set full, or the ring buffer). */
	__u64 leak_calls;
	__u64 leak_sampled;
	__u64 leak_frees;
	__u64 leak_drops;
	/* The growth probe (bpf/growth.bpf.h): mappings and unmaps of targets recorded. */
	__u64 growth_maps;
	__u64 growth_unmaps;
};

/* Event-sampling slots (oncpu, sampled at a frequency, has none). */
enum { GT_RATE_ONCPU = -1, GT_RATE_OFFCPU, GT_RATE_MEM, GT_RATE_LEAK = -1, GT_RATE_GROWTH = -1 };

/* The leak probe's live set (gt_leak_live): one entry per sampled allocation not freed yet. */
struct gt_leak_key {
	__u32 tgid;
	__u32 pad;
	__u64 addr;
};

#endif
