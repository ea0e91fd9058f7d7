#define _GNU_SOURCE
/* A minimal Kafka producer that times each request itself, tightly around its system calls
 * (clock_gettime right before the write of the request and right after the read that completes
 * its response), one request at a time on one connection: httpclient's figures for Kafka.
 * librdkafka's own "rtt" cannot stand in for them: it starts once its send has returned, and on
 * loopback a fast broker's answer is often taken in within that send (the socket's backlog at
 * release_sock), so it reads a third of the round trip for some of them.
 * It sends a Metadata v1 request for TOPIC (a broker that creates topics on demand, as
 * librdkafka's mock cluster does, creates it), then N Produce v3 requests (acks=1) of one record
 * each (a RecordBatch v2, CRC-32C included) to PARTITION (0 unless given; one the topic does
 * not have gets UNKNOWN_TOPIC_OR_PARTITION), and prints the Produce requests' count, the errors
 * their responses carry (error_code != 0), the median, its CPU time (ns) and its involuntary
 * context switches.
 * Usage: kafkaclient HOST PORT TOPIC N [PARTITION]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_timing.h"

struct wbuf {
	uint8_t b[1024];
	size_t n;
};

static void put(struct wbuf *w, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		w->b[w->n++] = (uint8_t)(v >> (8 * i));
}

static void put_str(struct wbuf *w, const char *s)
{
	size_t len = strlen(s);

	put(w, len, 2);
	memcpy(w->b + w->n, s, len);
	w->n += len;
}

/* A zigzag varint, as a record's fields are. */
static void put_varint(struct wbuf *w, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);

	while (z >= 0x80) {
		w->b[w->n++] = (uint8_t)(z | 0x80);
		z >>= 7;
	}
	w->b[w->n++] = (uint8_t)z;
}

/* CRC-32C (Castagnoli, reflected 0x82F63B78), over a RecordBatch from its attributes on. */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
	}
	return ~c;
}

/* Starts a request: its size (patched by finish), api_key, api_version, correlation_id and
 * client_id (request header v1). */
static void begin(struct wbuf *w, int key, int version, int32_t corr)
{
	w->n = 0;
	put(w, 0, 4);
	put(w, (uint64_t)key, 2);
	put(w, (uint64_t)version, 2);
	put(w, (uint32_t)corr, 4);
	put_str(w, "kafkaclient");
}

static void finish(struct wbuf *w)
{
	uint32_t len = (uint32_t)(w->n - 4);

	for (int i = 0; i < 4; i++)
		w->b[i] = (uint8_t)(len >> (24 - 8 * i));
}

/* A Produce v3 request of one record (value msg) to partition part of topic. */
static void produce(struct wbuf *w, int32_t corr, const char *topic, int32_t part, const char *msg)
{
	struct wbuf rec = { .n = 0 }, batch = { .n = 0 };
	size_t vlen = strlen(msg);
	uint32_t crc;

	put(&rec, 0, 1);	     /* attributes */
	put_varint(&rec, 0);	     /* timestampDelta */
	put_varint(&rec, 0);	     /* offsetDelta */
	put_varint(&rec, -1);	     /* key: null */
	put_varint(&rec, (int64_t)vlen);
	memcpy(rec.b + rec.n, msg, vlen);
	rec.n += vlen;
	put_varint(&rec, 0);	     /* headers */

	put(&batch, 0, 8);	     /* baseOffset */
	put(&batch, 0, 4);	     /* batchLength, below */
	put(&batch, 0, 4);	     /* partitionLeaderEpoch */
	put(&batch, 2, 1);	     /* magic */
	put(&batch, 0, 4);	     /* crc, below */
	put(&batch, 0, 2);	     /* attributes */
	put(&batch, 0, 4);	     /* lastOffsetDelta */
	put(&batch, 0, 8);	     /* baseTimestamp */
	put(&batch, 0, 8);	     /* maxTimestamp */
	put(&batch, ~0ull, 8);	     /* producerId -1 */
	put(&batch, 0xffff, 2);	     /* producerEpoch -1 */
	put(&batch, 0xffffffff, 4); /* baseSequence -1 */
	put(&batch, 1, 4);	     /* records */
	put_varint(&batch, (int64_t)rec.n);
	memcpy(batch.b + batch.n, rec.b, rec.n);
	batch.n += rec.n;
	for (int i = 0; i < 4; i++)
		batch.b[8 + i] = (uint8_t)((batch.n - 12) >> (24 - 8 * i));
	crc = crc32c(batch.b + 21, batch.n - 21);
	for (int i = 0; i < 4; i++)
		batch.b[17 + i] = (uint8_t)(crc >> (24 - 8 * i));

	begin(w, 0, 3, corr);
	put(w, 0xffff, 2); /* transactional_id: null */
	put(w, 1, 2);	   /* acks */
	put(w, 5000, 4);   /* timeout_ms */
	put(w, 1, 4);	   /* topics */
	put_str(w, topic);
	put(w, 1, 4); /* partitions */
	put(w, (uint32_t)part, 4);
	put(w, batch.n, 4);
	memcpy(w->b + w->n, batch.b, batch.n);
	w->n += batch.n;
	finish(w);
}

