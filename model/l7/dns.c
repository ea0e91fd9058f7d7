/* DNS over UDP (a message per datagram) and TCP (two-byte length prefix): queries pair with
 * responses by transaction id, several may be outstanding; the key is the first question's
 * name and type; RCODE != 0 is an error. Names are read with bounded compression pointers. */
#include "parser.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>

#define HDR 12

static uint16_t be16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static const struct {
	uint16_t type;
	const char *name;
} qtypes[] = {
	{ 1, "A" },	  { 2, "NS" },	    { 5, "CNAME" }, { 6, "SOA" },  { 12, "PTR" },
	{ 15, "MX" },	  { 16, "TXT" },    { 28, "AAAA" }, { 33, "SRV" }, { 35, "NAPTR" },
	{ 43, "DS" },	  { 46, "RRSIG" },  { 48, "DNSKEY" }, { 52, "TLSA" }, { 64, "SVCB" },
	{ 65, "HTTPS" },  { 99, "SPF" },    { 252, "AXFR" }, { 255, "ANY" }, { 257, "CAA" },
};

static const char *const rcodes[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP",
				      "REFUSED", "YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH",
				      "NOTZONE" };

/* Reads the name at msg[*off] (following at most 16 pointers) into out as dotted text. */
static bool read_name(const uint8_t *msg, size_t n, size_t *off, char *out, size_t cap)
{
	size_t i = *off, k = 0, end = 0;
	int jumps = 0;

	for (;;) {
		uint8_t l;

		if (i >= n)
			return false;
		l = msg[i];
		if ((l & 0xc0) == 0xc0) {
			if (i + 1 >= n || ++jumps > 16)
				return false;
			if (!end)
				end = i + 2;
			i = (size_t)(l & 0x3f) << 8 | msg[i + 1];
			continue;
		}
		if (l & 0xc0)
			return false;
		if (!l) {
			if (!end)
				end = i + 1;
			break;
		}
		if (i + 1 + l > n)
			return false;
		for (size_t j = 0; j < l; j++) {
			if (k + 2 < cap)
				out[k++] = (char)msg[i + 1 + j];
		}
		if (k + 2 < cap)
			out[k++] = '.';
		i += 1 + l;
	}
	if (k > 1)
		k--; /* drop the last dot */
	else
		out[k++] = '.';
	out[k] = 0;
	*off = end;
	return true;
}

/* Parses the header and the first question; false if msg is not a DNS message. */
static bool parse(const uint8_t *msg, size_t n, uint16_t *id, bool *resp, int *rcode,
		  char *key, size_t keycap, char *detail, size_t detcap)
{
	char name[256], raw[300];
	size_t off = HDR;
	uint16_t flags, qd, type;
	const char *tname = NULL;
	char tbuf[16];

	if (n < HDR)
		return false;
	*id = be16(msg);
	flags = be16(msg + 2);
	qd = be16(msg + 4);
	*resp = flags & 0x8000;
	*rcode = flags & 0xf;
	if ((flags >> 11 & 0xf) > 6 || qd > 16)
		return false; /* opcode */
	if (!qd) {
		snprintf(key, keycap, "(no question)");
		detail[0] = 0;
		return true;
	}
	if (!read_name(msg, n, &off, name, sizeof(name)) || off + 4 > n)
		return false;
	type = be16(msg + off);
	for (size_t i = 0; i < sizeof(qtypes) / sizeof(qtypes[0]); i++)
		if (qtypes[i].type == type)
			tname = qtypes[i].name;
	if (!tname) {
		snprintf(tbuf, sizeof(tbuf), "TYPE%u", type);
		tname = tbuf;
	}
	snprintf(raw, sizeof(raw), "%s %s", name, tname);
	l7_text(key, keycap, raw, strlen(raw));
	l7_text(detail, detcap, raw, strlen(raw));
	return true;
}

