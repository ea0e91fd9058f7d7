/* `galatop record --trigger EXPR`: see record_trigger.h. */
#include "record.h"
#include "record_trigger.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "engine/history.h"
#include "export/pprof.h"
#include "export/snapshot.h"
#include "model/slices.h"
#include "util/clock.h"
#include "util/procstat.h"

int record_trigger_check(const struct record_opts *o, const char *cmd)
{
	if (!o->trigger[0])
		return 0;
	if (o->period)
		return cli_usage_error(cmd, "--trigger and --period write files apart: pick one");
	if (!(o->trigger_before + o->trigger_after >= 1))
		return cli_usage_error(cmd, "--trigger-before %g and --trigger-after %g: a capture "
					    "needs at least 1 s", o->trigger_before, o->trigger_after);
	if (o->sli || (o->types & (PROBE_THREADS | RECORD_TYPE_L7)))
		return cli_usage_error(cmd, "--trigger captures stack profiles (%s), not threads, "
					    "sli or l7", stack_type_list());
	for (size_t i = 0; i < o->noutputs; i++) {
		const char *ext = record_output_ext(o->outputs[i]);

		if (!ext || (strcmp(ext, ".gtop") && strcmp(ext, ".svg") && strcmp(ext, ".folded") &&
			     strcmp(ext, ".pb.gz") && strcmp(ext, ".speedscope.json")))
			return cli_usage_error(cmd, "-o %s: --trigger writes .gtop, .svg, .folded, "
						    ".pb.gz or .speedscope.json (each capture's "
						    "time goes into the name)",
					       o->outputs[i]);
	}
	return 0;
}

struct trigger_sampler {
	const struct trigger_expr *e;
	const int *pids;
	const size_t *npids;
	struct procstat_cpu all, *cpus;	    /* the last reading */
	struct procstat_cpu now_all, *now_cpus;
	double *busy; /* per-CPU busy % between the last two readings */
	size_t ncpus;
	uint64_t ticks; /* the targets' CPU ticks at the last reading */
	double t;	/* time of the last reading; NaN before the first */
};

struct trigger_sampler *trigger_sampler__new(const struct trigger_expr *e, const int *pids,
					     const size_t *npids)
{
	struct trigger_sampler *ts = calloc(1, sizeof(*ts));
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (!ts)
		return NULL;
	ts->e = e;
	ts->pids = pids;
	ts->npids = npids;
	ts->ncpus = n > 0 ? (size_t)n : 1;
	ts->cpus = calloc(ts->ncpus, sizeof(*ts->cpus));
	ts->now_cpus = calloc(ts->ncpus, sizeof(*ts->now_cpus));
	ts->busy = calloc(ts->ncpus, sizeof(*ts->busy));
	ts->t = NAN;
	if (!ts->cpus || !ts->now_cpus || !ts->busy) {
		trigger_sampler__free(ts);
		return NULL;
	}
	return ts;
}

void trigger_sampler__free(struct trigger_sampler *ts)
{
	if (!ts)
		return;
	free(ts->cpus);
	free(ts->now_cpus);
	free(ts->busy);
	free(ts);
}

/* CPU ticks of the targets still alive. */
static uint64_t target_ticks(const struct trigger_sampler *ts)
{
	uint64_t sum = 0, t;

	for (size_t i = 0; i < *ts->npids; i++)
		if (procstat_read_pid(ts->pids[i], &t) == 0)
			sum += t;
	return sum;
}

