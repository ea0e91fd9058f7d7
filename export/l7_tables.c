#include "l7_tables.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "export/jsonio.h" /* before jansson.h, whose json_is_number is a macro */
#include <jansson.h>

#include "export/prom.h"
#include "model/sanitize.h"
#include "util/duration.h"

#define L7_JSON_FORMAT "galatop-l7"
#define L7_JSON_VERSION 1

void l7_fmt_ns(uint64_t ns, char *buf, size_t cap, bool dash)
{
	if (!ns && dash)
		snprintf(buf, cap, "-");
	else
		duration_format((double)ns, buf, cap);
}

void l7_fmt_count(double v, char *buf, size_t cap)
{
	if (v < 1e4)
		snprintf(buf, cap, v == floor(v) ? "%.0f" : "%.1f", v);
	else if (v < 1e6)
		snprintf(buf, cap, "%.1fk", v / 1e3);
	else if (v < 1e9)
		snprintf(buf, cap, "%.1fM", v / 1e6);
	else
		snprintf(buf, cap, "%.1fG", v / 1e9);
}

void l7_session_peer(const struct l7_session *s, char *buf, size_t cap)
{
	char ip[64];

	if (l7_l4_unix(s->key.l4_role)) {
		if (s->key.peer_pid)
			snprintf(buf, cap, "unix:%s pid %u", s->key.path, s->key.peer_pid);
		else
			snprintf(buf, cap, "unix:%s", s->key.path);
	} else if (s->key.l7_role == L7_ROLE_SERVER) {
		l7_addr_str(s->key.client_ip, s->key.v6, ip, sizeof(ip));
		snprintf(buf, cap, "%s", ip);
	} else {
		l7_addr_str(s->key.server_ip, s->key.v6, ip, sizeof(ip));
		snprintf(buf, cap, s->key.v6 ? "[%s]:%u" : "%s:%u", ip, s->key.server_port);
	}
}

/* --- JSON ------------------------------------------------------------------------------ */

static json_t *hist_json(const struct hist *h)
{
	json_t *b = json_array();
	unsigned idx = 0, bucket;
	uint64_t count;

	while (hist_next(h, &idx, &bucket, &count)) {
		uint64_t lo, hi;

		hist_bucket_range(bucket, &lo, &hi);
		json_array_append_new(
		    b, json_pack("[III]", (json_int_t)lo, (json_int_t)hi, (json_int_t)count));
	}
	return json_pack("{sIsIsIsIso}", "count", (json_int_t)h->count, "sum", (json_int_t)h->sum,
			 "min", (json_int_t)h->min, "max", (json_int_t)h->max, "buckets", b);
}

/* The metrics every row has, in gala-gopher's names; rates over secs. */
static void stats_json(json_t *o, const struct l7_stats *st, double secs, bool segs)
{
	double span = secs > 0 ? secs : l7_stats_span(st);

	json_object_set_new(o, "bytes_sent", json_integer((json_int_t)st->bytes_sent));
	json_object_set_new(o, "bytes_recv", json_integer((json_int_t)st->bytes_recv));
	if (segs) {
		json_object_set_new(o, "segs_sent", json_integer((json_int_t)st->segs_sent));
		json_object_set_new(o, "segs_recv", json_integer((json_int_t)st->segs_recv));
	}
	json_object_set_new(o, "throughput_req",
			    json_real(span > 0 ? (double)st->req_count / span : 0));
	json_object_set_new(o, "throughput_resp",
			    json_real(span > 0 ? (double)st->resp_count / span : 0));
	json_object_set_new(o, "req_count", json_integer((json_int_t)st->req_count));
	json_object_set_new(o, "resp_count", json_integer((json_int_t)st->resp_count));
	json_object_set_new(o, "latency_avg",
			    json_integer((json_int_t)llround(hist_mean(&st->lat))));
	json_object_set_new(o, "latency_sum", json_integer((json_int_t)st->lat.sum));
	json_object_set_new(o, "latency_max", json_integer((json_int_t)st->lat.max));
	json_object_set_new(o, "latency_p50",
			    json_integer((json_int_t)hist_quantile(&st->lat, 0.50)));
	json_object_set_new(o, "latency_p90",
			    json_integer((json_int_t)hist_quantile(&st->lat, 0.90)));
	json_object_set_new(o, "latency_p99",
			    json_integer((json_int_t)hist_quantile(&st->lat, 0.99)));
	json_object_set_new(o, "err_ratio", json_real(l7_stats_err_ratio(st)));
	json_object_set_new(o, "err_count", json_integer((json_int_t)st->err_count));
	json_object_set_new(o, "err_4xx", json_integer((json_int_t)st->err_4xx));
	json_object_set_new(o, "err_5xx", json_integer((json_int_t)st->err_5xx));
	json_object_set_new(o, "first_ns", json_integer((json_int_t)st->first_ns));
	json_object_set_new(o, "last_ns", json_integer((json_int_t)st->last_ns));
	json_object_set_new(o, "latency_hist", hist_json(&st->lat));
}

