/* The agent's Kafka sink (--kafka BROKERS --kafka-topic T): every period's thread events (a
 * message per thread and up to KAFKA_EVENTS_PER_MSG events) and L7 requests (a message each),
 * as gala-gopher's JSON or OTLP/JSON LogsData (--kafka-format, export/event_json.h), keyed by
 * process id, through a producer that never blocks (export/kafka.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_sink.h"
#include "export/event_json.h"
#include "export/kafka.h"
#include "util/clock.h"
#include "util/file.h"

#define KAFKA_EVENTS_PER_MSG 100
#define KAFKA_MAX_PROPS 64
#define KAFKA_FLUSH_MS 5000 /* what the end waits for deliveries */

struct kafka_sink {
	const char *brokers, *topic;
	enum event_format format;
	const char *props[KAFKA_MAX_PROPS];
	size_t nprops;
	struct kafka *k;
	char host_id[64];
	struct l7_session sess; /* the L7 requests' session, one at a time */
	uint64_t failed_logged; /* delivery failures already logged */
};

static const struct option options[] = {
	{ "kafka", required_argument, NULL, 0 },
	{ "kafka-topic", required_argument, NULL, 0 },
	{ "kafka-format", required_argument, NULL, 0 },
	{ "kafka-option", required_argument, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};

static void *create(void)
{
	struct kafka_sink *s = calloc(1, sizeof(*s));

	if (s)
		s->topic = "gala_gopher_event";
	return s;
}

static int option(void *st, const char *name, const char *arg, char *err, size_t errlen)
{
	struct kafka_sink *s = st;
	int f;

	if (!strcmp(name, "kafka")) {
		s->brokers = arg;
	} else if (!strcmp(name, "kafka-topic")) {
		if (!*arg) {
			snprintf(err, errlen, "no topic");
			return -EINVAL;
		}
		s->topic = arg;
	} else if (!strcmp(name, "kafka-format")) {
		f = event_format_parse(arg);
		if (f < 0) {
			snprintf(err, errlen, "bad format '%s' (gala or otlp)", arg);
			return -EINVAL;
		}
		s->format = (enum event_format)f;
	} else if (!strcmp(name, "kafka-option")) {
		if (s->nprops == KAFKA_MAX_PROPS) {
			snprintf(err, errlen, "more than %d", KAFKA_MAX_PROPS);
			return -EINVAL;
		}
		s->props[s->nprops++] = arg;
	}
	return 0;
}

static bool enabled(const void *st)
{
	return ((const struct kafka_sink *)st)->brokers != NULL;
}

static unsigned wants(const void *st)
{
	return AGENT_WANTS_EVENTS | AGENT_WANTS_REQUESTS;
}

static int start(void *st, char *err, size_t errlen)
{
	struct kafka_sink *s = st;
	struct kafka_opts o = { s->brokers, s->topic, s->props, s->nprops, 0, 0 };
	char *id;
	size_t len;

	/* The host's id as gala-gopher gives it (systemd's machine id). */
	if (!file_read("/etc/machine-id", 256, 0, &id, &len)) {
		snprintf(s->host_id, sizeof(s->host_id), "%.*s", (int)strcspn(id, "\n"), id);
		free(id);
	}
	return kafka__new(&o, &s->k, err, errlen);
}

/* Publishes msg (taken) keyed by pid; false when it is lost (ENOMEM, queue full). */
static bool publish(struct kafka_sink *s, uint32_t pid, char *msg)
{
	char key[16];
	int n = snprintf(key, sizeof(key), "%u", pid);
	bool ok = msg && !kafka__produce(s->k, key, (size_t)n, msg, strlen(msg));

	free(msg);
	return ok;
}

static struct event_who who_of(const struct kafka_sink *s, const struct agent_batch *b,
			       const struct agent_ident *w)
{
	return (struct event_who){ s->host_id, b->hostname, w->pid, 0, w->comm, NULL,
				   w->container_id, w->container, w->pod };
}

/* The batch's thread events: a message per thread and KAFKA_EVENTS_PER_MSG events (the
 * agent lists each thread's events together). Returns messages lost. */
static size_t send_events(struct kafka_sink *s, const struct agent_batch *b, double now)
{
	struct event_thread ev[KAFKA_EVENTS_PER_MSG];
	size_t lost = 0;

	for (size_t i = 0; i < b->nevents;) {
		const struct agent_thread_event *e0 = &b->events[i];
		struct event_who w = who_of(s, b, &e0->who);
		size_t n = 0;

		w.tid = e0->tid;
		w.thread = e0->thread;
		for (; i < b->nevents && b->events[i].tid == e0->tid && n < KAFKA_EVENTS_PER_MSG;
		     i++, n++) {
			const struct agent_thread_event *e = &b->events[i];

			ev[n] = (struct event_thread){ e->kind, e->name, e->attr, e->stack,
						       e->start, e->end, e->count };
		}
		lost += !publish(s, w.pid, event_thread_message(s->format, &w, ev, n, now));
	}
	return lost;
}

/* The batch's L7 requests, a message each. Returns messages lost. */
static size_t send_requests(struct kafka_sink *s, const struct agent_batch *b, double now)
{
	size_t lost = 0;

	for (size_t i = 0; i < b->nrequests; i++) {
		const struct agent_l7_request *q = &b->requests[i];
		struct agent_ident id = { .pid = q->key.tgid };
		struct event_who w;

		memcpy(id.comm, q->comm, sizeof(id.comm));
		memcpy(id.container, q->container, sizeof(id.container));
		memcpy(id.pod, q->pod, sizeof(id.pod));
		w = who_of(s, b, &id);
		s->sess.key = q->key;
		memcpy(s->sess.comm, q->comm, sizeof(s->sess.comm));
		memcpy(s->sess.container, q->container, sizeof(s->sess.container));
		memcpy(s->sess.pod, q->pod, sizeof(s->sess.pod));
		lost += !publish(s, q->key.tgid,
				 event_l7_message(s->format, &w, &s->sess, &q->rec, q->tid,
						  q->timestamp, now));
	}
	return lost;
}

static int send_batch(void *st, const struct agent_batch *b, char *err, size_t errlen)
{
	struct kafka_sink *s = st;
	double now = clock_wall_s();
	size_t lost = send_events(s, b, now) + send_requests(s, b, now);
	struct kafka_stats ks;

	kafka__stats(s->k, &ks); /* serves the delivery reports */
	if (ks.failed > s->failed_logged) {
		agent_log(AGENT_LOG_WARNING, "kafka: %llu deliveries failed so far: %s",
			  (unsigned long long)ks.failed, ks.last_error);
		s->failed_logged = ks.failed;
	}
	if (lost) {
		snprintf(err, errlen, "%zu messages of this period lost: %s", lost, ks.last_error);
		return -EIO;
	}
	return 0;
}

static void stats(void *st, struct agent_sink_stats *out)
{
	struct kafka_sink *s = st;
	struct kafka_stats ks;

	if (!s->k)
		return;
	kafka__stats(s->k, &ks);
	out->sent = ks.delivered;
	out->failed = ks.failed;
	out->dropped = ks.dropped;
}

static void destroy(void *st)
{
	struct kafka_sink *s = st;
	struct kafka_stats ks;

	if (!s)
		return;
	if (s->k) {
		kafka__free(s->k, KAFKA_FLUSH_MS, &ks);
		agent_log(ks.failed || ks.dropped ? AGENT_LOG_WARNING : AGENT_LOG_INFO,
			  "kafka: %llu messages delivered, %llu failed, %llu dropped (queue full)%s%s",
			  (unsigned long long)ks.delivered, (unsigned long long)ks.failed,
			  (unsigned long long)ks.dropped, ks.last_error[0] ? "; last error: " : "",
			  ks.last_error);
	}
	free(s);
}

const struct agent_sink_ops agent_kafka_sink = {
	.name = "kafka",
	.help = "Kafka (docs/agent.md):\n"
		"  --kafka BROKERS   publish thread events and L7 requests (host:port[,...])\n"
		"  --kafka-topic T   the topic (default gala_gopher_event)\n"
		"  --kafka-format F  gala (gala-gopher's JSON, default) or otlp (OTLP/JSON LogsData)\n"
		"  --kafka-option K=V  a librdkafka setting (repeatable): security.protocol=ssl,\n"
		"                    message.timeout.ms=10000, ...\n",
	.options = options,
	.create = create,
	.option = option,
	.enabled = enabled,
	.wants = wants,
	.start = start,
	.send = send_batch,
	.stats = stats,
	.destroy = destroy,
};
