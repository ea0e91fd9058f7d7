/* Helper threads that leave signals to the main thread. */
#ifndef GALATOP_UTIL_THREAD_H
#define GALATOP_UTIL_THREAD_H

#include <pthread.h>
#include <signal.h>

/* Starts fn(arg) on a thread of its own with every signal blocked: signals stay with the main
 * thread, whose loop watches for them. 0 or -errno. */
static inline int thread_start_quiet(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

#endif