static json_t *record_json(const struct l7_record *r)
{
	return json_pack("{sssIsIsIsIsIsIsisbsbssssss}", "protocol", l7_proto_str(r->proto),
			 "req_start_ns", (json_int_t)r->req_start_ns, "req_end_ns",
			 (json_int_t)r->req_end_ns, "resp_start_ns", (json_int_t)r->resp_start_ns,
			 "resp_end_ns", (json_int_t)r->resp_end_ns, "req_bytes",
			 (json_int_t)r->req_bytes, "resp_bytes", (json_int_t)r->resp_bytes,
			 "status", r->status, "error", r->error, "no_response", r->no_response,
			 "endpoint", r->endpoint, "detail", r->detail, "errmsg", r->errmsg);
}

/* The peer of session s into o: addresses and port, or a Unix-domain socket's path and the
 * peer's pid. */
static void peer_json(json_t *o, const struct l7_session *s)
{
	char cip[64], sip[64];

	if (l7_l4_unix(s->key.l4_role)) {
		json_object_set_new(o, "path", json_string(s->key.path));
		json_object_set_new(o, "peer_pid", json_integer(s->key.peer_pid));
		return;
	}
	l7_addr_str(s->key.client_ip, s->key.v6, cip, sizeof(cip));
	l7_addr_str(s->key.server_ip, s->key.v6, sip, sizeof(sip));
	json_object_set_new(o, "client_ip", json_string(cip));
	json_object_set_new(o, "server_ip", json_string(sip));
	json_object_set_new(o, "server_port", json_integer(s->key.server_port));
}

static json_t *table_json(const struct l7_table *t, double secs)
{
	json_t *root = json_object(), *sessions = json_array(), *endpoints = json_array();
	json_t *pairs = json_array();

	json_object_set_new(root, "format", json_string(L7_JSON_FORMAT));
	json_object_set_new(root, "version", json_integer(L7_JSON_VERSION));
	json_object_set_new(root, "duration_s", json_real(secs));
	json_object_set_new(root, "undecoded_headers",
			    json_integer((json_int_t)l7_table__undecoded(t)));
	for (size_t i = 0; i < l7_table__nsessions(t); i++) {
		const struct l7_session *s = l7_table__get_session(t, i);
		json_t *o;

		o = json_pack("{sIsssIsssssssi}", "tgid", (json_int_t)s->key.tgid, "comm",
			      s->comm, "cgroup_id", (json_int_t)s->cgroup_id, "l4_role",
			      l7_l4_str(s->key.l4_role), "l7_role", l7_role_str(s->key.l7_role),
			      "protocol", l7_proto_str(s->key.proto), "ssl", s->key.ssl);
		peer_json(o, s);
		if (s->container[0])
			json_object_set_new(o, "container", json_string(s->container));
		if (s->pod[0])
			json_object_set_new(o, "pod", json_string(s->pod));
		stats_json(o, &s->st, secs, s->key.l4_role == L7_L4_TCP);
		json_array_append_new(sessions, o);
	}
	for (size_t i = 0; i < l7_table__nendpoints(t); i++) {
		const struct l7_endpoint *e = l7_table__get_endpoint(t, i);
		json_t *o = json_pack("{sssssss[]}", "protocol", l7_proto_str(e->proto), "l7_role",
				      l7_role_str(e->l7_role), "endpoint", e->name, "slowest");
		json_t *slow = json_object_get(o, "slowest");

		stats_json(o, &e->st, secs, false);
		for (size_t k = 0; k < e->nslow; k++) {
			const struct l7_slow *sl = &e->slow[k];
			json_t *so = record_json(&sl->rec), *stack = json_array();
			const char *p = sl->stack;

			json_object_set_new(so, "session", json_integer(sl->session));
			json_object_set_new(so, "tid", json_integer(sl->tid));
			json_object_set_new(
			    so, "latency",
			    json_integer((json_int_t)(sl->rec.resp_end_ns - sl->rec.req_start_ns)));
			while (p && *p) {
				size_t n = strcspn(p, "\n");

				json_array_append_new(stack, json_stringn(p, n));
				p += n + (p[n] == '\n');
			}
			json_object_set_new(so, "stack", stack);
			json_array_append_new(slow, so);
		}
		json_array_append_new(endpoints, o);
	}
	for (size_t i = 0; i < l7_table__npairs(t); i++) {
		const struct l7_pair *p = l7_table__get_pair(t, i);
		json_t *o = json_pack("{sisi}", "session", p->session, "endpoint", p->endpoint);

		stats_json(o, &p->st, secs, false);
		json_array_append_new(pairs, o);
	}
	json_object_set_new(root, "sessions", sessions);
	json_object_set_new(root, "endpoints", endpoints);
	json_object_set_new(root, "pairs", pairs);
	return root;
}