static uint32_t get(const uint8_t *p, int bytes)
{
	uint32_t v = 0;

	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* Reads one response (its size, then the rest) into buf; its length or -1. */
static long read_response(int fd, uint8_t *buf, size_t cap)
{
	size_t have = 0, need = 4;

	while (have < need) {
		ssize_t n = read(fd, buf + have, cap - have);

		if (n <= 0)
			return -1;
		have += (size_t)n;
		if (need == 4 && have >= 4) {
			need = 4 + get(buf, 4);
			if (need > cap)
				return -1;
		}
	}
	return have == need ? (long)have : -1;
}

/* The error_code of a Produce v3 response's first partition of its first topic; -1 when the
 * response is not one for correlation id corr. */
static int produce_error(const uint8_t *b, long len, int32_t corr)
{
	size_t tlen;

	if (len < 14 || (int32_t)get(b + 4, 4) != corr || get(b + 8, 4) != 1)
		return -1;
	tlen = get(b + 12, 2);
	if ((size_t)len < 14 + tlen + 10)
		return -1;
	return (int16_t)get(b + 14 + tlen + 8, 2);
}

int main(int argc, char **argv)
{
	static uint8_t buf[65536];
	struct wbuf w;
	int fd, n, part = 0, errors = 0;
	uint64_t *lat;
	char msg[32];
	long len;

	if (argc < 5 || argc > 6 || (n = atoi(argv[4])) <= 0 || strlen(argv[3]) > 200) {
		fprintf(stderr, "usage: kafkaclient HOST PORT TOPIC N [PARTITION]\n");
		return 2;
	}
	if (argc == 6)
		part = atoi(argv[5]);
	lat = calloc((size_t)n, sizeof(*lat));
	if (!lat || (fd = tcp_connect(argv[1], argv[2], "kafkaclient")) < 0)
		return 1;
	/* Metadata v1 for the topic: a broker creating topics on demand creates it. */
	begin(&w, 3, 1, 1);
	put(&w, 1, 4);
	put_str(&w, argv[3]);
	finish(&w);
	if (write(fd, w.b, w.n) != (ssize_t)w.n || read_response(fd, buf, sizeof(buf)) < 0) {
		fprintf(stderr, "kafkaclient: Metadata failed\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		int32_t corr = i + 2;
		uint64_t t0, t1;
		int err;

		snprintf(msg, sizeof(msg), "message-%d", i);
		produce(&w, corr, argv[3], part, msg);
		t0 = now_ns();
		if (write(fd, w.b, w.n) != (ssize_t)w.n ||
		    (len = read_response(fd, buf, sizeof(buf))) < 0) {
			fprintf(stderr, "kafkaclient: request %d failed\n", i);
			return 1;
		}
		t1 = now_ns();
		lat[i] = t1 - t0;
		log_times(t0, t1);
		if ((err = produce_error(buf, len, corr)) < 0) {
			fprintf(stderr, "kafkaclient: response %d is not a Produce v3 response\n", i);
			return 1;
		}
		errors += err != 0;
	}
	report(lat, n);
	printf("errors %d\n", errors);
	return 0;
}
