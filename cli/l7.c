/* `galatop record --type l7` over the engine's L7 capture (engine/l7_capture): the outputs are
 * written when the recording stops; and the --protocols names. */
#include "l7.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "bpf/drain.h"
#include "engine/l7_capture.h"
#include "export/l7.h"
#include "export/snapshot.h"
#include "util/clock.h"

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

/* The .jsonl output: every paired request as a JSON line, as it comes. */
struct l7_trace {
	FILE *f;
	uint64_t ts0_ns;
	double wall0;
};

static void on_trace(void *ctx, const struct l7_session *s, const struct l7_record *r, uint32_t tid)
{
	struct l7_trace *t = ctx;

	l7_jsonl_write(t->f, s, r, tid, t->ts0_ns, t->wall0);
}

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
		struct snapshot snap = {0};
		char host[256] = "", msg[512];
		struct snapshot_probe probe = {"l7", NULL, 0};

		gethostname(host, sizeof(host) - 1);
		snap.meta.host = host;
		snap.meta.version = GALATOP_VERSION;
		snap.meta.start = start;
		snap.meta.end = start + secs;
		snap.meta.probes = &probe;
		snap.meta.nprobes = 1;
		snap.l7 = t;
		snap.l7_secs = secs;
		if (snapshot_write(path, &snap, msg, sizeof(msg))) {
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
	struct l7_capture *e;
	struct l7_trace trace = { NULL, 0, 0 };
	const char *trace_path = NULL;
	struct msg_list msgs = { 0 };
	char err[512];
	uint64_t t0;
	double secs, start;
	int ret = 0;

	ret = session__open(&s, o, &msgs);
	cli_say(&msgs);
	if (ret) {
		msg_list__free(&msgs);
		return ret;
	}
	e = l7_capture__open(&s, err, sizeof(err));
	if (!e) {
		cli_error("%s", err);
		session__close(&s, true);
		cli_say(&msgs);
		msg_list__free(&msgs);
		return 1;
	}
	msg_list__add_lines(&msgs, MSG_WARNING, l7_capture__warnings(e));
	cli_say(&msgs);
	for (size_t i = 0; i < o->noutputs; i++)
		if (!strcmp(strrchr(o->outputs[i], '.'), ".jsonl"))
			trace_path = o->outputs[i];
	if (trace_path) {
		trace.f = cli_open_out(trace_path);
		if (!trace.f) {
			l7_capture__free(e);
			session__close(&s, true);
			cli_say(&msgs);
			msg_list__free(&msgs);
			return 1;
		}
		l7_capture__clock0(e, &trace.ts0_ns, &trace.wall0);
		l7_capture__set_trace(e, on_trace, &trace);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	session__start_command(&s);
	cli_say(&msgs);
	t0 = clock_mono_ns();
	start = clock_wall_s();
	fprintf(stderr, "galatop: recording L7 requests%s... Ctrl-C to stop\n",
		o->duration ? " for the given duration" : "");
	while (!stop_signal) {
		l7_capture__poll(e, 100);
		if (o->duration && (double)(clock_mono_ns() - t0) / 1e9 >= o->duration)
			break;
		if (session__done(&s))
			break;
	}
	cli_say(&msgs);
	l7_capture__poll(e, DRAIN_ALL);
	l7_capture__flush(e);
	secs = (double)(clock_mono_ns() - t0) / 1e9;
	l7_capture__summary(e, secs, err, sizeof(err));
	cli_error("%s", err);
	if (trace.f)
		ret |= cli_close_out(trace.f, trace_path);
	if (!o->noutputs && l7_text_write(stdout, l7_capture__table(e), secs)) {
		cli_error("cannot write standard output: %s", strerror(errno));
		ret = 1;
	}
	for (size_t i = 0; i < o->noutputs; i++)
		if (strcmp(strrchr(o->outputs[i], '.'), ".jsonl"))
			ret |= write_output(o->outputs[i], l7_capture__table(e), secs, start);
	l7_capture__free(e);
	session__close(&s, stop_signal != 0);
	cli_say(&msgs);
	msg_list__free(&msgs);
	return ret;
}
