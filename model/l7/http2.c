/* HTTP/2 (RFC 9113) and gRPC over it: frames with their padding and priority bytes stripped,
 * header blocks (HEADERS + CONTINUATION) decoded by libnghttp2's HPACK inflater (one per
 * direction, sized by the SETTINGS_HEADER_TABLE_SIZE the decoding side advertised, made anew
 * when a block breaks it), requests paired with responses by stream id. A request lasts from
 * its HEADERS to the END_STREAM (or RST_STREAM) of its response. Blocks that cannot be decoded
 * (a capture begun mid-connection misses the table entries they refer to) still count their
 * stream as an "[undecoded]" request; decoded values are checked before they are used. */
#include "parser.h"

#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

#define FRAME_HDR 9
#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define PREFACE_LEN 24
#define BLOCK_MAX 16384	   /* longest header block decoded */
#define TABLE_MAX 65536	   /* largest HPACK table kept per direction */
#define STREAMS_MAX 1024   /* responses in progress per connection */
#define FRAME_MAX 16384	   /* frame payloads longer than this are not guessed as HTTP/2 */
#define UNDECODED "[undecoded]"

enum { T_DATA = 0, T_HEADERS, T_PRIORITY, T_RST, T_SETTINGS, T_PUSH, T_PING, T_GOAWAY,
       T_WINDOW, T_CONTINUATION };
enum { F_END_STREAM = 0x1, F_ACK = 0x1, F_END_HEADERS = 0x4, F_PADDED = 0x8, F_PRIORITY = 0x20 };

static const char *const rst_codes[] = { "NO_ERROR",	    "PROTOCOL_ERROR", "INTERNAL_ERROR",
					 "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
					 "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
					 "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
					 "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED" };

static const char *const grpc_codes[] = { "OK",
					  "CANCELLED",
					  "UNKNOWN",
					  "INVALID_ARGUMENT",
					  "DEADLINE_EXCEEDED",
					  "NOT_FOUND",
					  "ALREADY_EXISTS",
					  "PERMISSION_DENIED",
					  "RESOURCE_EXHAUSTED",
					  "FAILED_PRECONDITION",
					  "ABORTED",
					  "OUT_OF_RANGE",
					  "UNIMPLEMENTED",
					  "INTERNAL",
					  "UNAVAILABLE",
					  "DATA_LOSS",
					  "UNAUTHENTICATED" };

/* What a decoded header block said, validated. */
struct fields {
	char method[16];
	char path[L7_DETAIL_MAX];
	int status;	 /* :status, 0 if none */
	int grpc_status; /* grpc-status, -1 if none */
	char grpc_message[L7_ERRMSG_MAX];
	bool has_ctype, grpc; /* content-type seen; application/grpc */
	bool bad;	      /* a pseudo-header with a value that fails its check */
};

/* A response in progress. */
struct h2_stream {
	uint32_t id;
	bool on;
	uint64_t start, bytes;
	int status, grpc_status;
	bool grpc;
	char errmsg[L7_ERRMSG_MAX];
};

/* One direction: its frame at hand, its header block, its HPACK decoder. */
struct h2_dir {
	bool preface; /* the frame at hand is the client's connection preface */
	uint8_t type, flags;
	uint32_t stream, flen;
	int32_t rst_code;	/* RST_STREAM's code, parsed in step */
	bool has_settings_size; /* this side advertised a HEADER_TABLE_SIZE ... */
	uint32_t settings_size; /* ... this one */
	bool settings_ack;	/* the frame at hand acknowledges the other side's SETTINGS */
	/* The header block being assembled from HEADERS (or PUSH_PROMISE) and CONTINUATION. */
	uint8_t *blk;
	size_t nblk, blk_cap;
	bool blk_on, blk_push, blk_broken, blk_end_stream;
	uint32_t blk_stream;
	uint64_t blk_start, blk_bytes;
	nghttp2_hd_inflater *inf; /* decodes the blocks this direction sends */
	bool has_table;		  /* the other side's SETTINGS gave its table limit: */
	size_t table_size;
};

