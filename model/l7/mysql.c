/* MySQL and MariaDB client/server protocol: the handshake and authentication (not requests),
 * commands (COM_QUERY, prepared statements with their SQL remembered by id, COM_PING, ...),
 * and their responses: OK, ERR, EOF, text and binary result sets with or without
 * CLIENT_DEPRECATE_EOF, prepare answers, multiple result sets. Packets longer than the
 * capture are skipped past their start. */
#include "parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PACKET 0xffffffu
#define SERVER_MORE_RESULTS 0x0008u
#define CLIENT_DEPRECATE_EOF (1u << 24)

enum com {
	COM_QUIT = 0x01, COM_INIT_DB = 0x02, COM_QUERY = 0x03, COM_PING = 0x0e,
	COM_STMT_PREPARE = 0x16, COM_STMT_EXECUTE = 0x17, COM_STMT_SEND_LONG_DATA = 0x18,
	COM_STMT_CLOSE = 0x19, COM_STMT_RESET = 0x1a,
};

enum phase { PH_UNKNOWN = 0, PH_AUTH, PH_CMD };
/* Where a response is. */
enum rstate { R_FIRST = 0, R_COLS, R_COLS_EOF, R_ROWS, R_PREP_PARAMS, R_PREP_PARAMS_EOF,
	      R_PREP_COLS, R_PREP_COLS_EOF };

struct my_state {
	enum phase phase;
	bool deprecate_eof, caps_known;
	enum rstate rs;
	uint64_t left;	    /* column or parameter definitions still to come */
	uint16_t prep_cols; /* of a prepare answer */
	bool cont[2];	    /* the next packet continues a 16 MiB one */
	/* The message being parsed. */
	bool ends[2];	    /* the packet at hand ends its message */
	bool auth[2];	    /* the packet at hand belongs to the handshake */
	bool is_cmd;	    /* the client packet at hand is a command that gets a response */
	char endpoint[L7_ENDPOINT_MAX];
	char detail[L7_DETAIL_MAX];
	uint8_t cmd;
	char pending_prepare[L7_DETAIL_MAX];
	struct l7_resp resp;
	struct l7_stmts stmts; /* prepared statements by id */
};

static uint32_t le24(const uint8_t *b)
{
	return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
}

static uint32_t le32(const uint8_t *b)
{
	return le24(b) | (uint32_t)b[3] << 24;
}

/* Length-encoded integer at b[0..n); false if it does not fit. */
static bool lenenc(const uint8_t *b, size_t n, uint64_t *v, size_t *used)
{
	if (!n)
		return false;
	if (b[0] < 0xfb) {
		*v = b[0];
		*used = 1;
		return true;
	}
	if (b[0] == 0xfc && n >= 3) {
		*v = b[1] | (uint32_t)b[2] << 8;
		*used = 3;
		return true;
	}
	if (b[0] == 0xfd && n >= 4) {
		*v = le24(b + 1);
		*used = 4;
		return true;
	}
	if (b[0] == 0xfe && n >= 9) {
		*v = le32(b + 1) | (uint64_t)le32(b + 5) << 32;
		*used = 9;
		return true;
	}
	return false;
}

static bool printable(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] < 9 || b[i] == 127)
			return false;
	return true;
}

/* Server greeting: protocol 10, then a printable version string ending with NUL. */
static bool greeting(const uint8_t *b, size_t n)
{
	const uint8_t *z;

	if (n < 6 || b[3] != 0 || b[4] != 0x0a)
		return false;
	z = memchr(b + 5, 0, n - 5 < 64 ? n - 5 : 64);
	return z && z > b + 5 && printable(b + 5, (size_t)(z - b - 5));
}

