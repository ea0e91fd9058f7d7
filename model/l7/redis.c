/* Redis RESP2 and RESP3: every value type, nested aggregates (attributes do not count as the
 * value they annotate), inline commands, pipelining, error replies; RESP3 push messages are
 * not responses. Bulk data is kept as text where captured (request arguments,
 * error texts) and skipped otherwise. */
#include "parser.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

struct frame {
	int64_t left; /* elements still to come */
	bool attr;    /* an attribute map: its end does not complete a value */
};

struct redis_dir {
	struct frame stack[MAX_DEPTH];
	int depth;
	bool started;  /* the message's first value is parsed */
	bool push;     /* the message is a RESP3 push */
	bool error;    /* the top-level value is an error */
	unsigned args; /* bulk strings of a request seen so far */
	char text[L7_DETAIL_MAX];
	size_t ntext;
};

struct redis_state {
	struct redis_dir d[2]; /* [0] responses, [1] requests */
};

static bool line_ok(const uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\r' || buf[i] == '\n')
			return false;
	return true;
}

static bool parse_int(const uint8_t *s, size_t n, int64_t *out)
{
	int64_t v = 0;
	bool neg = false;
	size_t i = 0;

	if (n && s[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == n || n - i > 18)
		return false;
	for (; i < n; i++) {
		if ((unsigned)(s[i] - '0') > 9) /* not isdigit: no locale table per digit */
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return true;
}

static bool redis_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port)
{
	size_t i = 1;

	/* A command: *N\r\n$M\r\n */
	if (cap >= 4 && buf[0] == '*') {
		while (i < cap && i < 12 && isdigit(buf[i]))
			i++;
		if (i > 1 && i + 2 < cap && buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '$')
			return true;
	}
	if (server_port != 6379 || cap < 3)
		return false;
	/* Replies and inline commands only on Redis's port. */
	return strchr("+-:$*%_,#(=~>|!", buf[0]) && l7_find_crlf(buf, cap) > 0;
}

static int redis_is_request(const uint8_t *buf, size_t n, bool udp)
{
	if (!n)
		return -1;
	if (buf[0] == '*')
		return 1;
	if (strchr("+-:$%_,#(=~>|!", buf[0]))
		return 0;
	return isalpha(buf[0]) ? 1 : -1;
}

static void keep_text(struct redis_dir *d, const uint8_t *s, size_t n)
{
	size_t room = sizeof(d->text) - 1 - d->ntext;

	if (d->ntext && room) {
		d->text[d->ntext++] = ' ';
		room--;
	}
	if (n > room)
		n = room;
	memcpy(d->text + d->ntext, s, n);
	d->ntext += n;
}

/* One value completed at the current depth: unwinds finished aggregates. Returns true when
 * the message's top-level value is complete. */
static bool complete(struct redis_dir *d)
{
	while (d->depth > 0) {
		struct frame *f = &d->stack[d->depth - 1];

		if (--f->left > 0)
			return false;
		d->depth--;
		if (f->attr)
			return false; /* the annotated value comes next */
	}
	return true;
}

/* Ready for the next message. The stack and the text are written before they are read:
 * zeroing them (900 bytes) per message was most of redis_end's time. */
static void reset(struct redis_dir *d)
{
	d->depth = 0;
	d->started = d->push = d->error = false;
	d->args = 0;
	d->ntext = 0;
}

static enum l7_step_rc redis_step(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
				  struct l7_step *out)
{
	struct redis_state *rs = p->state;
	struct redis_dir *d = &rs->d[req];
	long e = l7_find_crlf(buf, n);
	int64_t v;
	bool top = !d->started, keep;

	if (e < 0)
		return n >= L7_PEND_MAX ? STEP_BAD : STEP_MORE;
	if (!line_ok(buf, (size_t)e))
		return STEP_BAD;
	d->started = true;
	out->used = (size_t)e + 2;
	switch (buf[0]) {
	case '*': case '%': case '~': case '>': case '|':
		if (!parse_int(buf + 1, (size_t)e - 1, &v) || v < -1)
			return STEP_BAD;
		if (top && buf[0] == '>')
			d->push = true;
		if (buf[0] == '%' || buf[0] == '|')
			v *= 2;
		if (v <= 0) {
			out->done = complete(d);
			return STEP_OK;
		}
		if (d->depth == MAX_DEPTH)
			return STEP_BAD;
		d->stack[d->depth].left = v;
		d->stack[d->depth].attr = buf[0] == '|';
		d->depth++;
		return STEP_OK;
	case '$': case '!': case '=':
		if (!parse_int(buf + 1, (size_t)e - 1, &v) || v < -1 || v > (1ll << 40))
			return STEP_BAD;
		keep = v >= 0 && ((req && d->depth == 1 && d->args < 8) || buf[0] == '!');
		/* Kept text (request arguments, error texts) is waited for while it can come. */
		if (keep && l7_wait(p, n, (uint64_t)e + 2 + (uint64_t)v + 2)) {
			if (top)
				d->started = false;
			return STEP_MORE;
		}
		if (top && buf[0] == '!')
			d->error = true;
		if (v < 0) {
			out->done = complete(d);
			return STEP_OK;
		}
		if (keep) {
			size_t avail = n - out->used;
			size_t have = avail < (uint64_t)v + 2 ? avail : (size_t)v + 2;

			d->args++;
			keep_text(d, buf + out->used, have < (size_t)v ? have : (size_t)v);
			out->used += have;
			out->skip = (uint64_t)v + 2 - have;
		} else {
			out->skip = (uint64_t)v + 2;
		}
		out->done = complete(d);
		return STEP_OK;
	case '-':
		if (top) {
			d->error = true;
			keep_text(d, buf + 1, (size_t)e - 1);
		}
		out->done = complete(d);
		return STEP_OK;
	case '+': case ':': case '_': case ',': case '#': case '(':
		out->done = complete(d);
		return STEP_OK;
	default:
		/* Inline command: "PING\r\n", "SET a b\r\n". */
		if (!req || !top || !isalpha(buf[0]))
			return STEP_BAD;
		keep_text(d, buf, (size_t)e);
		out->done = true;
		return STEP_OK;
	}
}

static void redis_end(struct l7_parser *p, bool req, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct redis_state *rs = p->state;
	struct redis_dir *d = &rs->d[req];
	struct l7_resp r;
	struct l7_req *rq;

	l7_resp_init(&r, false, start, bytes);
	if (req) {
		size_t w = 0;

		rq = l7_request(p, start, end, bytes);
		if (rq) {
			while (w < d->ntext && d->text[w] != ' ' && w + 1 < sizeof(rq->endpoint))
				w++;
			for (size_t i = 0; i < w; i++)
				d->text[i] = (char)toupper((unsigned char)d->text[i]);
			l7_text(rq->endpoint, sizeof(rq->endpoint), d->text, w);
			l7_text(rq->detail, sizeof(rq->detail), d->text, d->ntext);
		}
	} else if (!d->push) {
		r.error = d->error;
		if (d->error)
			l7_text(r.errmsg, sizeof(r.errmsg), d->text, d->ntext);
		l7_resp_finish(p, &r, end);
	}
	reset(d);
}

static void redis_lost(struct l7_parser *p, bool req)
{
	struct redis_state *rs = p->state;

	reset(&rs->d[req]);
}

const struct l7_ops l7_redis_ops = {
	.infer = redis_infer,
	.state_size = sizeof(struct redis_state),
	.is_request = redis_is_request,
	.step = redis_step,
	.end = redis_end,
	.lost = redis_lost,
};
