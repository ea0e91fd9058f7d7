/* The index of a 64-bit value's highest set bit (0 for 0 and 1), by halving: no loop, no clz
 * (clang 14's BPF backend has no count-leading-zeros). For BPF programs. */
#ifndef GALATOP_BPF_MSB_BPF_H
#define GALATOP_BPF_MSB_BPF_H

static __always_inline __u32 msb64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

#endif
