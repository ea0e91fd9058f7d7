/* The sampler's core inside libgalatop-leak.so (bpf/preload/leak.c), shared by its LD_PRELOAD
 * interposers and by the GOT hooks of an injected library (bpf/preload/leak_hooks.c). */
#ifndef GALATOP_BPF_PRELOAD_SAMPLER_H
#define GALATOP_BPF_PRELOAD_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

/* The allocation p of size bytes just made: reported through the marker if sampled. Returns p. */
void *sampler_made(void *p, size_t size);
/* Block p is about to be freed (or moved): reported if it was a sampled one. */
void sampler_gone(void *p);
/* Injected: samples with mean bytes from now on, with an empty set of sampled blocks (those of
 * an earlier attach were left behind). */
void sampler_start(uint64_t mean);
/* Whether the library was preloaded and interposes malloc itself. */
int sampler_preloaded(void);

#endif
