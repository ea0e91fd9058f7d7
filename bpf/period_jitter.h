/* Randomized sampling periods, so that periodic work cannot phase-lock with the samples: a
 * thread gives each CPU-clock perf event, at random moments (each CPU on its own, every
 * PERIOD_JITTER_SAMPLES periods on average), a new period whose rate is drawn uniformly within
 * +-PERIOD_JITTER_SPREAD of the requested one (PERF_EVENT_IOC_PERIOD, which also restarts the
 * event's timer at that moment). A fixed period takes every sample at the same phase of a loop
 * whose period is a multiple of it; here each restart lands at a phase of any loop that nothing
 * in the loop decides, and the period that follows differs each time. The mean rate stays the
 * requested one (the draws are scaled for the period a restart cuts short). */
#ifndef GALATOP_BPF_PERIOD_JITTER_H
#define GALATOP_BPF_PERIOD_JITTER_H

#include <stdint.h>

#define PERIOD_JITTER_SPREAD 0.25 /* rates within +-25% of the requested one */
#define PERIOD_JITTER_SAMPLES 64  /* periods between two restarts of a CPU, on average */

struct period_jitter;

/* Starts re-arming perf events sampled every period_ns nanoseconds (events added with
 * period_jitter__add). NULL with errno set when the thread cannot start. */
struct period_jitter *period_jitter__new(uint64_t period_ns);
/* Adds the perf event fd (borrowed: it must stay open until period_jitter__free); safe while
 * the thread runs. 0 or -ENOMEM. */
int period_jitter__add(struct period_jitter *j, int fd);
/* Restarts done so far, and those the kernel refused. */
void period_jitter__stats(struct period_jitter *j, uint64_t *rearms, uint64_t *failed);
/* Stops the thread and frees j; NULL is a no-op. */
void period_jitter__free(struct period_jitter *j);

#endif