int l7_json_write(FILE *f, const struct l7_table *t, double secs, int indent)
{
	json_t *root = table_json(t, secs);
	locale_t old, c = json_c_locale_begin(&old);
	int ret;

	if (!root) {
		json_c_locale_end(c, old);
		return -ENOMEM;
	}
	ret = json_dumpf(root, f,
			 (indent ? JSON_INDENT(indent) : JSON_COMPACT) | JSON_REAL_PRECISION(10));
	if (!ret && indent)
		ret = fputc('\n', f) == EOF;
	json_decref(root);
	json_c_locale_end(c, old);
	return ret ? -EIO : 0;
}

char *l7_json_text(const struct l7_table *t, double secs)
{
	json_t *root = table_json(t, secs);
	locale_t old, c = json_c_locale_begin(&old);
	char *s = root ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;

	json_decref(root);
	json_c_locale_end(c, old);
	return s;
}

bool l7_json_sniff(const char *head, size_t len)
{
	size_t i = 0;

	while (i < len && (head[i] == ' ' || head[i] == '\n' || head[i] == '\t' || head[i] == '\r'))
		i++;
	if (i == len || head[i] != '{')
		return false;
	len = len - i > 256 ? 256 : len - i;
	return memmem(head + i, len, "\"" L7_JSON_FORMAT "\"", strlen(L7_JSON_FORMAT) + 2) != NULL;
}

/* --- loading --------------------------------------------------------------------------- */

struct loader {
	const char *name;
	char *err;
	size_t errlen;
	bool failed;
};

