/* Reading a BPF ring buffer in bounded time. Records wake the reader only once a share of the
 * buffer waits (see profile.bpf.c), so a drain waits, then takes whatever arrived. One
 * drain__poll handles records for at most DRAIN_BUDGET_MS past its wait: when records come
 * faster than they are handled (a high rate, DWARF unwinding, a busy small machine), the caller
 * still gets control back to stop, refresh or write its files; the rest waits for the next
 * call. Every probe family reads its ring buffer through one. */
#ifndef GALATOP_BPF_DRAIN_H
#define GALATOP_BPF_DRAIN_H

#include <stddef.h>
#include <stdint.h>

#define DRAIN_BUDGET_MS 200
/* drain__poll's timeout for the last read at stop: no wait, everything queued is taken (for at
 * most DRAIN_ALL_MS, as probes still attached keep writing). */
#define DRAIN_ALL (-2)
#define DRAIN_ALL_MS 5000

/* A record handler: 0 to go on (a negative errno stops the drain and is returned). */
typedef int (*drain_fn)(void *ctx, void *data, size_t size);

struct drain;

/* A drain of the ring buffer map map_fd calling fn(ctx, ...) per record; NULL with errno set. */
struct drain *drain__new(int map_fd, drain_fn fn, void *ctx);
void drain__free(struct drain *d);
/* The epoll fd that becomes readable when the buffer wakes its reader. */
int drain__fd(const struct drain *d);
/* Waits up to timeout_ms (0: no wait, -1: until a wakeup; DRAIN_ALL above), then handles what
 * is there within the budget. Returns the records handled, or a negative errno. */
int drain__poll(struct drain *d, int timeout_ms);
/* Handles what is there without waiting, until deadline_ns (CLOCK_MONOTONIC): a caller that
 * waited on several drains' fds at once gives them one budget. Returns the records handled, or
 * a negative errno. */
int drain__consume(struct drain *d, uint64_t deadline_ns);
/* True when the last drain__poll or drain__consume stopped at its budget: records are left for
 * the next one. */
int drain__cut(const struct drain *d);

#endif
