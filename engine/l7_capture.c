/* The L7 capture of a session: the L7 probes (bpf/l7_probe), the connection tracker and the
 * session tables (model/l7), user stacks named through the session's symbol cache; used by
 * `galatop record --type l7` and by the live view's L7 pane. */
#include "l7_capture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/drain.h"
#include "bpf/l7_probe.h"
#include "model/l7/track.h"
#include "symbols/hmap.h"
#include "symbols/ident.h"
#include "util/clock.h"
#include "util/grow.h"

_Static_assert(L7_UNIX_PATH == L7_UNIX_PATH_MAX, "model/l7/track.h L7_UNIX_PATH mirrors bpf");

#define EXPIRE_EVERY_NS 10000000000ull /* look for idle connections every 10 s */
#define COUNT_EVERY_NS 250000000ull    /* requests counted in the kernel read 4 times a second */
#define BOUNDS_EVERY_NS 20000000ull    /* their slowness bounds moved at most every 20 ms */
#define IDLE_NS 300000000000ull	       /* a connection silent for 5 min has gone */

struct l7_capture {
	struct session *s;
	struct l7_probes *probes;
	struct l7_table *table;
	struct l7_track *track;
	uint64_t ts0_ns; /* monotonic time at open, with wall0 for the trace's timestamps */
	double wall0;
	uint64_t last_ts, next_expire;
	struct hmap *seen; /* processes whose maps were read */
	uint32_t last_tgid; /* the latest record's process (in seen): most follow one another */
	struct l7_probe_stats past; /* the counts of probes attached before, now detached */
	/* Requests counted in the kernel: on unless --no-l7-count or a per-request trace; the
	 * request keys named, with the slowness bound the kernel has for each. */
	bool count;
	uint64_t next_count, next_bounds;
	struct count_key {
		uint64_t h, slow_ns;
		uint32_t ep;
	} *keys;
	size_t nkeys, keys_cap;
	uint64_t *ep_slow; /* count_bounds' bound per endpoint number */
	size_t ep_slow_cap;
};

static void on_event(void *ctx, const struct l7_event *e, const uint8_t *data)
{
	struct l7_capture *en = ctx;
	struct l7_msg m;

	memset(&m, 0, sizeof(m));
	m.type = e->type == L7_EV_CLOSE	 ? L7_MSG_CLOSE
		 : e->type == L7_EV_PEER ? L7_MSG_PEER
					 : L7_MSG_DATA;
	m.tgid = e->tgid;
	m.tid = e->tid;
	m.fd = e->fd;
	m.gen = e->gen;
	m.ts_ns = e->ts_ns;
	m.start_ns = e->start_ns;
	m.len = e->len;
	m.cap = e->cap;
	m.cgroup_id = e->cgroup_id;
	m.dir = e->dir ? L7_DIR_RECV : L7_DIR_SEND;
	m.role = e->role == L7_KROLE_CLIENT   ? L7_ROLE_CLIENT
		 : e->role == L7_KROLE_SERVER ? L7_ROLE_SERVER
					      : L7_ROLE_UNKNOWN;
	m.hint = e->proto < L7_PROTO_MAX ? (enum l7_proto)e->proto : L7_UNKNOWN;
	m.ssl = e->flags & L7_EVF_SSL;
	m.udp = e->flags & L7_EVF_UDP;
	m.v6 = e->flags & L7_EVF_V6;
	m.uds = e->flags & L7_EVF_UNIX;
	m.peer_pid = e->peer_pid;
	m.segs_valid = e->flags & L7_EVF_SEGS;
	m.no_data = e->flags & L7_EVF_SENDFILE;
	m.lport = e->lport;
	m.rport = e->rport;
	memcpy(m.laddr, e->laddr, 16);
	memcpy(m.raddr, e->raddr, 16);
	m.segs_in = e->segs_in;
	m.segs_out = e->segs_out;
	m.stack_id = e->ustack_id;
	memcpy(m.comm, e->comm, sizeof(m.comm));
	m.comm[15] = 0;
	if (e->ts_ns > en->last_ts)
		en->last_ts = e->ts_ns;
	if (en->seen && e->tgid != en->last_tgid && !hmap__get(en->seen, &e->tgid, sizeof(e->tgid))) {
		/* Read a process's maps while it lives: its stacks may be named after it exits. */
		hmap__put(en->seen, &e->tgid, sizeof(e->tgid), en);
		sym_cache__process_load(en->s->sc, (int)e->tgid);
	}
	en->last_tgid = e->tgid;
	l7_track__msg(en->track, &m, data);
}

