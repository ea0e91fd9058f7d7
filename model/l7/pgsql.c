/* PostgreSQL frontend/backend protocol 3: startup, SSLRequest, authentication (not requests),
 * simple queries (one record per Query) and the extended protocol (one record per Sync, so
 * pipelined Syncs pair in order; a batch that only prepares is keyed "PREPARE ..."),
 * ErrorResponse with SQLSTATE and message, COPY passing through. A request ends at the backend's ReadyForQuery. */
#include "parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pg_state {
	bool tls;	    /* the server accepted SSLRequest: the bytes are TLS from here on */
	bool ssl_request;   /* an SSLRequest waits for its one-byte answer */
	bool startup_done;  /* the startup message was seen (or never will be) */
	/* Extended-protocol batch up to Sync. */
	bool batch, batch_exec; /* the batch executes something (not only Parse/Describe) */
	uint64_t batch_start, batch_bytes;
	char batch_sql[L7_DETAIL_MAX];
	struct l7_resp resp; /* up to ReadyForQuery */
	char msg_type[2]; /* type of the message being parsed, per direction */
	char sql[L7_DETAIL_MAX]; /* text of a Query or Parse at hand */
	struct l7_stmts stmts; /* named prepared statements */
};

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

#define PROTO_V3 196608u
#define SSL_REQ 80877103u
#define CANCEL_REQ 80877102u
#define GSS_REQ 80877104u

static bool startup_like(const uint8_t *b, size_t n)
{
	uint32_t len, code;

	if (n < 8)
		return false;
	len = be32(b);
	code = be32(b + 4);
	return len >= 8 && len <= 10000 &&
	       (code == PROTO_V3 || code == SSL_REQ || code == CANCEL_REQ || code == GSS_REQ);
}

static bool frontend_type(uint8_t t)
{
	return strchr("QPBEDSCHXFdcfp", t) && t;
}

static bool backend_type(uint8_t t)
{
	return strchr("RSKZTDCEINnt123sGHWdcAV", t) && t;
}

static bool pgsql_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port)
{
	uint32_t len;

	if (startup_like(buf, cap))
		return true;
	if (cap < 5)
		return false;
	len = be32(buf + 1);
	if (len < 4 || len > (1u << 30))
		return false;
	/* A query whose text is printable, or any well-formed message on PostgreSQL's port. */
	if ((buf[0] == 'Q' || buf[0] == 'P') && cap > 6) {
		size_t i, end = cap < 5 + (size_t)len - 4 ? cap : 5 + (size_t)len - 4;
		bool printable = true;

		for (i = buf[0] == 'Q' ? 5 : 6; i < end && buf[i]; i++)
			if (buf[i] < 9 || buf[i] == 127)
				printable = false;
		if (printable && i > 7)
			return true;
	}
	return server_port == 5432 && (frontend_type(buf[0]) || backend_type(buf[0]));
}

static int pg_is_request(const uint8_t *buf, size_t n, bool udp)
{
	if (startup_like(buf, n))
		return 1;
	if (!n)
		return -1;
	if (strchr("QPBEF", buf[0]))
		return 1;
	if (strchr("RSKZTDCEINnt123", buf[0]))
		return 0;
	return -1;
}

/* A NUL-terminated string at b[*i..n) into out (cut to cap); false if not terminated. */
static bool cstr(const uint8_t *b, size_t n, size_t *i, char *out, size_t cap)
{
	const uint8_t *z = memchr(b + *i, 0, n - *i);
	size_t l;

	if (!z) {
		l7_text(out, cap, b + *i, n - *i);
		return false;
	}
	l = (size_t)(z - (b + *i));
	l7_text(out, cap, b + *i, l);
	*i += l + 1;
	return true;
}

static void frontend(struct pg_state *st, uint8_t type, const uint8_t *b, size_t n)
{
	char name[64], sql[L7_DETAIL_MAX];
	size_t i = 0;
	const char *s;

	switch (type) {
	case 'Q':
		cstr(b, n, &i, st->sql, sizeof(st->sql));
		break;
	case 'P':
		if (cstr(b, n, &i, name, sizeof(name))) {
			cstr(b, n, &i, sql, sizeof(sql));
			if (name[0]) /* the unnamed statement lives until the next Parse */
				l7_stmts_put(&st->stmts, name, sql);
			snprintf(st->batch_sql, sizeof(st->batch_sql), "%s", sql);
		}
		break;
	case 'B':
		/* portal, then statement */
		if (cstr(b, n, &i, name, sizeof(name)) && cstr(b, n, &i, name, sizeof(name))) {
			s = l7_stmts_get(&st->stmts, name);
			if (s && !st->batch_sql[0])
				snprintf(st->batch_sql, sizeof(st->batch_sql), "%s", s);
		}
		break;
	}
}

static void backend_error(struct pg_state *st, const uint8_t *b, size_t n)
{
	char code[8] = "", msg[L7_ERRMSG_MAX] = "";
	size_t i = 0;

	/* Fields: type byte, NUL-terminated value; ends with a NUL type. */
	while (i < n && b[i]) {
		uint8_t f = b[i++];
		char *dst = f == 'C' ? code : f == 'M' ? msg : NULL;
		char skip[8];

		if (!cstr(b, n, &i, dst ? dst : skip, dst ? (f == 'C' ? sizeof(code) : sizeof(msg))
						   : sizeof(skip)))
			break;
	}
	st->resp.error = true;
	if (!st->resp.errmsg[0]) {
		if (code[0])
			l7_textf(st->resp.errmsg, sizeof(st->resp.errmsg), "%s: %s", code, msg);
		else
			snprintf(st->resp.errmsg, sizeof(st->resp.errmsg), "%s", msg);
	}
}

