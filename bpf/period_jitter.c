/* Randomized sampling periods: see period_jitter.h. */
#include "bpf/period_jitter.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>

#include "util/grow.h"

struct jitter_event {
	int fd;
	uint64_t due_ns; /* CLOCK_MONOTONIC time of its next restart */
};

struct period_jitter {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	uint64_t period_ns;
	uint64_t rng; /* xorshift64* state, never 0 */
	struct jitter_event *ev;
	size_t n, cap;
	uint64_t rearms, failed;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Uniform in [0, 1). */
static double uniform(struct period_jitter *j)
{
	j->rng ^= j->rng >> 12;
	j->rng ^= j->rng << 25;
	j->rng ^= j->rng >> 27;
	return (double)((j->rng * 0x2545f4914f6cdd1dull) >> 11) / (double)(1ull << 53);
}

/* The next restart: between half and one and a half times PERIOD_JITTER_SAMPLES periods on. */
static uint64_t next_due(struct period_jitter *j, uint64_t from)
{
	return from + (uint64_t)((0.5 + uniform(j)) * PERIOD_JITTER_SAMPLES * (double)j->period_ns);
}

/* A period whose rate (not length) is uniform within +-PERIOD_JITTER_SPREAD of the requested
 * one, so that the mean rate is the requested one (uniform lengths would raise it, the mean of
 * 1/x being more than 1/mean). A restart cuts the running period short, half a period on
 * average: the draws are scaled to make up for it. */
static uint64_t draw_period(struct period_jitter *j)
{
	double scale = 1 - 0.5 / PERIOD_JITTER_SAMPLES;
	double p = (double)j->period_ns * scale / (1 + PERIOD_JITTER_SPREAD * (2 * uniform(j) - 1));

	return p < 10000 ? 10000 : (uint64_t)p; /* the kernel's shortest hrtimer period */
}

static void *jitter_run(void *arg)
{
	struct period_jitter *j = arg;

	pthread_mutex_lock(&j->lock);
	while (!j->stop) {
		uint64_t now = now_ns(), soonest = UINT64_MAX;
		struct timespec until;

		for (size_t i = 0; i < j->n; i++) {
			struct jitter_event *e = &j->ev[i];

			if (e->due_ns <= now) {
				uint64_t period = draw_period(j);

				if (ioctl(e->fd, PERF_EVENT_IOC_PERIOD, &period))
					j->failed++;
				else
					j->rearms++;
				e->due_ns = next_due(j, now);
			}
			if (e->due_ns < soonest)
				soonest = e->due_ns;
		}
		if (soonest == UINT64_MAX)
			soonest = now + 1000000000ull;
		until.tv_sec = (time_t)(soonest / 1000000000ull);
		until.tv_nsec = (long)(soonest % 1000000000ull);
		pthread_cond_timedwait(&j->wake, &j->lock, &until);
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

struct period_jitter *period_jitter__new(uint64_t period_ns)
{
	struct period_jitter *j = calloc(1, sizeof(*j));
	pthread_condattr_t ca;
	int err;

	if (!j)
		return NULL;
	j->period_ns = period_ns ? period_ns : 1;
	if (getrandom(&j->rng, sizeof(j->rng), 0) != sizeof(j->rng))
		j->rng = now_ns();
	j->rng |= 1;
	pthread_mutex_init(&j->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->wake, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&j->thread, NULL, jitter_run, j);
	if (err) {
		pthread_cond_destroy(&j->wake);
		pthread_mutex_destroy(&j->lock);
		free(j);
		errno = err;
		return NULL;
	}
	pthread_setname_np(j->thread, "gt-period"); /* its cost can be read apart */
	return j;
}

int period_jitter__add(struct period_jitter *j, int fd)
{
	int err = 0;

	pthread_mutex_lock(&j->lock);
	if (ARRAY_GROW(j->ev, j->cap, j->n + 1))
		err = -ENOMEM;
	else /* its first restart at once: the events all started at the same moment */
		j->ev[j->n++] = (struct jitter_event){ fd, 0 };
	pthread_cond_signal(&j->wake);
	pthread_mutex_unlock(&j->lock);
	return err;
}

void period_jitter__stats(struct period_jitter *j, uint64_t *rearms, uint64_t *failed)
{
	pthread_mutex_lock(&j->lock);
	*rearms = j->rearms;
	*failed = j->failed;
	pthread_mutex_unlock(&j->lock);
}

void period_jitter__free(struct period_jitter *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	j->stop = true;
	pthread_cond_signal(&j->wake);
	pthread_mutex_unlock(&j->lock);
	pthread_join(j->thread, NULL);
	pthread_cond_destroy(&j->wake);
	pthread_mutex_destroy(&j->lock);
	free(j->ev);
	free(j);
}