bool trigger_sampler__holds(struct trigger_sampler *ts, double now, char *why, size_t whylen)
{
	struct trigger_metrics m = { NAN, ts->busy, ts->ncpus, NAN };
	bool by_pid = *ts->npids > 0, first = isnan(ts->t);
	uint64_t ticks = by_pid ? target_ticks(ts) : 0;
	int r = procstat_read(&ts->now_all, ts->now_cpus, ts->ncpus);

	if (!first && r >= 0) {
		for (size_t c = 0; c < ts->ncpus; c++)
			ts->busy[c] = procstat_busy_pct(&ts->cpus[c], &ts->now_cpus[c]);
		m.cpu = procstat_busy_pct(&ts->all, &ts->now_all);
	}
	/* With targets, "cpu" is theirs: CPU seconds per second, as top shows it. A target
	 * that exited takes its ticks along, so a drop counts as nothing. */
	if (!first && by_pid)
		m.cpu = now > ts->t && ticks >= ts->ticks
				? 100.0 * (double)(ticks - ts->ticks) / sysconf(_SC_CLK_TCK) / (now - ts->t)
				: 0;
	if (trigger_uses(ts->e, TRIGGER_LOAD) && procstat_read_load(&m.load))
		m.load = NAN;
	if (r >= 0) {
		ts->all = ts->now_all;
		memcpy(ts->cpus, ts->now_cpus, ts->ncpus * sizeof(*ts->cpus));
	}
	ts->ticks = ticks;
	ts->t = now;
	if (first && !trigger_uses(ts->e, TRIGGER_LOAD))
		return false;
	return trigger_eval(ts->e, &m, why, whylen);
}

/* "out.svg" -> "out-oncpu-20261123-123001.svg" (the type only when several are recorded). */
static void stamped(char *buf, size_t len, const char *path, const char *type, const char *stamp)
{
	const char *ext = record_output_ext(path);

	snprintf(buf, len, "%.*s%s%s-%s%s", (int)(ext - path), path, type ? "-" : "",
		 type ? type : "", stamp, ext);
}

static int write_snapshot(struct session *s, const char *path, struct profile *const *p,
			  double from_wall, double to_wall, const char *why)
{
	struct snapshot_build b;
	struct snapshot_kv filters[2];
	char err[512];

	snapshot_build_init(&b, true, "galatop record --trigger", from_wall, to_wall);
	for_each_stack_type(t)
		snapshot_build_stack(&b, t, p[t], NULL, true, s->o->freq);
	filters[0] = (struct snapshot_kv){ "trigger", s->o->trigger };
	filters[1] = (struct snapshot_kv){ "trigger_fired", why };
	b.sn.meta.filters = filters;
	b.sn.meta.nfilters = 2;
	if (snapshot_write(path, &b.sn, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	return 0;
}

/* Writes the capture of [moment - before, moment + after]: a .gtop (-o's, or one in --out-dir)
 * and the -o .svg/.folded files, each named with the moment's local time. */
static int write_capture(struct session *s, struct history *w, double moment, const char *why)
{
	const struct record_opts *o = s->o;
	struct profile *p[STACK_TYPES] = { 0 };
	double from = moment - o->trigger_before, to = moment + o->trigger_after;
	time_t at = (time_t)(w->wall0 + moment);
	char stamp[32], path[8192];
	bool gtop = false, several = false;
	struct pprof_meta meta;
	int ret = 0, ntypes = 0;

	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&at));
	for_each_stack_type(i) {
		if (!w->ring[i])
			continue;
		p[i] = profile__new(s->ft, profile__kind(collector__profile(s->col, i)), false);
		if (!p[i] || slices__fold_range(w->ring[i], from, to, p[i])) {
			cli_error("out of memory writing the capture");
			ret = 1;
			goto out;
		}
		ntypes++;
	}
	several = ntypes > 1;
	meta = (struct pprof_meta){ w->wall0 + from, to - from, s->o->freq };
	for (size_t j = 0; j < o->noutputs; j++) {
		const char *ext = strrchr(o->outputs[j], '.');

		if (!strcmp(ext, ".gtop")) {
			stamped(path, sizeof(path), o->outputs[j], NULL, stamp);
			ret |= write_snapshot(s, path, p, w->wall0 + from, w->wall0 + to, why);
			gtop = true;
			fprintf(stderr, "galatop: wrote %s\n", path);
			continue;
		}
		for_each_stack_type(i) {
			if (!p[i])
				continue;
			stamped(path, sizeof(path), o->outputs[j], several ? stack_type_name(i) : NULL,
				stamp);
			ret |= record_write_profile(path, i, p[i], &meta);
			fprintf(stderr, "galatop: wrote %s\n", path);
		}
	}
	if (!gtop) {
		snprintf(path, sizeof(path), "%s/galatop-trigger-%s.gtop", o->out_dir, stamp);
		ret |= write_snapshot(s, path, p, w->wall0 + from, w->wall0 + to, why);
		fprintf(stderr, "galatop: wrote %s\n", path);
	}
out:
	for_each_stack_type(i)
		profile__free(p[i]);
	return ret;
}