static bool mysql_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port)
{
	uint32_t len;

	if (cap < 5)
		return false;
	if (greeting(buf, cap))
		return true;
	len = le24(buf);
	/* A command with SQL text: len, seq 0, COM_QUERY or COM_STMT_PREPARE, printable. */
	if (buf[3] == 0 && (buf[4] == COM_QUERY || buf[4] == COM_STMT_PREPARE) && len >= 2 &&
	    cap >= 8) {
		size_t end = cap < 4 + (size_t)len ? cap : 4 + (size_t)len;

		return printable(buf + 5, end - 5) && (server_port == 3306 || len + 4 >= cap);
	}
	return server_port == 3306 && len > 0 && len < MAX_PACKET;
}

static int my_is_request(const uint8_t *buf, size_t n, bool udp)
{
	if (n >= 5 && greeting(buf, n))
		return 0;
	if (n >= 5 && buf[3] == 0)
		return 1; /* sequence 0 from the client starts a command */
	return n >= 5 ? 0 : -1;
}

/* The statement id at b as the key of the statement cache. */
static const char *stmt_key(const uint8_t *b, char *buf, size_t cap)
{
	snprintf(buf, cap, "%u", le32(b));
	return buf;
}

static void command(struct my_state *st, const uint8_t *b, size_t n)
{
	char sql[L7_DETAIL_MAX], id[16];
	const char *s;

	st->cmd = b[0];
	st->is_cmd = true;
	st->endpoint[0] = st->detail[0] = 0;
	switch (b[0]) {
	case COM_QUERY:
		l7_text(st->detail, sizeof(st->detail), b + 1, n - 1);
		l7_sql_key(st->endpoint, sizeof(st->endpoint), st->detail, strlen(st->detail));
		break;
	case COM_STMT_PREPARE:
		l7_text(sql, sizeof(sql), b + 1, n - 1);
		snprintf(st->pending_prepare, sizeof(st->pending_prepare), "%s", sql);
		l7_sql_key(st->detail, sizeof(st->detail), sql, strlen(sql));
		l7_textf(st->endpoint, sizeof(st->endpoint), "PREPARE %s", st->detail);
		l7_textf(st->detail, sizeof(st->detail), "PREPARE %s", sql);
		break;
	case COM_STMT_EXECUTE:
		s = n >= 5 ? l7_stmts_get(&st->stmts, stmt_key(b + 1, id, sizeof(id))) : NULL;
		if (s) {
			l7_sql_key(st->endpoint, sizeof(st->endpoint), s, strlen(s));
			l7_textf(st->detail, sizeof(st->detail), "EXECUTE %s", s);
		} else {
			snprintf(st->endpoint, sizeof(st->endpoint), "EXECUTE");
			snprintf(st->detail, sizeof(st->detail), "EXECUTE statement %u",
				 n >= 5 ? le32(b + 1) : 0);
		}
		break;
	case COM_STMT_CLOSE:
	case COM_STMT_SEND_LONG_DATA:
	case COM_QUIT:
		/* No response follows. */
		st->is_cmd = false;
		if (b[0] == COM_STMT_CLOSE && n >= 5)
			l7_stmts_drop(&st->stmts, stmt_key(b + 1, id, sizeof(id)));
		break;
	case COM_PING:
		snprintf(st->endpoint, sizeof(st->endpoint), "PING");
		snprintf(st->detail, sizeof(st->detail), "PING");
		break;
	case COM_INIT_DB:
		snprintf(st->endpoint, sizeof(st->endpoint), "USE");
		l7_text(sql, sizeof(sql), b + 1, n - 1);
		l7_textf(st->detail, sizeof(st->detail), "USE %s", sql);
		break;
	default:
		snprintf(st->endpoint, sizeof(st->endpoint), "COM_%02X", b[0]);
		snprintf(st->detail, sizeof(st->detail), "command 0x%02x", b[0]);
		break;
	}
}