/* Names a user stack through the session's symbol cache, innermost frame first; frames
 * nothing names end the walk (past them a frame-pointer walk without frame pointers reads
 * garbage). 0 when not even the first frame has a name. */
static size_t name_stack(void *ctx, uint32_t tgid, int32_t stack_id, char *buf, size_t cap)
{
	struct l7_capture *en = ctx;
	uint64_t ips[64];
	size_t n = en->probes ? l7_probes__stack(en->probes, stack_id, ips, 64) : 0, used = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n && used + 2 < cap; i++) {
		struct sym_info si;

		if (sym_cache__user(en->s->sc, (int)tgid, ips[i], &si) || si.kind == FRAME_SPECIAL)
			break;
		used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? "\n" : "", si.name);
		if (used >= cap)
			used = cap - 1;
	}
	return used;
}

static void name_ident(void *ctx, uint32_t tgid, char *container, size_t ccap, char *pod,
		       size_t pcap)
{
	struct l7_capture *en = ctx;
	struct proc_ident id;

	if (ident_cache__lookup(en->s->ic, (int)tgid, &id))
		return;
	snprintf(container, ccap, "%s", id.container_name[0] ? id.container_name : id.container_id);
	snprintf(pod, pcap, "%s", id.pod_name[0] ? id.pod_name : id.pod_id);
}

static bool count_key(void *ctx, enum l7_proto p, const uint8_t *data, size_t len, uint64_t *h)
{
	(void)ctx;
	return l7c_request_copy(data, len, (__u8)p, (__u64 *)h);
}

static void count_conn(void *ctx, uint32_t tgid, int32_t fd, uint64_t gen, uint32_t sess)
{
	struct l7_capture *en = ctx;

	if (en->probes)
		l7_probes__count_conn(en->probes, tgid, fd, gen, sess);
}

static void count_endpoint(void *ctx, uint64_t h, uint32_t ep)
{
	struct l7_capture *en = ctx;
	struct count_key *k;

	if (ARRAY_GROW(en->keys, en->keys_cap, en->nkeys + 1))
		return;
	k = &en->keys[en->nkeys++];
	k->h = h;
	k->ep = ep;
	k->slow_ns = l7_track__count_slow(en->track, ep);
	if (en->probes)
		l7_probes__count_endpoint(en->probes, h, ep, k->slow_ns);
}

static const struct l7_count_ops count_ops = {count_key, count_conn, count_endpoint};

/* One (session, endpoint) pair's requests counted in the kernel since the last read. */
static void on_count(void *ctx, uint32_t sess, uint32_t ep, const struct l7_count_bucket *b,
		     size_t nb)
{
	struct l7_capture *en = ctx;
	struct l7_stats st = {0};

	for (size_t i = 0; i < nb; i++) {
		st.req_count += b[i].n;
		st.bytes_recv += b[i].bytes_recv;
		st.bytes_sent += b[i].bytes_sent;
		st.segs_recv += b[i].segs_recv;
		st.segs_sent += b[i].segs_sent;
		if (b[i].first_ns && (!st.first_ns || b[i].first_ns < st.first_ns))
			st.first_ns = b[i].first_ns;
		if (b[i].last_ns > st.last_ns)
			st.last_ns = b[i].last_ns;
		if (b[i].n)
			hist_add_bucket(&st.lat, b[i].bucket, b[i].n, b[i].lat_sum);
	}
	st.resp_count = st.req_count;
	l7_track__counted(en->track, sess, ep, &st);
	l7_stats_reset(&st);
}

/* Moves the kernel's slowness bounds of the request keys to their endpoints' slowest lists'
 * (answers slower than an endpoint's eighth slowest come as records): at each read, and as
 * records come in, so that a new key's answers stop coming as records soon after its list is
 * full. */