struct h2_state {
	struct h2_dir d[2]; /* [1] client to server (requests), [0] server to client */
	struct h2_stream *st;
	size_t nst, st_cap;
};

static uint32_t be24(const uint8_t *b)
{
	return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
}

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static uint32_t be31(const uint8_t *b)
{
	return be32(b) & 0x7fffffffu;
}

/* Frees d's decoder, if any (libnghttp2's destructor does not take NULL). */
static void inflater_drop(struct h2_dir *d)
{
	if (d->inf)
		nghttp2_hd_inflate_del(d->inf);
	d->inf = NULL;
}

/* Whether b[0..9) is a frame header a peer could send: a known type with its stream rules and
 * length, no reserved bit. */
static bool frame_ok(const uint8_t *b)
{
	uint32_t len = be24(b), sid = be31(b + 5);

	if (b[5] & 0x80 || len > FRAME_MAX)
		return false;
	switch (b[3]) {
	case T_DATA:
	case T_HEADERS:
	case T_CONTINUATION:
		return sid != 0;
	case T_PRIORITY:
		return sid && len == 5;
	case T_RST:
		return sid && len == 4;
	case T_SETTINGS:
		return !sid && len % 6 == 0 && (!(b[4] & F_ACK) || !len);
	case T_PUSH:
		return sid && len >= 4;
	case T_PING:
		return !sid && len == 8;
	case T_GOAWAY:
		return !sid && len >= 8;
	case T_WINDOW:
		return len == 4;
	}
	return false;
}

static bool h2_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port)
{
	size_t off = 0;
	int frames = 0;

	if (cap >= PREFACE_LEN && !memcmp(buf, PREFACE, PREFACE_LEN))
		return true;
	/* A capture begun mid-connection: frames that follow each other to the end of what was
	 * captured (or past it), at least two of them or one HEADERS. */
	while (off + FRAME_HDR <= cap) {
		if (!frame_ok(buf + off))
			return false;
		frames++;
		/* A request, or the SETTINGS a server starts with, weigh as two frames. */
		if ((buf[off + 3] == T_HEADERS && be31(buf + off + 5) % 2) ||
		    (buf[off + 3] == T_SETTINGS && !(buf[off + 4] & F_ACK)))
			frames++;
		off += FRAME_HDR + be24(buf + off);
	}
	return frames >= 2 && (off >= cap || off + FRAME_HDR > cap);
}

static int h2_is_request(const uint8_t *buf, size_t n, bool udp)
{
	if (n >= PREFACE_LEN && !memcmp(buf, PREFACE, PREFACE_LEN))
		return 1;
	/* A server speaks first with its SETTINGS. */
	if (n >= FRAME_HDR && buf[3] == T_SETTINGS && !(buf[4] & F_ACK) && frame_ok(buf))
		return 0;
	return -1;
}

/* The frame at buf: its header is read; HEADERS, CONTINUATION, PUSH_PROMISE, SETTINGS and
 * RST_STREAM wait for their payload (up to what the capture holds), the others are skipped. */
static enum l7_step_rc h2_step(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
			       struct l7_step *out)
{
	struct h2_state *hs = p->state;
	struct h2_dir *d = &hs->d[req];
	size_t have, pad = 0, off = 0;
	uint64_t total;