static enum l7_step_rc pg_step(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
			       struct l7_step *out)
{
	struct pg_state *st = p->state;
	uint32_t len;
	size_t have;

	if (st->tls) {
		out->used = n; /* TLS records: the plaintext comes through the TLS probes */
		return STEP_OK;
	}
	if (!req && st->ssl_request) {
		/* The answer to SSLRequest is one byte. */
		st->ssl_request = false;
		st->tls = buf[0] == 'S';
		if (buf[0] != 'S' && buf[0] != 'N')
			return STEP_BAD;
		st->msg_type[req] = 0;
		out->used = 1;
		out->done = true;
		return STEP_OK;
	}
	if (req && !st->startup_done && n >= 8 && startup_like(buf, n)) {
		uint32_t code = be32(buf + 4);

		len = be32(buf);
		if (l7_wait(p, n, len))
			return STEP_MORE;
		if (code == SSL_REQ || code == GSS_REQ)
			st->ssl_request = true;
		else
			st->startup_done = true;
		st->msg_type[req] = 0;
		have = n < len ? n : len;
		out->used = have;
		out->skip = len - have;
		out->done = true;
		return STEP_OK;
	}
	if (n < 5 || (req && !st->startup_done && n < 8 && !buf[0]))
		return STEP_MORE; /* a startup message's length starts with a zero byte */
	if (req ? !frontend_type(buf[0]) : !backend_type(buf[0]))
		return STEP_BAD;
	len = be32(buf + 1);
	if (len < 4 || len > (1u << 30))
		return STEP_BAD;
	/* Texts (queries, statements, errors) are waited for while they can come. */
	if ((req ? strchr("QPB", buf[0]) != NULL : buf[0] == 'E') && l7_wait(p, n, 1 + (uint64_t)len))
		return STEP_MORE;
	if (req)
		st->startup_done = true;
	st->msg_type[req] = (char)buf[0];
	have = n - 1 < len ? n - 1 : len;
	if (req)
		frontend(st, buf[0], buf + 5, have - 4);
	else if (buf[0] == 'E')
		backend_error(st, buf + 5, have - 4);
	out->used = 1 + have;
	out->skip = len - have;
	out->done = true;
	return STEP_OK;
}

static void pg_end(struct l7_parser *p, bool req, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct pg_state *st = p->state;
	char t = st->msg_type[req];
	struct l7_req *rq;

	if (req) {
		bool push = false;

		if (t == 'Q' || t == 'F') {
			push = true;
			st->batch_start = start;
			st->batch_bytes = 0;
			if (t == 'F')
				snprintf(st->batch_sql, sizeof(st->batch_sql), "FUNCTION CALL");
			else
				snprintf(st->batch_sql, sizeof(st->batch_sql), "%s", st->sql);
		} else if (strchr("PBDEHC", t) && t) {
			if (!st->batch) {
				st->batch = true;
				st->batch_exec = false;
				st->batch_start = start;
				st->batch_bytes = 0;
			}
			st->batch_exec |= t == 'E';
		} else if (t == 'S') {
			push = true;
			if (!st->batch)
				st->batch_start = start;
		}
		st->batch_bytes += bytes;
		if (!push)
			return;
		rq = l7_request(p, st->batch_start, end, st->batch_bytes);
		if (rq) {
			l7_sql_key(rq->endpoint, sizeof(rq->endpoint), st->batch_sql,
				   strlen(st->batch_sql));
			/* A batch that only parses (prepares) statements is a request of its own. */
			if (t == 'S' && st->batch && !st->batch_exec && rq->endpoint[0]) {
				char key[L7_ENDPOINT_MAX];

				memcpy(key, rq->endpoint, sizeof(key));
				l7_textf(rq->endpoint, sizeof(rq->endpoint), "PREPARE %s", key);
			}
			if (!rq->endpoint[0])
				snprintf(rq->endpoint, sizeof(rq->endpoint), "%s",
					 t == 'S' ? "SYNC" : "QUERY");
			snprintf(rq->detail, sizeof(rq->detail), "%s", st->batch_sql);
		}
		st->batch = false;
		st->batch_bytes = 0;
		st->batch_sql[0] = 0;
		return;
	}
	if (!t)
		return; /* the answer to SSLRequest */
	l7_resp_add(&st->resp, start, bytes);
	if (t == 'Z')
		l7_resp_finish(p, &st->resp, end);
}

static void pg_lost(struct l7_parser *p, bool req)
{
	struct pg_state *st = p->state;

	st->startup_done = true;
	if (req) {
		st->batch = false;
		st->batch_sql[0] = 0;
	} else {
		memset(&st->resp, 0, sizeof(st->resp));
	}
}

static void pg_release(struct l7_parser *p)
{
	struct pg_state *st = p->state;

	l7_stmts_free(&st->stmts);
}

const struct l7_ops l7_pgsql_ops = {
	.infer = pgsql_infer,
	.state_size = sizeof(struct pg_state),
	.is_request = pg_is_request,
	.step = pg_step,
	.end = pg_end,
	.lost = pg_lost,
	.release = pg_release,
};