static int bad(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct loader *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->failed)
		return -EINVAL;
	l->failed = true;
	n = snprintf(l->err, l->errlen, "%s: ", l->name);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < l->errlen)
		vsnprintf(l->err + n, l->errlen - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int get_u64(struct loader *l, json_t *o, const char *key, const char *where, uint64_t *v)
{
	json_t *x = json_object_get(o, key);

	if (!x) {
		*v = 0;
		return 0; /* absent counters are zero: files from other writers stay readable */
	}
	if (!json_is_integer(x) || json_integer_value(x) < 0)
		return bad(l, "%s: \"%s\" is not a non-negative integer", where, key);
	*v = (uint64_t)json_integer_value(x);
	return 0;
}

/* Copies the string o[key] sanitized into buf; "" when absent. */
static int get_str(struct loader *l, json_t *o, const char *key, const char *where, char *buf,
		   size_t cap)
{
	json_t *x = json_object_get(o, key);
	char tmp[SANITIZE_MAX(512) + 1];
	size_t len, n;

	buf[0] = 0;
	if (!x)
		return 0;
	if (!json_is_string(x))
		return bad(l, "%s: \"%s\" is not a string", where, key);
	len = json_string_length(x);
	n = sanitize_text(json_string_value(x), len > 512 ? 512 : len, tmp);
	snprintf(buf, cap, "%.*s", (int)n, tmp);
	return 0;
}

static int hist_load(struct loader *l, json_t *o, const char *where, struct hist *h)
{
	json_t *b, *e;
	size_t i;
	uint64_t count, sum, min, max, total = 0;

	if (!o)
		return 0;
	if (!json_is_object(o))
		return bad(l, "%s: latency_hist is not an object", where);
	if (get_u64(l, o, "count", where, &count) || get_u64(l, o, "sum", where, &sum) ||
	    get_u64(l, o, "min", where, &min) || get_u64(l, o, "max", where, &max))
		return -EINVAL;
	b = json_object_get(o, "buckets");
	if (b && !json_is_array(b))
		return bad(l, "%s: latency_hist.buckets is not an array", where);
	json_array_foreach(b, i, e)
	{
		json_int_t lo, hi, n;

		if (json_unpack(e, "[III]", &lo, &hi, &n) || lo < 0 || hi < lo || n < 0)
			return bad(l, "%s: latency_hist.buckets[%zu] is not [lo, hi, count]", where,
				   i);
		if (hist_index((uint64_t)lo) != hist_index((uint64_t)hi))
			return bad(l, "%s: latency_hist.buckets[%zu] is not one bucket", where, i);
		if (hist_add_bucket(h, hist_index((uint64_t)lo), (uint64_t)n, 0))
			return -ENOMEM;
		total += (uint64_t)n;
	}
	if (total != count)
		return bad(l, "%s: latency_hist.count %llu is not the sum of its buckets (%llu)",
			   where, (unsigned long long)count, (unsigned long long)total);
	if (count) {
		h->sum = sum;
		h->min = min;
		h->max = max;
	}
	return 0;
}

static int stats_load(struct loader *l, json_t *o, const char *where, struct l7_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (get_u64(l, o, "req_count", where, &st->req_count) ||
	    get_u64(l, o, "resp_count", where, &st->resp_count) ||
	    get_u64(l, o, "err_count", where, &st->err_count) ||
	    get_u64(l, o, "err_4xx", where, &st->err_4xx) ||
	    get_u64(l, o, "err_5xx", where, &st->err_5xx) ||
	    get_u64(l, o, "bytes_sent", where, &st->bytes_sent) ||
	    get_u64(l, o, "bytes_recv", where, &st->bytes_recv) ||
	    get_u64(l, o, "segs_sent", where, &st->segs_sent) ||
	    get_u64(l, o, "segs_recv", where, &st->segs_recv) ||
	    get_u64(l, o, "first_ns", where, &st->first_ns) ||
	    get_u64(l, o, "last_ns", where, &st->last_ns))
		return -EINVAL;
	return hist_load(l, json_object_get(o, "latency_hist"), where, &st->lat);
}

static int enum_load(struct loader *l, json_t *o, const char *key, const char *where,
		     const char *const *names, size_t n, uint8_t *v)
{
	const char *s = json_string_value(json_object_get(o, key));

	for (size_t i = 0; s && i < n; i++)
		if (names[i] && !strcmp(s, names[i])) {
			*v = (uint8_t)i;
			return 0;
		}
	return bad(l, "%s: \"%s\" is missing or unknown", where, key);
}

/* The "protocol" of o, by the registry's names. */
static int proto_load(struct loader *l, json_t *o, const char *where, uint8_t *v)
{
	const char *s = json_string_value(json_object_get(o, "protocol"));
	int p = s ? l7_proto_parse(s) : -1;

	if (p <= 0)
		return bad(l, "%s: \"protocol\" is missing or unknown", where);
	*v = (uint8_t)p;
	return 0;
}

static int addr_load(struct loader *l, json_t *o, const char *key, const char *where,
		     uint8_t out[16], uint8_t *v6)
{
	const char *s = json_string_value(json_object_get(o, key));

	memset(out, 0, 16);
	if (s && inet_pton(AF_INET, s, out) == 1)
		return 0;
	if (s && inet_pton(AF_INET6, s, out) == 1) {
		*v6 = 1;
		return 0;
	}
	return bad(l, "%s: \"%s\" is not an IP address", where, key);
}

static const char *const role_names[] = {"unknown", "client", "server"};
static const char *const l4_names[] = {"tcp", "udp", "unix", "unix_dgram"};

static int session_load(struct loader *l, json_t *o, size_t i, struct l7_table *t)
{
	struct l7_session s;
	char where[64];
	uint64_t tgid, port, ssl, peer_pid;
	uint8_t v6a = 0, v6b = 0;
	int ret;

	snprintf(where, sizeof(where), "sessions[%zu]", i);
	memset(&s, 0, sizeof(s));
	if (!json_is_object(o))
		return bad(l, "%s is not an object", where);
	if (get_u64(l, o, "tgid", where, &tgid) || get_u64(l, o, "server_port", where, &port) ||
	    get_u64(l, o, "ssl", where, &ssl) || get_u64(l, o, "cgroup_id", where, &s.cgroup_id) ||
	    get_str(l, o, "comm", where, s.comm, sizeof(s.comm)) ||
	    get_str(l, o, "container", where, s.container, sizeof(s.container)) ||
	    get_str(l, o, "pod", where, s.pod, sizeof(s.pod)) ||
	    proto_load(l, o, where, &s.key.proto) ||
	    enum_load(l, o, "l7_role", where, role_names, 3, &s.key.l7_role) ||
	    enum_load(l, o, "l4_role", where, l4_names, L7_L4_MAX, &s.key.l4_role))
		return -EINVAL;
	if (l7_l4_unix(s.key.l4_role)) {
		if (get_str(l, o, "path", where, s.key.path, sizeof(s.key.path)) ||
		    get_u64(l, o, "peer_pid", where, &peer_pid))
			return -EINVAL;
		if (peer_pid > UINT32_MAX)
			return bad(l, "%s: peer_pid out of range", where);
		s.key.peer_pid = (uint32_t)peer_pid;
	} else if (addr_load(l, o, "client_ip", where, s.key.client_ip, &v6a) ||
		   addr_load(l, o, "server_ip", where, s.key.server_ip, &v6b)) {
		return -EINVAL;
	}
	if (tgid > UINT32_MAX || port > 65535 || ssl > 1)
		return bad(l, "%s: tgid, server_port or ssl out of range", where);
	s.key.tgid = (uint32_t)tgid;
	s.key.server_port = (uint16_t)port;
	s.key.ssl = (uint8_t)ssl;
	s.key.v6 = v6a || v6b;
	s.ident_done = true;
	ret = stats_load(l, o, where, &s.st);
	ret = ret ?: l7_table__load_session(t, &s);
	l7_stats_reset(&s.st);
	if (ret == -ENOMEM)
		return bad(l, "out of memory");
	return ret;
}

static int slow_load(struct loader *l, json_t *o, const char *where, size_t nsessions,
		     struct l7_slow *sl, char *stack, size_t stack_cap)
{
	struct l7_record *r = &sl->rec;
	uint64_t session, tid, status;
	json_t *st = json_object_get(o, "stack"), *e;
	size_t i, used = 0;

	memset(sl, 0, sizeof(*sl));
	if (!json_is_object(o))
		return bad(l, "%s is not an object", where);
	if (get_u64(l, o, "session", where, &session) || get_u64(l, o, "tid", where, &tid) ||
	    get_u64(l, o, "req_start_ns", where, &r->req_start_ns) ||
	    get_u64(l, o, "req_end_ns", where, &r->req_end_ns) ||
	    get_u64(l, o, "resp_start_ns", where, &r->resp_start_ns) ||
	    get_u64(l, o, "resp_end_ns", where, &r->resp_end_ns) ||
	    get_u64(l, o, "req_bytes", where, &r->req_bytes) ||
	    get_u64(l, o, "resp_bytes", where, &r->resp_bytes) ||
	    get_u64(l, o, "status", where, &status) ||
	    get_str(l, o, "endpoint", where, r->endpoint, sizeof(r->endpoint)) ||
	    get_str(l, o, "detail", where, r->detail, sizeof(r->detail)) ||
	    get_str(l, o, "errmsg", where, r->errmsg, sizeof(r->errmsg)))
		return -EINVAL;
	if (session >= nsessions || tid > UINT32_MAX || status > 0x7fffffff ||
	    r->resp_end_ns < r->req_start_ns)
		return bad(l, "%s: session, tid, status or times out of range", where);
	sl->session = (uint32_t)session;
	sl->tid = (uint32_t)tid;
	r->status = (int)status;
	r->error = json_is_true(json_object_get(o, "error"));
	r->no_response = false;
	stack[0] = 0;
	if (st && !json_is_array(st))
		return bad(l, "%s: stack is not an array", where);
	json_array_foreach(st, i, e)
	{
		const char *s = json_string_value(e);

		if (!s)
			return bad(l, "%s: stack[%zu] is not a string", where, i);
		if (used + strlen(s) + 2 >= stack_cap)
			break;
		used +=
		    (size_t)snprintf(stack + used, stack_cap - used, "%s%s", used ? "\n" : "", s);
	}
	sl->stack = stack[0] ? stack : NULL;
	return 0;
}

static int endpoint_load(struct loader *l, json_t *o, size_t i, struct l7_table *t,
			 size_t session_base, size_t nsessions)
{
	struct l7_endpoint *e = calloc(1, sizeof(*e));
	char where[64], stacks[L7_SLOW_PER_ENDPOINT][2048];
	json_t *slow = json_object_get(o, "slowest"), *x;
	size_t k;
	int ret;

	if (!e)
		return bad(l, "out of memory");
	snprintf(where, sizeof(where), "endpoints[%zu]", i);
	if (!json_is_object(o)) {
		free(e);
		return bad(l, "%s is not an object", where);
	}
	ret = proto_load(l, o, where, &e->proto);
	ret = ret ?: enum_load(l, o, "l7_role", where, role_names, 3, &e->l7_role);
	ret = ret ?: get_str(l, o, "endpoint", where, e->name, sizeof(e->name));
	ret = ret ?: stats_load(l, o, where, &e->st);
	if (!ret && slow && !json_is_array(slow))
		ret = bad(l, "%s: slowest is not an array", where);
	json_array_foreach(slow, k, x)
	{
		char sw[96];

		if (ret || k >= L7_SLOW_PER_ENDPOINT)
			break;
		snprintf(sw, sizeof(sw), "%s.slowest[%zu]", where, k);
		ret = slow_load(l, x, sw, nsessions, &e->slow[k], stacks[k], sizeof(stacks[k]));
		e->slow[k].session += (uint32_t)session_base;
		e->slow[k].rec.proto = (enum l7_proto)e->proto;
		e->nslow = k + 1;
	}
	if (!ret && l7_table__load_endpoint(t, e))
		ret = bad(l, "out of memory");
	l7_stats_reset(&e->st);
	free(e);
	return ret;
}

int l7_json_load(const char *text, size_t len, const char *name, struct l7_table *t, double *secs,
		 char *err, size_t errlen)
{
	struct loader l = {name, err, errlen, false};
	json_error_t je;
	locale_t old, c = json_c_locale_begin(&old);
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je), *arr, *o;
	size_t i, base = l7_table__nsessions(t), ebase = l7_table__nendpoints(t), nsess;
	int ret = 0;

	json_c_locale_end(c, old);
	if (!root) {
		char shown[SANITIZE_MAX(JSON_ERROR_TEXT_LENGTH)];

		sanitize_cstr(je.text, shown, sizeof(shown));
		return bad(&l, "not JSON: %s (line %d)", shown, je.line);
	}
	if (!json_is_object(root) || !json_is_array(json_object_get(root, "sessions")) ||
	    !json_is_array(json_object_get(root, "endpoints"))) {
		json_decref(root);
		return bad(&l, "not galatop L7 tables (no \"sessions\" and \"endpoints\" arrays)");
	}
	if (secs) {
		json_t *d = json_object_get(root, "duration_s");

		*secs = json_is_number(d) && json_number_value(d) >= 0 ? json_number_value(d) : 0;
	}
	o = json_object_get(root, "undecoded_headers");
	if (json_is_integer(o) && json_integer_value(o) > 0)
		l7_table__add_undecoded(t, (uint64_t)json_integer_value(o));
	arr = json_object_get(root, "sessions");
	nsess = json_array_size(arr);
	json_array_foreach(arr, i, o)
	{
		if ((ret = session_load(&l, o, i, t)))
			goto out;
	}
	if (l7_table__nsessions(t) != base + nsess) {
		ret = bad(&l, "sessions: the same session twice");
		goto out;
	}
	arr = json_object_get(root, "endpoints");
	json_array_foreach(arr, i, o)
	{
		if ((ret = endpoint_load(&l, o, i, t, base, nsess)))
			goto out;
	}
	arr = json_object_get(root, "pairs");
	json_array_foreach(arr, i, o)
	{
		char where[64];
		uint64_t s, e;
		struct l7_stats st;

		snprintf(where, sizeof(where), "pairs[%zu]", i);
		if (!json_is_object(o)) {
			ret = bad(&l, "%s is not an object", where);
			goto out;
		}
		if ((ret = get_u64(&l, o, "session", where, &s)) ||
		    (ret = get_u64(&l, o, "endpoint", where, &e)))
			goto out;
		if (s >= nsess || e >= json_array_size(json_object_get(root, "endpoints"))) {
			ret = bad(&l, "%s: session or endpoint out of range", where);
			goto out;
		}
		if ((ret = stats_load(&l, o, where, &st))) {
			l7_stats_reset(&st);
			goto out;
		}
		ret = l7_table__load_pair(t, (uint32_t)(base + s), (uint32_t)(ebase + e), &st);
		l7_stats_reset(&st);
		if (ret) {
			ret = bad(&l, "%s: cannot be added", where);
			goto out;
		}
	}
out:
	json_decref(root);
	return ret;
}

