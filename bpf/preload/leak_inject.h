/* The in-process sampler injected into a running process (docs/leak.md, "Two ways to see
 * allocations"): galatop loads libgalatop-leak.so with dlopen through ptrace and calls
 * galatop_leak_attach(mean, owner) in it, which points the allocator entries of every module's
 * GOT at the sampler's hooks (bpf/preload/leak_hooks.c). The state it returns the address of
 * is read and written by galatop through /proc/PID/mem to take the hooks out again
 * (engine/leak_inject.c): this header is the layout both sides share (fixed-width, no
 * pointers). */
#ifndef GALATOP_BPF_PRELOAD_LEAK_INJECT_H
#define GALATOP_BPF_PRELOAD_LEAK_INJECT_H

#include <stdint.h>

#define LEAK_INJECT_ATTACH "galatop_leak_attach" /* long (uint64_t mean, int32_t owner) */
#define LEAK_INJECT_VERSION 1
#define LEAK_INJECT_SLOTS 1024

/* galatop_leak_attach's errors (negative returns; positive: the state's address). */
enum leak_inject_err {
	LEAK_INJECT_EBUSY = 1,	  /* another galatop that is still running holds the hooks */
	LEAK_INJECT_EPRELOAD = 2, /* the library was preloaded (LD_PRELOAD): it interposes already */
	LEAK_INJECT_EEXE = 3,	  /* malloc is the executable's own: its calls are direct */
	LEAK_INJECT_ENOMALLOC = 4, /* no malloc found */
	LEAK_INJECT_ENONE = 5,	  /* no module imports an allocator entry through its GOT */
};

/* One GOT (or data) slot pointed at a hook: where, what it held, the hook. */
struct leak_inject_slot {
	uint64_t addr, orig, hook;
};

struct leak_inject_state {
	uint32_t version;
	uint32_t nslots;    /* slots[0..nslots) point at hooks (0 once galatop restored them) */
	uint32_t modules;   /* modules with at least one slot */
	uint32_t elsewhere; /* entries bound to another definition than the process's (left alone) */
	uint32_t full;	    /* entries left alone because slots[] is full */
	int32_t owner;	    /* the galatop holding the hooks (its pid), 0: none */
	struct leak_inject_slot slots[LEAK_INJECT_SLOTS];
};

#endif