struct record_trigger {
	struct trigger_expr e;
	struct trigger_state st;
	struct trigger_sampler *ts;
	/* The rolling window: the per-second history of the last seconds a capture may need
	 * (those before the moment, after it, and the one it is written in). */
	struct history w;
	char fired_why[96];
};

struct record_trigger *record_trigger__open(struct session *s)
{
	const struct record_opts *o = s->o;
	struct record_trigger *t = calloc(1, sizeof(*t));
	double keep = ceil(o->trigger_before + o->trigger_after) + 4;
	char err[256];

	if (!t) {
		cli_error("out of memory");
		return NULL;
	}
	trigger_parse(o->trigger, &t->e, err, sizeof(err)); /* checked when parsed */
	trigger_state_init(&t->st, o->trigger_before, o->trigger_after, o->trigger_cooldown);
	t->ts = trigger_sampler__new(&t->e, s->pids, &s->npids);
	if (!t->ts || history_open(&t->w, s, keep, 2 * (size_t)keep, false)) {
		cli_error("out of memory");
		trigger_sampler__free(t->ts);
		history_free(&t->w);
		free(t);
		return NULL;
	}
	trigger_sampler__holds(t->ts, t->w.mono0, NULL, 0); /* the first reading */
	fprintf(stderr, "galatop: waiting for %s (captures %g s before and %g s after, then %g s "
			"of cooldown)... Ctrl-C to stop\n",
		o->trigger, o->trigger_before, o->trigger_after, o->trigger_cooldown);
	return t;
}

int record_trigger__second(struct record_trigger *t, struct session *s, double now_mono)
{
	double now = now_mono - t->w.mono0, moment;
	char why[64];

	if (history_cut(&t->w, s, now_mono)) {
		cli_error("out of memory keeping the window");
		return -1;
	}
	if (trigger_sampler__holds(t->ts, now_mono, why, sizeof(why)) &&
	    trigger_state_step(&t->st, now, true)) {
		time_t at = (time_t)(t->w.wall0 + now);
		char hms[16];

		strftime(hms, sizeof(hms), "%H:%M:%S", localtime(&at));
		fprintf(stderr, "galatop: trigger at %s: %s; capturing until %g s later\n", hms, why,
			s->o->trigger_after);
		snprintf(t->fired_why, sizeof(t->fired_why), "%s at %s", why, hms);
	}
	if (trigger_state_due(&t->st, now, &moment))
		return write_capture(s, &t->w, moment, t->fired_why);
	return 0;
}

int record_trigger__close(struct record_trigger *t, struct session *s)
{
	double moment;
	int ret = 0;

	if (!t)
		return 0;
	/* Stopped during a capture: what it has so far is written. */
	if (!isnan(t->st.fired_at)) {
		session__poll(s, 0);
		history_cut(&t->w, s, clock_mono_s());
		if (trigger_state_due(&t->st, INFINITY, &moment))
			ret |= write_capture(s, &t->w, moment, t->fired_why);
	}
	fprintf(stderr, "galatop: %u capture%s\n", t->st.fired, t->st.fired == 1 ? "" : "s");
	trigger_sampler__free(t->ts);
	history_free(&t->w);
	free(t);
	return ret;
}
