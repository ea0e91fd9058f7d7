#define _GNU_SOURCE
/* A minimal HTTP/1.1 keep-alive client that times each request itself, tightly around its
 * system calls (clock_gettime right before the write and right after the read that completes
 * the response), and prints the median and the count: the client's own figures the L7 tests
 * compare galatop's with; then its CPU time (ns) and how often it was preempted (involuntary
 * context switches), which bound the time around the calls that galatop cannot see.
 * Usage: httpclient HOST PORT PATH N; HOST unix:SOCKET connects to a Unix-domain stream socket,
 * unixseq:SOCKET to a seqpacket one, unixdgram:SOCKET to a datagram one (a request per datagram,
 * from an address the kernel picks: an abstract name the server answers to); PORT is ignored
 * then. Responses need Content-Length. */
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
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client_timing.h"

/* Reads one response (headers with Content-Length, then the body); 0 or -1. */
static int read_response(int fd, char *buf, size_t cap)
{
	size_t have = 0, need = 0;
	char *end = NULL;

	for (;;) {
		ssize_t n = read(fd, buf + have, cap - have - 1);

		if (n <= 0)
			return -1;
		have += (size_t)n;
		buf[have] = 0;
		if (!end && (end = strstr(buf, "\r\n\r\n"))) {
			char *cl = strcasestr(buf, "Content-Length:");

			if (!cl)
				return -1;
			need = (size_t)(end + 4 - buf) + strtoul(cl + 15, NULL, 10);
		}
		if (end && have >= need)
			return have == need ? 0 : -1;
		if (have + 1 >= cap)
			return -1;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	static const struct {
		const char *prefix;
		int type;
	} unix_kinds[] = { { "unix:", SOCK_STREAM }, { "unixseq:", SOCK_SEQPACKET },
			   { "unixdgram:", SOCK_DGRAM } };
	bool uds = false;
	int type = SOCK_STREAM;
	const char *host = argv[1];
	char req[512], buf[65536];
	int fd, one = 1, n;
	uint64_t *lat;

	if (argc != 5 || (n = atoi(argv[4])) <= 0) {
		fprintf(stderr, "usage: httpclient HOST PORT PATH N\n");
		return 2;
	}
	lat = calloc((size_t)n, sizeof(*lat));
	for (size_t k = 0; k < sizeof(unix_kinds) / sizeof(unix_kinds[0]); k++)
		if (!strncmp(host, unix_kinds[k].prefix, strlen(unix_kinds[k].prefix))) {
			uds = true;
			type = unix_kinds[k].type;
			host += strlen(unix_kinds[k].prefix);
		}
	sa.sin_port = htons((uint16_t)atoi(argv[2]));
	inet_pton(AF_INET, host, &sa.sin_addr);
	snprintf(su.sun_path, sizeof(su.sun_path), "%s", host);
	fd = socket(uds ? AF_UNIX : AF_INET, type, 0);
	/* A datagram socket needs an address of its own for the answers: autobind (the family
	 * alone) gives it an abstract one. */
	if (fd >= 0 && type == SOCK_DGRAM && bind(fd, (struct sockaddr *)&su, sizeof(sa_family_t))) {
		perror("httpclient: bind");
		return 1;
	}
	if (!lat || fd < 0 ||
	    (uds ? connect(fd, (struct sockaddr *)&su, sizeof(su))
		 : connect(fd, (struct sockaddr *)&sa, sizeof(sa)))) {
		perror("httpclient");
		return 1;
	}
	if (!uds)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", argv[3],
		 uds ? "localhost" : host);
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns(), t1;

		if (write(fd, req, strlen(req)) != (ssize_t)strlen(req) ||
		    read_response(fd, buf, sizeof(buf))) {
			fprintf(stderr, "httpclient: request %d failed\n", i);
			return 1;
		}
		t1 = now_ns();
		lat[i] = t1 - t0;
		log_times(t0, t1);
	}
	report(lat, n);
	return 0;
}
