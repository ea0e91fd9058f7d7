/* galatop agent: a long-running loop over the engine that keeps the chosen families on, hands
 * every --period's profiles, thread events and L7 requests to the sinks (agent_sink.h), writes
 * periodic files when asked, and stops cleanly on SIGTERM/SIGINT; SIGHUP re-reads --config. */
#include "agent.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_http.h"
#include "agent_metrics.h"
#include "agent_rest.h"
#include "agent_sink.h"
#include "cli.h"
#include "commands.h"
#include "record.h"
#include "bpf/drain.h"
#include "bpf/probes.h"
#include "engine/l7_capture.h"
#include "engine/session.h"
#include "engine/stack_collector.h"
#include "engine/sli_collector.h"
#include "engine/tl_capture.h"
#include "export/folded.h"
#include "model/sanitize.h"
#include "model/split.h"
#include "symbols/ident.h"
#include "util/clock.h"
#include "util/file.h"

const char cmd_agent_help[] =
	"Usage: galatop agent [OPTIONS]\n"
	"\n"
	"Runs as a node agent (root; docs/agent.md): keeps the chosen probe families on until\n"
	"SIGTERM or SIGINT, serves Prometheus metrics and gala-gopher's REST control, and hands\n"
	"every period's profiles, thread events and L7 requests to its sinks. SIGHUP re-reads\n"
	"--config. Logs go to standard error.\n"
	"\n"
	"Agent options:\n"
	"  --type T[,T]      families kept on (default oncpu,l7,sli): any of record's\n"
	"                    --type (stack types, threads, l7, sli)\n"
	"  --period S        seconds between batches and periodic files (default 30)\n"
	"  --out-dir DIR     write each period's .svg and .folded files into DIR (as record\n"
	"                    --period; default: none unless a request names svg_dir)\n"
	"  --config FILE     a gala-gopher request applied at start and on SIGHUP\n"
	"  --metrics ADDR    serve GET /metrics (Prometheus) on ADDR (default\n"
	"                    127.0.0.1:8888; off: none)\n"
	"  --rest ADDR       serve gala-gopher's REST control (PUT/GET /flamegraph,\n"
	"                    /tprofiling, /l7, /sli) on ADDR (default 127.0.0.1:9999; off)\n"
	"  --rest-allow-remote  let peers other than loopback use the REST control (needs\n"
	"                    --rest-token)\n"
	"  --rest-token FILE every REST request must carry Authorization: Bearer TOKEN,\n"
	"                    the first line of FILE\n"
	"  --log-level L     error, warning, info (default) or debug\n"
	"Targets and probe options are record's (galatop help record): -p, --comm,\n"
	"--cmdline, --container, --pod, -F, --unwind, --protocols, --longsys...\n";

/* The agent's own options. */
struct agent_config {
	char metrics[256]; /* --metrics ADDR, "off" */
	char rest[256];	   /* --rest ADDR, "off" */
	bool rest_allow_remote;
	char rest_token[4096]; /* --rest-token FILE, "" */
};

struct agent {
	struct record_opts o;	 /* what runs now */
	struct record_opts base; /* what the command line (and --config) asks; REST over it */
	struct agent_config cfg;
	struct agent_http *metrics_srv, *rest_srv;
	struct agent_rest *rest;
	struct session s;
	struct msg_list msgs;
	bool open;		/* s is open */
	int argc;
	char **argv;
	void *sink_state[16];	/* each table sink's state while options are parsed */
	struct agent_sink *sinks[16];
	size_t nsinks;
	struct agent_sink *rest_pyro; /* the Pyroscope sink a request's pyroscope_server asks for */
	char rest_pyro_url[256];      /* its server (the sink's state borrows it) */
	unsigned wants;		/* AGENT_WANTS_* of the sinks started */
	struct agent_batch *cur; /* the period's batch, filled as requests come */
	size_t req_cap;
	double period_start;	/* UNIX seconds */
	uint64_t tl_from;	/* the timeline's clock where the period began (ns) */
	double start_unix, start_mono;
	char hostname[256];
	bool reloading;		/* parsing argv again on SIGHUP: agent options are ignored */
	struct agent_totals carried; /* of the sessions closed, and the batches' drops */
	struct l7_table *l7_before; /* the L7 rows of the sessions closed (NULL: none) */
	struct sli *sli_before;	    /* SLI totals of a model gone, for the next one (NULL: none) */
};

/* How far behind now a batch takes thread intervals: their records may still wait in the ring
 * buffer (it is read every 100 ms). */
#define AGENT_EVENTS_LAG_NS 1000000000ull

static volatile sig_atomic_t stop_signal, hup_signal;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		hup_signal = 1;
	else
		stop_signal = sig;
}

/* The engine's messages, at their levels. */
static void agent_say(struct msg_list *l)
{
	const struct msg *m;

	while ((m = msg_list__next(l)))
		agent_log(m->level == MSG_ERROR	    ? AGENT_LOG_ERROR
			  : m->level == MSG_WARNING ? AGENT_LOG_WARNING
						    : AGENT_LOG_INFO,
			  "%s", m->text);
}

/* --- options --------------------------------------------------------------------------- */

static const struct option agent_options[] = {
	{ "metrics", required_argument, NULL, 0 },
	{ "rest", required_argument, NULL, 0 },
	{ "rest-allow-remote", no_argument, NULL, 0 },
	{ "rest-token", required_argument, NULL, 0 },
	{ "log-level", required_argument, NULL, 0 },
};

#define NAGENT_OPTIONS (sizeof(agent_options) / sizeof(agent_options[0]))

static int copy_arg(const char *opt, const char *arg, char *dst, size_t cap)
{
	if (!*arg || strlen(arg) >= cap)
		return cli_usage_error("agent", "%s: bad value '%s'", opt, arg);
	strcpy(dst, arg);
	return 0;
}

