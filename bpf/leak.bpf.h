/* SPDX-License-Identifier: GPL-2.0 */
/* The leak probe's programs, part of bpf/profile.bpf.c (they share its ring buffer, record
 * scratch, counters and stack taking): one entry program and one return program for every
 * allocator function, told apart by the uprobe's cookie (LEAK_FN_* in bpf/leak.h). Allocations
 * are sampled by bytes, as a Poisson process of mean leak_mean bytes per CPU (Go's and
 * jemalloc's heap profilers do the same per thread); a sampled allocation's address goes
 * into the live set gt_leak_live and its record, with the user stack taken at the
 * allocator's return, to user space, which weights it. A free looks its address up in the
 * live set: only frees of sampled allocations cost a record. Include after the definitions
 * of profile.bpf.c it uses. */
#ifndef GALATOP_BPF_LEAK_BPF_H
#define GALATOP_BPF_LEAK_BPF_H

#include "leak_event.h"
#include "msb.bpf.h"

/* Mean bytes between two samples; 1: every allocation. leak_mean_ln2_q8 is
 * leak_mean * ln 2 * 256, leak_log2_q16[i] is log2(1 + i/64) * 65536 (user space fills both). */
const volatile __u64 leak_mean = 0;
const volatile __u64 leak_mean_ln2_q8 = 0;
const volatile __u32 leak_log2_q16[65] = {};

/* Set by user space when a recording stops: from then on calls are let through untouched,
 * so what is outstanding at the stop is what gets written. */
bool leak_paused = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* sized by user space */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct gt_leak_key);
	__type(value, __u64); /* allocation time */
} gt_leak_live SEC(".maps");

/* An allocation call between its entry and its return, by thread: only the calls that are
 * sampled or move a sampled block (realloc) are kept, so other returns cost one lookup. */
struct gt_leak_call {
	__u64 size;
	__u64 old;    /* realloc: the sampled block it moves, 0 if none */
	__u64 memptr; /* posix_memalign: where the address is written */
	__u64 sp;     /* the stack pointer at entry: the return must be this call's */
	__u32 fn;     /* LEAK_FN_* */
	__u32 sampled;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct gt_leak_call);
} gt_leak_calls SEC(".maps");

/* Bytes left before the next sample, per CPU (0: not drawn yet). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} gt_leak_left SEC(".maps");

/* A draw of the exponential distribution of mean leak_mean: -ln(U) * mean for U uniform in
 * (0, 1], with log2 taken from its leading bit and a 64-entry table, interpolated (relative
 * error about 1e-5). */
static __always_inline __s64 leak_draw(void)
{
	__u64 x = (__u64)bpf_get_prandom_u32() + 1, m, f, rem, lg, gap;
	__u32 msb = msb64(x), i, lo, hi;

	/* x = 2^msb * (1 + f / 2^40) */
	m = x << (40 - msb);
	f = m - (1ull << 40);
	i = (f >> 34) & 63;
	rem = f & ((1ull << 34) - 1);
	lo = leak_log2_q16[i];
	hi = leak_log2_q16[i + 1];
	lg = ((__u64)msb << 16) + lo + (((hi - lo) * rem) >> 34);
	gap = (leak_mean_ln2_q8 * ((32ull << 16) - lg)) >> 24;
	return gap ? (__s64)gap : 1;
}

/* Whether an allocation of size bytes is sampled: the bytes left to the next sample run out
 * within it. */
static __always_inline bool leak_sample(__u64 size)
{
	__u32 zero = 0;
	__s64 *left;

	if (leak_mean <= 1)
		return true;
	left = bpf_map_lookup_elem(&gt_leak_left, &zero);
	if (!left)
		return false;
	if (!*left)
		*left = leak_draw();
	if ((__s64)size < *left) {
		*left -= (__s64)size;
		return false;
	}
	*left = leak_draw();
	return true;
}

/* a * b into *out; false when it does not fit in 64 bits (calloc then fails). */
static __always_inline bool leak_mul(__u64 a, __u64 b, __u64 *out)
{
	__u64 hi = a > b ? a : b, lo = a > b ? b : a;

	if (lo >> 32 || ((hi >> 32) * lo) >> 32)
		return false;
	*out = hi * lo;
	return true;
}