/* --- per request ----------------------------------------------------------------------- */

json_t *l7_trace_json(const struct l7_session *s, const struct l7_record *r, uint32_t tid,
		      double timestamp)
{
	json_t *o = record_json(r);
	if (!o)
		return NULL;
	json_object_set_new(o, "timestamp", json_real(timestamp));
	json_object_set_new(o, "tgid", json_integer(s->key.tgid));
	json_object_set_new(o, "tid", json_integer(tid));
	json_object_set_new(o, "comm", json_string(s->comm));
	peer_json(o, s);
	json_object_set_new(o, "l4_role", json_string(l7_l4_str(s->key.l4_role)));
	json_object_set_new(o, "l7_role", json_string(l7_role_str(s->key.l7_role)));
	json_object_set_new(o, "ssl", json_integer(s->key.ssl));
	json_object_set_new(o, "latency",
			    json_integer(r->no_response || r->resp_end_ns < r->req_start_ns
					     ? 0
					     : (json_int_t)(r->resp_end_ns - r->req_start_ns)));
	if (s->container[0])
		json_object_set_new(o, "container", json_string(s->container));
	if (s->pod[0])
		json_object_set_new(o, "pod", json_string(s->pod));
	return o;
}

int l7_jsonl_write(FILE *f, const struct l7_session *s, const struct l7_record *r, uint32_t tid,
		   uint64_t ts0_ns, double wall0)
{
	json_t *o = l7_trace_json(s, r, tid,
				  wall0 + ((double)r->req_start_ns - (double)ts0_ns) / 1e9);
	locale_t old, c;
	int ret;

	if (!o)
		return -ENOMEM;
	c = json_c_locale_begin(&old);
	ret = json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(16));
	json_c_locale_end(c, old);
	json_decref(o);
	if (ret || fputc('\n', f) == EOF)
		return -EIO;
	return 0;
}