static int take_option(void *ctx, const char *name, const char *arg)
{
	struct agent *a = ctx;
	struct agent_config *c = &a->cfg;
	char err[512] = "";
	int lvl;

	if (!strcmp(name, "metrics"))
		return copy_arg("--metrics", arg, c->metrics, sizeof(c->metrics));
	if (!strcmp(name, "rest"))
		return copy_arg("--rest", arg, c->rest, sizeof(c->rest));
	if (!strcmp(name, "rest-token"))
		return copy_arg("--rest-token", arg, c->rest_token, sizeof(c->rest_token));
	if (!strcmp(name, "rest-allow-remote")) {
		c->rest_allow_remote = true;
		return 0;
	}

	if (!strcmp(name, "log-level")) {
		lvl = agent_log_level_parse(arg);
		if (lvl < 0)
			return cli_usage_error("agent", "--log-level: bad value '%s' (error, "
					       "warning, info or debug)", arg);
		agent_log_set_level((enum agent_log_level)lvl);
		return 0;
	}
	if (a->reloading)
		return 0;
	for (size_t i = 0; i < agent_sink_count; i++) {
		const struct agent_sink_ops *ops = agent_sink_table[i];

		for (const struct option *op = ops->options; op && op->name; op++) {
			if (strcmp(op->name, name))
				continue;
			if (ops->option(a->sink_state[i], name, arg, err, sizeof(err)))
				return cli_usage_error("agent", "--%s: %s", name, err);
			return 0;
		}
	}
	return cli_usage_error("agent", "unknown option '--%s'", name);
}

/* The agent's options and every sink's, {0}-terminated; NULL on ENOMEM. */
static struct option *all_options(void)
{
	size_t n = NAGENT_OPTIONS;
	struct option *v;

	for (size_t i = 0; i < agent_sink_count; i++)
		for (const struct option *op = agent_sink_table[i]->options; op && op->name; op++)
			n++;
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return NULL;
	memcpy(v, agent_options, sizeof(agent_options));
	n = NAGENT_OPTIONS;
	for (size_t i = 0; i < agent_sink_count; i++)
		for (const struct option *op = agent_sink_table[i]->options; op && op->name; op++)
			v[n++] = *op;
	return v;
}

/* The help: the agent's lines, then each sink's. NULL on ENOMEM; caller frees. */
static char *help_text(void)
{
	size_t n = strlen(cmd_agent_help) + 1;
	char *h;

	for (size_t i = 0; i < agent_sink_count; i++)
		n += strlen(agent_sink_table[i]->help);
	h = malloc(n);
	if (!h)
		return NULL;
	strcpy(h, cmd_agent_help);
	for (size_t i = 0; i < agent_sink_count; i++)
		strcat(h, agent_sink_table[i]->help);
	return h;
}

/* Parses argv into *o (the agent's defaults first). 0 or an exit code after reporting. */
static int parse(struct agent *a, struct record_opts *o)
{
	struct option *opts = all_options();
	char *help = help_text();
	struct record_extra_opts x = { opts, take_option, a, help };
	int ret;

	record_opts__init(o);
	o->period = AGENT_PERIOD_S;
	o->out_dir[0] = 0; /* no periodic files unless asked */
	o->periodic_svg = o->periodic_folded = false;
	if (!opts || !help) {
		free(opts);
		free(help);
		return cli_usage_error("agent", "out of memory");
	}
	ret = record_parse_args_extra(a->argc, a->argv, o, "agent", &x);
	free(opts);
	free(help);
	if (ret)
		return ret;
	if (o->noutputs)
		return cli_usage_error("agent", "-o: the agent writes no files of its own; "
				       "--out-dir DIR writes each period's .svg and .folded");
	if (o->command)
		return cli_usage_error("agent", "the agent runs no command; give targets (-p, "
				       "--comm, --cmdline, --container, --pod)");
	if (o->duration)
		return cli_usage_error("agent", "the agent runs until SIGTERM: no -d");
	if (o->trigger[0])
		return cli_usage_error("agent", "--trigger is record's");
	if (!o->types && !o->sli) {
		o->types = PROBE_ONCPU | RECORD_TYPE_L7;
		o->sli = true;
	}
	if (o->group < 0)
		o->group = GROUP_PROCESS; /* one profile per process for the sinks */
	agent_files_default(o);
	/* Every stack type loads, so that a request can turn one on later. */
	o->lazy_types = stack_type_probes();
	return 0;
}

void agent_files_default(struct record_opts *o)
{
	/* An empty out_dir stays empty: no file ever goes to the agent's working directory. */
	o->periodic_svg = o->out_dir[0] || o->svg_dir[0];
	o->periodic_folded = o->out_dir[0] || o->flame_dir[0];
}

/* --- the period's batch ---------------------------------------------------------------- */

/* Untrusted text (runtime metadata) sanitized into dst, cut at a character boundary. */
static void clean_copy(char *dst, size_t cap, const char *src)
{
	char buf[SANITIZE_MAX(256) + 1];
	size_t n = sanitize_text(src, strnlen(src, 256), buf), k = 0;

	while (k < n) {
		size_t l = utf8_seq_len((const unsigned char *)buf + k, n - k);

		l = l ? l : 1;
		if (k + l >= cap)
			break;
		k += l;
	}
	memcpy(dst, buf, k);
	dst[k] = 0;
}

static void fill_ident(struct agent *a, struct agent_ident *w, uint32_t pid)
{
	struct proc_ident pi;

	w->pid = pid;
	if (!pid || ident_cache__lookup(a->s.ic, (int)pid, &pi))
		return;
	clean_copy(w->container_id, sizeof(w->container_id), pi.container_id);
	clean_copy(w->container, sizeof(w->container), pi.container_name);
	clean_copy(w->pod, sizeof(w->pod), pi.pod_name);
}

