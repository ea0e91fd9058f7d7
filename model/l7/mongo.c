/* MongoDB's wire protocol: a 16-byte little-endian header (messageLength, requestID,
 * responseTo, opCode) then OP_MSG (flag bits, section kinds 0 and 1, optional CRC-32C),
 * OP_QUERY/OP_REPLY (the handshakes of older drivers), OP_COMPRESSED (counted; read as the
 * original message when zlib compressed it, as zlib is at hand; snappy and zstd are not) and
 * the legacy write opcodes. Replies pair with requests by responseTo = requestID; an exhaust
 * cursor's replies (OP_MSG moreToCome, or OP_REPLYs to an exhaust OP_QUERY while its cursor is
 * open) chain each to the one before and end the request together.
 * BSON is read with libbson. The key is the command and its namespace (`find shop.orders`); an
 * error is `ok: 0`, `writeErrors` or a `writeConcernError` (or OP_REPLY's QueryFailure). */
#include "parser.h"

#include <bson/bson.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define HDR 16
#define MONGO_MAX_SIZE (48u << 20) /* maxMessageSizeBytes */
#define DOC_COPY 4096		   /* bytes of a cut document read up to its last whole element */

enum {
	OP_REPLY = 1,
	OP_UPDATE = 2001,
	OP_INSERT = 2002,
	OP_QUERY = 2004,
	OP_GET_MORE = 2005,
	OP_DELETE = 2006,
	OP_KILL_CURSORS = 2007,
	OP_COMPRESSED = 2012,
	OP_MSG = 2013,
};

#define MSG_CHECKSUM 1u
#define MSG_MORE_TO_COME 2u
#define MSG_EXHAUST_ALLOWED (1u << 16)
#define REPLY_QUERY_FAILURE 2u
#define COMPRESSOR_ZLIB 2

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static const char *op_name(int32_t op)
{
	switch (op) {
	case OP_REPLY: return "OP_REPLY";
	case OP_UPDATE: return "OP_UPDATE";
	case OP_INSERT: return "OP_INSERT";
	case OP_QUERY: return "OP_QUERY";
	case OP_GET_MORE: return "OP_GET_MORE";
	case OP_DELETE: return "OP_DELETE";
	case OP_KILL_CURSORS: return "OP_KILL_CURSORS";
	case OP_COMPRESSED: return "OP_COMPRESSED";
	case OP_MSG: return "OP_MSG";
	default: return NULL;
	}
}

#define QUERY_EXHAUST 0x40u /* OP_QUERY flag: the server streams every batch */

struct mongo_msg {
	bool ok;      /* a header was parsed */
	bool matched; /* a reply whose request waits */
	bool more;    /* moreToCome: a request without reply, or more replies follow */
	bool exhaust; /* an OP_QUERY flagged exhaust */
	bool open;    /* an OP_REPLY whose cursor goes on */
	uint32_t id, to;
	int32_t op;
	bool error;
	int status;
	char endpoint[L7_ENDPOINT_MAX];
	char detail[L7_DETAIL_MAX];
	char errmsg[L7_ERRMSG_MAX];
};

struct mongo_state {
	struct mongo_msg m[2]; /* [0] replies, [1] requests */
	struct l7_resp resp;   /* replies so far of the request waiting under resp_id */
	uint32_t resp_id;
};

/* Opens the BSON document at b (n bytes captured) for iteration. A document the capture cut
 * is copied into tmp (DOC_COPY bytes) with its length mended, so that its whole elements can
 * be read. False when b holds no document. */
static bool doc_open(bson_t *doc, uint8_t *tmp, const uint8_t *b, size_t n)
{
	uint32_t len;
	size_t k;

	if (n < 5)
		return false;
	len = le32(b);
	if (len < 5 || len > MONGO_MAX_SIZE)
		return false;
	if (len <= n)
		return bson_init_static(doc, b, len);
	k = n < DOC_COPY - 1 ? n : DOC_COPY - 1;
	memcpy(tmp, b, k);
	tmp[k] = 0;
	tmp[0] = (uint8_t)(k + 1);
	tmp[1] = (uint8_t)((k + 1) >> 8);
	tmp[2] = tmp[3] = 0;
	return bson_init_static(doc, tmp, k + 1);
}

