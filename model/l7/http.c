/* HTTP/1.0 and 1.1: request and status lines, Content-Length and chunked bodies (sizes may
 * straddle chunks, data may be uncaptured), keep-alive, pipelining, HEAD/1xx/204/304 without
 * bodies, and responses delimited by the connection's close. */
#include "parser.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum phase { P_HEAD = 0, P_CHUNK_SIZE, P_TRAILER };

#define TAG_HEAD 1u /* the request was HEAD: its response has no body */

struct http_dir {
	enum phase phase;
	bool interim;	 /* a 1xx response: not the final one */
	int status;
	char reason[L7_ERRMSG_MAX];
	/* Request being parsed. */
	char endpoint[L7_ENDPOINT_MAX];
	char detail[L7_DETAIL_MAX];
	bool head;
};

struct http_state {
	struct http_dir d[2]; /* [0] responses, [1] requests */
};

static const char *const methods[] = { "GET",	  "POST",    "PUT",   "DELETE", "HEAD",
				       "OPTIONS", "PATCH",   "TRACE", "CONNECT", "PROPFIND",
				       "PROPPATCH", "MKCOL", "COPY",  "MOVE",   "LOCK",
				       "UNLOCK",  "PURGE",   "REPORT" };

/* Length of the method at buf, followed by a space, or 0. */
static size_t method_len(const uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		size_t l = strlen(methods[i]);

		if (n > l && !memcmp(buf, methods[i], l) && buf[l] == ' ')
			return l;
	}
	return 0;
}

static bool is_status_line(const uint8_t *buf, size_t n)
{
	return n >= 12 && !memcmp(buf, "HTTP/1.", 7) && isdigit(buf[7]) && buf[8] == ' ' &&
	       isdigit(buf[9]) && isdigit(buf[10]) && isdigit(buf[11]);
}

static bool http_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port)
{
	size_t m = method_len(buf, cap);

	if (m)
		return cap > m + 1 && (buf[m + 1] == '/' || buf[m + 1] == '*' || buf[m + 1] == 'h');
	return is_status_line(buf, cap);
}

static int http_is_request(const uint8_t *buf, size_t n, bool udp)
{
	if (method_len(buf, n))
		return 1;
	return is_status_line(buf, n) ? 0 : -1;
}

/* A path segment that names one object rather than a route: numbers, UUIDs, long hex or
 * mixed strings with digits. */
static bool is_id(const char *s, size_t n)
{
	size_t digits = 0, hex = 0, alpha = 0;

	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isdigit(c))
			digits++;
		if (isxdigit(c))
			hex++;
		if (isalpha(c))
			alpha++;
	}
	if (digits == n)
		return true;
	if (n == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-')
		return true;
	if (hex == n && n >= 8 && digits)
		return true;
	return n >= 16 && digits && digits + alpha >= n - 2;
}

/* "GET /users/{id}" from the method and the request target (query and fragment dropped): HTTP/1
 * request lines and HTTP/2 :method and :path. */
void l7_http_endpoint(char *dst, size_t cap, const char *method, size_t ml, const char *t,
		      size_t tl)
{
	char raw[L7_ENDPOINT_MAX];
	size_t k, i = 0;

	/* Absolute form: http://host/path */
	if (tl > 7 && (!strncasecmp(t, "http://", 7) || !strncasecmp(t, "https://", 8))) {
		const char *p = memchr(t + 8, '/', tl - 8);

		if (p) {
			tl -= (size_t)(p - t);
			t = p;
		} else {
			t = "/";
			tl = 1;
		}
	}
	/* Not snprintf: this runs for every request (9 % of galatop's time under wrk). */
	k = ml < sizeof(raw) - 1 ? ml : sizeof(raw) - 2;
	memcpy(raw, method, k);
	raw[k++] = ' ';
	while (i < tl && t[i] != '?' && t[i] != '#' && k + 5 < sizeof(raw)) {
		if (t[i] == '/') {
			raw[k++] = '/';
			i++;
			continue;
		}
		size_t j = i;

		while (j < tl && t[j] != '/' && t[j] != '?' && t[j] != '#')
			j++;
		if (is_id(t + i, j - i)) {
			memcpy(raw + k, "{id}", 4);
			k += 4;
		} else {
			size_t n = j - i < sizeof(raw) - 1 - k ? j - i : sizeof(raw) - 1 - k;

			memcpy(raw + k, t + i, n);
			k += n;
		}
		i = j;
	}
	l7_text(dst, cap, raw, k);
}

/* The value of header name (nl bytes) if the line hdr[i..end) is that header, else NULL; its
 * length in *vl. */