/* A sampled block of tgid went away: its free record. */
static __always_inline void leak_emit_free(__u64 pid_tgid, __u64 addr, struct gt_counters *c)
{
	struct gt_event *e = bpf_ringbuf_reserve(&gt_events, GT_EVENT_HDR_SIZE, 0);

	if (!e) {
		COUNT(c, leak_drops);
		return;
	}
	fill_header(e, GT_EV_FREE, pid_tgid, bpf_ktime_get_ns());
	e->value = 0;
	e->aux = addr;
	bpf_ringbuf_submit(e, wakeup_flags());
	COUNT(c, leak_frees);
}

/* Takes addr of the current process out of the live set; its free record if it was there. */
static __always_inline void leak_free(__u64 pid_tgid, __u64 addr, struct gt_counters *c)
{
	struct gt_leak_key k = { .tgid = pid_tgid >> 32, .addr = addr };

	if (addr && !bpf_map_delete_elem(&gt_leak_live, &k))
		leak_emit_free(pid_tgid, addr, c);
}

/* An allocator function's entry: 1 when its return must be seen (the call is sampled, or
 * moves a sampled block), else 0. */
static __always_inline int leak_on_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), pid_tgid = bpf_get_current_pid_tgid();
	__u32 fn = cookie & LEAK_FN_MASK, tid = (__u32)pid_tgid;
	struct gt_leak_call call = { .sp = PT_REGS_SP(ctx), .fn = fn };
	struct gt_counters *c;
	struct gt_leak_call *outer;
	__u64 a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx);

	if (leak_paused || !current_passes(pid_tgid >> 32, tid))
		return 0;
	c = counters();
	switch (fn) {
	case LEAK_FN_FREE:
		leak_free(pid_tgid, a1, c);
		return 0;
	case LEAK_FN_MALLOC:
	case LEAK_FN_VALLOC:
		call.size = a1;
		break;
	case LEAK_FN_PVALLOC:
		call.size = (a1 + GT_PAGE - 1) & ~(__u64)(GT_PAGE - 1);
		break;
	case LEAK_FN_CALLOC:
		if (!leak_mul(a1, a2, &call.size))
			return 0; /* fails with ENOMEM */
		break;
	case LEAK_FN_REALLOC:
		/* glibc's realloc(NULL, n) jumps to malloc, whose probe takes it. */
		if (!a1 && (cookie & LEAK_NULL_VIA_MALLOC))
			return 0;
		call.size = a2;
		call.old = a1;
		break;
	case LEAK_FN_REALLOCARRAY: {
		if (!leak_mul(a2, PT_REGS_PARM3(ctx), &call.size))
			return 0;
		call.old = a1;
		break;
	}
	case LEAK_FN_MEMALIGN:
		call.size = a2;
		break;
	case LEAK_FN_POSIX_MEMALIGN:
		call.memptr = a1;
		call.size = PT_REGS_PARM3(ctx);
		break;
	default:
		return 0;
	}
	COUNT(c, leak_calls);
	call.sampled = leak_sample(call.size);
	if (call.old) {
		struct gt_leak_key k = { .tgid = pid_tgid >> 32, .addr = call.old };

		if (!bpf_map_lookup_elem(&gt_leak_live, &k))
			call.old = 0;
	}
	if (!call.sampled && !call.old)
		return 0;
	/* Called from inside a call taken already (realloc moving an mmapped block through
	 * malloc): the outer call reports the block. */
	outer = bpf_map_lookup_elem(&gt_leak_calls, &tid);
	if (outer && outer->sp > call.sp && outer->sp - call.sp < (1u << 20))
		return 0;
	if (bpf_map_update_elem(&gt_leak_calls, &tid, &call, BPF_ANY)) {
		COUNT(c, leak_drops);
		return 0;
	}
	return 1;
}

SEC("uprobe")
int gt_leak_entry(struct pt_regs *ctx)
{
	leak_on_entry(ctx);
	return 0;
}