/* The request key from a command document: its first key is the command, its value (or the
 * "collection" of getMore) the collection, "$db" the database (ns: an OP_QUERY's namespace). */
static void command_key(struct mongo_msg *m, const bson_t *doc, const char *ns)
{
	bson_iter_t it;
	const char *cmd = NULL, *coll = NULL, *db = NULL;
	char raw[L7_ENDPOINT_MAX];
	bool first = true;

	if (!bson_iter_init(&it, doc))
		return;
	while (bson_iter_next(&it)) {
		const char *k = bson_iter_key(&it);

		if (first) {
			cmd = k;
			if (BSON_ITER_HOLDS_UTF8(&it))
				coll = bson_iter_utf8(&it, NULL);
			first = false;
		} else if (!strcmp(k, "$db") && BSON_ITER_HOLDS_UTF8(&it)) {
			db = bson_iter_utf8(&it, NULL);
		} else if (!strcmp(k, "collection") && !coll && BSON_ITER_HOLDS_UTF8(&it)) {
			coll = bson_iter_utf8(&it, NULL);
		}
	}
	if (ns && (!strchr(ns, '.') || strcmp(strchr(ns, '.'), ".$cmd"))) {
		/* OP_QUERY on a collection: a legacy query (pymongo's exhaust cursors). */
		snprintf(raw, sizeof(raw), "query %s", ns);
	} else if (!cmd) {
		return;
	} else if (ns) {
		/* OP_QUERY on "db.$cmd": a command on db. */
		snprintf(raw, sizeof(raw), "%s %.*s", cmd, (int)(strchr(ns, '.') - ns), ns);
	} else if (db && coll) {
		snprintf(raw, sizeof(raw), "%s %s.%s", cmd, db, coll);
	} else if (db) {
		snprintf(raw, sizeof(raw), "%s %s", cmd, db);
	} else {
		snprintf(raw, sizeof(raw), "%s", cmd);
	}
	l7_text(m->endpoint, sizeof(m->endpoint), raw, strlen(raw));
	if (doc->len <= 1024) {
		char *json = bson_as_relaxed_extended_json(doc, NULL);

		if (json) {
			l7_text(m->detail, sizeof(m->detail), json, strlen(json));
			bson_free(json);
		}
	}
}

/* code and errmsg (or $err) of an error document into m. */
static void error_doc(struct mongo_msg *m, bson_iter_t *it)
{
	const char *msg = NULL;

	m->error = true;
	while (bson_iter_next(it)) {
		const char *k = bson_iter_key(it);

		if (!strcmp(k, "code") && BSON_ITER_HOLDS_NUMBER(it))
			m->status = (int)bson_iter_as_int64(it);
		else if ((!strcmp(k, "errmsg") || !strcmp(k, "$err")) && BSON_ITER_HOLDS_UTF8(it))
			msg = bson_iter_utf8(it, NULL);
	}
	if (msg && !m->errmsg[0])
		l7_text(m->errmsg, sizeof(m->errmsg), msg, strlen(msg));
}

/* A reply document: ok: 0, the first of writeErrors, writeConcernError; failure: OP_REPLY's
 * QueryFailure flag. */
static void reply_doc(struct mongo_msg *m, const bson_t *doc, bool failure)
{
	bson_iter_t it, sub, el;

	if (!bson_iter_init(&it, doc))
		return;
	if (failure) {
		error_doc(m, &it);
		return;
	}
	while (bson_iter_next(&it)) {
		const char *k = bson_iter_key(&it);

		if (!strcmp(k, "ok") && BSON_ITER_HOLDS_NUMBER(&it) && bson_iter_as_double(&it) == 0) {
			bson_iter_t all;

			if (bson_iter_init(&all, doc))
				error_doc(m, &all);
		} else if (!strcmp(k, "writeErrors") && BSON_ITER_HOLDS_ARRAY(&it) &&
			   bson_iter_recurse(&it, &sub) && bson_iter_next(&sub) &&
			   BSON_ITER_HOLDS_DOCUMENT(&sub) && bson_iter_recurse(&sub, &el)) {
			error_doc(m, &el);
		} else if (!strcmp(k, "writeConcernError") && BSON_ITER_HOLDS_DOCUMENT(&it) &&
			   bson_iter_recurse(&it, &el)) {
			error_doc(m, &el);
		}
	}
}