/* --- Prometheus ------------------------------------------------------------------------ */

/* Latency bucket bounds in ns: 1-2.5-5 steps from 1 us to 60 s. */
static const double lat_le[] = {1e3,   2.5e3, 5e3,   1e4,   2.5e4, 5e4,	  1e5,	2.5e5,
				5e5,   1e6,   2.5e6, 5e6,   1e7,   2.5e7, 5e7,	1e8,
				2.5e8, 5e8,   1e9,   2.5e9, 5e9,   1e10,  3e10, 6e10};

enum { M_COUNTER, M_GAUGE };

struct metric {
	const char *name, *help;
	int type;
	double (*get)(const struct l7_stats *st, double secs);
	bool tcp_only;
};

#define GETTER(fn, expr)                                                                           \
	static double fn(const struct l7_stats *st, double secs)                                   \
	{                                                                                          \
		(void)secs;                                                                        \
		return (double)(expr);                                                             \
	}
GETTER(m_bytes_sent, st->bytes_sent)
GETTER(m_bytes_recv, st->bytes_recv)
GETTER(m_segs_sent, st->segs_sent)
GETTER(m_segs_recv, st->segs_recv)
GETTER(m_tput_req, secs > 0 ? (double)st->req_count / secs : 0)
GETTER(m_tput_resp, secs > 0 ? (double)st->resp_count / secs : 0)
GETTER(m_req, st->req_count)
GETTER(m_resp, st->resp_count)
GETTER(m_lat_avg, hist_mean(&st->lat))
GETTER(m_lat_sum, st->lat.sum)
GETTER(m_lat_max, st->lat.max)
GETTER(m_p50, hist_quantile(&st->lat, 0.5))
GETTER(m_p90, hist_quantile(&st->lat, 0.9))
GETTER(m_p99, hist_quantile(&st->lat, 0.99))
GETTER(m_err_ratio, l7_stats_err_ratio(st))
GETTER(m_err, st->err_count)