	d->preface = false;
	d->settings_ack = false;
	if (req && n && buf[0] == 'P') {
		if (n < PREFACE_LEN)
			return memcmp(buf, PREFACE, n) ? STEP_BAD : p->cut ? STEP_BAD : STEP_MORE;
		if (!memcmp(buf, PREFACE, PREFACE_LEN)) {
			d->preface = true;
			out->used = PREFACE_LEN;
			out->done = true;
			return STEP_OK;
		}
	}
	if (n < FRAME_HDR)
		return STEP_MORE;
	if (buf[5] & 0x80)
		return STEP_BAD; /* the reserved bit: not a frame header */
	d->flen = be24(buf);
	d->type = buf[3];
	d->flags = buf[4];
	d->stream = be31(buf + 5);
	total = FRAME_HDR + (uint64_t)d->flen;
	out->done = true;
	if (d->type != T_HEADERS && d->type != T_CONTINUATION && d->type != T_PUSH &&
	    d->type != T_SETTINGS && d->type != T_RST) {
		out->used = FRAME_HDR;
		out->skip = d->flen;
		return STEP_OK;
	}
	if (l7_wait(p, n, total))
		return STEP_MORE;
	have = n < total ? n - FRAME_HDR : d->flen;
	out->used = FRAME_HDR + have;
	out->skip = total - out->used;
	buf += FRAME_HDR;
	if (d->type == T_RST) {
		d->rst_code = have >= 4 ? (int32_t)be31(buf) : -1;
		return STEP_OK;
	}
	if (d->type == T_SETTINGS) {
		if (d->flags & F_ACK) {
			d->settings_ack = true;
			return STEP_OK;
		}
		for (size_t i = 0; i + 6 <= have; i += 6)
			if (buf[i] == 0 && buf[i + 1] == 1) {
				d->has_settings_size = true;
				d->settings_size = be32(buf + i + 2);
			}
		return STEP_OK;
	}
	/* A header block fragment: padding and priority (and a push's promised id) stripped. */
	if (d->type != T_CONTINUATION) {
		if (d->flags & F_PADDED) {
			if (!have)
				return STEP_BAD;
			pad = buf[0];
			off = 1;
		}
		if (d->type == T_HEADERS && d->flags & F_PRIORITY)
			off += 5;
		if (d->type == T_PUSH)
			off += 4;
		if (off + pad > d->flen)
			return STEP_BAD; /* a peer would have reset the connection */
		d->blk_on = true;
		d->blk_push = d->type == T_PUSH;
		d->blk_broken = false;
		d->blk_end_stream = d->type == T_HEADERS && d->flags & F_END_STREAM;
		d->blk_stream = d->stream;
		d->blk_bytes = 0;
		d->nblk = 0;
	} else if (!d->blk_on || d->stream != d->blk_stream) {
		d->blk_on = false;
		return STEP_OK; /* its HEADERS came before the capture */
	}
	{
		size_t end = d->flen - pad, take;

		if (have < end) {
			d->blk_broken = true; /* the rest was not captured */
			end = have;
		}
		take = end > off ? end - off : 0;
		if (d->nblk + take > BLOCK_MAX) {
			d->blk_broken = true;
		} else if (take && !d->blk_broken) {
			if (ARRAY_GROW(d->blk, d->blk_cap, d->nblk + take)) {
				d->blk_broken = true;
			} else {
				memcpy(d->blk + d->nblk, buf + off, take);
				d->nblk += take;
			}
		}
	}
	return STEP_OK;
}

static struct h2_stream *stream_get(struct h2_state *hs, uint32_t id, bool make)
{
	struct h2_stream *s;

	for (size_t i = 0; i < hs->nst; i++)
		if (hs->st[i].id == id)
			return &hs->st[i];
	if (!make)
		return NULL;
	if (hs->nst == STREAMS_MAX) {
		/* The oldest response in progress is forgotten; its request stays waiting. */
		memmove(hs->st, hs->st + 1, (hs->nst - 1) * sizeof(*hs->st));
		hs->nst--;
	}
	if (ARRAY_GROW(hs->st, hs->st_cap, hs->nst + 1))
		return NULL;
	s = &hs->st[hs->nst++];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->grpc_status = -1;
	return s;
}

static void stream_drop(struct h2_state *hs, struct h2_stream *s)
{
	*s = hs->st[--hs->nst];
}

