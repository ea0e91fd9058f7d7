/* For the engine tests' workloads: spinning for a given CPU time of the calling thread (not of
 * wall time: the count of on-CPU samples holds on a loaded machine). */
#ifndef GALATOP_TESTS_ENGINE_SPIN_H
#define GALATOP_TESTS_ENGINE_SPIN_H

#include <time.h>

static volatile unsigned long spin_sink;

/* The calling thread's CPU time, in seconds. */
static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spins for secs seconds of the thread's CPU time (inline: the caller's frame is the one
 * sampled). */
static inline void spin_cpu(double secs)
{
	double end = thread_cpu_s() + secs;

	while (thread_cpu_s() < end)
		spin_sink++;
}

#endif
