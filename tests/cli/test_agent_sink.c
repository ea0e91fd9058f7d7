/* Unit tests for cli/agent_sink: a sink whose sends are held back never blocks the pusher;
 * what does not fit in its queue is dropped and counted; what was queued is sent, in order,
 * and every batch is freed (ASan's leak check) once the sink stops. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "harness.h"
#include "cli/agent_sink.h"

/* A sink that blocks in send until released, recording the order of what it got. */
struct held {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool released;
	int entered;	    /* sends begun */
	double got[32];	    /* b->from of each batch sent */
	int ngot;
	bool fail_odd;	    /* refuse batches with an odd from */
	bool destroyed;
};

static struct held held = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *h_create(void)
{
	return &held;
}

static int h_option(void *st, const char *name, const char *arg, char *err, size_t errlen)
{
	return -EINVAL;
}

static bool h_enabled(const void *st)
{
	return true;
}

static unsigned h_wants(const void *st)
{
	return AGENT_WANTS_PROFILES;
}

static int h_start(void *st, char *err, size_t errlen)
{
	return 0;
}

static int h_send(void *st, const struct agent_batch *b, char *err, size_t errlen)
{
	struct held *h = st;
	int r = 0;

	pthread_mutex_lock(&h->lock);
	h->entered++;
	pthread_cond_broadcast(&h->cond);
	while (!h->released)
		pthread_cond_wait(&h->cond, &h->lock);
	if (h->ngot < 32)
		h->got[h->ngot++] = b->from;
	if (h->fail_odd && ((int)b->from & 1)) {
		snprintf(err, errlen, "refused batch %d", (int)b->from);
		r = -EIO;
	}
	pthread_mutex_unlock(&h->lock);
	return r;
}

static void h_destroy(void *st)
{
	((struct held *)st)->destroyed = true;
}

static const struct agent_sink_ops held_ops = {
	.name = "held",
	.help = "",
	.create = h_create,
	.option = h_option,
	.enabled = h_enabled,
	.wants = h_wants,
	.start = h_start,
	.send = h_send,
	.destroy = h_destroy,
};

static void on_alarm(int sig)
{
	/* A push that waited for the sink: the case can only end this way. */
	static const char msg[] = "FAIL: push_never_blocks (a push waited for the sink)\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static struct agent_batch *batch_from(double from)
{
	struct agent_batch *b = agent_batch__new();

	if (b) {
		b->from = from;
		/* Something for the free path to free. */
		b->profiles = calloc(1, sizeof(*b->profiles));
		b->profiles[0].folded = strdup("a;b 1\n");
		b->nprofiles = 1;
	}
	return b;
}

TEST_CASE(push_never_blocks)
{
	char err[256];
	struct agent_sink *s = agent_sink__start(&held_ops, h_create(), err, sizeof(err));
	struct agent_sink_counters c;
	struct agent_sink_stats own;
	int ok = 0;

	CHECK(s != NULL);
	if (!s)
		return;
	held.fail_odd = true;
	signal(SIGALRM, on_alarm);
	alarm(20);
	/* The first batch is taken by the sink's thread, which then blocks in send. */
	struct agent_batch *b = batch_from(0);
	CHECK(agent_sink__push(s, b));
	agent_batch__put(b);
	pthread_mutex_lock(&held.lock);
	while (!held.entered)
		pthread_cond_wait(&held.cond, &held.lock);
	pthread_mutex_unlock(&held.lock);
	/* Then the queue fills and the rest is dropped, without waiting. */
	for (int i = 1; i <= 10; i++) {
		b = batch_from(i);
		ok += agent_sink__push(s, b);
		agent_batch__put(b);
	}
	alarm(0);
	CHECK(ok == AGENT_QUEUE_LEN);
	agent_sink__counters(s, &c, &own);
	CHECK(c.queued == 1 + AGENT_QUEUE_LEN);
	CHECK(c.dropped == 10 - AGENT_QUEUE_LEN);
	CHECK(c.sent == 0);
	/* Released: what was queued is sent in order; odd ones are refused and counted. */
	pthread_mutex_lock(&held.lock);
	held.released = true;
	pthread_cond_broadcast(&held.cond);
	pthread_mutex_unlock(&held.lock);
	for (int i = 0; i < 2000; i++) {
		agent_sink__counters(s, &c, &own);
		if (c.sent + c.failed == 1 + AGENT_QUEUE_LEN)
			break;
		usleep(10000);
	}
	CHECK(c.sent == 3 && c.failed == 2); /* batches 1 and 3 refused */
	agent_sink__stop(s);
	CHECK(held.destroyed);
	CHECK(held.ngot == 1 + AGENT_QUEUE_LEN);
	for (int i = 0; i < held.ngot; i++)
		CHECK_NUM(held.got[i], i);
}

TEST_CASE(log_levels)
{
	CHECK(agent_log_level_parse("error") == AGENT_LOG_ERROR);
	CHECK(agent_log_level_parse("warning") == AGENT_LOG_WARNING);
	CHECK(agent_log_level_parse("info") == AGENT_LOG_INFO);
	CHECK(agent_log_level_parse("debug") == AGENT_LOG_DEBUG);
	CHECK(agent_log_level_parse("loud") == -1);
}

int main(void)
{
	RUN(push_never_blocks);
	RUN(log_levels);
	HARNESS_EXIT();
}
