/* The L7 engine and `galatop record --type l7`: capture records become tracker messages, the
 * tracker fills the tables, and the outputs are written when the recording stops. */
#include "l7.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "bpf/l7probes.h"
#include "bpf/drain.h"
#include "export/l7.h"
#include "export/snapshot.h"
#include "model/l7/track.h"
#include "symbols/hmap.h"
#include "symbols/ident.h"
#include "util/clock.h"

#define EXPIRE_EVERY_NS 10000000000ull /* look for idle connections every 10 s */
#define IDLE_NS 300000000000ull	       /* a connection silent for 5 min has gone */

struct l7_engine {
	struct session *s;
	struct l7_probes *probes;
	struct l7_table *table;
	struct l7_track *track;
	FILE *trace;
	uint64_t ts0_ns; /* monotonic time at open, with wall0 for the trace's timestamps */
	double wall0;
	uint64_t last_ts, next_expire;
	struct hmap *seen; /* processes whose maps were read */
};

static void on_event(void *ctx, const struct l7_event *e, const uint8_t *data)
{
	struct l7_engine *en = ctx;
	struct l7_msg m;

	memset(&m, 0, sizeof(m));
	m.type = e->type == L7_EV_CLOSE ? L7_MSG_CLOSE : L7_MSG_DATA;
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
	if (en->seen && !hmap__get(en->seen, &e->tgid, sizeof(e->tgid))) {
		/* Read a process's maps while it lives: its stacks may be named after it exits. */
		hmap__put(en->seen, &e->tgid, sizeof(e->tgid), en);
		sym_cache__process_load(en->s->sc, (int)e->tgid);
	}
	l7_track__msg(en->track, &m, data);
}

/* Names a user stack through the session's symbol cache, innermost frame first; frames
 * nothing names end the walk (past them a frame-pointer walk without frame pointers reads
 * garbage). 0 when not even the first frame has a name. */
static size_t name_stack(void *ctx, uint32_t tgid, int32_t stack_id, char *buf, size_t cap)
{
	struct l7_engine *en = ctx;
	uint64_t ips[64];
	size_t n = l7_probes__stack(en->probes, stack_id, ips, 64), used = 0;

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
	struct l7_engine *en = ctx;
	struct proc_ident id;

	if (ident_cache__lookup(en->s->ic, (int)tgid, &id))
		return;
	snprintf(container, ccap, "%s", id.container_name[0] ? id.container_name : id.container_id);
	snprintf(pod, pcap, "%s", id.pod_name[0] ? id.pod_name : id.pod_id);
}

static void on_trace(void *ctx, const struct l7_session *s, const struct l7_record *r, uint32_t tid)
{
	struct l7_engine *en = ctx;

	if (en->trace)
		l7_jsonl_write(en->trace, s, r, tid, en->ts0_ns, en->wall0);
}

struct l7_engine *l7_engine__open(struct session *s, char *err, size_t errlen)
{
	struct l7_engine *en = calloc(1, sizeof(*en));
	struct probe_opts po;
	struct l7_probe_opts lo = {0};

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
		l7_engine__free(en);
		return NULL;
	}
	l7_track__set_stacks(en->track, name_stack, en);
	l7_track__set_trace(en->track, on_trace, en);
	l7_track__set_ident(en->track, name_ident, en);
	session__probe_options(s, &po);
	lo.targets = &po;
	lo.capture = s->o->l7_capture;
	lo.proto_mask = s->o->l7_protocols;
	lo.no_tls = s->o->no_tls;
	en->probes = l7_probes__open(&lo, on_event, en, err, errlen);
	if (!en->probes) {
		l7_engine__free(en);
		return NULL;
	}
	en->ts0_ns = clock_mono_ns();
	en->wall0 = clock_wall_s();
	en->next_expire = en->ts0_ns + EXPIRE_EVERY_NS;
	return en;
}

int l7_engine__poll(struct l7_engine *e, int timeout_ms)
{
	int n = l7_probes__poll(e->probes, timeout_ms);
	uint64_t now = clock_mono_ns();

	if (now >= e->next_expire) {
		l7_track__expire(e->track, now, IDLE_NS);
		e->next_expire = now + EXPIRE_EVERY_NS;
	}
	return n;
}

struct l7_table *l7_engine__table(struct l7_engine *e)
{
	return e->table;
}

const char *l7_engine__warnings(struct l7_engine *e)
{
	return l7_probes__warnings(e->probes);
}

void l7_engine__set_trace(struct l7_engine *e, FILE *f)
{
	e->trace = f;
}

void l7_engine__flush(struct l7_engine *e)
{
	l7_track__flush(e->track);
}

uint64_t l7_engine__drops(struct l7_engine *e)
{
	struct l7_probe_stats ps;

	l7_probes__stats(e->probes, &ps);
	return ps.k.drops;
}

