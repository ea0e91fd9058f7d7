/* What tests/bench/l7_floor.bpf.c keeps per endpoint, shared with its loader. Compiles for
 * -target bpf (with vmlinux.h) and the host. */
#ifndef GALATOP_TESTS_BENCH_L7_FLOOR_H
#define GALATOP_TESTS_BENCH_L7_FLOOR_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define FL_BUCKETS 512 /* latency histogram: 8 buckets per power of two */

struct fl_ep {
	__u64 count, err, bytes, sum;
	__u32 hist[FL_BUCKETS];
};

#endif
