/* Per-CPU counter maps, as every probe family keeps them: one entry of a BPF per-CPU array
 * whose value is a struct of __u64 counters, summed over the CPUs by user space. */
#ifndef GALATOP_BPF_PERCPU_H
#define GALATOP_BPF_PERCPU_H

#include <stddef.h>
#include <stdint.h>

struct bpf_map;

/* Sums entry 0 of per-CPU array m, n __u64 counters per CPU, into sum[0..n) (zeroed first).
 * 0 or -errno (sum is then zero). */
int percpu_sum_u64(const struct bpf_map *m, uint64_t *sum, size_t n);

#endif
