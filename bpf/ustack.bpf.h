/* SPDX-License-Identifier: GPL-2.0 */
/* The user stack copy for DWARF unwinding in user space, shared by the probe families that
 * record user stacks (profile, threads). Include after vmlinux.h, the libbpf headers and
 * gt_event.h. */
#ifndef GALATOP_BPF_USTACK_BPF_H
#define GALATOP_BPF_USTACK_BPF_H

#define GT_PAGE 4096

/* Puts the current task's user registers and up to limit bytes of its user stack right after
 * the first `used` 8-byte entries of e's stack (at most max_used, a constant the caller's
 * buffer has room for). The copy goes a page at a time, so it stops at the end of the stack
 * mapping (or at a page that is not resident) instead of failing whole. */
static __always_inline void copy_ustack(struct gt_event *e, __u32 used, __u32 limit,
					__u32 max_used)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct gt_uregs *u;
	__u64 sp, done = 0;
	__u8 *data;

	if (used > max_used)
		return;
	u = (struct gt_uregs *)((__u8 *)e->stack + used * sizeof(__u64));
	u->ip = BPF_CORE_READ(regs, ip);
	u->sp = sp = BPF_CORE_READ(regs, sp);
	u->bp = BPF_CORE_READ(regs, bp);
	data = (__u8 *)(u + 1);
	for (int i = 0; i < GT_USTACK_MAX / GT_PAGE + 1; i++) {
		__u64 chunk = GT_PAGE - ((sp + done) & (GT_PAGE - 1));

		if (done >= limit)
			break;
		if (chunk > limit - done)
			chunk = limit - done;
		if (done > GT_USTACK_MAX || chunk > GT_PAGE) /* bounds for the verifier */
			break;
		if (bpf_probe_read_user(data + done, chunk, (void *)(sp + done)))
			break;
		done += chunk;
	}
	u->size = done;
	u->pad = 0;
	e->flags |= GT_EVF_UREGS;
	if (done >= limit)
		e->flags |= GT_EVF_USTACK_FULL;
}

#endif