void l7_engine__summary(struct l7_engine *e, double secs)
{
	struct l7_probe_stats ps;
	struct l7_track_stats ts;

	l7_probes__stats(e->probes, &ps);
	l7_track__stats(e->track, &ts);
	fprintf(stderr,
		"galatop: recorded %llu L7 requests on %llu connections in %.1f s; %llu messages, "
		"%llu dropped (ring buffer full), %llu cut to --l7-capture, %llu rejected by "
		"parsers; TLS: %llu libssl files, %llu OpenSSL calls\n",
		(unsigned long long)ts.records, (unsigned long long)ts.conns, secs,
		(unsigned long long)ps.k.events, (unsigned long long)ps.k.drops,
		(unsigned long long)ps.k.truncated, (unsigned long long)ts.parse_errors,
		(unsigned long long)ps.tls_files, (unsigned long long)ps.k.ssl_calls);
}

void l7_engine__free(struct l7_engine *e)
{
	if (!e)
		return;
	l7_probes__free(e->probes);
	l7_track__free(e->track);
	l7_table__free(e->table);
	hmap__free(e->seen);
	free(e);
}

int l7_parse_protocols(const char *cmd, const char *arg, unsigned *mask)
{
	char *copy = strdup(arg), *save = NULL;
	int ret = 0;

	*mask = 0;
	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int p = l7_proto_parse(t);

		if (p <= 0) {
			cli_usage_error(cmd,
					"--protocols: unknown protocol '%s' (http, pgsql, "
					"mysql, redis, dns)",
					t);
			ret = -1;
			break;
		}
		*mask |= 1u << p;
	}
	free(copy);
	if (!ret && !*mask)
		ret = cli_usage_error(cmd, "--protocols: no protocol given") ? -1 : -1;
	return ret;
}

bool l7_output_ext(const char *ext)
{
	return !strcmp(ext, ".json") || !strcmp(ext, ".prom") || !strcmp(ext, ".jsonl") ||
	       !strcmp(ext, ".gtop");
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* Writes the tables to path in the format of its extension (not .jsonl, written as it goes). */
static int write_output(const char *path, struct l7_table *t, double secs, double start)
{
	const char *ext = strrchr(path, '.');
	FILE *f;
	int err;

	if (!strcmp(ext, ".gtop")) {
		struct snapshot_build b;
		char msg[512];

		snapshot_build_init(&b, true, NULL, start, start + secs);
		snapshot_build_probe(&b, "l7", NULL, 0);
		b.sn.l7 = t;
		b.sn.l7_secs = secs;
		if (snapshot_write(path, &b.sn, msg, sizeof(msg))) {
			cli_error("cannot write %s", msg);
			return 1;
		}
		return 0;
	}
	f = cli_open_out(path);
	if (!f)
		return 1;
	if (!strcmp(ext, ".prom"))
		err = l7_prom_write(f, t, secs);
	else
		err = l7_json_write(f, t, secs, 1);
	return cli_finish_out(f, path, err);
}

int l7_record(struct record_opts *o)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct session s;
	struct l7_engine *e;
	FILE *trace = NULL;
	const char *trace_path = NULL;
	char err[512];
	uint64_t t0;
	double secs, start;
	int ret = 0;

	ret = session__open(&s, o);
	if (ret)
		return ret;
	e = l7_engine__open(&s, err, sizeof(err));
	if (!e) {
		cli_error("%s", err);
		session__close(&s, true);
		return 1;
	}
	if (*l7_engine__warnings(e))
		fprintf(stderr, "galatop: %s", l7_engine__warnings(e));
	for (size_t i = 0; i < o->noutputs; i++)
		if (!strcmp(strrchr(o->outputs[i], '.'), ".jsonl"))
			trace_path = o->outputs[i];
	if (trace_path) {
		trace = cli_open_out(trace_path);
		if (!trace) {
			l7_engine__free(e);
			session__close(&s, true);
			return 1;
		}
		l7_engine__set_trace(e, trace);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	session__start_command(&s);
	t0 = clock_mono_ns();
	start = clock_wall_s();
	fprintf(stderr, "galatop: recording L7 requests%s... Ctrl-C to stop\n",
		o->duration ? " for the given duration" : "");
	while (!stop_signal) {
		l7_engine__poll(e, 100);
		if (o->duration && (double)(clock_mono_ns() - t0) / 1e9 >= o->duration)
			break;
		if (session__done(&s))
			break;
	}
	l7_engine__poll(e, DRAIN_ALL);
	l7_engine__flush(e);
	secs = (double)(clock_mono_ns() - t0) / 1e9;
	l7_engine__summary(e, secs);
	if (trace)
		ret |= cli_close_out(trace, trace_path);
	if (!o->noutputs && l7_text_write(stdout, l7_engine__table(e), secs)) {
		cli_error("cannot write standard output: %s", strerror(errno));
		ret = 1;
	}
	for (size_t i = 0; i < o->noutputs; i++)
		if (strcmp(strrchr(o->outputs[i], '.'), ".jsonl"))
			ret |= write_output(o->outputs[i], l7_engine__table(e), secs, start);
	l7_engine__free(e);
	session__close(&s, stop_signal != 0);
	return ret;
}