/* Inflates zlib data at in (n bytes) into out, as far as cap bytes; returns the bytes out. */
static size_t inflate_head(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	z_stream z;
	size_t got;

	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return 0;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	inflate(&z, Z_SYNC_FLUSH);
	got = z.total_out;
	inflateEnd(&z);
	return got;
}

/* The body of a message (b: n bytes captured after the header, of len). */
static void parse_body(struct mongo_msg *m, bool req, const uint8_t *b, size_t n, uint64_t len)
{
	uint8_t tmp[DOC_COPY];
	bson_t doc;

	switch (m->op) {
	case OP_MSG: {
		uint32_t flags = le32(b);
		uint64_t end = len - (flags & MSG_CHECKSUM ? 4 : 0);
		size_t off = 4;

		m->more = flags & MSG_MORE_TO_COME;
		/* The body (kind 0) is the command or the reply; kind 1 sections carry
		 * documents (inserts, updates) and are skipped. */
		while (off < n && off < end) {
			uint8_t kind = b[off++];

			if (kind == 0) {
				if (doc_open(&doc, tmp, b + off, n - off)) {
					if (req)
						command_key(m, &doc, NULL);
					else
						reply_doc(m, &doc, false);
				}
				return;
			}
			if (off + 4 > n || le32(b + off) < 4)
				return;
			off += le32(b + off);
		}
		return;
	}
	case OP_QUERY: {
		const uint8_t *z = memchr(b + 4, 0, n - 4);
		char ns[L7_ENDPOINT_MAX];

		if (!z)
			return;
		m->exhaust = le32(b) & QUERY_EXHAUST;
		l7_text(ns, sizeof(ns), b + 4, (size_t)(z - (b + 4)));
		if ((size_t)(z + 1 + 8 - b) <= n &&
		    doc_open(&doc, tmp, z + 9, n - (size_t)(z + 9 - b)))
			command_key(m, &doc, ns);
		return;
	}
	case OP_REPLY:
		m->open = n >= 12 && (le32(b + 4) || le32(b + 8));
		if (n >= 20 && doc_open(&doc, tmp, b + 20, n - 20))
			reply_doc(m, &doc, le32(b) & REPLY_QUERY_FAILURE);
		return;
	case OP_COMPRESSED: {
		/* originalOpcode, uncompressedSize, compressorId, then the compressed message:
		 * zlib's is inflated and read as the original; snappy and zstd are counted. */
		int32_t orig = n >= 9 ? (int32_t)le32(b) : 0;
		const char *name = op_name(orig);

		snprintf(m->endpoint, sizeof(m->endpoint), "OP_COMPRESSED");
		snprintf(m->detail, sizeof(m->detail), "OP_COMPRESSED %s", name ? name : "");
		if (name && orig != OP_COMPRESSED && b[8] == COMPRESSOR_ZLIB) {
			uint8_t out[L7_PEND_MAX];
			size_t got = inflate_head(b + 9, n - 9, out, sizeof(out));

			if (got >= 4) {
				m->op = orig;
				parse_body(m, req, out, got, le32(b + 4));
				m->op = OP_COMPRESSED;
			}
		}
		return;
	}
	default: {
		/* Legacy writes and OP_GET_MORE: int32 then the namespace. */
		const uint8_t *z = n > 4 ? memchr(b + 4, 0, n - 4) : NULL;
		char raw[L7_ENDPOINT_MAX];

		snprintf(raw, sizeof(raw), "%s %.*s", op_name(m->op), z ? (int)(z - (b + 4)) : 0,
			 z ? (const char *)b + 4 : "");
		l7_text(m->endpoint, sizeof(m->endpoint), raw, strlen(raw));
		/* Only OP_GET_MORE (and OP_QUERY) are answered. */
		m->more = m->op != OP_GET_MORE;
		return;
	}
	}
}

