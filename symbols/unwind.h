/* User stacks from DWARF CFI: unwinds a copy of a thread's registers and top of stack, taken
 * at the sample, with libdw over the process's modules (.eh_frame, else .debug_frame, else
 * frame pointers), found through the symbol cache; Go frames with Go's own pc-to-SP tables
 * (.gopclntab, through the symbol cache). One Dwfl per process, kept for at most a
 * configurable number of processes (least recently used go first). x86_64 only. Not
 * thread-safe. See docs/unwinding.md. */
#ifndef GALATOP_SYMBOLS_UNWIND_H
#define GALATOP_SYMBOLS_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One sample to unwind; the stack copy is borrowed for the call. */
struct unwind_sample {
	int pid, tid;
	uint64_t ip, sp, bp; /* user registers at the sample */
	const void *stack;   /* copy of the user stack [sp, sp + stack_len) */
	size_t stack_len;
	bool stack_full; /* the copy stopped at its size limit, so frames may lie beyond it */
};

enum unwind_status {
	UNWIND_OK,	  /* reached the outermost frame, the top of the stack, or max frames */
	UNWIND_TRUNCATED, /* stopped at the end of a full stack copy */
	UNWIND_ERROR,	  /* stopped early: no CFI, unreadable memory, no modules for pid */
};

struct unwind_stats {
	size_t processes;  /* processes with a Dwfl now */
	uint64_t reports;  /* modules reported to libdw (first use in a process) */
	uint64_t evictions; /* Dwfls dropped by the cap */
	uint64_t replays;  /* walks replayed from memory (same registers, same stack words) */
};

struct unwinder;

struct sym_cache;

/* Creates an unwinder keeping at most max_procs processes' state (0 = 64), finding their
 * mappings and files through sc (borrowed, must outlive it). NULL on ENOMEM or when libdw
 * cannot unwind this architecture. */
struct unwinder *unwinder__new(size_t max_procs, struct sym_cache *sc);
/* Frees every process's state; NULL is a no-op. */
void unwinder__free(struct unwinder *u);
/* Unwinds s into pcs[0..max), innermost first: pcs[0] is s->ip, the others are return
 * addresses minus one (inside the call, so they symbolize as the caller). Returns the number
 * of pcs (at least 1 when max > 0) and the reason the walk stopped in *status. */
size_t unwinder__unwind(struct unwinder *u, const struct unwind_sample *s, uint64_t *pcs,
			size_t max, enum unwind_status *status);
/* Drops pid's state (exit, or exec: a new image); unknown pid is a no-op. */
void unwinder__process_exit(struct unwinder *u, int pid);
/* Fills st with the unwinder's counters and sizes so far; cannot fail. */
void unwinder__stats(const struct unwinder *u, struct unwind_stats *st);

/* Reads the 8-byte word at addr from a stack copy of len bytes that starts at address sp.
 * 0, or -EFAULT when [addr, addr + 8) is not inside the copy. */
int unwind_stack_word(const void *stack, size_t len, uint64_t sp, uint64_t addr, uint64_t *out);

#endif