/* "[PID]comm" into pid and comm; false when name is not a process frame. */
static bool process_frame(const char *name, uint32_t *pid, char *comm, size_t cap)
{
	unsigned long v;
	char *end;

	if (name[0] != '[')
		return false;
	v = strtoul(name + 1, &end, 10);
	if (end == name + 1 || *end != ']' || !v || v > 4194304)
		return false;
	*pid = (uint32_t)v;
	snprintf(comm, cap, "%s", end + 1);
	return true;
}

static int add_profile(struct agent *a, struct agent_batch *b, size_t *cap, enum stack_type t,
		       const struct profile *p, const char *root)
{
	struct agent_profile *ap;
	FILE *f;
	int r;

	if (!profile__total(p))
		return 0;
	if (b->nprofiles == *cap) {
		size_t n = *cap ? 2 * *cap : 16;
		void *v = realloc(b->profiles, n * sizeof(*b->profiles));

		if (!v)
			return -ENOMEM;
		b->profiles = v;
		*cap = n;
	}
	ap = &b->profiles[b->nprofiles];
	memset(ap, 0, sizeof(*ap));
	ap->type = t;
	ap->kind = profile__kind(p);
	ap->total = profile__total(p);
	if (root && process_frame(root, &ap->who.pid, ap->who.comm, sizeof(ap->who.comm)))
		fill_ident(a, &ap->who, ap->who.pid);
	f = open_memstream(&ap->folded, &ap->len);
	if (!f)
		return -ENOMEM;
	r = folded_write_ex(f, p, true);
	if (fclose(f) && !r)
		r = -ENOMEM;
	if (r) {
		free(ap->folded);
		return r;
	}
	b->nprofiles++;
	return 0;
}

/* Every stack type's profile of the period, one per process. */
static int batch_profiles(struct agent *a, struct agent_batch *b)
{
	size_t cap = 0;
	int r = 0;

	if (!a->s.probes)
		return 0;
	for_each_stack_type(t) {
		struct profile *p = collector__profile(a->s.col, t);
		struct profile_part *parts;
		size_t n;

		if (!(a->o.types & stack_types[t].probe) || !profile__total(p))
			continue;
		if (profile_split_by_process(p, &parts, &n))
			return -ENOMEM;
		for (size_t i = 0; i < n && !r; i++)
			r = add_profile(a, b, &cap, t, parts[i].p,
					parts[i].root ? frames__name(profile__frames(p), parts[i].root)
						      : NULL);
		profile_parts_free(parts, n);
		if (r)
			return r;
	}
	return 0;
}

static char *dup_id(const struct strtab *st, uint32_t id)
{
	return id ? strdup(strtab__str(st, id)) : NULL;
}

/* The thread intervals that ended in [t0, t1) of the timeline's clock: each one once, in the
 * period it was whole (an interval still open at a period's end is in no lane yet). */
