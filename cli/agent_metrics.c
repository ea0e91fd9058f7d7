/* The agent's GET /metrics: the Prometheus text exposition (0.0.4) of the L7 tables and SLI
 * series (export/'s writers, in the agent's style: _total counters, hostname, container and
 * pod labels) and of the agent's own counters; cumulative since the agent started. */
#include "agent_metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "agent.h"
#include "agent_sink.h"
#include "engine/l7_capture.h"
#include "engine/session.h"
#include "engine/sli_collector.h"
#include "export/l7_tables.h"
#include "export/prom.h"
#include "export/sli.h"
#include "util/clock.h"

static void one(FILE *f, const char *name, const char *type, const char *help,
		const struct prom_style *st, const struct prom_label *l, size_t n, double v)
{
	struct prom_label all[PROM_MAX_LABELS];

	prom_family(f, name, type, help);
	prom_sample(f, name, all, prom_labels(st, l, n, all), v);
}

/* The agent's own counters. */
static void own_metrics(FILE *f, struct agent *a, const struct prom_style *st)
{
	struct agent_totals t;
	struct agent_sink **sinks;
	size_t nsinks = agent_sinks(a, &sinks);
	struct prom_label all[PROM_MAX_LABELS];
	struct rusage ru;

	agent_totals(a, &t);
	one(f, "galatop_agent_start_time_seconds", "gauge", "When the agent started, UNIX seconds",
	    st, NULL, 0, agent_start_unix(a));
	one(f, "galatop_agent_samples_total", "counter", "Stack samples taken in", st, NULL, 0,
	    (double)t.samples);
	prom_family(f, "galatop_agent_lost_total", "counter",
		    "Records the kernel could not deliver (ring buffer or map full), per family");
	{
		const struct {
			const char *family;
			uint64_t v;
		} lost[] = { { "stacks", t.lost_stacks },
			     { "threads", t.lost_threads },
			     { "l7", t.lost_l7 },
			     { "sli", t.lost_sli } };

		for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
			struct prom_label l = { "family", lost[i].family };

			prom_sample(f, "galatop_agent_lost_total", all, prom_labels(st, &l, 1, all),
				    (double)lost[i].v);
		}
	}
	prom_family(f, "galatop_agent_batch_dropped_total", "counter",
		    "Items left out of a period's batch past its cap, per kind");
	{
		struct prom_label l = { "kind", "thread_events" };

		prom_sample(f, "galatop_agent_batch_dropped_total", all,
			    prom_labels(st, &l, 1, all), (double)t.batch_events_dropped);
		l.value = "l7_requests";
		prom_sample(f, "galatop_agent_batch_dropped_total", all,
			    prom_labels(st, &l, 1, all), (double)t.batch_requests_dropped);
	}
	prom_family(f, "galatop_agent_sink_batches_total", "counter",
		    "Batches per sink: sent, failed (the sink's send refused them) or dropped "
		    "(its queue was full)");
	for (size_t i = 0; i < nsinks; i++) {
		struct agent_sink_counters c;
		struct agent_sink_stats own;
		const char *outcome[] = { "sent", "failed", "dropped" };
		uint64_t v[3];

		agent_sink__counters(sinks[i], &c, &own);
		v[0] = c.sent;
		v[1] = c.failed;
		v[2] = c.dropped;
		for (int k = 0; k < 3; k++) {
			struct prom_label l[] = { { "sink", agent_sink__ops(sinks[i])->name },
						  { "outcome", outcome[k] } };

			prom_sample(f, "galatop_agent_sink_batches_total", all,
				    prom_labels(st, l, 2, all), (double)v[k]);
		}
	}
	prom_family(f, "galatop_agent_sink_items_dropped_total", "counter",
		    "Items a sink gave up on itself (its own queue full)");
	for (size_t i = 0; i < nsinks; i++) {
		struct agent_sink_counters c;
		struct agent_sink_stats own;
		struct prom_label l = { "sink", agent_sink__ops(sinks[i])->name };

		agent_sink__counters(sinks[i], &c, &own);
		prom_sample(f, "galatop_agent_sink_items_dropped_total", all,
			    prom_labels(st, &l, 1, all), (double)own.dropped);
	}
	getrusage(RUSAGE_SELF, &ru);
	prom_family(f, "galatop_agent_cpu_seconds_total", "counter",
		    "CPU time of the agent's own threads, user and system");
	{
		struct prom_label l = { "mode", "user" };

		prom_sample(f, "galatop_agent_cpu_seconds_total", all, prom_labels(st, &l, 1, all),
			    (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
		l.value = "system";
		prom_sample(f, "galatop_agent_cpu_seconds_total", all, prom_labels(st, &l, 1, all),
			    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	}
	/* Without the kernel's BPF statistics there is no such figure: no samples. */
	prom_family(f, "galatop_agent_probe_seconds_total", "counter",
		    "Time the kernel spent in the agent's BPF programs, per probe family, while its "
		    "BPF statistics were on (galatop_agent_probe_stats_seconds_total)");
	for (int k = 0; t.probe_stats && k < COST_FAMILIES; k++) {
		struct prom_label l = { "family", cost_family_name(k) };

		prom_sample(f, "galatop_agent_probe_seconds_total", all,
			    prom_labels(st, &l, 1, all), (double)t.probe_ns[k] / 1e9);
	}
	prom_family(f, "galatop_agent_probe_runs_total", "counter",
		    "Runs of the agent's BPF programs, per probe family, while its BPF statistics "
		    "were on");
	for (int k = 0; t.probe_stats && k < COST_FAMILIES; k++) {
		struct prom_label l = { "family", cost_family_name(k) };

		prom_sample(f, "galatop_agent_probe_runs_total", all, prom_labels(st, &l, 1, all),
			    (double)t.probe_runs[k]);
	}
	if (t.probe_stats)
		one(f, "galatop_agent_probe_stats_seconds_total", "counter",
		    "Seconds the agent's BPF statistics were on (sampled: 1 s in 10 by default, "
		    "--probe-stats)", st, NULL, 0, t.probe_stats_s);
	one(f, "galatop_agent_probe_restarts_total", "counter",
	    "Times the probes restarted for new targets or settings", st, NULL, 0,
	    (double)(t.sessions ? t.sessions - 1 : 0));
}

int agent_metrics_write(FILE *f, struct agent *a)
{
	struct session *s = agent_session(a);
	struct prom_label host = { "hostname", agent_hostname(a) };
	struct prom_style st = { true, true, &host, 1 };
	const struct l7_table *before = agent_l7_before(a);
	const struct l7_table *now = s && s->l7 ? l7_capture__table(s->l7) : NULL;
	double secs = clock_wall_s() - agent_start_unix(a);
	int r = 0;

	if (before) {
		/* Counters since the agent started: the sessions closed and the open one. */
		struct l7_table *all = l7_table__new();

		r = !all ? -ENOMEM : l7_table__merge(all, before);
		if (!r && now)
			r = l7_table__merge(all, now);
		if (!r)
			r = l7_prom_write_style(f, all, secs, &st);
		l7_table__free(all);
	} else if (now) {
		r = l7_prom_write_style(f, now, secs, &st);
	}
	if (!r && s && s->sli)
		r = sli_prom_write_style(f, sli_collector__model(s->sli), &st);
	if (!r)
		own_metrics(f, a, &st);
	return r ? r : ferror(f) ? -EIO : 0;
}