static void error_packet(struct my_state *st, const uint8_t *b, size_t n)
{
	char msg[L7_ERRMSG_MAX] = "";

	st->resp.error = true;
	st->resp.status = n >= 3 ? b[1] | b[2] << 8 : 0;
	if (n > 9 && b[3] == '#')
		l7_text(msg, sizeof(msg), b + 9, n - 9);
	else if (n > 3)
		l7_text(msg, sizeof(msg), b + 3, n - 3);
	l7_textf(st->resp.errmsg, sizeof(st->resp.errmsg), "%d: %s", st->resp.status, msg);
}

/* Status flags of an OK (header 0x00 or 0xfe) or EOF packet. */
static unsigned status_of(const uint8_t *b, size_t n, uint32_t len)
{
	uint64_t v;
	size_t u, i = 1;

	if (b[0] == 0xfe && len < 9)
		return n >= 5 ? (unsigned)(b[3] | b[4] << 8) : 0;
	for (int k = 0; k < 2; k++) { /* affected rows, last insert id */
		if (!lenenc(b + i, n - i, &v, &u))
			return 0;
		i += u;
	}
	return n >= i + 2 ? (unsigned)(b[i] | b[i + 1] << 8) : 0;
}

/* Is this packet (payload b[0..n) of len bytes) an EOF, with or without deprecation? */
static bool is_eof(const uint8_t *b, size_t n, uint32_t len)
{
	return n && b[0] == 0xfe && len < 9;
}

/* One server packet of the response to command st->cmd; returns whether the response ends. */
static bool response_packet(struct my_state *st, const uint8_t *b, size_t n, uint32_t len)
{
	uint64_t v;
	size_t u;

	if (!n)
		return false;
	switch (st->rs) {
	case R_FIRST:
		if (b[0] == 0xff) {
			error_packet(st, b, n);
			return true;
		}
		if (st->cmd == COM_STMT_PREPARE && b[0] == 0x00 && n >= 9) {
			uint16_t params = b[7] | b[8] << 8;
			char id[16];

			l7_stmts_put(&st->stmts, stmt_key(b + 1, id, sizeof(id)),
				     st->pending_prepare);
			st->prep_cols = b[5] | b[6] << 8;
			st->left = params;
			st->rs = params ? R_PREP_PARAMS : st->prep_cols ? R_PREP_COLS : R_FIRST;
			if (!params)
				st->left = st->prep_cols;
			return !params && !st->prep_cols;
		}
		if (b[0] == 0x00 || b[0] == 0xfb || (b[0] == 0xfe && len < MAX_PACKET))
			return !(status_of(b, n, len) & SERVER_MORE_RESULTS);
		if (!lenenc(b, n, &v, &u) || !v)
			return true;
		st->left = v;
		st->rs = R_COLS;
		return false;
	case R_COLS:
		if (--st->left == 0)
			st->rs = R_COLS_EOF;
		return false;
	case R_COLS_EOF:
		st->rs = R_ROWS;
		if (is_eof(b, n, len) && (!st->caps_known || !st->deprecate_eof) && len == 5)
			return false;
		/* a row or the terminator */
		__attribute__((fallthrough));
	case R_ROWS:
		if (b[0] == 0xff) {
			error_packet(st, b, n);
			st->rs = R_FIRST;
			return true;
		}
		if (b[0] == 0xfe && len < MAX_PACKET) {
			st->rs = R_FIRST;
			return !(status_of(b, n, len) & SERVER_MORE_RESULTS);
		}
		return false;
	case R_PREP_PARAMS:
		if (--st->left == 0)
			st->rs = R_PREP_PARAMS_EOF;
		return false;
	case R_PREP_PARAMS_EOF:
		if (is_eof(b, n, len)) {
			st->rs = st->prep_cols ? R_PREP_COLS : R_FIRST;
			st->left = st->prep_cols;
			return !st->prep_cols;
		}
		/* no EOF (deprecated): this is already a column definition */
		st->left = st->prep_cols;
		st->rs = R_PREP_COLS;
		if (!st->prep_cols) {
			st->rs = R_FIRST;
			return true;
		}
		__attribute__((fallthrough));
	case R_PREP_COLS:
		if (--st->left == 0) {
			st->rs = R_PREP_COLS_EOF;
			/* With CLIENT_DEPRECATE_EOF known on, nothing follows. */
			if (st->caps_known && st->deprecate_eof) {
				st->rs = R_FIRST;
				return true;
			}
		}
		return false;
	case R_PREP_COLS_EOF:
		st->rs = R_FIRST;
		return true;
	}
	return true;
}

