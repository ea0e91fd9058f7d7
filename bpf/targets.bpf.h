/* SPDX-License-Identifier: GPL-2.0 */
/* The target filter every probe family shares: pids, tids, a command name and cgroup subtrees,
 * combined as a union; no target kind configured means every task passes. User space sets the
 * knobs before load and fills the sets with bpf/targets.h. Include after vmlinux.h and the
 * libbpf headers. */
#ifndef GALATOP_BPF_TARGETS_BPF_H
#define GALATOP_BPF_TARGETS_BPF_H

#include "gt_event.h"

const volatile bool filter_pids_enabled = false;
const volatile bool filter_tids_enabled = false;
const volatile bool filter_comm_enabled = false;
const volatile bool filter_cgroups_enabled = false;
const volatile char target_comm[GT_COMM_LEN] = {};
/* galatop's own process: never a target, so reading the probes does not feed them. */
const volatile __u32 exclude_tgid = 0;

/* The pid set: one bit per tgid, word tgid / 64 (sized to every possible pid by user space
 * when the pid filter is on, which sets and clears bits through a shared mapping). A test is
 * one load (the verifier inlines an array lookup) where a hash lookup cost 30-50 ns on every
 * call of every probe, a target's or not. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} gt_pids SEC(".maps");

/* The tid and cgroup sets; user space sizes them. */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} gt_tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u8);
} gt_cgroups SEC(".maps");

/* The word of the pid set that holds tgid's bit, NULL past its end. */
static __always_inline __u64 *targets_pid_word(__u32 tgid)
{
	__u32 k = tgid / 64;

	return bpf_map_lookup_elem(&gt_pids, &k);
}

static __always_inline bool targets_pid_in(__u32 tgid)
{
	__u64 *w = targets_pid_word(tgid);

	return w && (*w >> (tgid % 64)) & 1;
}

/* Takes tgid out of the pid set (its process has ended: the pid may be reused). */
static __always_inline void targets_pid_drop(__u32 tgid)
{
	__u64 *w = targets_pid_word(tgid);

	if (w && (*w >> (tgid % 64)) & 1)
		__sync_fetch_and_and(w, ~(1ULL << (tgid % 64)));
}

static __always_inline bool targets_any(void)
{
	return filter_pids_enabled || filter_tids_enabled || filter_comm_enabled ||
	       filter_cgroups_enabled;
}

static __always_inline bool targets_comm_is(const char *comm)
{
#pragma unroll
	for (int i = 0; i < GT_COMM_LEN; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/* A cgroup target matches its whole subtree: a pod's id matches its containers' cgroups. */
static __always_inline bool targets_current_cgroup(void)
{
	for (int level = 0; level < GT_MAX_CGROUP_DEPTH; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);

		if (!id)
			break;
		if (bpf_map_lookup_elem(&gt_cgroups, &id))
			return true;
	}
	return false;
}

/* Whether the current task is a target. */
static __always_inline bool current_passes(__u32 tgid, __u32 tid)
{
	if (exclude_tgid && tgid == exclude_tgid)
		return false;
	if (!targets_any())
		return true;
	if (filter_pids_enabled && targets_pid_in(tgid))
		return true;
	if (filter_tids_enabled && bpf_map_lookup_elem(&gt_tids, &tid))
		return true;
	if (filter_comm_enabled) {
		char comm[GT_COMM_LEN];

		if (!bpf_get_current_comm(comm, sizeof(comm)) && targets_comm_is(comm))
			return true;
	}
	if (filter_cgroups_enabled && targets_current_cgroup())
		return true;
	return false;
}

/* The v2 (default hierarchy) cgroup id of task t, 0 if unknown. */
static __always_inline __u64 targets_task_cgroup_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/* Whether task t (not necessarily current: the next task of a switch, a woken task) is a
 * target. A cgroup's parent is its first member's (self's) parent, hence the cast. */
static __always_inline bool task_passes(struct task_struct *t)
{
	if (exclude_tgid && BPF_CORE_READ(t, tgid) == exclude_tgid)
		return false;
	if (!targets_any())
		return true;
	if (filter_pids_enabled) {
		if (targets_pid_in(BPF_CORE_READ(t, tgid)))
			return true;
	}
	if (filter_tids_enabled) {
		__u32 tid = BPF_CORE_READ(t, pid);

		if (bpf_map_lookup_elem(&gt_tids, &tid))
			return true;
	}
	if (filter_comm_enabled) {
		char comm[GT_COMM_LEN];

		if (BPF_CORE_READ_STR_INTO(&comm, t, comm) > 0 && targets_comm_is(comm))
			return true;
	}
	if (filter_cgroups_enabled) {
		struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);

		for (int level = 0; level < GT_MAX_CGROUP_DEPTH && cg; level++) {
			__u64 id = BPF_CORE_READ(cg, kn, id);

			if (bpf_map_lookup_elem(&gt_cgroups, &id))
				return true;
			cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
		}
	}
	return false;
}

/* Follows new processes (not threads) of target processes into the pid set: the body of a
 * family's tp_btf/sched_process_fork program when it follows a command's children. */
static __always_inline void targets_follow_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u64 *w;

	if (ptgid == ctgid || !targets_pid_in(ptgid))
		return;
	w = targets_pid_word(ctgid);
	if (w)
		__sync_fetch_and_or(w, 1ULL << (ctgid % 64));
}

#endif