/* A sampled allocation of size bytes at addr: into the live set, and its record with the
 * user stack to user space (which drops the preload library's frames: bpf/preload/leak.c). */
static __always_inline void leak_emit_alloc(struct pt_regs *ctx, __u64 pid_tgid, __u64 addr,
					    __u64 size, struct gt_counters *c)
{
	struct gt_leak_key k = { .tgid = pid_tgid >> 32, .addr = addr };
	__u64 now = bpf_ktime_get_ns();
	struct gt_event *e;

	if (bpf_map_update_elem(&gt_leak_live, &k, &now, BPF_ANY)) {
		COUNT(c, leak_drops);
		return;
	}
	e = scratch(SLOT_LEAK);
	if (!e)
		return;
	fill_header(e, GT_EV_LEAK, pid_tgid, now);
	e->value = size;
	e->aux = addr;
	take_stacks(ctx, e, c, false, user_stacks);
	if (bpf_ringbuf_output(&gt_events, e, record_len(e), wakeup_flags())) {
		bpf_map_delete_elem(&gt_leak_live, &k);
		COUNT(c, leak_drops);
	} else {
		COUNT(c, leak_sampled);
	}
}

/* An allocator function's return, after an entry that kept the call. */
static __always_inline int leak_on_ret(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), addr = PT_REGS_RC(ctx);
	__u32 tid = (__u32)pid_tgid;
	struct gt_leak_call *p, call;
	struct gt_counters *c;

	if (leak_paused)
		return 0;
	p = bpf_map_lookup_elem(&gt_leak_calls, &tid);
	/* The return pops the return address: sp is 8 above the entry's. */
	if (!p || p->sp + 8 != PT_REGS_SP(ctx))
		return 0;
	call = *p;
	bpf_map_delete_elem(&gt_leak_calls, &tid);
	c = counters();
	if (call.fn == LEAK_FN_POSIX_MEMALIGN) {
		if (addr || bpf_probe_read_user(&addr, sizeof(addr), (void *)call.memptr))
			return 0; /* an error number, or no address to read */
	}
	/* realloc: the old block is gone when a new one came (or size 0 freed it). */
	if (call.old && (addr || !call.size))
		leak_free(pid_tgid, call.old, c);
	if (!addr || !call.sampled)
		return 0;
	leak_emit_alloc(ctx, pid_tgid, addr, call.size, c);
	return 0;
}

SEC("uretprobe")
int gt_leak_ret(struct pt_regs *ctx)
{
	return leak_on_ret(ctx);
}

extern bool bpf_session_is_return(void) __ksym __weak;

/* Entry and return in one program (uprobe.session, Linux 6.10; user space loads it with that
 * attach type and attaches it with a uprobe_multi link): the entry returns 1 for the calls
 * whose return does not matter, and the kernel then skips their return probe, the costlier
 * half (a second trap) of most calls. */
SEC("uprobe")
int gt_leak_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return())
		return leak_on_ret(ctx);
	return !leak_on_entry(ctx);
}

/* The markers of the in-process sampler (bpf/preload/leak.c, preloaded into commands galatop
 * starts): galatop_leak_alloc(addr, size, calls) for an allocation it sampled, with the
 * thread's allocation calls since its previous sample, and galatop_leak_free(addr) for the
 * free of a sampled block. The sampling is done: each call is a record. */
SEC("uprobe")
int gt_leak_mark(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), addr = PT_REGS_PARM1(ctx);
	struct gt_counters *c;

	if (leak_paused || !current_passes(pid_tgid >> 32, (__u32)pid_tgid))
		return 0;
	c = counters();
	if ((bpf_get_attach_cookie(ctx) & LEAK_FN_MASK) == LEAK_FN_FREE) {
		leak_free(pid_tgid, addr, c);
		return 0;
	}
	if (c)
		__sync_fetch_and_add(&c->leak_calls, PT_REGS_PARM3(ctx));
	if (addr)
		leak_emit_alloc(ctx, pid_tgid, addr, PT_REGS_PARM2(ctx), c);
	return 0;
}

#endif