static const struct metric metrics[] = {
    {"bytes_sent", "Bytes the traced process sent on the session", M_COUNTER, m_bytes_sent, false},
    {"bytes_recv", "Bytes the traced process received on the session", M_COUNTER, m_bytes_recv,
     false},
    {"segs_sent", "TCP segments sent", M_COUNTER, m_segs_sent, true},
    {"segs_recv", "TCP segments received", M_COUNTER, m_segs_recv, true},
    {"throughput_req", "Requests per second over the recording", M_GAUGE, m_tput_req, false},
    {"throughput_resp", "Responses per second over the recording", M_GAUGE, m_tput_resp, false},
    {"req_count", "Requests", M_COUNTER, m_req, false},
    {"resp_count", "Responses", M_COUNTER, m_resp, false},
    {"latency_avg", "Mean latency, request's first byte to response's last, ns", M_GAUGE, m_lat_avg,
     false},
    {"latency_sum", "Sum of latencies, ns", M_COUNTER, m_lat_sum, false},
    {"latency_max", "Largest latency, ns", M_GAUGE, m_lat_max, false},
    {"latency_p50", "Median latency, ns", M_GAUGE, m_p50, false},
    {"latency_p90", "90th percentile latency, ns", M_GAUGE, m_p90, false},
    {"latency_p99", "99th percentile latency, ns", M_GAUGE, m_p99, false},
    {"err_ratio", "Errors per request", M_GAUGE, m_err_ratio, false},
    {"err_count", "Errors: HTTP 4xx/5xx, Redis error replies, SQL errors, DNS RCODE != 0",
     M_COUNTER, m_err, false},
};

/* The labels of a session, gala-gopher's (a Unix-domain session has path and peer_pid in
 * place of client_ip, server_ip and server_port; with container and pod when the style asks,
 * and the style's own); the strings live in *b. */
struct session_labels {
	char tgid[16], cip[64], sip[64], port[16], ssl[4];
	struct prom_label l[PROM_MAX_LABELS];
	size_t n;
};

static void session_labels(struct session_labels *b, const struct l7_session *s,
			   const struct prom_style *st)
{
	bool uds = l7_l4_unix(s->key.l4_role);
	struct prom_label l[11];
	size_t n = 0;

	snprintf(b->tgid, sizeof(b->tgid), "%u", s->key.tgid);
	snprintf(b->port, sizeof(b->port), "%u", uds ? s->key.peer_pid : s->key.server_port);
	snprintf(b->ssl, sizeof(b->ssl), "%u", s->key.ssl);
	l7_addr_str(s->key.client_ip, s->key.v6, b->cip, sizeof(b->cip));
	l7_addr_str(s->key.server_ip, s->key.v6, b->sip, sizeof(b->sip));
	l[n++] = (struct prom_label){"tgid", b->tgid};
	l[n++] = (struct prom_label){"comm", s->comm};
	if (uds) {
		l[n++] = (struct prom_label){"path", s->key.path};
		l[n++] = (struct prom_label){"peer_pid", b->port};
	} else {
		l[n++] = (struct prom_label){"client_ip", b->cip};
		l[n++] = (struct prom_label){"server_ip", b->sip};
		l[n++] = (struct prom_label){"server_port", b->port};
	}
	l[n++] = (struct prom_label){"l4_role", l7_l4_str(s->key.l4_role)};
	l[n++] = (struct prom_label){"l7_role", l7_role_str(s->key.l7_role)};
	l[n++] = (struct prom_label){"protocol", l7_proto_str(s->key.proto)};
	l[n++] = (struct prom_label){"ssl", b->ssl};
	if (st && st->ident) {
		l[n++] = (struct prom_label){"container", s->container};
		l[n++] = (struct prom_label){"pod", s->pod};
	}
	b->n = prom_labels(st, l, n, b->l);
}

int l7_prom_write(FILE *f, const struct l7_table *t, double secs)
{
	return l7_prom_write_style(f, t, secs, NULL);
}

