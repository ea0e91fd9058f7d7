/* The agent's sinks: the table of every sink, the bounded queue and thread each runs on, the
 * batches they share, and the agent's leveled log. */
#include "agent_sink.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every sink: a line per sink, its ops in its own file (cli/agent_<name>.c). */
extern const struct agent_sink_ops agent_pyroscope_sink, agent_kafka_sink;
const struct agent_sink_ops *const agent_sink_table[] = {
	&agent_pyroscope_sink,
	&agent_kafka_sink,
	NULL, /* the end */
};
const size_t agent_sink_count = sizeof(agent_sink_table) / sizeof(agent_sink_table[0]) - 1;

static int log_level = AGENT_LOG_INFO;

static const char *const level_names[] = { "error", "warning", "info", "debug" };

void agent_log_set_level(enum agent_log_level level)
{
	__atomic_store_n(&log_level, (int)level, __ATOMIC_RELAXED);
}

int agent_log_level_parse(const char *s)
{
	for (int i = 0; i <= AGENT_LOG_DEBUG; i++)
		if (!strcmp(s, level_names[i]))
			return i;
	return -1;
}

void agent_log(enum agent_log_level level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if ((int)level > __atomic_load_n(&log_level, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line, so lines of several threads do not interleave. */
	fprintf(stderr, "galatop agent: %s: %s\n", level_names[level], line);
}

struct agent_batch *agent_batch__new(void)
{
	struct agent_batch *b = calloc(1, sizeof(*b));

	if (b)
		b->refs = 1;
	return b;
}

void agent_batch__get(struct agent_batch *b)
{
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
}

void agent_batch__put(struct agent_batch *b)
{
	if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (size_t i = 0; i < b->nprofiles; i++)
		free(b->profiles[i].folded);
	for (size_t i = 0; i < b->nevents; i++) {
		free(b->events[i].name);
		free(b->events[i].attr);
		free(b->events[i].stack);
	}
	free(b->profiles);
	free(b->events);
	free(b->requests);
	free(b);
}

struct agent_sink {
	const struct agent_sink_ops *ops;
	void *st;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct agent_batch *queue[AGENT_QUEUE_LEN];
	size_t head, n; /* the oldest queued at queue[head], n of them */
	bool stopping;
	struct agent_sink_counters c;
};

static void *sink_main(void *arg)
{
	struct agent_sink *s = arg;
	char err[512];

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct agent_batch *b;
		int r;

		while (!s->n && !s->stopping)
			pthread_cond_wait(&s->wake, &s->lock);
		if (!s->n)
			break; /* stopping, and nothing left */
		b = s->queue[s->head];
		s->head = (s->head + 1) % AGENT_QUEUE_LEN;
		s->n--;
		pthread_mutex_unlock(&s->lock);
		err[0] = 0;
		r = s->ops->send(s->st, b, err, sizeof(err));
		if (r)
			agent_log(AGENT_LOG_WARNING, "%s: %s", s->ops->name,
				  err[0] ? err : strerror(-r));
		agent_batch__put(b);
		pthread_mutex_lock(&s->lock);
		if (r)
			s->c.failed++;
		else
			s->c.sent++;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct agent_sink *agent_sink__start(const struct agent_sink_ops *ops, void *st, char *err,
				     size_t errlen)
{
	struct agent_sink *s = calloc(1, sizeof(*s));
	int r;

	if (!s) {
		snprintf(err, errlen, "%s: out of memory", ops->name);
		ops->destroy(st);
		return NULL;
	}
	s->ops = ops;
	s->st = st;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	r = pthread_create(&s->thread, NULL, sink_main, s);
	if (r) {
		snprintf(err, errlen, "%s: cannot start its thread: %s", ops->name, strerror(r));
		pthread_mutex_destroy(&s->lock);
		pthread_cond_destroy(&s->wake);
		ops->destroy(st);
		free(s);
		return NULL;
	}
	return s;
}

bool agent_sink__push(struct agent_sink *s, struct agent_batch *b)
{
	bool ok;

	pthread_mutex_lock(&s->lock);
	ok = s->n < AGENT_QUEUE_LEN && !s->stopping;
	if (ok) {
		agent_batch__get(b);
		s->queue[(s->head + s->n) % AGENT_QUEUE_LEN] = b;
		s->n++;
		s->c.queued++;
		pthread_cond_signal(&s->wake);
	} else {
		s->c.dropped++;
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

void agent_sink__counters(struct agent_sink *s, struct agent_sink_counters *c,
			  struct agent_sink_stats *own)
{
	pthread_mutex_lock(&s->lock);
	*c = s->c;
	pthread_mutex_unlock(&s->lock);
	memset(own, 0, sizeof(*own));
	if (s->ops->stats)
		s->ops->stats(s->st, own);
}

const struct agent_sink_ops *agent_sink__ops(const struct agent_sink *s)
{
	return s->ops;
}

void agent_sink__stop(struct agent_sink *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->ops->destroy(s->st);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	free(s);
}
