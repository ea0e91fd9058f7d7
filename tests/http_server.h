/* A small HTTP/1.1 server on loopback (a kernel-chosen port) for the tests of HTTP clients:
 * one connection at a time, each answered and closed; it records each request's line,
 * Authorization and X-Scope-OrgID headers and body, and answers with the status codes it is
 * given (then 200; -1: never answers). Include after harness.h. */
#ifndef GALATOP_TESTS_HTTP_SERVER_H
#define GALATOP_TESTS_HTTP_SERVER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_REQS 64

struct server {
	int fd, port;
	pthread_t thread;
	atomic_bool stop;
	int codes[8]; /* status of the first answers, then 200; -1: never answer */
	int ncodes;
	atomic_int nreq;
	char line[MAX_REQS][1024], auth[MAX_REQS][256], org[MAX_REQS][64], body[MAX_REQS][256];
	const char *reply; /* body of the refusals */
};

/* Copies the value of header name (with ": ") from the head into out. */
static inline void srv_header(const char *head, const char *name, char *out, size_t cap)
{
	const char *p = strcasestr(head, name);

	out[0] = '\0';
	if (p) {
		p += strlen(name);
		snprintf(out, cap, "%.*s", (int)strcspn(p, "\r\n"), p);
	}
}

static inline void srv_serve(struct server *sv, int c)
{
	char buf[65536], cl[32];
	size_t n = 0;
	char *end = NULL;
	int i = atomic_load(&sv->nreq), code;

	buf[0] = '\0';

	while (n < sizeof(buf) - 1 && !(end = strstr(buf, "\r\n\r\n"))) {
		ssize_t r = read(c, buf + n, sizeof(buf) - 1 - n);

		if (r <= 0)
			return;
		n += (size_t)r;
		buf[n] = '\0';
	}
	if (!end || i >= MAX_REQS)
		return;
	srv_header(buf, "Content-Length: ", cl, sizeof(cl));
	size_t want = (size_t)(end + 4 - buf) + strtoul(cl, NULL, 10);

	while (n < want && n < sizeof(buf) - 1) {
		ssize_t r = read(c, buf + n, sizeof(buf) - 1 - n);

		if (r <= 0)
			return;
		n += (size_t)r;
	}
	buf[n] = '\0';
	snprintf(sv->line[i], sizeof(sv->line[i]), "%.*s", (int)strcspn(buf, "\r\n"), buf);
	srv_header(buf, "Authorization: ", sv->auth[i], sizeof(sv->auth[i]));
	srv_header(buf, "X-Scope-OrgID: ", sv->org[i], sizeof(sv->org[i]));
	snprintf(sv->body[i], sizeof(sv->body[i]), "%s", end + 4);
	code = i < sv->ncodes ? sv->codes[i] : 200;
	atomic_fetch_add(&sv->nreq, 1);
	if (code < 0) { /* hang until the client gives up */
		while (!atomic_load(&sv->stop) && read(c, buf, sizeof(buf)) > 0)
			;
		return;
	}
	const char *body = code == 200 ? "" : sv->reply ? sv->reply : "no";
	int len = snprintf(buf, sizeof(buf),
			   "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			   code, strlen(body), body);

	if (write(c, buf, (size_t)len) != len)
		return;
}

static inline void *srv_run(void *arg)
{
	struct server *sv = arg;

	while (!atomic_load(&sv->stop)) {
		struct pollfd p = { sv->fd, POLLIN, 0 };
		int c;

		if (poll(&p, 1, 50) <= 0)
			continue;
		c = accept(sv->fd, NULL, NULL);
		if (c < 0)
			continue;
		srv_serve(sv, c);
		close(c);
	}
	return NULL;
}

static inline void server_start(struct server *sv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	sv->fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(sv->fd >= 0);
	CHECK(bind(sv->fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(listen(sv->fd, 16) == 0);
	CHECK(getsockname(sv->fd, (struct sockaddr *)&a, &al) == 0);
	sv->port = ntohs(a.sin_port);
	atomic_store(&sv->stop, false);
	atomic_store(&sv->nreq, 0);
	CHECK(pthread_create(&sv->thread, NULL, srv_run, sv) == 0);
}

static inline void server_stop(struct server *sv)
{
	atomic_store(&sv->stop, true);
	pthread_join(sv->thread, NULL);
	close(sv->fd);
}

#endif
