/* A Kafka producer (librdkafka) that never blocks its caller: messages go to librdkafka's
 * bounded queue (a full queue drops the message, counted), its threads deliver them, and the
 * delivery reports count what arrived and what failed (a broker down: failures once
 * message.timeout.ms passes). */
#ifndef GALATOP_EXPORT_KAFKA_H
#define GALATOP_EXPORT_KAFKA_H

#include <stddef.h>
#include <stdint.h>

struct kafka_opts {
	const char *brokers;	   /* bootstrap.servers: "host:port[,host:port...]" */
	const char *topic;
	const char *const *props;  /* librdkafka settings "key=value", nprops of them */
	size_t nprops;
	unsigned queue_max;	   /* messages waiting at most; 0 = 100000 */
	unsigned timeout_ms;	   /* message.timeout.ms: a message undelivered this long fails;
				    * 0 = 30000 */
};

struct kafka_stats {
	uint64_t produced;  /* messages librdkafka took */
	uint64_t delivered; /* acknowledged by the brokers */
	uint64_t failed;    /* delivery failed (reported by librdkafka), or refused at once */
	uint64_t dropped;   /* not queued: the queue was full */
	char last_error[256]; /* the latest failure or broker error, one line; "" when none */
};

struct kafka;

/* Creates the producer (brokers are connected to in the background). 0, or -EINVAL with one
 * line in err (a setting librdkafka refuses, an empty topic). */
int kafka__new(const struct kafka_opts *o, struct kafka **out, char *err, size_t errlen);
/* Queues a copy of msg[0..len) with key[0..klen) (partitioning: one key's messages stay in
 * order). 0, -ENOBUFS (queue full: dropped) or -EMSGSIZE (larger than message.max.bytes);
 * counted either way. Never blocks. */
int kafka__produce(struct kafka *k, const char *key, size_t klen, const char *msg, size_t len);
/* Serves the delivery reports that arrived (counting them); never blocks. */
void kafka__poll(struct kafka *k);
/* Serves the reports and copies the counters. */
void kafka__stats(struct kafka *k, struct kafka_stats *st);
/* Waits at most flush_ms for the queue to be delivered, counts what is left as failed, frees;
 * NULL is a no-op. st (if not NULL) gets the final counters. */
void kafka__free(struct kafka *k, unsigned flush_ms, struct kafka_stats *st);

#endif
