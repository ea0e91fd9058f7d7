/* The L7 parser interface (proto.h) over the per-protocol parsers: the stream framework
 * (pending bytes, skipped bodies, message times), the request queue with its two pairings (in
 * order, by id) and the text helpers the protocols share. */
#include "parser.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../sanitize.h"
#include "util/grow.h"

struct l7_parser *l7_parser__new(enum l7_proto proto, enum l7_role role, bool udp)
{
	const struct l7_proto_info *pi = l7_proto_info(proto);
	struct l7_parser *p;

	if (!pi)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->ops = pi->ops;
	p->proto = proto;
	p->role = role;
	p->udp = udp && p->ops->datagram;
	p->settled = !p->ops->names_later;
	p->req_dir = role == L7_ROLE_CLIENT ? L7_DIR_SEND : role == L7_ROLE_SERVER ? L7_DIR_RECV : -1;
	if (p->ops->state_size) {
		p->state = calloc(1, p->ops->state_size);
		if (!p->state) {
			free(p);
			return NULL;
		}
	}
	return p;
}

void l7_parser__free(struct l7_parser *p)
{
	if (!p)
		return;
	if (p->ops->release)
		p->ops->release(p);
	free(p->state);
	free(p->d[0].pend);
	free(p->d[1].pend);
	free(p->fifo);
	free(p);
}

size_t l7_parser__pending(const struct l7_parser *p)
{
	return p->fifo_len;
}

uint64_t l7_parser__errors(const struct l7_parser *p)
{
	return p->errors;
}

enum l7_proto l7_parser__proto(const struct l7_parser *p, bool *settled)
{
	if (settled)
		*settled = p->settled;
	return p->proto;
}

uint64_t l7_parser__undecoded(const struct l7_parser *p)
{
	return p->undecoded;
}

/* --- the request queue --- */

struct l7_req *l7_fifo_at(struct l7_parser *p, size_t i)
{
	return i < p->fifo_len ? &p->fifo[(p->fifo_head + i) % p->fifo_cap] : NULL;
}

struct l7_req *l7_fifo_front(struct l7_parser *p)
{
	return l7_fifo_at(p, 0);
}

struct l7_req *l7_fifo_find(struct l7_parser *p, uint64_t id)
{
	for (size_t i = 0; i < p->fifo_len; i++)
		if (l7_fifo_at(p, i)->id == id)
			return l7_fifo_at(p, i);
	return NULL;
}

bool l7_resp_boundary(struct l7_parser *p, uint64_t id, bool *waiting)
{
	*waiting = l7_fifo_find(p, id) != NULL;
	if (!*waiting && !p->resp_synced)
		return false;
	p->resp_synced = true;
	return true;
}

/* An empty record: its numbers zero, its texts "" (the bytes past a text's end are not
 * cleared: a record is some 600 bytes, a request costs two of them). */
static void record_init(struct l7_record *r)
{
	memset(r, 0, offsetof(struct l7_record, endpoint));
	r->endpoint[0] = r->detail[0] = r->errmsg[0] = 0;
}

