/* What bpf/leak.bpf.h shares with user space beside the records (GT_EV_LEAK, GT_EV_FREE in
 * gt_event.h): the cookie each allocator uprobe carries, naming its function's kind. */
#ifndef GALATOP_BPF_LEAK_EVENT_H
#define GALATOP_BPF_LEAK_EVENT_H

enum leak_fn {
	LEAK_FN_MALLOC = 1,	    /* (size): malloc, operator new, mallocx */
	LEAK_FN_CALLOC,		    /* (n, size) */
	LEAK_FN_REALLOC,	    /* (ptr, size) */
	LEAK_FN_REALLOCARRAY,	    /* (ptr, n, size) */
	LEAK_FN_MEMALIGN,	    /* (alignment, size): memalign, aligned_alloc */
	LEAK_FN_POSIX_MEMALIGN,	    /* (&ptr, alignment, size): the address is written */
	LEAK_FN_VALLOC,		    /* (size) */
	LEAK_FN_PVALLOC,	    /* (size), rounded up to pages */
	LEAK_FN_FREE,		    /* (ptr): free, operator delete, dallocx, sdallocx */
};
#define LEAK_FN_MASK 0xffu
/* realloc(NULL, n) jumps to this allocator's malloc (glibc), whose probe counts it. */
#define LEAK_NULL_VIA_MALLOC 0x100u

#endif