/* The header at b: false when it is no MongoDB message. */
static bool header(const uint8_t *b, size_t n, uint32_t *len, uint32_t *id, uint32_t *to,
		   int32_t *op)
{
	if (n < HDR)
		return false;
	*len = le32(b);
	*id = le32(b + 4);
	*to = le32(b + 8);
	*op = (int32_t)le32(b + 12);
	return *len >= HDR + 4 && *len <= MONGO_MAX_SIZE && op_name(*op);
}

static int mongo_is_request(const uint8_t *buf, size_t n, bool udp)
{
	uint32_t len, id, to;
	int32_t op;

	if (!header(buf, n, &len, &id, &to, &op))
		return -1;
	if (op == OP_REPLY)
		return 0;
	if (to)
		return op == OP_MSG || op == OP_COMPRESSED ? 0 : -1;
	/* OP_MSG: only the defined flag bits (when they are there: servers read the header
	 * alone). */
	if (op == OP_MSG && n >= HDR + 4 &&
	    le32(buf + HDR) & ~(MSG_CHECKSUM | MSG_MORE_TO_COME | MSG_EXHAUST_ALLOWED))
		return -1;
	return 1;
}

static bool mongo_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port)
{
	return mongo_is_request(buf, cap, false) == 1;
}

static enum l7_step_rc mongo_step(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
				  struct l7_step *out)
{
	struct mongo_state *st = p->state;
	struct mongo_msg *m = &st->m[req];
	uint32_t len;
	size_t have;

	if (n < HDR)
		return l7_wait_head(p, n, HDR) ? STEP_MORE : STEP_BAD;
	memset(m, 0, sizeof(*m));
	if (!header(buf, n, &len, &m->id, &m->to, &m->op) || (req && m->op == OP_REPLY))
		return STEP_BAD;
	if (l7_wait_head(p, n, len))
		return STEP_MORE;
	have = n < len ? n : len;
	if (!req && !l7_resp_boundary(p, m->to, &m->matched))
		return STEP_BAD;
	if (have >= HDR + 4)
		parse_body(m, req, buf + HDR, have - HDR, len - HDR);
	if (req && !m->endpoint[0])
		snprintf(m->endpoint, sizeof(m->endpoint), "%s", op_name(m->op));
	m->ok = true;
	return l7_step_whole(n, len, out);
}

static void mongo_end(struct l7_parser *p, bool req, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct mongo_state *st = p->state;
	struct mongo_msg *m = &st->m[req];
	struct l7_req *rq;

	if (!m->ok)
		return;
	m->ok = false;
	if (req) {
		struct l7_req one = { .start_ns = start, .end_ns = end, .bytes = bytes };

		rq = m->more ? &one : l7_request(p, start, end, bytes);
		if (!rq)
			return;
		rq->id = m->id;
		rq->tag = m->exhaust;
		memcpy(rq->endpoint, m->endpoint, sizeof(rq->endpoint));
		memcpy(rq->detail, m->detail, sizeof(rq->detail));
		if (m->more)
			l7_give_up(p, rq); /* moreToCome: the server sends no reply */
		return;
	}
	rq = m->matched ? l7_fifo_find(p, m->to) : NULL;
	if (!rq)
		return;
	if (!st->resp.on || st->resp_id != m->to)
		memset(&st->resp, 0, sizeof(st->resp));
	l7_resp_add(&st->resp, start, bytes);
	if (m->error && !st->resp.error) {
		st->resp.error = true;
		st->resp.status = m->status;
		memcpy(st->resp.errmsg, m->errmsg, sizeof(st->resp.errmsg));
	}
	if (m->more || (rq->tag && m->open)) {
		/* Exhaust (moreToCome, or an OP_QUERY's cursor still open): the next reply
		 * answers this one. */
		rq->id = m->id;
		st->resp_id = m->id;
		return;
	}
	l7_resp_finish_id(p, &st->resp, end, m->to);
}

static void mongo_lost(struct l7_parser *p, bool req)
{
	struct mongo_state *st = p->state;

	st->m[req].ok = false;
}

const struct l7_ops l7_mongo_ops = {
	.infer = mongo_infer,
	.state_size = sizeof(struct mongo_state),
	.is_request = mongo_is_request,
	.step = mongo_step,
	.end = mongo_end,
	.lost = mongo_lost,
	.pairs_by_id = true,
};