static bool dns_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port)
{
	uint16_t id, qd, an;
	bool resp;
	int rcode;
	char key[L7_ENDPOINT_MAX], det[L7_DETAIL_MAX];
	const uint8_t *m = buf;
	size_t n = cap;

	if (server_port != 53 && server_port != 5353)
		return false;
	/* TCP: a length prefix. */
	if (n >= 2 + HDR && be16(m) == n - 2) {
		m += 2;
		n -= 2;
	}
	if (!parse(m, n, &id, &resp, &rcode, key, sizeof(key), det, sizeof(det)))
		return false;
	qd = be16(m + 4);
	an = be16(m + 6);
	return qd == 1 && (resp || an == 0);
}

static int dns_is_request(const uint8_t *buf, size_t n, bool udp)
{
	const uint8_t *m = udp ? buf : buf + 2;

	if (n < (size_t)(m - buf) + HDR)
		return -1;
	return !(m[2] & 0x80);
}

struct dns_state {
	bool have; /* a TCP message at hand was parsed */
	uint16_t id[2];
	bool resp[2];
	int rcode[2];
	char key[2][L7_ENDPOINT_MAX];
	char detail[2][L7_DETAIL_MAX];
	bool ok[2];
};

static void message(struct l7_parser *p, bool req, uint16_t id, int rcode, const char *key,
		    const char *detail, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct l7_resp r;
	struct l7_req *rq;

	l7_resp_init(&r, true, start, bytes);
	if (req) {
		rq = l7_request(p, start, end, bytes);
		if (!rq)
			return;
		rq->id = id;
		snprintf(rq->endpoint, sizeof(rq->endpoint), "%s", key);
		snprintf(rq->detail, sizeof(rq->detail), "%s", detail);
		return;
	}
	r.status = rcode;
	r.error = rcode != 0;
	if (rcode)
		snprintf(r.errmsg, sizeof(r.errmsg), "%s",
			 rcode < (int)(sizeof(rcodes) / sizeof(rcodes[0])) ? rcodes[rcode] : "RCODE");
	l7_resp_finish_id(p, &r, end, id);
}

static int dns_datagram(struct l7_parser *p, bool req, const uint8_t *buf, size_t cap, size_t len,
			uint64_t ts)
{
	char key[L7_ENDPOINT_MAX], detail[L7_DETAIL_MAX];
	uint16_t id;
	bool resp;
	int rcode;

	if (!parse(buf, cap, &id, &resp, &rcode, key, sizeof(key), detail, sizeof(detail)) ||
	    resp == req)
		return -EPROTO;
	message(p, req, id, rcode, key, detail, ts, ts, len);
	return 0;
}

static enum l7_step_rc dns_step(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
				struct l7_step *out)
{
	struct dns_state *st = p->state;
	size_t len, have;

	if (n < 2 + HDR)
		return STEP_MORE;
	len = be16(buf);
	if (len < HDR)
		return STEP_BAD;
	if (l7_wait(p, n, 2 + (uint64_t)len))
		return STEP_MORE;
	have = n - 2 < len ? n - 2 : len;
	st->ok[req] = parse(buf + 2, have, &st->id[req], &st->resp[req], &st->rcode[req],
			    st->key[req], sizeof(st->key[req]), st->detail[req],
			    sizeof(st->detail[req]));
	if (!st->ok[req] || st->resp[req] == req)
		return STEP_BAD;
	out->used = 2 + have;
	out->skip = len - have;
	out->done = true;
	return STEP_OK;
}

static void dns_end(struct l7_parser *p, bool req, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct dns_state *st = p->state;

	if (st->ok[req])
		message(p, req, st->id[req], st->rcode[req], st->key[req], st->detail[req], start,
			end, bytes);
}

static void dns_lost(struct l7_parser *p, bool req)
{
	struct dns_state *st = p->state;

	st->ok[req] = false;
}

const struct l7_ops l7_dns_ops = {
	.infer = dns_infer,
	.state_size = sizeof(struct dns_state),
	.is_request = dns_is_request,
	.step = dns_step,
	.end = dns_end,
	.lost = dns_lost,
	.datagram = dns_datagram,
};