void l7_text_copy(char *dst, const char *src, size_t cap)
{
	size_t n = strnlen(src, cap - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

void l7_give_up(struct l7_parser *p, const struct l7_req *rq)
{
	struct l7_record r;

	record_init(&r);
	r.no_response = true;
	l7_emit(p, rq, &r);
}

void l7_fifo_remove(struct l7_parser *p, size_t i)
{
	if (i >= p->fifo_len)
		return;
	/* Close the gap by moving the entries before i one step back. */
	for (size_t k = i; k > 0; k--)
		*l7_fifo_at(p, k) = *l7_fifo_at(p, k - 1);
	p->fifo_head = (p->fifo_head + 1) % p->fifo_cap;
	p->fifo_len--;
}

struct l7_req *l7_fifo_push(struct l7_parser *p)
{
	struct l7_req *rq;

	if (p->fifo_len == L7_FIFO_MAX) {
		l7_give_up(p, l7_fifo_front(p));
		l7_fifo_remove(p, 0);
	}
	if (p->fifo_len == p->fifo_cap) {
		size_t cap = p->fifo_cap ? p->fifo_cap * 2 : 2; /* most connections wait for one or two */
		struct l7_req *n = malloc(cap * sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < p->fifo_len; i++)
			n[i] = *l7_fifo_at(p, i);
		free(p->fifo);
		p->fifo = n;
		p->fifo_cap = cap;
		p->fifo_head = 0;
	}
	rq = &p->fifo[(p->fifo_head + p->fifo_len++) % p->fifo_cap];
	memset(rq, 0, offsetof(struct l7_req, endpoint));
	rq->endpoint[0] = rq->detail[0] = 0;
	return rq;
}

void l7_fifo_flush(struct l7_parser *p)
{
	while (p->fifo_len) {
		l7_give_up(p, l7_fifo_front(p));
		l7_fifo_remove(p, 0);
	}
}

void l7_emit(struct l7_parser *p, const struct l7_req *rq, struct l7_record *r)
{
	r->proto = p->proto;
	r->req_start_ns = rq->start_ns;
	r->req_end_ns = rq->end_ns;
	r->req_bytes = rq->bytes;
	l7_text_copy(r->endpoint, rq->endpoint, sizeof(r->endpoint));
	l7_text_copy(r->detail, rq->detail, sizeof(r->detail));
	if (p->fn)
		p->fn(p->ctx, r);
}

struct l7_req *l7_request(struct l7_parser *p, uint64_t start_ns, uint64_t end_ns,
			  uint64_t bytes)
{
	struct l7_req *rq = l7_fifo_push(p);

	if (rq) {
		rq->start_ns = start_ns;
		rq->end_ns = end_ns;
		rq->bytes = bytes;
	}
	return rq;
}

void l7_resp_add(struct l7_resp *r, uint64_t start_ns, uint64_t bytes)
{
	if (!r->on) {
		r->on = true;
		r->start_ns = start_ns;
		r->bytes = 0;
	}
	r->bytes += bytes;
}

/* Pairs the response r, ended at end_ns, with waiting request i, passes the record on and
 * removes the request. */
static void pair(struct l7_parser *p, size_t i, const struct l7_resp *r, uint64_t end_ns)
{
	struct l7_record rec;

	record_init(&rec);
	rec.resp_start_ns = r->start_ns;
	rec.resp_end_ns = end_ns;
	rec.resp_bytes = r->bytes;
	rec.error = r->error;
	rec.status = r->status;
	l7_text_copy(rec.errmsg, r->errmsg, sizeof(rec.errmsg));
	l7_emit(p, l7_fifo_at(p, i), &rec);
	l7_fifo_remove(p, i);
}

void l7_resp_finish(struct l7_parser *p, struct l7_resp *r, uint64_t end_ns)
{
	if (p->fifo_len)
		pair(p, 0, r, end_ns);
	l7_resp_init(r, false, 0, 0);
}

bool l7_resp_finish_id(struct l7_parser *p, struct l7_resp *r, uint64_t end_ns, uint64_t id)
{
	size_t i = 0;

	while (i < p->fifo_len && l7_fifo_at(p, i)->id != id)
		i++;
	if (i < p->fifo_len)
		pair(p, i, r, end_ns);
	l7_resp_init(r, false, 0, 0);
	return i < p->fifo_len;
}

/* --- the stream framework --- */

static bool is_req(const struct l7_parser *p, enum l7_dir dir)
{
	return p->req_dir == (int)dir;
}

static void lose(struct l7_parser *p, enum l7_dir dir)
{
	struct l7_dirstate *s = &p->d[dir];

	s->npend = 0;
	s->skip = 0;
	s->active = false;
	s->done_after_skip = false;
	p->ops->lost(p, is_req(p, dir));
	if (!p->ops->pairs_by_id)
		l7_fifo_flush(p);
	else if (!is_req(p, dir))
		p->resp_synced = false;
	p->errors++;
}

static void finish(struct l7_parser *p, enum l7_dir dir, uint64_t ts)
{
	struct l7_dirstate *s = &p->d[dir];

	s->active = false;
	s->done_after_skip = false;
	p->ops->end(p, is_req(p, dir), s->start_ns, ts, s->bytes);
}

static int append(struct l7_dirstate *s, const uint8_t *buf, size_t n, uint64_t ts)
{
	if (s->npend + n > L7_PEND_MAX)
		return -EPROTO;
	if (ARRAY_GROW(s->pend, s->pend_cap, s->npend + n))
		return -ENOMEM;
	if (!s->npend)
		s->pend_ns = ts;
	memcpy(s->pend + s->npend, buf, n);
	s->npend += n;
	return 0;
}

/* Parses the n bytes at data in dir: the pending buffer, or a chunk straight from the capture
 * when nothing was pending (no copy: most messages come whole); fresh is where this chunk's
 * bytes begin in them (what comes before came earlier). The bytes parsed go in *used.
 * 0 or -EPROTO. */
static int parse(struct l7_parser *p, enum l7_dir dir, const uint8_t *data, size_t n,
		 size_t fresh, uint64_t ts, size_t *used)
{
	struct l7_dirstate *s = &p->d[dir];
	size_t off = 0;

	while (off < n && !s->skip) {
		struct l7_step st = { 0 };
		enum l7_step_rc rc;
		uint64_t take;

		if (p->req_dir < 0) {
			int r = p->ops->is_request(data + off, n - off, false);

			if (r < 0)
				return -EPROTO;
			p->req_dir = r ? (int)dir : (int)!dir;
		}
		rc = p->ops->step(p, is_req(p, dir), data + off, n - off, &st);
		if (rc == STEP_MORE)
			break;
		if (rc == STEP_BAD || st.used > n - off || (!st.used && !st.skip))
			return -EPROTO;
		if (!s->active) {
			s->active = true;
			s->start_ns = off >= fresh ? ts : s->pend_ns;
			s->bytes = 0;
		}
		off += st.used;
		take = st.skip < n - off ? st.skip : n - off;
		off += take;
		s->bytes += st.used + take;
		s->skip = st.skip - take;
		if (s->skip)
			s->done_after_skip = st.done;
		else if (st.done)
			finish(p, dir, ts);
	}
	*used = off;
	return 0;
}

/* Parses take bytes of a chunk at buf with what is pending in dir; what does not parse yet
 * stays pending. 0, or < 0 when the stream is lost. */
static int parse_chunk(struct l7_parser *p, enum l7_dir dir, const uint8_t *buf, size_t take,
		       uint64_t ts)
{
	struct l7_dirstate *s = &p->d[dir];
	size_t fresh = s->npend, used;

	if (!s->npend) {
		if (parse(p, dir, buf, take, 0, ts, &used))
			return -EPROTO;
		return used < take ? append(s, buf + used, take - used, ts) : 0;
	}
	if (append(s, buf, take, ts) || parse(p, dir, s->pend, s->npend, fresh, ts, &used))
		return -EPROTO;
	memmove(s->pend, s->pend + used, s->npend - used);
	s->npend -= used;
	if (s->npend && used >= fresh)
		s->pend_ns = ts;
	return 0;
}

int l7_parser__feed(struct l7_parser *p, enum l7_dir dir, const uint8_t *buf, size_t cap,
		    size_t len, uint64_t ts_ns, l7_record_fn fn, void *ctx)
{
	struct l7_dirstate *s;
	size_t pos = 0;
	int rc = 0;

	if ((unsigned)dir > L7_DIR_RECV)
		return -EINVAL;
	if (cap > len)
		cap = len;
	if (!buf)
		cap = 0;
	p->fn = fn;
	p->ctx = ctx;
	s = &p->d[dir];
	s->last_ns = ts_ns;
	if (p->udp) {
		if (p->req_dir < 0) {
			int r = p->ops->is_request(buf, cap, true);

			if (r < 0) {
				p->errors++;
				return -EPROTO;
			}
			p->req_dir = r ? (int)dir : (int)!dir;
		}
		rc = p->ops->datagram(p, is_req(p, dir), buf, cap, len, ts_ns);
		if (rc)
			p->errors++;
		return rc;
	}
	if (s->drain) {
		/* After a message taken as ended where bytes were missed, chunks are ignored
		 * until one starts a message. */
		if (!cap || p->ops->is_request(buf, cap, false) < 0)
			goto out;
		s->drain = false;
	}
	for (;;) {
		if (s->skip && pos < len) {
			uint64_t n = s->skip < len - pos ? s->skip : len - pos;

			s->skip -= n;
			s->bytes += n;
			pos += n;
			if (!s->skip && s->done_after_skip)
				finish(p, dir, ts_ns);
			continue;
		}
		if (pos >= len)
			break;
		if (pos < cap) {
			size_t take = cap - pos < L7_PEND_MAX - s->npend ? cap - pos
									 : L7_PEND_MAX - s->npend;

			/* Parsing goes a slice at a time so that only an unfinished header stays
			 * buffered; a full buffer that parses no further is out of sync. */
			p->cut = pos + take == cap && cap < len;
			if (!take || parse_chunk(p, dir, buf + pos, take, ts_ns)) {
				lose(p, dir);
				rc = -EPROTO;
				break;
			}
			pos += take;
			continue;
		}
		/* Bytes not captured where the parser needs to read: a protocol may take the
		 * message at hand as ending here (a chunked body); else out of sync until the
		 * next chunk, which starts a message as far as the parser can tell. */
		if (s->active && p->ops->unseen && p->ops->unseen(p, is_req(p, dir))) {
			s->bytes += len - pos;
			s->npend = 0;
			finish(p, dir, ts_ns);
			s->drain = true;
		} else {
			lose(p, dir);
			rc = -EPROTO;
		}
		break;
	}
out:
	p->fn = NULL;
	p->ctx = NULL;
	return rc;
}

void l7_parser__close(struct l7_parser *p, l7_record_fn fn, void *ctx)
{
	uint64_t last = p->d[0].last_ns > p->d[1].last_ns ? p->d[0].last_ns : p->d[1].last_ns;

	p->fn = fn;
	p->ctx = ctx;
	if (p->ops->closing)
		p->ops->closing(p, last);
	l7_fifo_flush(p);
	p->fn = NULL;
	p->ctx = NULL;
}

/* --- text helpers --- */

size_t l7_text(char *dst, size_t cap, const void *src, size_t n)
{
	char tmp[SANITIZE_MAX(L7_DETAIL_MAX)];
	size_t len, cut;

	if (!cap)
		return 0;
	if (n > L7_DETAIL_MAX)
		n = L7_DETAIL_MAX;
	len = sanitize_text(src, n, tmp);
	cut = len < cap - 1 ? len : cap - 1;
	/* Back up to the start of a UTF-8 sequence. */
	while (cut > 0 && cut < len && ((unsigned char)tmp[cut] & 0xc0) == 0x80)
		cut--;
	memcpy(dst, tmp, cut);
	dst[cut] = 0;
	return cut;
}

size_t l7_textf(char *dst, size_t cap, const char *fmt, ...)
{
	char tmp[L7_DETAIL_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	return l7_text(dst, cap, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

long l7_find_crlf(const uint8_t *buf, size_t n)
{
	const uint8_t *p = buf, *end = buf + n;

	/* memchr for the '\r' (vectorized), then its '\n': a byte loop was 4 % of galatop's
	 * time under a busy HTTP or Redis server. */
	while (n >= 2 && (p = memchr(p, '\r', (size_t)(end - p) - 1))) {
		if (p[1] == '\n')
			return (long)(p - buf);
		p++;
	}
	return -1;
}

/* Skips blanks and SQL comments. */
static size_t sql_blank(const char *s, size_t i, size_t n)
{
	for (;;) {
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		if (i + 1 < n && s[i] == '-' && s[i + 1] == '-') {
			while (i < n && s[i] != '\n')
				i++;
		} else if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
			i += 2;
			while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			i = i + 2 < n ? i + 2 : n;
		} else if (i < n && s[i] == '(') {
			i++; /* "(SELECT ...)" */
		} else {
			return i;
		}
	}
}

/* The word (identifier, possibly quoted and dotted) at s[i]; its length in *wl. */
static size_t sql_word(const char *s, size_t i, size_t n, size_t *wl)
{
	size_t j = i;

	while (j < n && (isalnum((unsigned char)s[j]) || strchr("_.$\"`[]", s[j]) ||
			 (unsigned char)s[j] >= 0x80))
		j++;
	*wl = j - i;
	return j;
}

static bool word_is(const char *s, size_t wl, const char *kw)
{
	return strlen(kw) == wl && !strncasecmp(s, kw, wl);
}

void l7_sql_key(char *dst, size_t cap, const char *sql, size_t n)
{
	char verb[24], table[96];
	size_t i = sql_blank(sql, 0, n), vl, wl, j, k = 0;
	const char *after = NULL;

	dst[0] = 0;
	sql_word(sql, i, n, &vl);
	if (!vl || vl >= sizeof(verb))
		return;
	for (j = 0; j < vl; j++)
		verb[j] = (char)toupper((unsigned char)sql[i + j]);
	verb[vl] = 0;
	if (!strcmp(verb, "SELECT") || !strcmp(verb, "DELETE"))
		after = "FROM";
	else if (!strcmp(verb, "INSERT") || !strcmp(verb, "REPLACE"))
		after = "INTO";
	else if (!strcmp(verb, "UPDATE") || !strcmp(verb, "COPY") || !strcmp(verb, "TRUNCATE") ||
		 !strcmp(verb, "LOCK"))
		after = "";
	else if (!strcmp(verb, "CREATE") || !strcmp(verb, "DROP") || !strcmp(verb, "ALTER"))
		after = "TABLE";
	table[0] = 0;
	i += vl;
	if (after) {
		/* Scan words up to the keyword (or take the next word), outside quotes. */
		for (int words = 0; i < n && words < 64; words++) {
			i = sql_blank(sql, i, n);
			if (i >= n)
				break;
			if (sql[i] == '\'') { /* string literal */
				for (i++; i < n && sql[i] != '\''; i++)
					;
				i++;
				continue;
			}
			j = sql_word(sql, i, n, &wl);
			if (!wl) {
				i++;
				continue;
			}
			if (!*after || word_is(sql + i, wl, after)) {
				if (*after) {
					i = sql_blank(sql, j, n);
					j = sql_word(sql, i, n, &wl);
					/* TABLE IF [NOT] EXISTS name */
					while (wl && (word_is(sql + i, wl, "IF") ||
						      word_is(sql + i, wl, "NOT") ||
						      word_is(sql + i, wl, "EXISTS") ||
						      word_is(sql + i, wl, "ONLY"))) {
						i = sql_blank(sql, j, n);
						j = sql_word(sql, i, n, &wl);
					}
				}
				for (size_t c = 0; c < wl && k + 1 < sizeof(table); c++)
					if (!strchr("\"`[]", sql[i + c]))
						table[k++] = sql[i + c];
				table[k] = 0;
				break;
			}
			i = j;
		}
	}
	if (table[0]) {
		char raw[sizeof(verb) + sizeof(table) + 1];
		int m = snprintf(raw, sizeof(raw), "%s %s", verb, table);

		l7_text(dst, cap, raw, (size_t)m);
	} else {
		l7_text(dst, cap, verb, vl);
	}
}