static enum l7_step_rc my_step(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
			       struct l7_step *out)
{
	struct my_state *st = p->state;
	uint32_t len;
	size_t have;
	bool cont;

	if (n < 4)
		return STEP_MORE;
	len = le24(buf);
	if (len && n < 5)
		return STEP_MORE;
	/* Packets are read whole while they can come (commands, OK/ERR, definitions). */
	if (!st->cont[req] && l7_wait(p, n, 4 + (uint64_t)len))
		return STEP_MORE;
	have = n - 4 < len ? n - 4 : len;
	out->used = 4 + have;
	out->skip = len - have;
	cont = st->cont[req];
	st->cont[req] = len == MAX_PACKET;
	st->ends[req] = false;
	st->auth[req] = false;
	if (cont) {
		/* The rest of a 16 MiB packet. */
		st->ends[req] = !st->cont[req] && (req ? true : st->rs == R_FIRST);
		out->done = st->ends[req];
		return STEP_OK;
	}
	if (!len)
		return STEP_BAD;
	if (st->phase == PH_UNKNOWN)
		st->phase = !req && greeting(buf, n) ? PH_AUTH : PH_CMD;
	if (st->phase == PH_AUTH) {
		if (req && buf[3] == 1 && have >= 4) {
			st->caps_known = true;
			st->deprecate_eof = le32(buf + 4) & CLIENT_DEPRECATE_EOF;
		}
		/* Authentication ends with the server's OK (or ERR). */
		if (!req && buf[3] > 0 && (buf[4] == 0x00 || buf[4] == 0xff))
			st->phase = PH_CMD;
		st->auth[req] = true;
		out->done = true;
		return STEP_OK;
	}
	if (req) {
		if (buf[3] != 0)
			return STEP_BAD; /* a command starts at sequence 0 */
		command(st, buf + 4, have);
		st->rs = R_FIRST;
		st->ends[req] = !st->cont[req];
		out->done = st->ends[req];
		return STEP_OK;
	}
	st->ends[req] = response_packet(st, buf + 4, have, len) && !st->cont[req];
	out->done = true;
	return STEP_OK;
}

static void my_end(struct l7_parser *p, bool req, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct my_state *st = p->state;
	struct l7_req *rq;

	if (st->auth[req])
		return;
	if (req) {
		if (!st->ends[req] || !st->is_cmd)
			return;
		rq = l7_request(p, start, end, bytes);
		if (rq) {
			rq->tag = st->cmd;
			memcpy(rq->endpoint, st->endpoint, sizeof(rq->endpoint));
			memcpy(rq->detail, st->detail, sizeof(rq->detail));
		}
		return;
	}
	/* Each response packet is one framework message; the response spans them. */
	l7_resp_add(&st->resp, start, bytes);
	if (st->ends[req])
		l7_resp_finish(p, &st->resp, end);
}

static void my_lost(struct l7_parser *p, bool req)
{
	struct my_state *st = p->state;

	st->cont[req] = false;
	st->rs = R_FIRST;
	memset(&st->resp, 0, sizeof(st->resp));
	if (st->phase == PH_UNKNOWN)
		st->phase = PH_CMD;
}

static void my_release(struct l7_parser *p)
{
	struct my_state *st = p->state;

	l7_stmts_free(&st->stmts);
}

const struct l7_ops l7_mysql_ops = {
	.infer = mysql_infer,
	.state_size = sizeof(struct my_state),
	.is_request = my_is_request,
	.step = my_step,
	.end = my_end,
	.lost = my_lost,
	.release = my_release,
};
