/* The one clock helper: monotonic time for intervals and timeouts, wall-clock time for what
 * files and screens show. */
#ifndef GALATOP_UTIL_CLOCK_H
#define GALATOP_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds (the clock bpf_ktime_get_ns() reads). */
static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC_COARSE in nanoseconds: the monotonic clock as of the last tick (a few ms
 * behind), read without touching a timer; for rate limits checked at a high rate, whose times
 * are all taken with it. */
static inline uint64_t clock_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline int64_t clock_mono_ms(void)
{
	return (int64_t)(clock_mono_ns() / 1000000);
}

/* CLOCK_MONOTONIC in seconds. */
static inline double clock_mono_s(void)
{
	return (double)clock_mono_ns() / 1e9;
}

/* CLOCK_REALTIME in seconds since the epoch. */
static inline double clock_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