static int batch_events(struct agent *a, struct agent_batch *b, uint64_t t0, uint64_t t1)
{
	struct timeline *tl;
	const struct strtab *st;
	size_t cap = 0;
	double off;

	if (!a->s.tl)
		return 0;
	tl_capture__refresh(a->s.tl);
	tl = tl_capture__timeline(a->s.tl);
	st = timeline__strtab_c(tl);
	off = timeline__wall_offset(tl);
	for (size_t i = 0; i < timeline__nthreads(tl); i++) {
		const struct tl_thread *th = timeline__thread(tl, i);
		const struct tl_process *pr = timeline__process_find(tl, th->pid);
		const struct tl_event *lane;
		size_t from, to, n;

		lane = timeline__lane(tl, i, &n);
		timeline__range(tl, i, t0 ? t0 - 1 : 0, t1, &from, &to);
		for (size_t j = from; j < to && j < n; j++) {
			const struct tl_event *e = &lane[j];
			struct agent_thread_event *ev;

			if (e->end < t0 || e->end >= t1)
				continue;
			if (b->nevents >= AGENT_BATCH_EVENTS_MAX) {
				b->events_dropped++;
				continue;
			}
			if (b->nevents == cap) {
				size_t nc = cap ? 2 * cap : 256;
				void *v = realloc(b->events, nc * sizeof(*b->events));

				if (!v)
					return -ENOMEM;
				b->events = v;
				cap = nc;
			}
			ev = &b->events[b->nevents];
			memset(ev, 0, sizeof(*ev));
			ev->who.pid = th->pid;
			ev->tid = th->tid;
			snprintf(ev->thread, sizeof(ev->thread), "%s", strtab__str(st, th->comm));
			if (pr) {
				snprintf(ev->who.comm, sizeof(ev->who.comm), "%s",
					 strtab__str(st, pr->name));
				if (pr->container_id)
					snprintf(ev->who.container_id, sizeof(ev->who.container_id),
						 "%s", strtab__str(st, pr->container_id));
				if (pr->container)
					snprintf(ev->who.container, sizeof(ev->who.container), "%s",
						 strtab__str(st, pr->container));
			}
			ev->kind = tl_kind_str(e->kind);
			ev->name = dup_id(st, e->name);
			ev->attr = dup_id(st, e->attr);
			ev->stack = dup_id(st, e->stack);
			ev->start = (double)e->start / 1e9 + off;
			ev->end = (double)e->end / 1e9 + off;
			ev->count = e->count;
			b->nevents++;
			if ((e->name && !ev->name) || (e->attr && !ev->attr) ||
			    (e->stack && !ev->stack))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Every paired L7 request, into the period's batch (bounded). */
static void on_request(void *ctx, const struct l7_session *s, const struct l7_record *r,
		       uint32_t tid)
{
	struct agent *a = ctx;
	struct agent_batch *b = a->cur;
	struct agent_l7_request *q;
	uint64_t ts0;
	double wall0;

	if (!b)
		return;
	if (b->nrequests >= AGENT_BATCH_REQUESTS_MAX) {
		b->requests_dropped++;
		return;
	}
	if (b->nrequests == a->req_cap) {
		size_t n = a->req_cap ? 2 * a->req_cap : 256;
		void *v = realloc(b->requests, n * sizeof(*b->requests));

		if (!v) {
			b->requests_dropped++;
			return;
		}
		b->requests = v;
		a->req_cap = n;
	}
	q = &b->requests[b->nrequests++];
	l7_capture__clock0(a->s.l7, &ts0, &wall0);
	q->timestamp = wall0 + ((double)r->req_start_ns - (double)ts0) / 1e9;
	q->tid = tid;
	q->key = s->key;
	memcpy(q->comm, s->comm, sizeof(q->comm));
	memcpy(q->container, s->container, sizeof(q->container));
	memcpy(q->pod, s->pod, sizeof(q->pod));
	q->rec = *r;
}

/* A fresh batch for the period starting now; the L7 trace fills it. */
static void batch_begin(struct agent *a)
{
	a->cur = a->nsinks ? agent_batch__new() : NULL;
	a->req_cap = 0;
	a->period_start = clock_wall_s();
	if (a->s.tl && !a->tl_from) {
		tl_capture__refresh(a->s.tl);
		a->tl_from = timeline__now(tl_capture__timeline(a->s.tl));
	}
	if (!a->cur && a->nsinks)
		agent_log(AGENT_LOG_WARNING, "out of memory: this period's batch is lost");
}

/* The trace callback follows the L7 capture (it may be opened or reopened at run time). */
static void trace_follow(struct agent *a)
{
	if (a->s.l7)
		l7_capture__set_trace(a->s.l7, (a->wants & AGENT_WANTS_REQUESTS) ? on_request : NULL,
				      a);
}

/* The period's batch completed and handed to every sink, without waiting. Thread intervals
 * are taken up to AGENT_EVENTS_LAG_NS ago, so that those whose records still wait in the ring
 * buffer come in the next batch; final (the ring buffers drained, the probes about to go):
 * up to now. */
static void batch_send(struct agent *a, bool final)
{
	struct agent_batch *b = a->cur;
	uint64_t t1 = 0;
	int r = 0;

	a->cur = NULL;
	if (!b)
		return;
	b->from = a->period_start;
	b->until = clock_wall_s();
	b->hostname = a->hostname;
	b->sample_rate = a->o.freq;
	if (a->wants & AGENT_WANTS_PROFILES)
		r = batch_profiles(a, b);
	if (!r && (a->wants & AGENT_WANTS_EVENTS) && a->s.tl) {
		tl_capture__refresh(a->s.tl);
		t1 = timeline__now(tl_capture__timeline(a->s.tl));
		if (!final)
			t1 = t1 > AGENT_EVENTS_LAG_NS ? t1 - AGENT_EVENTS_LAG_NS : 0;
		if (t1 > a->tl_from) {
			r = batch_events(a, b, a->tl_from, t1);
			a->tl_from = t1;
		}
	}
	if (r)
		agent_log(AGENT_LOG_WARNING, "out of memory: this period's batch is incomplete");
	a->carried.batch_events_dropped += b->events_dropped;
	a->carried.batch_requests_dropped += b->requests_dropped;
	if (b->events_dropped || b->requests_dropped)
		agent_log(AGENT_LOG_WARNING, "this period's batch dropped %llu thread events and "
			  "%llu L7 requests (over %d each)",
			  (unsigned long long)b->events_dropped,
			  (unsigned long long)b->requests_dropped, AGENT_BATCH_EVENTS_MAX);
	for (size_t i = 0; i < a->nsinks; i++)
		if (!agent_sink__push(a->sinks[i], b))
			agent_log(AGENT_LOG_WARNING, "%s: still busy with earlier batches: this "
				  "one is dropped", agent_sink__ops(a->sinks[i])->name);
	agent_batch__put(b);
}

/* --- sinks ----------------------------------------------------------------------------- */

static int sinks_create(struct agent *a)
{
	for (size_t i = 0; i < agent_sink_count; i++) {
		a->sink_state[i] = agent_sink_table[i]->create();
		if (!a->sink_state[i])
			return -ENOMEM;
	}
	return 0;
}

/* Starts sink state st of ops (taken: freed on failure) and adds it to a's sinks, named what
 * in the logs. The sink, or NULL after reporting. */
static struct agent_sink *sink_launch(struct agent *a, const struct agent_sink_ops *ops, void *st,
				      const char *what)
{
	struct agent_sink *sk;
	char err[512] = "";

	if (ops->start(st, err, sizeof(err))) {
		agent_log(AGENT_LOG_ERROR, "%s: %s", what, err);
		ops->destroy(st);
		return NULL;
	}
	a->wants |= ops->wants(st);
	sk = agent_sink__start(ops, st, err, sizeof(err));
	if (!sk) {
		agent_log(AGENT_LOG_ERROR, "%s: %s", what, err);
		return NULL;
	}
	agent_log(AGENT_LOG_INFO, "sending to %s", what);
	a->sinks[a->nsinks++] = sk;
	return sk;
}

/* Starts the sinks whose options asked for them, frees the others. 0, or 1 after reporting. */
static int sinks_start(struct agent *a)
{
	int ret = 0;

	for (size_t i = 0; i < agent_sink_count; i++) {
		const struct agent_sink_ops *ops = agent_sink_table[i];
		void *st = a->sink_state[i];

		a->sink_state[i] = NULL;
		if (ret || !ops->enabled(st))
			ops->destroy(st);
		else if (!sink_launch(a, ops, st, ops->name))
			ret = 1;
	}
	return ret;
}

static void sinks_free_unstarted(struct agent *a)
{
	for (size_t i = 0; i < agent_sink_count; i++) {
		if (a->sink_state[i])
			agent_sink_table[i]->destroy(a->sink_state[i]);
		a->sink_state[i] = NULL;
	}
}

static void sinks_stop(struct agent *a)
{
	for (size_t i = 0; i < a->nsinks; i++) {
		const struct agent_sink_ops *ops = agent_sink__ops(a->sinks[i]);
		struct agent_sink_counters c;
		struct agent_sink_stats own;

		agent_sink__counters(a->sinks[i], &c, &own);
		agent_sink__stop(a->sinks[i]); /* frees the sink: its ops were taken before */
		agent_log(AGENT_LOG_INFO, "%s: %llu batches sent, %llu failed, %llu dropped (queue "
			  "full)", ops->name, (unsigned long long)c.sent,
			  (unsigned long long)c.failed, (unsigned long long)c.dropped);
	}
	a->nsinks = 0;
	a->rest_pyro = NULL;
}

extern const struct agent_sink_ops agent_pyroscope_sink;

/* Follows the flame graph request's pyroscope_server (gala-gopher's way to upload): a
 * Pyroscope sink posts there while a stack type runs, beside any --pyroscope one. */
static void pyroscope_follow(struct agent *a)
{
	const struct agent_sink_ops *ops = &agent_pyroscope_sink;
	const char *want = (a->o.types & stack_type_probes()) ? a->o.pyroscope_server : "";
	char err[512] = "", what[300];
	void *st;

	if (!strcmp(want, a->rest_pyro ? a->rest_pyro_url : ""))
		return;
	if (a->rest_pyro) {
		size_t i = 0;

		while (i < a->nsinks && a->sinks[i] != a->rest_pyro)
			i++;
		memmove(&a->sinks[i], &a->sinks[i + 1], (a->nsinks - i - 1) * sizeof(a->sinks[0]));
		a->nsinks--;
		agent_sink__stop(a->rest_pyro);
		a->rest_pyro = NULL;
		agent_log(AGENT_LOG_INFO, "pyroscope_server %s: no longer sent to", a->rest_pyro_url);
	}
	a->rest_pyro_url[0] = 0;
	if (!want[0] || a->nsinks >= sizeof(a->sinks) / sizeof(a->sinks[0]))
		return;
	snprintf(a->rest_pyro_url, sizeof(a->rest_pyro_url), "%s", want);
	snprintf(what, sizeof(what), "pyroscope_server %s", a->rest_pyro_url);
	st = ops->create();
	if (!st || ops->option(st, "pyroscope", a->rest_pyro_url, err, sizeof(err))) {
		agent_log(AGENT_LOG_ERROR, "%s: %s", what, err[0] ? err : "out of memory");
		ops->destroy(st);
		a->rest_pyro_url[0] = 0;
		return;
	}
	a->rest_pyro = sink_launch(a, ops, st, what);
	if (!a->rest_pyro) {
		a->rest_pyro_url[0] = 0;
		return;
	}
	if (!a->cur) /* the period under way goes too */
		a->cur = agent_batch__new();
}

size_t agent_sinks(struct agent *a, struct agent_sink ***out)
{
	*out = a->sinks;
	return a->nsinks;
}

/* --- the session and its changes --------------------------------------------------------- */

/* The SLI totals of the model about to go (the probes restart, or the SLI family stops), kept
 * for the next model: /metrics counts since the agent started. */
static void sli_carry_out(struct agent *a)
{
	if (!a->s.sli)
		return;
	if (!a->sli_before)
		a->sli_before = sli__new();
	if (!a->sli_before || sli__add_totals(a->sli_before, sli_collector__model(a->s.sli)))
		agent_log(AGENT_LOG_WARNING, "out of memory: the SLI counters start again");
}

/* A new SLI model goes on from the totals kept. */
static void sli_carry_in(struct agent *a)
{
	if (!a->s.sli || !a->sli_before)
		return;
	if (sli__add_totals(sli_collector__model(a->s.sli), a->sli_before))
		agent_log(AGENT_LOG_WARNING, "out of memory: the SLI counters start again");
	sli__free(a->sli_before);
	a->sli_before = NULL;
}

/* Opens the session of a->o. 0, or 1 after reporting. */
static int session_open(struct agent *a)
{
	int r = session__open(&a->s, &a->o, &a->msgs);

	agent_say(&a->msgs);
	if (r)
		return 1;
	a->open = true;
	a->carried.sessions++;
	sli_carry_in(a);
	session__start_command(&a->s);
	trace_follow(a);
	return 0;
}

/* The counters of the open session alone. */
static void session_totals(struct agent *a, struct agent_totals *t)
{
	struct session *s = &a->s;

	memset(t, 0, sizeof(*t));
	if (!a->open)
		return;
	if (s->probes) {
		struct probe_stats ps;
		struct collector_stats cs;

		probes__stats(s->probes, &ps);
		collector__stats(s->col, &cs);
		t->samples = cs.events;
		t->lost_stacks = ps.drops;
	}
	if (s->tl) {
		struct tl_probe_stats ts;

		tl_capture__stats(s->tl, &ts);
		t->lost_threads = ts.drops;
	}
	if (s->l7)
		t->lost_l7 = l7_capture__drops(s->l7);
	if (s->sli) {
		uint64_t events;

		sli_collector__counts(s->sli, &events, &t->lost_sli);
	}
	session__cost_sample(s);
	t->probe_stats = s->cost.model.stats_on;
	for (int f = 0; f < COST_FAMILIES; f++) {
		struct cost_figures fig;

		cost__figures(&s->cost.model, f, false, &fig);
		t->probe_ns[f] = fig.ns;
		t->probe_runs[f] = fig.calls;
	}
	t->probe_stats_s = s->cost.model.on_secs;
}

/* a += b, counter by counter. */
static void totals_add(struct agent_totals *a, const struct agent_totals *b)
{
	a->samples += b->samples;
	a->lost_stacks += b->lost_stacks;
	a->lost_threads += b->lost_threads;
	a->lost_l7 += b->lost_l7;
	a->lost_sli += b->lost_sli;
	for (int f = 0; f < COST_FAMILIES; f++) {
		a->probe_ns[f] += b->probe_ns[f];
		a->probe_runs[f] += b->probe_runs[f];
	}
	a->probe_stats_s += b->probe_stats_s;
}

const struct l7_table *agent_l7_before(const struct agent *a)
{
	return a->l7_before;
}

void agent_totals(struct agent *a, struct agent_totals *t)
{
	struct agent_totals now;

	session_totals(a, &now);
	*t = a->carried;
	totals_add(t, &now);
	t->probe_stats = now.probe_stats;
}

static void session_close(struct agent *a)
{
	struct agent_totals now;

	if (!a->open)
		return;
	session_totals(a, &now);
	totals_add(&a->carried, &now);
	if (a->s.l7) {
		/* /metrics counts since the agent started, across probe restarts. */
		if (!a->l7_before)
			a->l7_before = l7_table__new();
		if (!a->l7_before || l7_table__merge(a->l7_before, l7_capture__table(a->s.l7)))
			agent_log(AGENT_LOG_WARNING, "out of memory: the L7 counters start again");
		l7_capture__set_trace(a->s.l7, NULL, NULL);
	}
	sli_carry_out(a);
	session__close(&a->s, true);
	a->open = false;
	memset(&a->s, 0, sizeof(a->s));
	agent_say(&a->msgs);
}

/* Whether o and n differ in more than what can change in place (the families and the
 * periodic outputs): then the session is opened again. */
static bool needs_reopen(const struct record_opts *o, const struct record_opts *n)
{
	struct record_opts x = *o, y = *n;

	x.types = y.types = 0;
	x.sli = y.sli = false;
	x.period = y.period = 0;
	x.multi_instance = y.multi_instance = false;
	x.periodic_svg = y.periodic_svg = x.periodic_folded = y.periodic_folded = false;
	memset(x.out_dir, 0, sizeof(x.out_dir));
	memset(y.out_dir, 0, sizeof(y.out_dir));
	memset(x.svg_dir, 0, sizeof(x.svg_dir));
	memset(y.svg_dir, 0, sizeof(y.svg_dir));
	memset(x.flame_dir, 0, sizeof(x.flame_dir));
	memset(y.flame_dir, 0, sizeof(y.flame_dir));
	/* The thread probes' classes are set when they open: new ones while they run need a new
	 * session; the SLI probes are opened afresh by family_set. */
	if (!(o->types & PROBE_THREADS))
		x.tl_classes = y.tl_classes = 0;
	x.sli_families = y.sli_families = 0;
	x.min_aggr_ms = y.min_aggr_ms = 0;
	return memcmp(&x, &y, sizeof(x)) != 0;
}

/* Turns one family on or off in place: 0, -ENOTSUP when the session must be opened again
 * (stack probes that were never loaded), or another -errno with one line in err. */
static int family_set(struct agent *a, unsigned bit, bool sli, bool on, char *err, size_t errlen)
{
	struct session *s = &a->s;
	int r = 0;

	if (sli) {
		if (on) {
			r = session__attach_sli(s, err, errlen);
			sli_carry_in(a);
			return r;
		}
		sli_carry_out(a);
		session__detach_sli(s);
		return 0;
	}
	if (bit == PROBE_THREADS) {
		if (!on)
			return s->tl ? session__detach(s, FAMILY_THREADS) : 0;
		return session__threads_open(s, err, errlen);
	}
	if (bit == RECORD_TYPE_L7) {
		if (!on)
			return s->l7 ? session__detach(s, FAMILY_L7) : 0;
		r = session__attach_l7(s, err, errlen);
		trace_follow(a);
		return r;
	}
	if (!on)
		return s->probes ? session__detach_probe(s, bit) : 0;
	if (!s->probes)
		return -ENOTSUP;
	return session__attach_probe(s, bit, err, errlen);
}

/* "oncpu", "threads", "l7", "sli" (bit 0). */
static const char *family_name(unsigned bit)
{
	if (!bit)
		return "sli";
	if (bit == PROBE_THREADS)
		return "threads";
	if (bit == RECORD_TYPE_L7)
		return "l7";
	return stack_type_name(stack_type_of_probe(bit));
}

/* The families agent_apply turns on and off: every stack type's probe bit (the table's), then
 * the thread timeline, L7 and the SLI switch (0). */
static size_t family_bits(unsigned *bits)
{
	size_t n = 0;

	for_each_stack_type(t)
		bits[n++] = stack_types[t].probe;
	bits[n++] = PROBE_THREADS;
	bits[n++] = RECORD_TYPE_L7;
	bits[n++] = 0;
	return n;
}

int agent_apply(struct agent *a, const struct record_opts *n, char *err, size_t errlen)
{
	struct record_opts old = a->o;
	bool reopen = needs_reopen(&a->o, n);
	unsigned fams[STACK_TYPES + 3];
	size_t nfams = family_bits(fams);

	/* What changes in place, first, so that a family turned on below starts with its own
	 * settings: periods, output directories, the families' classes. */
	if (!reopen) {
		a->o.period = n->period;
		a->o.multi_instance = n->multi_instance;
		a->o.periodic_svg = n->periodic_svg;
		a->o.periodic_folded = n->periodic_folded;
		memcpy(a->o.out_dir, n->out_dir, sizeof(n->out_dir));
		memcpy(a->o.svg_dir, n->svg_dir, sizeof(n->svg_dir));
		memcpy(a->o.flame_dir, n->flame_dir, sizeof(n->flame_dir));
		a->o.tl_classes = n->tl_classes;
		a->o.sli_families = n->sli_families;
		a->o.min_aggr_ms = n->min_aggr_ms;
	}
	err[0] = 0;
	for (size_t i = 0; !reopen && i < nfams; i++) {
		unsigned bit = fams[i];
		bool sli = !bit;
		bool was = sli ? a->o.sli : !!(a->o.types & bit);
		bool on = sli ? n->sli : !!(n->types & bit);
		int r;

		if (sli && was && on && old.sli_families != n->sli_families) {
			/* Other SLI families: the SLI probes open again with them. */
			family_set(a, 0, true, false, err, errlen);
			was = false;
		}
		if (was == on)
			continue;
		/* The session reads its options from a->o: the new ones from here on. */
		r = family_set(a, bit, sli, on, err, errlen);
		if (r == -ENOTSUP) {
			reopen = true;
			break;
		}
		if (r)
			return r;
		if (sli)
			a->o.sli = on;
		else if (on)
			a->o.types |= bit;
		else
			a->o.types &= ~bit;
		agent_log(AGENT_LOG_INFO, "%s %s", family_name(bit), on ? "started" : "stopped");
	}
	if (reopen) {
		/* Targets and probe settings are the session's: the period so far is sent, and
		 * the families start afresh with the new ones. */
		agent_log(AGENT_LOG_INFO, "targets or probe settings changed: the probes restart");
		session__poll(&a->s, DRAIN_ALL);
		batch_send(a, true);
		session_close(a);
		a->o = *n;
		if (session_open(a)) {
			snprintf(err, errlen, "the probes could not start with the new settings; "
				 "back to the previous ones");
			a->o = old;
			if (session_open(a))
				return -EIO;
			batch_begin(a);
			return -EINVAL;
		}
		batch_begin(a);
	}
	pyroscope_follow(a);
	return 0;
}

const struct record_opts *agent_opts(const struct agent *a)
{
	return &a->o;
}

struct session *agent_session(struct agent *a)
{
	return a->open ? &a->s : NULL;
}

const char *agent_hostname(const struct agent *a)
{
	return a->hostname;
}

double agent_start_unix(const struct agent *a)
{
	return a->start_unix;
}

/* SIGHUP: argv is read again (its --config file with it) and what changed is applied. */
static void reload(struct agent *a)
{
	struct agent_config cfg;
	struct record_opts n;
	char err[512];
	int r;

	agent_log(AGENT_LOG_INFO, "SIGHUP: reading the configuration again");
	a->reloading = true;
	cfg = a->cfg; /* the servers keep their addresses */
	r = parse(a, &n);
	a->cfg = cfg;
	a->reloading = false;
	if (!r)
		a->base = n;
	if (!r && a->rest && agent_rest__overlay(a->rest, &a->base, &n, err, sizeof(err))) {
		agent_log(AGENT_LOG_ERROR, "%s", err);
		r = 1;
	}
	if (r) {
		agent_log(AGENT_LOG_ERROR, "the new configuration is not valid: the agent keeps "
			  "the running one");
		return;
	}
	n.lazy_types = a->o.lazy_types;
	if (agent_apply(a, &n, err, sizeof(err)))
		agent_log(AGENT_LOG_ERROR, "%s", err[0] ? err : "the new configuration failed");
	else
		agent_log(AGENT_LOG_INFO, "configuration applied");
}

/* --- the servers ------------------------------------------------------------------------ */

static void answer_metrics(void *ctx, struct agent_request *q)
{
	struct agent *a = ctx;
	FILE *f;
	int r;

	if (strcmp(q->path, "/metrics")) {
		agent_request_reply(q, 404, "text/plain; charset=utf-8", "not found: GET /metrics\n");
		return;
	}
	if (strcmp(q->method, "GET") && strcmp(q->method, "HEAD")) {
		agent_request_reply(q, 405, "text/plain; charset=utf-8", "method not allowed\n");
		return;
	}
	free(q->reply);
	q->reply = NULL;
	q->reply_len = 0;
	f = open_memstream(&q->reply, &q->reply_len);
	if (!f) {
		agent_request_reply(q, 500, "text/plain; charset=utf-8", "out of memory\n");
		return;
	}
	r = agent_metrics_write(f, a);
	if (fclose(f) || r) {
		agent_request_reply(q, 500, "text/plain; charset=utf-8", "cannot write metrics\n");
		return;
	}
	q->status = 200;
	q->content_type = AGENT_METRICS_TYPE;
}

static void answer_rest(void *ctx, struct agent_request *q)
{
	struct agent *a = ctx;

	agent_rest__answer(a->rest, a, &a->base, q);
}

/* The first line of the token file, without its newline. 0, or 1 after reporting. */
static int read_token(const char *path, char **token)
{
	size_t len;
	int r = file_read(path, 4096, 0, token, &len);

	if (r) {
		agent_log(AGENT_LOG_ERROR, "--rest-token %s: %s", path,
			  r == -EFBIG ? "larger than 4096 bytes" : strerror(-r));
		return 1;
	}
	(*token)[strcspn(*token, "\r\n")] = 0;
	if (strlen(*token) < 16) {
		agent_log(AGENT_LOG_ERROR, "--rest-token %s: the token needs at least 16 characters",
			  path);
		free(*token);
		*token = NULL;
		return 1;
	}
	return 0;
}

/* Starts /metrics and the REST control as configured. 0, or 1 after reporting. */
static int servers_start(struct agent *a)
{
	struct agent_config *c = &a->cfg;
	struct sockaddr_storage ss;
	char err[512], *token = NULL;
	bool loopback = true;

	if (strcmp(c->metrics, "off")) {
		a->metrics_srv = agent_http__start("--metrics", c->metrics, 0, err, sizeof(err));
		if (!a->metrics_srv) {
			agent_log(AGENT_LOG_ERROR, "%s", err);
			return 1;
		}
		agent_log(AGENT_LOG_INFO, "metrics on %s, port %d: GET /metrics", c->metrics,
			  agent_http__port(a->metrics_srv));
	}
	if (!strcmp(c->rest, "off"))
		return 0;
	if (agent_http_addr(c->rest, &ss, &loopback, err, sizeof(err))) {
		agent_log(AGENT_LOG_ERROR, "--rest: %s", err);
		return 1;
	}
	if (!loopback && !c->rest_allow_remote) {
		agent_log(AGENT_LOG_ERROR, "--rest %s: not a loopback address; the REST control "
			  "takes other hosts only with --rest-allow-remote and --rest-token", c->rest);
		return 1;
	}
	if (c->rest_allow_remote && !c->rest_token[0]) {
		agent_log(AGENT_LOG_ERROR, "--rest-allow-remote needs --rest-token FILE");
		return 1;
	}
	if (c->rest_token[0] && read_token(c->rest_token, &token))
		return 1;
	a->rest = agent_rest__new(token);
	free(token);
	if (!a->rest) {
		agent_log(AGENT_LOG_ERROR, "out of memory");
		return 1;
	}
	a->rest_srv = agent_http__start("--rest", c->rest, AGENT_REST_BODY_MAX, err, sizeof(err));
	if (!a->rest_srv) {
		agent_log(AGENT_LOG_ERROR, "%s", err);
		return 1;
	}
	agent_log(AGENT_LOG_INFO, "REST control on %s, port %d", c->rest,
		  agent_http__port(a->rest_srv));
	return 0;
}

static void servers_stop(struct agent *a)
{
	agent_http__stop(a->metrics_srv);
	agent_http__stop(a->rest_srv);
	agent_rest__free(a->rest);
	a->metrics_srv = a->rest_srv = NULL;
	a->rest = NULL;
}

/* --- the loop -------------------------------------------------------------------------- */

/* Once a --period: the batch to the sinks, the periodic files, the SLI interval closed. */
static void period(struct agent *a)
{
	struct session *s = &a->s;

	batch_send(a, false);
	if (s->probes) {
		if ((a->o.periodic_svg || a->o.periodic_folded) &&
		    record_write_period_files(s, a->period_start))
			agent_log(AGENT_LOG_WARNING, "some periodic files could not be written");
		collector__clear(s->col);
		session__renew_frames(s, NULL, NULL, 0, NULL, NULL);
	}
	if (s->sli)
		sli_collector__close(s->sli);
	batch_begin(a);
}

int cmd_agent(int argc, char **argv)
{
	struct agent *a = calloc(1, sizeof(*a));
	struct sigaction sa = { .sa_handler = on_signal };
	double next_period, next_second, now;
	int ret = 0;

	if (!a) {
		cli_error("out of memory");
		return 1;
	}
	a->argc = argc;
	a->argv = argv;
	snprintf(a->cfg.metrics, sizeof(a->cfg.metrics), "%s", AGENT_METRICS_ADDR);
	snprintf(a->cfg.rest, sizeof(a->cfg.rest), "%s", AGENT_REST_ADDR);
	if (sinks_create(a)) {
		cli_error("out of memory");
		ret = 1;
		goto out;
	}
	ret = parse(a, &a->o);
	if (ret)
		goto out;
	a->base = a->o;
	gethostname(a->hostname, sizeof(a->hostname) - 1);
	ret = sinks_start(a);
	if (ret)
		goto out;
	/* The signals are taken before the probes attach, so that none can end the agent
	 * without the probes leaving the kernel. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (session_open(a)) {
		ret = 1;
		goto out;
	}
	a->start_unix = clock_wall_s();
	a->start_mono = clock_mono_s();
	if (servers_start(a)) {
		ret = 1;
		goto out;
	}
	batch_begin(a);
	pyroscope_follow(a); /* a --config request's pyroscope_server */
	agent_log(AGENT_LOG_INFO, "running (pid %d): period %gs", (int)getpid(), a->o.period);
	next_period = a->start_mono + a->o.period;
	next_second = a->start_mono + 1;
	while (!stop_signal) {
		if (a->open && session__poll(&a->s, 100) < 0) {
			session__poll_report(&a->s);
			agent_say(&a->msgs);
			ret = 1;
			break;
		}
		if (!a->open)
			usleep(100000);
		agent_say(&a->msgs);
		agent_http__serve(a->metrics_srv, answer_metrics, a);
		agent_http__serve(a->rest_srv, answer_rest, a);
		now = clock_mono_s();
		if (a->open && now >= next_second) {
			session__tick(&a->s);
			next_second += 1;
			if (next_second < now)
				next_second = now + 1;
		}
		if (a->open && now >= next_period) {
			period(a);
			next_period += a->o.period;
			if (next_period < now)
				next_period = now + a->o.period;
		}
		if (hup_signal) {
			hup_signal = 0;
			reload(a);
		}
	}
	if (stop_signal)
		agent_log(AGENT_LOG_INFO, "%s: stopping", strsignal(stop_signal));
	if (a->open) {
		char cost[8192], *line, *save = NULL;

		session__poll(&a->s, DRAIN_ALL);
		batch_send(a, true);
		/* What the agent cost since its probes last started. */
		session__cost_text(&a->s, cost, sizeof(cost));
		for (line = strtok_r(cost, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			agent_log(AGENT_LOG_INFO, "%s", line);
	}
out:
	servers_stop(a);
	session_close(a);
	sinks_free_unstarted(a);
	sinks_stop(a);
	agent_batch__put(a->cur);
	l7_table__free(a->l7_before);
	sli__free(a->sli_before);
	agent_say(&a->msgs);
	msg_list__free(&a->msgs);
	free(a);
	return ret;
}