static void count_bounds(struct l7_capture *en)
{
	uint32_t neps = l7_track__count_endpoints(en->track);

	if (!en->probes || !en->count || ARRAY_GROW(en->ep_slow, en->ep_slow_cap, neps))
		return;
	/* Once per endpoint (many keys share one: /users/1, /users/2, ...), not per key. */
	for (uint32_t ep = 0; ep < neps; ep++)
		en->ep_slow[ep] = l7_track__count_slow(en->track, ep);
	for (size_t i = 0; i < en->nkeys; i++) {
		struct count_key *k = &en->keys[i];
		uint64_t slow = k->ep < neps ? en->ep_slow[k->ep] : UINT64_MAX;

		if (slow != k->slow_ns && !l7_probes__count_endpoint(en->probes, k->h, k->ep, slow))
			k->slow_ns = slow;
	}
}

/* Takes in the requests counted in the kernel, and moves the kernel's slowness bounds to the
 * slowest lists' (answers slower than an endpoint's eighth slowest come as records). */
static void count_read(struct l7_capture *en)
{
	if (!en->probes || !en->count)
		return;
	l7_probes__count_read(en->probes, on_count, en);
	count_bounds(en);
}

/* The tables and the tracker, without probes. */
static struct l7_capture *capture_new(struct session *s, char *err, size_t errlen)
{
	struct l7_capture *en = calloc(1, sizeof(*en));

	if (!en) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	en->s = s;
	en->table = l7_table__new();
	en->seen = hmap__new();
	en->track = en->table ? l7_track__new(en->table, s->o->l7_protocols) : NULL;
	if (!en->track) {
		snprintf(err, errlen, "out of memory");
		l7_capture__free(en);
		return NULL;
	}
	l7_track__set_stacks(en->track, name_stack, en);
	l7_track__set_ident(en->track, name_ident, en);
	en->count = !s->o->no_l7_count;
	en->ts0_ns = clock_mono_ns();
	en->wall0 = clock_wall_s();
	en->next_expire = en->ts0_ns + EXPIRE_EVERY_NS;
	return en;
}

struct l7_capture *l7_capture__open(struct session *s, char *err, size_t errlen)
{
	struct l7_capture *en = capture_new(s, err, errlen);

	if (en && l7_capture__attach(en, err, errlen)) {
		l7_capture__free(en);
		return NULL;
	}
	return en;
}

int l7_capture__attach(struct l7_capture *e, char *err, size_t errlen)
{
	struct probe_opts po;
	struct l7_probe_opts lo = {0};

	if (e->probes)
		return 0;
	session__probe_options(e->s, &po);
	lo.targets = &po;
	lo.capture = e->s->o->l7_capture;
	lo.proto_mask = e->s->o->l7_protocols;
	lo.no_tls = e->s->o->no_tls;
	lo.exec_file = e->s->child > 0 && e->s->go_fd >= 0 ? e->s->o->command[0] : NULL;
	lo.count = e->count;
	e->probes = l7_probes__open(&lo, on_event, e, err, errlen);
	if (!e->probes)
		return -EPERM;
	/* Connections and keys named before a detach are named again to the new probes. */
	for (size_t i = 0; i < e->nkeys; i++)
		l7_probes__count_endpoint(e->probes, e->keys[i].h, e->keys[i].ep, e->keys[i].slow_ns);
	l7_track__set_count(e->track, e->count ? &count_ops : NULL, e);
	e->next_count = clock_mono_ns() + COUNT_EVERY_NS;
	return 0;
}

/* The probes' counts, those of probes detached before included. */
static void probe_stats(const struct l7_capture *e, struct l7_probe_stats *ps)
{
	memset(ps, 0, sizeof(*ps));
	if (e->probes)
		l7_probes__stats(e->probes, ps);
	ps->k.events += e->past.k.events;
	ps->k.drops += e->past.k.drops;
	ps->k.skipped += e->past.k.skipped;
	ps->k.ssl_calls += e->past.k.ssl_calls;
	ps->k.truncated += e->past.k.truncated;
	ps->k.count_lost += e->past.k.count_lost;
	ps->malformed += e->past.malformed;
	if (!e->probes) {
		ps->tls_files = e->past.tls_files;
		ps->go_files = e->past.go_files;
	}
}

