/* What bpf/sli.bpf.c and user space share: the SLI kinds, the per-thread totals and the keys of
 * the per-process histograms. Fixed-width fields, no pointers (compiles for -target bpf with
 * vmlinux.h and for the host). */
#ifndef GALATOP_BPF_SLI_EVENT_H
#define GALATOP_BPF_SLI_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The delays measured, in the order of model/sli.h's enum sli_kind. */
enum gt_sli_kind {
	GT_SLI_CPU_WAIT = 0,  /* wakeup or preemption -> switch-in */
	GT_SLI_CPU_RUNDELAY,  /* growth of sched_info.run_delay: cpu_wait's figures (bpf/sli.c) */
	GT_SLI_CPU_SLEEP,     /* switch-out in S -> wakeup */
	GT_SLI_CPU_BLOCK,     /* switch-out in D, not in_iowait -> wakeup */
	GT_SLI_CPU_IOWAIT,    /* switch-out in D with in_iowait -> wakeup */
	GT_SLI_CPU_LONGSYS,   /* system calls of at least longsys_ns */
	GT_SLI_MEM_RECLAIM,   /* direct and memcg reclaim begin -> end */
	GT_SLI_MEM_SWAPIN,    /* growth of delays->swapin_delay (delay accounting) */
	GT_SLI_MEM_COMPACT,   /* compaction begin -> end */
	GT_SLI_BIO_LATENCY,   /* block request insert/issue -> complete, charged to the issuer */
	GT_SLI_MAX,
};

#define GT_SLI_COMM_LEN 16

/* Totals of one thread since galatop attached, key: the thread id. Only grows, except that user
 * space deletes the entry after reading it once dead is set. */
struct gt_sli_thread {
	__u32 tgid;
	__u32 dead;	 /* the thread exited; its totals are final */
	__u64 cgroup_id; /* cgroup v2 id of the thread at its last charge */
	char comm[GT_SLI_COMM_LEN];
	__u64 ns[GT_SLI_MAX];
	__u64 count[GT_SLI_MAX];
};

/* The per-process histograms come in rows of GT_SLI_HSUB buckets: bucket b of model/hist.h's
 * hist_index() (32 sub-buckets per power of two) is count n[b % GT_SLI_HSUB] of row
 * b / GT_SLI_HSUB, so that the delays of one power of two (most of a task's) share one map
 * entry. Key of a row: */
#define GT_SLI_HSUB 32

struct gt_sli_hkey {
	__u32 tgid;
	__u16 sli;
	__u16 row;
};

struct gt_sli_hrow {
	__u64 n[GT_SLI_HSUB];
};

/* Per-CPU counters (one entry). */
struct gt_sli_counters {
	__u64 events; /* delays charged */
	__u64 drops;  /* charges lost: a map was full */
};

#endif