/* The waiting request of stream id, or NULL. */
static struct l7_req *request_of(struct l7_parser *p, uint32_t id)
{
	for (size_t i = 0; i < p->fifo_len; i++) {
		struct l7_req *rq = l7_fifo_at(p, i);

		if (rq->id == id)
			return rq;
	}
	return NULL;
}

static bool all_in(const char *v, size_t n, const char *lo, const char *hi)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] < lo[0] || v[i] > hi[0])
			return false;
	return true;
}

/* Takes one decoded header into f, checking the values it keeps. */
static void field(struct fields *f, const nghttp2_nv *nv)
{
	const char *name = (const char *)nv->name, *v = (const char *)nv->value;
	size_t nl = nv->namelen, vl = nv->valuelen;

#define IS(s) (nl == sizeof(s) - 1 && !memcmp(name, s, nl))
	if (IS(":method")) {
		bool ok = vl && vl < sizeof(f->method);

		for (size_t i = 0; ok && i < vl; i++)
			ok = (v[i] >= 'A' && v[i] <= 'Z') || v[i] == '-';
		if (ok) {
			memcpy(f->method, v, vl);
			f->method[vl] = 0;
		} else {
			f->bad = true;
		}
	} else if (IS(":path")) {
		if (vl && (v[0] == '/' || (vl == 1 && v[0] == '*')) && all_in(v, vl, "!", "~")) {
			size_t k = vl < sizeof(f->path) - 1 ? vl : sizeof(f->path) - 1;

			memcpy(f->path, v, k);
			f->path[k] = 0;
		} else {
			f->bad = true;
		}
	} else if (IS(":status")) {
		if (vl == 3 && all_in(v, 3, "0", "9") && v[0] >= '1' && v[0] <= '5')
			f->status = (v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0');
		else
			f->bad = true;
	} else if (IS("content-type")) {
		f->has_ctype = true;
		f->grpc = vl >= 16 && !memcmp(v, "application/grpc", 16);
	} else if (IS("grpc-status")) {
		if (vl >= 1 && vl <= 2 && all_in(v, vl, "0", "9"))
			f->grpc_status = vl == 1 ? v[0] - '0' : (v[0] - '0') * 10 + (v[1] - '0');
		else
			f->bad = true;
	} else if (IS("grpc-message")) {
		l7_text(f->grpc_message, sizeof(f->grpc_message), v, vl);
	}
#undef IS
}

/* Decodes the block of d into f: 0, or -1 when it cannot be decoded (the decoder is then made
 * anew: its table no longer matches the encoder's). */
static int decode(struct h2_dir *d, struct fields *f)
{
	const uint8_t *in = d->blk;
	size_t n = d->nblk;

	memset(f, 0, sizeof(*f));
	f->grpc_status = -1;
	if (d->blk_broken) {
		inflater_drop(d);
		return -1;
	}
	if (!d->inf) {
		if (nghttp2_hd_inflate_new(&d->inf))
			return -1;
		if (d->has_table &&
		    nghttp2_hd_inflate_change_table_size(d->inf, d->table_size)) {
			inflater_drop(d);
			return -1;
		}
	}
	for (;;) {
		nghttp2_nv nv;
		int fl = 0;
		ssize_t rv = nghttp2_hd_inflate_hd2(d->inf, &nv, &fl, in, n, 1);

		if (rv < 0 || (size_t)rv > n)
			break;
		if (rv) { /* in may be NULL with nothing left */
			in += rv;
			n -= (size_t)rv;
		}
		if (fl & NGHTTP2_HD_INFLATE_EMIT)
			field(f, &nv);
		if (fl & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(d->inf);
			return f->bad ? -1 : 0;
		}
		if (!rv && !(fl & NGHTTP2_HD_INFLATE_EMIT))
			break;
	}
	inflater_drop(d);
	return -1;
}

/* The connection's protocol, from the first block that tells: gRPC if its content-type is. */
static void settle(struct l7_parser *p, const struct fields *f, bool req)
{
	if (p->settled || !(f->has_ctype || (req && f->method[0])))
		return;
	p->proto = f->grpc ? L7_GRPC : L7_HTTP2;
	p->settled = true;
}

/* The response of stream s ended at end: paired with its request by stream id. */
static void finish(struct l7_parser *p, struct h2_stream *s, uint64_t end)
{
	struct h2_state *hs = p->state;
	struct l7_resp r;

	l7_resp_init(&r, true, s->start, s->bytes);
	if (s->grpc && s->grpc_status >= 0) {
		r.status = s->grpc_status;
		r.error = s->grpc_status != 0;
		if (r.error && !s->errmsg[0])
			l7_textf(r.errmsg, sizeof(r.errmsg), "%s",
				 s->grpc_status < (int)(sizeof(grpc_codes) / sizeof(grpc_codes[0]))
					 ? grpc_codes[s->grpc_status]
					 : "grpc-status");
	} else {
		r.status = s->status;
		r.error = s->status >= 400 || (s->grpc && s->status && s->status != 200);
	}
	if (s->errmsg[0]) {
		r.error = true;
		memcpy(r.errmsg, s->errmsg, sizeof(r.errmsg));
	}
	l7_resp_finish_id(p, &r, end, s->id);
	stream_drop(hs, s);
}

static void request_block(struct l7_parser *p, struct h2_dir *d, const struct fields *f, bool ok,
			  uint64_t end)
{
	struct l7_req *rq = request_of(p, d->blk_stream);

	if (rq) { /* trailers */
		rq->end_ns = end;
		rq->bytes += d->blk_bytes;
		return;
	}
	if (d->blk_stream % 2 == 0)
		return;
	rq = l7_request(p, d->blk_start, end, d->blk_bytes);
	if (!rq)
		return;
	rq->id = d->blk_stream;
	rq->tag = ok && f->grpc;
	if (!ok || !f->method[0] || !f->path[0]) {
		snprintf(rq->endpoint, sizeof(rq->endpoint), UNDECODED);
		snprintf(rq->detail, sizeof(rq->detail), "stream %u", d->blk_stream);
		return;
	}
	if (f->grpc) {
		size_t q = strcspn(f->path, "?");

		l7_text(rq->endpoint, sizeof(rq->endpoint), f->path, q);
	} else {
		l7_http_endpoint(rq->endpoint, sizeof(rq->endpoint), f->method,
				 strlen(f->method), f->path, strlen(f->path));
	}
	l7_textf(rq->detail, sizeof(rq->detail), "%s %s", f->method, f->path);
}

static void response_block(struct l7_parser *p, struct h2_dir *d, const struct fields *f,
			   bool ok, uint64_t end)
{
	struct h2_state *hs = p->state;
	struct l7_req *rq = request_of(p, d->blk_stream);
	struct h2_stream *s;

	if (!rq || !(s = stream_get(hs, d->blk_stream, true)))
		return; /* its request came before the capture */
	if (!s->on) {
		s->on = true;
		s->start = d->blk_start;
		s->grpc = rq->tag;
	}
	s->bytes += d->blk_bytes;
	if (ok) {
		if (f->status >= 200 || (f->status && d->blk_end_stream))
			s->status = f->status; /* 1xx are not the response */
		if (f->grpc_status >= 0) {
			s->grpc_status = f->grpc_status;
			if (f->grpc_status && f->grpc_message[0])
				l7_textf(s->errmsg, sizeof(s->errmsg), "%s: %s",
					 f->grpc_status < (int)(sizeof(grpc_codes) /
								sizeof(grpc_codes[0]))
						 ? grpc_codes[f->grpc_status]
						 : "grpc-status",
					 f->grpc_message);
		}
		if (f->grpc)
			s->grpc = true;
	}
	if (d->blk_end_stream)
		finish(p, s, end);
}

/* A whole header block of direction req ended at end. */
static void block(struct l7_parser *p, bool req, uint64_t end)
{
	struct h2_state *hs = p->state;
	struct h2_dir *d = &hs->d[req];
	struct fields f;
	bool ok = !decode(d, &f);

	d->blk_on = false;
	if (!ok)
		p->undecoded++;
	else
		settle(p, &f, req);
	if (d->blk_push)
		return; /* decoded for the table's sake: pushes are not requests */
	if (req)
		request_block(p, d, &f, ok, end);
	else
		response_block(p, d, &f, ok, end);
}

/* A stream was reset (by either side): its response ends as an error. */
static void reset(struct l7_parser *p, uint32_t id, int32_t code, uint64_t start, uint64_t end,
		  uint64_t bytes)
{
	struct h2_state *hs = p->state;
	struct h2_stream *s;

	if (!request_of(p, id) || !(s = stream_get(hs, id, true)))
		return;
	if (!s->on) {
		s->on = true;
		s->start = start;
	}
	s->bytes += bytes;
	l7_textf(s->errmsg, sizeof(s->errmsg), "RST_STREAM %s",
		 code >= 0 && code < (int)(sizeof(rst_codes) / sizeof(rst_codes[0]))
			 ? rst_codes[code]
			 : "(unknown code)");
	finish(p, s, end);
}

static void h2_end(struct l7_parser *p, bool req, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct h2_state *hs = p->state;
	struct h2_dir *d = &hs->d[req];
	struct l7_req *rq;
	struct h2_stream *s;

	if (d->preface)
		return;
	switch (d->type) {
	case T_HEADERS:
	case T_PUSH:
	case T_CONTINUATION:
		if (!d->blk_on)
			return;
		if (d->type != T_CONTINUATION)
			d->blk_start = start;
		d->blk_bytes += bytes;
		if (d->flags & F_END_HEADERS)
			block(p, req, end);
		return;
	case T_DATA:
		rq = request_of(p, d->stream);
		if (!rq)
			return;
		if (req) {
			rq->end_ns = end;
			rq->bytes += bytes;
			return;
		}
		s = stream_get(hs, d->stream, true);
		if (!s)
			return;
		if (!s->on) {
			s->on = true;
			s->start = start;
			s->grpc = rq->tag;
		}
		s->bytes += bytes;
		if (d->flags & F_END_STREAM)
			finish(p, s, end);
		return;
	case T_RST:
		reset(p, d->stream, d->rst_code, start, end, bytes);
		return;
	case T_SETTINGS:
		/* Acknowledged, the other side's table size limits what this side encodes. */
		if (d->settings_ack && hs->d[!req].has_settings_size) {
			uint32_t sz = hs->d[!req].settings_size;

			d->has_table = true;
			d->table_size = sz < TABLE_MAX ? sz : TABLE_MAX;
			if (d->inf && nghttp2_hd_inflate_change_table_size(d->inf, d->table_size))
				inflater_drop(d);
		}
		return;
	}
}

static void h2_lost(struct l7_parser *p, bool req)
{
	struct h2_state *hs = p->state;
	struct h2_dir *d = &hs->d[req];

	/* Requests keep waiting (pairs_by_id): their streams' ends may still come. The
	 * decoder's table misses what the lost bytes added. */
	if (d->blk_on)
		p->undecoded++;
	d->blk_on = false;
	inflater_drop(d);
}

static void h2_release(struct l7_parser *p)
{
	struct h2_state *hs = p->state;

	for (int i = 0; i < 2; i++) {
		inflater_drop(&hs->d[i]);
		free(hs->d[i].blk);
	}
	free(hs->st);
}

const struct l7_ops l7_http2_ops = {
	.infer = h2_infer,
	.state_size = sizeof(struct h2_state),
	.is_request = h2_is_request,
	.step = h2_step,
	.end = h2_end,
	.lost = h2_lost,
	.release = h2_release,
	.pairs_by_id = true,
	.names_later = true,
};
