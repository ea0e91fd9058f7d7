/* Where an entry uprobe goes in an x86-64 function so that the kernel emulates the probed
 * instruction rather than single-stepping it out of line (a debug trap, ten times the cost of
 * the probe): the bpf/leak.c placement of allocator probes. capstone (symbols/capstone_dl.h)
 * decodes; without it the probe stays at the start. */
#ifndef GALATOP_SYMBOLS_PROBE_SPOT_H
#define GALATOP_SYMBOLS_PROBE_SPOT_H

#include <stddef.h>
#include <stdint.h>

/* The offset into the function whose first bytes are code[0..len) of the first instruction
 * the kernel emulates (a push of a register, a jump, a call, a conditional jump, a nop), when
 * every instruction before it is harmless: no control flow, no memory written, neither the
 * stack pointer nor one of the first nargs argument registers (rdi, rsi, rdx, rcx) changed.
 * A probe there sees the call as one at the start does, return address included (jemalloc's
 * malloc starts with a compare, its free with eight loads and register moves before a branch,
 * glibc's free with a test). 0 (the start) otherwise. A branch back to the spot from further
 * in would fire the probe twice: the allocators' entries have none. */
uint64_t probe_spot(const uint8_t *code, size_t len, unsigned nargs);

#endif