static const char *field(const char *hdr, size_t i, size_t end, const char *name, size_t nl,
			 size_t *vl)
{
	size_t a, b;

	/* name is letters and '-': a letter matches either case (| 0x20 folds only a letter
	 * onto a lower-case letter), '-' itself. Not strncasecmp, which goes through the
	 * locale for every line. */
	if (end - i <= nl || hdr[i + nl] != ':')
		return NULL;
	for (size_t k = 0; k < nl; k++) {
		char c = hdr[i + k];

		if (c != name[k] && (name[k] == '-' || (c | 0x20) != (name[k] | 0x20)))
			return NULL;
	}
	a = i + nl + 1;
	b = end;
	while (a < b && (hdr[a] == ' ' || hdr[a] == '\t'))
		a++;
	while (b > a && isspace((unsigned char)hdr[b - 1]))
		b--;
	*vl = b - a;
	return hdr + a;
}

/* The framing headers of a message head: the first of each, NULL when absent; and where its
 * first line's CRLF is (-1: the first line ends in a bare LF). */
struct framing {
	const char *te, *cl; /* Transfer-Encoding, Content-Length values */
	size_t tel, cll;
	long eol;
};

/* One pass over the lines of s[0..n): the end of the head (past the "\r\n\r\n" that ends
 * it; NULL when it has not come yet) and its framing headers in *f. */
static const char *head_scan(const char *s, size_t n, struct framing *f)
{
	f->te = f->cl = NULL;
	f->eol = -1;
	for (size_t i = 0; i < n;) {
		const char *eol = memchr(s + i, '\n', n - i);
		size_t end;
		char c;

		if (!eol)
			return NULL;
		end = (size_t)(eol - s);
		if (!i && end && s[end - 1] == '\r')
			f->eol = (long)end - 1;
		/* An empty line after a CRLF-ended one: the first "\r\n\r\n" ends at its '\n'. */
		if (end == i + 1 && s[i] == '\r' && i >= 2 && s[i - 2] == '\r')
			return eol + 1;
		/* Only a line starting with the name's letter (either case) is compared. */
		c = (char)(s[i] | 0x20);
		if (!f->te && c == 't')
			f->te = field(s, i, end, "Transfer-Encoding", 17, &f->tel);
		if (!f->cl && c == 'c')
			f->cl = field(s, i, end, "Content-Length", 14, &f->cll);
		i = end + 1;
	}
	return NULL;
}

static bool value_has(const char *v, size_t vl, const char *token)
{
	size_t tl = strlen(token);

	for (size_t i = 0; i + tl <= vl; i++)
		if (!strncasecmp(v + i, token, tl))
			return true;
	return false;
}

static enum l7_step_rc head(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
			    struct l7_step *out)
{
	struct http_state *hs = p->state;
	struct http_dir *d = &hs->d[req];
	const char *s = (const char *)buf, *eoh, *v;
	struct framing f;
	size_t hl, vl, eol;
	uint64_t clen = 0;
	bool chunked, has_clen = false;

	eoh = head_scan(s, n, &f);
	/* Check the first line as soon as it is there, so garbage fails fast; a head that ended
	 * before a whole first line is garbage too. */
	if (req ? !method_len(buf, n) && (n >= 8 || eoh) : !is_status_line(buf, n) && (n >= 12 || eoh))
		return STEP_BAD;
	if (!eoh)
		return n >= L7_PEND_MAX ? STEP_BAD : STEP_MORE;
	hl = (size_t)(eoh - s);
	/* The first line's CRLF, found by the scan unless that line ends in a bare LF. */
	eol = (size_t)(f.eol >= 0 ? f.eol : l7_find_crlf(buf, hl));
	chunked = f.te && value_has(f.te, f.tel, "chunked");
	v = f.cl;
	vl = f.cll;
	if (v) {
		if (!vl || vl >= 24)
			return STEP_BAD;
		for (size_t i = 0; i < vl; i++) {
			unsigned dg = (unsigned)(v[i] - '0');

			if (dg > 9)
				return STEP_BAD;
			/* Saturates as strtoull did: the body then runs to the close. */
			clen = clen > (UINT64_MAX - dg) / 10 ? UINT64_MAX : clen * 10 + dg;
		}
		has_clen = true;
	}
	out->used = hl;
	if (req) {
		size_t ml = method_len(buf, n), te;
		const char *t = s + ml + 1;

		te = ml + 1;
		while (te < eol && s[te] != ' ')
			te++;
		l7_http_endpoint(d->endpoint, sizeof(d->endpoint), s, ml, t, te - ml - 1);
		l7_text(d->detail, sizeof(d->detail), s, eol);
		d->head = ml == 4 && !memcmp(s, "HEAD", 4);
		if (chunked) {
			d->phase = P_CHUNK_SIZE;
			return STEP_OK;
		}
		out->skip = has_clen ? clen : 0;
		out->done = true;
		return STEP_OK;
	}
	d->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	d->interim = d->status >= 100 && d->status < 200 && d->status != 101;
	d->reason[0] = 0;
	if (d->status >= 400 && eol > 13)
		l7_text(d->reason, sizeof(d->reason), s + 13, eol - 13);
	{
		struct l7_req *front = l7_fifo_front(p);
		bool no_body = d->interim || d->status == 204 || d->status == 304 ||
			       (front && (front->tag & TAG_HEAD));

		if (no_body) {
			out->done = true;
			return STEP_OK;
		}
	}
	if (chunked) {
		d->phase = P_CHUNK_SIZE;
		return STEP_OK;
	}
	if (has_clen) {
		out->skip = clen;
	} else {
		/* Neither length nor chunks: the body runs to the connection's close. */
		out->skip = UINT64_MAX;
	}
	out->done = true;
	return STEP_OK;
}

