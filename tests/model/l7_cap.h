/* Captured exchanges (tests/model/l7/ *.cap, made with tests/model/l7/capture.py) for the L7
 * parser tests: loading, replaying through parsers, and counting what came out. */
#ifndef GALATOP_TESTS_MODEL_L7_CAP_H
#define GALATOP_TESTS_MODEL_L7_CAP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/l7/proto.h"

#define MAX_RECS 512
#define MAX_FDS 8

struct recs {
	struct l7_record r[MAX_RECS];
	size_t n;
};

static inline void on_record(void *ctx, const struct l7_record *r)
{
	struct recs *rs = ctx;

	if (rs->n < MAX_RECS)
		rs->r[rs->n++] = *r;
}

struct chunk {
	int fd;
	bool close; /* the client closed the socket */
	enum l7_dir dir;
	uint8_t *data;
	size_t len;
};

struct cap {
	struct chunk c[512];
	size_t n;
};

static inline int hexval(int c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

static inline void cap_load(struct cap *cp, const char *name)
{
	char path[256], dir;
	static char line[1 << 20];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "tests/model/l7/%s.cap", name);
	cp->n = 0;
	f = fopen(path, "r");
	if (!f) {
		printf("FAIL: cannot open %s\n", path);
		return;
	}
	while (cp->n < 512 && fscanf(f, "%d %c %1048575s", &fd, &dir, line) == 3) {
		struct chunk *c = &cp->c[cp->n++];
		size_t l = strlen(line) / 2;

		c->fd = fd;
		c->close = dir == 'c';
		c->dir = dir == '>' ? L7_DIR_SEND : L7_DIR_RECV;
		if (c->close)
			l = 0;
		c->data = malloc(l ? l : 1);
		c->len = l;
		for (size_t i = 0; i < l; i++)
			c->data[i] = (uint8_t)(hexval(line[2 * i]) << 4 | hexval(line[2 * i + 1]));
	}
	fclose(f);
}

static inline void cap_free(struct cap *cp)
{
	for (size_t i = 0; i < cp->n; i++)
		free(cp->c[i].data);
}

/* Feeds the chunks from the first-th on to one parser per fd, as seen from role (the
 * capture's client side, or the server's with directions swapped), copying at most capn bytes
 * of each response chunk (0: all; responses carry the bodies a capture cuts), or one byte per
 * call when bytewise; closes them all at the end. */
static inline void run_as(struct cap *cp, enum l7_proto p, enum l7_role role, size_t first,
			  bool udp, size_t capn, bool bytewise, struct recs *out)
{
	struct l7_parser *ps[MAX_FDS] = { 0 };
	int fds[MAX_FDS];
	size_t nfd = 0;

	out->n = 0;
	for (size_t i = first; i < cp->n; i++) {
		struct chunk *c = &cp->c[i];
		enum l7_dir dir = role == L7_ROLE_SERVER ? !c->dir : c->dir;
		bool resp = c->dir == L7_DIR_RECV;
		size_t k;
		uint64_t ts = (i + 1) * 1000;

		for (k = 0; k < nfd && fds[k] != c->fd; k++)
			;
		if (c->close) {
			if (k < nfd) {
				l7_parser__close(ps[k], on_record, out);
				l7_parser__free(ps[k]);
				fds[k] = fds[--nfd];
				ps[k] = ps[nfd];
			}
			continue;
		}
		if (k == nfd) {
			if (nfd == MAX_FDS)
				continue;
			fds[nfd] = c->fd;
			ps[nfd++] = l7_parser__new(p, role, udp);
		}
		if (!ps[k])
			continue;
		if (bytewise) {
			for (size_t b = 0; b < c->len; b++)
				l7_parser__feed(ps[k], dir, c->data + b, 1, 1, ts, on_record, out);
		} else {
			size_t n = capn && capn < c->len && resp ? capn : c->len;

			l7_parser__feed(ps[k], dir, c->data, n, c->len, ts, on_record, out);
		}
	}
	for (size_t k = 0; k < nfd; k++) {
		if (ps[k])
			l7_parser__close(ps[k], on_record, out);
		l7_parser__free(ps[k]);
	}
}

/* The client's side of every connection of cp. */
static inline void run(struct cap *cp, enum l7_proto p, bool udp, size_t capn, bool bytewise,
		       struct recs *out)
{
	run_as(cp, p, L7_ROLE_CLIENT, 0, udp, capn, bytewise, out);
}

static inline size_t count(const struct recs *rs, const char *endpoint, bool *all_errors)
{
	size_t n = 0;

	if (all_errors)
		*all_errors = true;
	for (size_t i = 0; i < rs->n; i++)
		if (!rs->r[i].no_response && !strcmp(rs->r[i].endpoint, endpoint)) {
			n++;
			if (all_errors && !rs->r[i].error)
				*all_errors = false;
		}
	return n;
}

static inline size_t answered(const struct recs *rs)
{
	size_t n = 0;

	for (size_t i = 0; i < rs->n; i++)
		n += !rs->r[i].no_response;
	return n;
}

static inline const struct l7_record *find(const struct recs *rs, const char *endpoint)
{
	for (size_t i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].endpoint, endpoint))
			return &rs->r[i];
	return NULL;
}

#endif
