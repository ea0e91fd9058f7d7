/* The Kafka producer: see kafka.h. */
#include "kafka.h"

#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kafka {
	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt;
	pthread_mutex_t lock; /* st: reports may be served on any caller's thread */
	struct kafka_stats st;
};

static void set_error(struct kafka *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(struct kafka *k, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&k->lock);
	va_start(ap, fmt);
	vsnprintf(k->st.last_error, sizeof(k->st.last_error), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&k->lock);
}

/* librdkafka's delivery report: one per message, served by rd_kafka_poll. */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct kafka *k = opaque;

	pthread_mutex_lock(&k->lock);
	if (m->err)
		k->st.failed++;
	else
		k->st.delivered++;
	pthread_mutex_unlock(&k->lock);
	/* A purge at the end says less than the error that kept the messages queued. */
	if (m->err && m->err != RD_KAFKA_RESP_ERR__PURGE_QUEUE &&
	    m->err != RD_KAFKA_RESP_ERR__PURGE_INFLIGHT)
		set_error(k, "kafka: delivery to %s failed: %s", rd_kafka_topic_name(m->rkt),
			  rd_kafka_err2str(m->err));
}

/* Errors of the client itself (brokers down, authentication): kept for the log. */
static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	set_error(opaque, "kafka: %s", reason);
}

/* librdkafka logs to standard error by itself; its messages go to last_error instead. */
static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
}

static int conf_set(rd_kafka_conf_t *c, const char *key, const char *val, char *err, size_t errlen)
{
	char e[256];

	if (rd_kafka_conf_set(c, key, val, e, sizeof(e)) == RD_KAFKA_CONF_OK)
		return 0;
	snprintf(err, errlen, "%s=%s: %s", key, val, e);
	return -EINVAL;
}

int kafka__new(const struct kafka_opts *o, struct kafka **out, char *err, size_t errlen)
{
	struct kafka *k = calloc(1, sizeof(*k));
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	char num[32], e[512];
	int ret = -EINVAL;

	*out = NULL;
	if (!k || !c) {
		snprintf(err, errlen, "out of memory");
		free(k);
		if (c)
			rd_kafka_conf_destroy(c);
		return -ENOMEM;
	}
	pthread_mutex_init(&k->lock, NULL);
	if (!o->topic || !*o->topic) {
		snprintf(err, errlen, "--kafka-topic: no topic");
		goto fail;
	}
	snprintf(num, sizeof(num), "%u", o->queue_max ? o->queue_max : 100000);
	if (conf_set(c, "bootstrap.servers", o->brokers, err, errlen) ||
	    conf_set(c, "queue.buffering.max.messages", num, err, errlen) ||
	    conf_set(c, "client.id", "galatop", err, errlen))
		goto fail;
	snprintf(num, sizeof(num), "%u", o->timeout_ms ? o->timeout_ms : 30000);
	if (conf_set(c, "message.timeout.ms", num, err, errlen))
		goto fail;
	for (size_t i = 0; i < o->nprops; i++) {
		const char *eq = strchr(o->props[i], '=');
		char key[256];

		if (!eq || eq == o->props[i] || (size_t)(eq - o->props[i]) >= sizeof(key)) {
			snprintf(err, errlen, "%s: not KEY=VALUE", o->props[i]);
			goto fail;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - o->props[i]), o->props[i]);
		if (conf_set(c, key, eq + 1, err, errlen))
			goto fail;
	}
	rd_kafka_conf_set_opaque(c, k);
	rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
	rd_kafka_conf_set_error_cb(c, on_error);
	rd_kafka_conf_set_log_cb(c, on_log);
	k->rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, e, sizeof(e));
	if (!k->rk) {
		snprintf(err, errlen, "%s", e);
		goto fail;
	}
	c = NULL; /* the producer's now */
	k->rkt = rd_kafka_topic_new(k->rk, o->topic, NULL);
	if (!k->rkt) {
		snprintf(err, errlen, "topic %s: %s", o->topic,
			 rd_kafka_err2str(rd_kafka_last_error()));
		goto fail;
	}
	*out = k;
	return 0;
fail:
	if (c)
		rd_kafka_conf_destroy(c);
	if (k->rk)
		rd_kafka_destroy(k->rk);
	pthread_mutex_destroy(&k->lock);
	free(k);
	return ret;
}

int kafka__produce(struct kafka *k, const char *key, size_t klen, const char *msg, size_t len)
{
	rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
	int ret = 0;

	if (rd_kafka_produce(k->rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, (void *)msg, len,
			     key, klen, NULL))
		e = rd_kafka_last_error();
	pthread_mutex_lock(&k->lock);
	if (!e)
		k->st.produced++;
	else if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL)
		k->st.dropped++;
	else
		k->st.failed++;
	pthread_mutex_unlock(&k->lock);
	if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
		ret = -ENOBUFS;
		set_error(k, "kafka: queue full (queue.buffering.max.messages): messages dropped");
	} else if (e) {
		ret = e == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ? -EMSGSIZE : -EIO;
		set_error(k, "kafka: %s", rd_kafka_err2str(e));
	}
	return ret;
}

void kafka__poll(struct kafka *k)
{
	rd_kafka_poll(k->rk, 0);
}

void kafka__stats(struct kafka *k, struct kafka_stats *st)
{
	kafka__poll(k);
	pthread_mutex_lock(&k->lock);
	*st = k->st;
	pthread_mutex_unlock(&k->lock);
}

void kafka__free(struct kafka *k, unsigned flush_ms, struct kafka_stats *st)
{
	int left;

	if (!k)
		return;
	rd_kafka_flush(k->rk, (int)flush_ms);
	if (rd_kafka_outq_len(k->rk) > 0) {
		rd_kafka_purge(k->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
		rd_kafka_poll(k->rk, 0);
	}
	rd_kafka_topic_destroy(k->rkt);
	rd_kafka_destroy(k->rk);
	/* What never got its report (purged in flight) failed too. */
	left = (int)(k->st.produced - k->st.delivered - k->st.failed);
	if (left > 0)
		k->st.failed += (uint64_t)left;
	if (st)
		*st = k->st;
	pthread_mutex_destroy(&k->lock);
	free(k);
}