void l7_capture__detach(struct l7_capture *e)
{
	uint64_t deadline = clock_mono_ns() + (uint64_t)DRAIN_ALL_MS * 1000000;

	if (!e->probes)
		return;
	l7_capture__consume(e, deadline); /* what is queued, read before */
	count_read(e);
	probe_stats(e, &e->past);
	l7_probes__free(e->probes);
	e->probes = NULL;
}

struct l7_capture *l7_capture__open_replay(struct session *s, char *err, size_t errlen)
{
	return capture_new(s, err, errlen);
}

int l7_capture__replay(struct l7_capture *e, const void *data, size_t size)
{
	if (l7_event_check(data, size))
		return -EINVAL;
	on_event(e, data, (const uint8_t *)data + sizeof(struct l7_event));
	return 0;
}

int l7_capture__fd(const struct l7_capture *e)
{
	return e->probes ? l7_probes__fd(e->probes) : -1;
}

int l7_capture__consume(struct l7_capture *e, uint64_t deadline_ns)
{
	int n = e->probes ? l7_probes__consume(e->probes, deadline_ns) : 0;
	uint64_t now = clock_mono_ns();

	if (now >= e->next_count) {
		count_read(e);
		e->next_count = now + COUNT_EVERY_NS;
	} else if (n > 0 && now >= e->next_bounds) {
		/* Records came in: answers may have entered the slowest lists. */
		count_bounds(e);
		e->next_bounds = now + BOUNDS_EVERY_NS;
	}
	if (now >= e->next_expire) {
		l7_track__expire(e->track, now, IDLE_NS);
		e->next_expire = now + EXPIRE_EVERY_NS;
	}
	return n;
}

struct l7_table *l7_capture__table(struct l7_capture *e)
{
	return e->table;
}

const char *l7_capture__warnings(struct l7_capture *e)
{
	return e->probes ? l7_probes__warnings(e->probes) : "";
}

void l7_capture__set_trace(struct l7_capture *e, l7_trace_fn fn, void *ctx)
{
	l7_track__set_trace(e->track, fn, ctx);
	/* A trace wants every request: nothing is counted in the kernel from now on. */
	if (fn && e->count) {
		count_read(e);
		e->count = false;
		l7_track__set_count(e->track, NULL, NULL);
		if (e->probes)
			l7_probes__count_stop(e->probes);
	}
}

void l7_capture__clock0(const struct l7_capture *e, uint64_t *ts0_ns, double *wall0)
{
	*ts0_ns = e->ts0_ns;
	*wall0 = e->wall0;
}

void l7_capture__flush(struct l7_capture *e)
{
	count_read(e);
	if (e->probes && e->count)
		l7_probes__count_pending(e->probes, on_count, e);
	l7_track__flush(e->track);
}

uint64_t l7_capture__drops(struct l7_capture *e)
{
	struct l7_probe_stats ps;

	probe_stats(e, &ps);
	return ps.k.drops;
}

void l7_capture__summary(struct l7_capture *e, double secs, char *buf, size_t len)
{
	struct l7_probe_stats ps;
	struct l7_track_stats ts;

	probe_stats(e, &ps);
	l7_track__stats(e->track, &ts);
	snprintf(buf, len,
		 "recorded %llu L7 requests on %llu connections in %.1f s (%llu counted in the "
		 "kernel, %llu lost there: its maps full); %llu messages, "
		 "%llu dropped (ring buffer full), %llu cut to --l7-capture, %llu rejected by "
		 "parsers, %llu HTTP/2 header blocks not decoded; TLS: %llu libssl files, "
		 "%llu Go programs, %llu TLS calls",
		 (unsigned long long)ts.records, (unsigned long long)ts.conns, secs,
		 (unsigned long long)ts.counted, (unsigned long long)ps.k.count_lost,
		 (unsigned long long)ps.k.events, (unsigned long long)ps.k.drops,
		 (unsigned long long)ps.k.truncated, (unsigned long long)ts.parse_errors,
		 (unsigned long long)ts.undecoded, (unsigned long long)ps.tls_files,
		 (unsigned long long)ps.go_files, (unsigned long long)ps.k.ssl_calls);
}

void l7_capture__free(struct l7_capture *e)
{
	if (!e)
		return;
	l7_probes__free(e->probes);
	l7_track__free(e->track);
	l7_table__free(e->table);
	free(e->keys);
	free(e->ep_slow);
	hmap__free(e->seen);
	free(e);
}
