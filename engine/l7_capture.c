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

_Static_assert(L7_UNIX_PATH == L7_UNIX_PATH_MAX, "model/l7/track.h L7_UNIX_PATH mirrors bpf");

#define EXPIRE_EVERY_NS 10000000000ull /* look for idle connections every 10 s */
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
	e->probes = l7_probes__open(&lo, on_event, e, err, errlen);
	return e->probes ? 0 : -EPERM;
}

/* The probes' counts, those of probes detached before included. */
static void probe_stats(const struct l7_capture *e, struct l7_probe_stats *ps)
{
	memset(ps, 0, sizeof(*ps));
	if (e->probes)
		l7_probes__stats(e->probes, ps);
	ps->k.calls += e->past.k.calls;
	ps->k.events += e->past.k.events;
	ps->k.drops += e->past.k.drops;
	ps->k.skipped += e->past.k.skipped;
	ps->k.ssl_calls += e->past.k.ssl_calls;
	ps->k.truncated += e->past.k.truncated;
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
}

void l7_capture__clock0(const struct l7_capture *e, uint64_t *ts0_ns, double *wall0)
{
	*ts0_ns = e->ts0_ns;
	*wall0 = e->wall0;
}

void l7_capture__flush(struct l7_capture *e)
{
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
		 "recorded %llu L7 requests on %llu connections in %.1f s; %llu messages, "
		 "%llu dropped (ring buffer full), %llu cut to --l7-capture, %llu rejected by "
		 "parsers, %llu HTTP/2 header blocks not decoded; TLS: %llu libssl files, "
		 "%llu Go programs, %llu TLS calls",
		 (unsigned long long)ts.records, (unsigned long long)ts.conns, secs,
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
	hmap__free(e->seen);
	free(e);
}