static enum l7_step_rc http_step(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
				 struct l7_step *out)
{
	struct http_state *hs = p->state;
	struct http_dir *d = &hs->d[req];
	long e;

	switch (d->phase) {
	case P_HEAD:
		return head(p, req, buf, n, out);
	case P_CHUNK_SIZE: {
		uint64_t size = 0;
		long i;

		e = l7_find_crlf(buf, n);
		if (e < 0)
			return n > 1024 ? STEP_BAD : STEP_MORE;
		for (i = 0; i < e && isxdigit(buf[i]); i++) {
			if (size >> 60)
				return STEP_BAD;
			size = size * 16 + (uint64_t)(isdigit(buf[i]) ? buf[i] - '0'
								     : (tolower(buf[i]) - 'a' + 10));
		}
		if (!i || (i < e && buf[i] != ';' && buf[i] != ' ' && buf[i] != '\t'))
			return STEP_BAD;
		out->used = (size_t)e + 2;
		if (!size)
			d->phase = P_TRAILER;
		else
			out->skip = size + 2; /* data and its CRLF */
		return STEP_OK;
	}
	case P_TRAILER:
		if (n >= 2 && buf[0] == '\r' && buf[1] == '\n') {
			out->used = 2;
		} else {
			e = -1;
			for (size_t i = 0; i + 3 < n; i++)
				if (!memcmp(buf + i, "\r\n\r\n", 4)) {
					e = (long)i;
					break;
				}
			if (e < 0)
				return n >= L7_PEND_MAX ? STEP_BAD : STEP_MORE;
			out->used = (size_t)e + 4;
		}
		d->phase = P_HEAD;
		out->done = true;
		return STEP_OK;
	}
	return STEP_BAD;
}

static void http_end(struct l7_parser *p, bool req, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct http_state *hs = p->state;
	struct http_dir *d = &hs->d[req];
	struct l7_req *rq;
	struct l7_resp r;

	l7_resp_init(&r, false, start, bytes);
	d->phase = P_HEAD;
	if (req) {
		rq = l7_request(p, start, end, bytes);
		if (rq) {
			rq->tag = d->head ? TAG_HEAD : 0;
			l7_text_copy(rq->endpoint, d->endpoint, sizeof(rq->endpoint));
			l7_text_copy(rq->detail, d->detail, sizeof(rq->detail));
		}
		return;
	}
	if (d->interim)
		return; /* 100 Continue and friends: the final response follows */
	r.status = d->status;
	r.error = d->status >= 400;
	l7_text_copy(r.errmsg, d->reason, sizeof(r.errmsg));
	l7_resp_finish(p, &r, end);
}

static void http_lost(struct l7_parser *p, bool req)
{
	struct http_state *hs = p->state;

	hs->d[req].phase = P_HEAD;
}

/* A chunked body whose rest was not captured: its end is most likely in the same write. */
static bool http_unseen(struct l7_parser *p, bool req)
{
	struct http_state *hs = p->state;

	return hs->d[req].phase != P_HEAD;
}

static void http_closing(struct l7_parser *p, uint64_t ts)
{
	int dir = p->req_dir < 0 ? -1 : !p->req_dir;
	struct l7_dirstate *s;

	/* A response whose body ran to the close ends now. */
	if (dir < 0)
		return;
	s = &p->d[dir];
	if (s->active && s->done_after_skip && s->skip) {
		s->skip = 0;
		s->active = false;
		s->done_after_skip = false;
		http_end(p, false, s->start_ns, s->last_ns ? s->last_ns : ts, s->bytes);
	}
}

const struct l7_ops l7_http_ops = {
	.infer = http_infer,
	.state_size = sizeof(struct http_state),
	.is_request = http_is_request,
	.step = http_step,
	.end = http_end,
	.unseen = http_unseen,
	.lost = http_lost,
	.closing = http_closing,
};
