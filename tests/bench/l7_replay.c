/* galatop's own work per L7 message, without the probes: records shaped as the capture writes
 * them (wrk's requests and nginx's answers; redis-benchmark's GETs and Redis's replies), each
 * exchange on one of 8 keep-alive connections, fed through session__replay (the checks, the
 * tracker, the parsers and the tables a live record goes through). Prints the nanoseconds per
 * exchange (two records), the best of three passes: a figure that does not swing with the
 * machine's other load the way the capture's throughput losses do. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/l7_event.h"
#include "engine/l7_capture.h"
#include "engine/messages.h"
#include "engine/session.h"
#include "model/l7/table.h"

#define CONNS 8

struct shape {
	const char *name, *req, *resp;
	uint8_t proto;
	uint16_t port;
};

static const struct shape shapes[] = {
    {"wrk GET against nginx", "GET / HTTP/1.1\r\nHost: 127.0.0.1:18791\r\n\r\n",
     "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Fri, 27 Nov 2026 02:00:00 GMT\r\n"
     "Content-Type: application/octet-stream\r\nContent-Length: 3\r\n"
     "Connection: keep-alive\r\n\r\nok\n",
     L7_KPROTO_HTTP, 18791},
    {"redis-benchmark GET", "*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n", "$3\r\nxxx\r\n",
     L7_KPROTO_REDIS, 18790},
};

/* One server-side record of conn c in dir (0 send, 1 receive) with data; its size. */
static size_t record(uint8_t *buf, const struct shape *sh, int c, uint8_t dir, const char *data)
{
	struct l7_event *e = (struct l7_event *)buf;
	size_t n = strlen(data);

	memset(e, 0, sizeof(*e));
	e->type = L7_EV_DATA;
	e->tgid = e->tid = 4242;
	e->fd = 10 + c;
	e->gen = 1;
	e->len = n;
	e->cap = (uint32_t)n;
	e->dir = dir;
	e->role = L7_KROLE_SERVER;
	e->proto = sh->proto;
	e->lport = sh->port;
	e->rport = (uint16_t)(40000 + c);
	e->flags = L7_EVF_SEGS;
	e->laddr[10] = e->laddr[11] = e->raddr[10] = e->raddr[11] = 0xff; /* ::ffff:127.0.0.1 */
	e->laddr[12] = e->raddr[12] = 127;
	e->laddr[15] = e->raddr[15] = 1;
	e->ustack_id = -1;
	snprintf(e->comm, sizeof(e->comm), "server");
	memcpy(buf + sizeof(*e), data, n);
	return sizeof(*e) + n;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Nanoseconds per exchange of sh over n exchanges in a new session; < 0 on failure (the
 * session did not open, a record was refused, or not every exchange was counted). */
static double pass(const struct shape *sh, long n)
{
	static uint8_t req[CONNS][512], resp[CONNS][512];
	size_t nreq[CONNS], nresp[CONNS];
	struct record_opts o;
	struct msg_list msgs = {0};
	struct session s;
	uint64_t t = 1000000000ull;
	char err[256];
	double t0, t1;

	memset(&o, 0, sizeof(o));
	o.freq = 99;
	o.group = -1;
	o.user_only = true;
	if (session__open(&s, &o, &msgs)) {
		msg_list__free(&msgs);
		return -1;
	}
	if (session__replay_l7(&s, err, sizeof(err))) {
		session__close(&s, false);
		msg_list__free(&msgs);
		return -1;
	}
	for (int c = 0; c < CONNS; c++) {
		nreq[c] = record(req[c], sh, c, 1, sh->req);
		nresp[c] = record(resp[c], sh, c, 0, sh->resp);
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		int c = (int)(i % CONNS);
		struct l7_event *q = (struct l7_event *)req[c], *a = (struct l7_event *)resp[c];

		q->ts_ns = q->start_ns = t;
		a->ts_ns = a->start_ns = t + 20000;
		t += 10000;
		if (session__replay(&s, FAMILY_L7, req[c], nreq[c]) ||
		    session__replay(&s, FAMILY_L7, resp[c], nresp[c])) {
			session__close(&s, false);
			msg_list__free(&msgs);
			return -1;
		}
	}
	t1 = now_ns();
	l7_capture__flush(s.l7);
	if (l7_table__records(l7_capture__table(s.l7)) != (uint64_t)n)
		t1 = t0 - 1;
	session__close(&s, false);
	msg_list__free(&msgs);
	return t1 < t0 ? -1 : (t1 - t0) / (double)n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500000;

	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		double best = -1;

		for (int r = 0; r < 3; r++) {
			double ns = pass(&shapes[k], n);

			if (ns < 0) {
				fprintf(stderr, "l7_replay: %s: not every exchange was counted\n",
					shapes[k].name);
				return 1;
			}
			if (best < 0 || ns < best)
				best = ns;
		}
		printf("%-24s %7.0f ns per exchange (%ld exchanges, best of 3)\n", shapes[k].name,
		       best, n);
	}
	return 0;
}
