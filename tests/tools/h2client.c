#define _GNU_SOURCE
/* A minimal HTTP/2 client (prior knowledge, one connection, one stream at a time) that times
 * each request itself, tightly around its system calls (clock_gettime right before the write of
 * the HEADERS frame and right after the read that brings the response's END_STREAM), and
 * prints the median and the count, then its CPU time (ns) and involuntary context switches:
 * httpclient's figures for HTTP/2. Its HPACK is static-table indices and literals that are
 * never indexed (no dynamic table), so every request's block is the same bytes. With grpc, each
 * request is a gRPC unary call instead: POST PATH with content-type application/grpc and te:
 * trailers, then a DATA frame with a 1-byte message (written with the HEADERS, one system
 * call), and ends at the trailers' END_STREAM.
 * Usage: h2client HOST PORT PATH N [grpc]. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client_timing.h"

/* Appends a frame header for a payload of len bytes. */
static size_t frame(uint8_t *b, uint32_t len, uint8_t type, uint8_t flags, uint32_t sid)
{
	b[0] = (uint8_t)(len >> 16);
	b[1] = (uint8_t)(len >> 8);
	b[2] = (uint8_t)len;
	b[3] = type;
	b[4] = flags;
	b[5] = (uint8_t)(sid >> 24);
	b[6] = (uint8_t)(sid >> 16);
	b[7] = (uint8_t)(sid >> 8);
	b[8] = (uint8_t)sid;
	return 9;
}

static int write_all(int fd, const uint8_t *b, size_t n)
{
	return write(fd, b, n) == (ssize_t)n ? 0 : -1;
}

/* Reads frames until one ends stream sid; acknowledges SETTINGS and PINGs on the way (outside
 * the requests' timing: the server sends them first, before any response). Adds the DATA bytes
 * read to *data. 0 or -1. */
static int read_response(int fd, uint32_t sid, uint8_t *buf, size_t cap, size_t *have,
			 uint64_t *data)
{
	for (;;) {
		while (*have >= 9) {
			uint32_t len = (uint32_t)buf[0] << 16 | (uint32_t)buf[1] << 8 | buf[2];
			uint32_t id = ((uint32_t)buf[5] << 24 | (uint32_t)buf[6] << 16 |
				       (uint32_t)buf[7] << 8 | buf[8]) & 0x7fffffffu;
			uint8_t type = buf[3], flags = buf[4], ack[17];
			bool end;

			if (*have < 9 + (size_t)len)
				break;
			end = id == sid && (type == 0 || type == 1) && (flags & 1);
			if (type == 0)
				*data += len;
			if (type == 3 && id == sid)
				return -1; /* reset */
			if (type == 4 && !(flags & 1) &&
			    write_all(fd, ack, frame(ack, 0, 4, 1, 0)))
				return -1;
			if (type == 6 && !(flags & 1) && len == 8) {
				frame(ack, 8, 6, 1, 0);
				memcpy(ack + 9, buf + 9, 8);
				if (write_all(fd, ack, 17))
					return -1;
			}
			memmove(buf, buf + 9 + len, *have - 9 - len);
			*have -= 9 + len;
			if (end)
				return 0;
		}
		ssize_t n = read(fd, buf + *have, cap - *have);

		if (n <= 0)
			return -1;
		*have += (size_t)n;
	}
}

int main(int argc, char **argv)
{
	static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	/* content-type (static index 31) application/grpc; te (a new name): trailers; all never
	 * indexed */
	static const uint8_t grpc_headers[] = "\x1f\x10\x10" "application/grpc" "\x10\x02" "te\x08" "trailers";
	/* a DATA frame (stream id set below) ending the stream: uncompressed, 1-byte message */
	uint8_t grpc_data[15] = { 0, 0, 6, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'x' };
	uint8_t req[512], hb[400], buf[65536], wu[13];
	size_t have = 0, hl = 0, pl, al;
	int fd, n;
	uint64_t *lat, data = 0;
	bool grpc = argc == 6 && !strcmp(argv[5], "grpc");

	if ((argc != 5 && !grpc) || (n = atoi(argv[4])) <= 0 || strlen(argv[3]) > 120 ||
	    strlen(argv[1]) > 120) {
		fprintf(stderr, "usage: h2client HOST PORT PATH N [grpc]\n");
		return 2;
	}
	lat = calloc((size_t)n, sizeof(*lat));
	if (!lat || (fd = tcp_connect(argv[1], argv[2], "h2client")) < 0)
		return 1;
	/* :method GET, :scheme http (static indices), :path and :authority never indexed */
	pl = strlen(argv[3]);
	al = strlen(argv[1]);
	hb[hl++] = grpc ? 0x83 : 0x82; /* POST or GET */
	hb[hl++] = 0x86;
	hb[hl++] = 0x14; /* literal never indexed, name :path (4) */
	hb[hl++] = (uint8_t)pl;
	memcpy(hb + hl, argv[3], pl);
	hl += pl;
	hb[hl++] = 0x11; /* ... :authority (1) */
	hb[hl++] = (uint8_t)al;
	memcpy(hb + hl, argv[1], al);
	hl += al;
	if (grpc) {
		memcpy(hb + hl, grpc_headers, sizeof(grpc_headers) - 1);
		hl += sizeof(grpc_headers) - 1;
	}
	memcpy(req, preface, 24);
	frame(req + 24, 0, 4, 0, 0);
	if (write_all(fd, req, 33)) {
		perror("h2client");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		uint32_t sid = 2 * (uint32_t)i + 1;
		/* END_HEADERS, and END_STREAM but on a gRPC call (its DATA ends it) */
		size_t rl = frame(req, (uint32_t)hl, 1, grpc ? 0x4 : 0x5, sid);
		uint64_t t0, t1, before = data;

		memcpy(req + rl, hb, hl);
		rl += hl;
		if (grpc) {
			frame(grpc_data, 6, 0, 1, sid);
			memcpy(req + rl, grpc_data, sizeof(grpc_data));
			rl += sizeof(grpc_data);
		}
		t0 = now_ns();
		if (write_all(fd, req, rl) ||
		    read_response(fd, sid, buf, sizeof(buf), &have, &data)) {
			fprintf(stderr, "h2client: request %d failed\n", i);
			return 1;
		}
		t1 = now_ns();
		lat[i] = t1 - t0;
		log_times(t0, t1);
		/* The connection's flow-control window back, after the timing. */
		if (data > before) {
			uint32_t inc = (uint32_t)(data - before);

			frame(wu, 4, 8, 0, 0);
			wu[9] = (uint8_t)(inc >> 24);
			wu[10] = (uint8_t)(inc >> 16);
			wu[11] = (uint8_t)(inc >> 8);
			wu[12] = (uint8_t)inc;
			if (write_all(fd, wu, 13))
				return 1;
		}
	}
	report(lat, n);
	return 0;
}