int l7_prom_write_style(FILE *f, const struct l7_table *t, double secs,
			const struct prom_style *style)
{
	size_t ns = l7_table__nsessions(t), ne = l7_table__nendpoints(t);
	struct session_labels b;
	char base[96], name[104];

	for (size_t m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		const char *type = metrics[m].type == M_COUNTER ? "counter" : "gauge";

		snprintf(base, sizeof(base), "gala_gopher_l7_%s", metrics[m].name);
		prom_name(style, base, type, name, sizeof(name));
		prom_family(f, name, type, metrics[m].help);
		for (size_t i = 0; i < ns; i++) {
			const struct l7_session *s = l7_table__get_session(t, i);

			if (metrics[m].tcp_only && s->key.l4_role != L7_L4_TCP)
				continue;
			session_labels(&b, s, style);
			prom_sample(f, name, b.l, b.n, metrics[m].get(&s->st, secs));
		}
	}
	prom_family(f, "gala_gopher_l7_latency", "histogram",
		    "Latency, request's first byte to response's last, ns");
	for (size_t i = 0; i < ns; i++) {
		const struct l7_session *s = l7_table__get_session(t, i);

		session_labels(&b, s, style);
		prom_histogram(f, "gala_gopher_l7_latency", b.l, b.n, &s->st.lat, lat_le,
			       sizeof(lat_le) / sizeof(lat_le[0]), 1);
	}
	/* Endpoints: galatop's own rows, keyed by protocol, role and L7 key. */
	for (size_t m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		const char *type = metrics[m].type == M_COUNTER ? "counter" : "gauge";

		if (metrics[m].tcp_only)
			continue;
		snprintf(base, sizeof(base), "galatop_l7_endpoint_%s", metrics[m].name);
		prom_name(style, base, type, name, sizeof(name));
		prom_family(f, name, type, metrics[m].help);
		for (size_t i = 0; i < ne; i++) {
			const struct l7_endpoint *e = l7_table__get_endpoint(t, i);
			struct prom_label l[] = {
			    {"protocol", l7_proto_str(e->proto)},
			    {"l7_role", l7_role_str(e->l7_role)},
			    {"endpoint", e->name},
			}, all[PROM_MAX_LABELS];

			prom_sample(f, name, all, prom_labels(style, l, 3, all),
				    metrics[m].get(&e->st, secs));
		}
	}
	return ferror(f) ? -EIO : 0;
}

/* --- text ------------------------------------------------------------------------------ */

static void text_row(FILE *f, const char *proto, const char *role, const char *what,
		     const struct l7_stats *st, double secs)
{
	char rate[16], p50[16], p90[16], p99[16], max[16], sent[16], recv[16];
	double span = secs > 0 ? secs : l7_stats_span(st);

	l7_fmt_count(span > 0 ? (double)st->req_count / span : 0, rate, sizeof(rate));
	l7_fmt_ns(hist_quantile(&st->lat, 0.5), p50, sizeof(p50), true);
	l7_fmt_ns(hist_quantile(&st->lat, 0.9), p90, sizeof(p90), true);
	l7_fmt_ns(hist_quantile(&st->lat, 0.99), p99, sizeof(p99), true);
	l7_fmt_ns(st->lat.max, max, sizeof(max), true);
	l7_fmt_count((double)st->bytes_sent, sent, sizeof(sent));
	l7_fmt_count((double)st->bytes_recv, recv, sizeof(recv));
	fprintf(f, "%-6s %-6s %10llu %8s %6.2f %8s %8s %8s %8s %7s %7s  %s\n", proto, role,
		(unsigned long long)st->req_count, rate, 100 * l7_stats_err_ratio(st), p50, p90,
		p99, max, sent, recv, what);
}

int l7_text_write(FILE *f, const struct l7_table *t, double secs)
{
	static const char head[] = "%-6s %-6s %10s %8s %6s %8s %8s %8s %8s %7s %7s  %s\n";

	fprintf(f, "# endpoints\n");
	fprintf(f, head, "PROTO", "ROLE", "REQS", "REQ/S", "ERR%", "P50", "P90", "P99", "MAX",
		"SENT", "RECV", "ENDPOINT");
	for (size_t i = 0; i < l7_table__nendpoints(t); i++) {
		const struct l7_endpoint *e = l7_table__get_endpoint(t, i);

		text_row(f, l7_proto_str(e->proto), l7_role_str(e->l7_role), e->name, &e->st, secs);
	}
	fprintf(f, "# sessions\n");
	fprintf(f, head, "PROTO", "ROLE", "REQS", "REQ/S", "ERR%", "P50", "P90", "P99", "MAX",
		"SENT", "RECV", "PROCESS PEER");
	for (size_t i = 0; i < l7_table__nsessions(t); i++) {
		const struct l7_session *s = l7_table__get_session(t, i);
		char what[256], peer[192], proto[16];

		l7_session_peer(s, peer, sizeof(peer));
		snprintf(what, sizeof(what), "%u/%s %s", s->key.tgid, s->comm, peer);
		snprintf(proto, sizeof(proto), "%s%s", l7_proto_str(s->key.proto),
			 s->key.ssl ? "+tls" : "");
		text_row(f, proto, l7_role_str(s->key.l7_role), what, &s->st, secs);
	}
	return ferror(f) ? -EIO : 0;
}
