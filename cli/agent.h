/* galatop agent (cli/agent.c): the long-running loop and what its servers (metrics, REST
 * control) ask of it, from the agent's own thread. */
#ifndef GALATOP_CLI_AGENT_H
#define GALATOP_CLI_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/record_opts.h"
#include "model/cost.h"

#define AGENT_PERIOD_S 30 /* default --period */
#define AGENT_METRICS_ADDR "127.0.0.1:8888" /* default --metrics, gala-gopher's web_server port */
#define AGENT_REST_ADDR "127.0.0.1:9999"    /* default --rest, gala-gopher's rest_server port */

struct agent;
struct l7_table;
struct agent_sink;
struct session;

/* What the agent counted since it started, over every session it opened (the probes restart
 * when targets change). */
struct agent_totals {
	uint64_t samples;	     /* stack samples taken in */
	uint64_t lost_stacks;	     /* records the kernel could not deliver, per family */
	uint64_t lost_threads;
	uint64_t lost_l7;
	uint64_t lost_sli;
	uint64_t batch_events_dropped;	 /* past AGENT_BATCH_EVENTS_MAX in a period */
	uint64_t batch_requests_dropped; /* past AGENT_BATCH_REQUESTS_MAX */
	uint64_t sessions;	     /* sessions opened (1 + probe restarts) */
	uint64_t probe_ns[COST_FAMILIES];   /* kernel time in its BPF programs, per family */
	uint64_t probe_runs[COST_FAMILIES]; /* their runs */
	/* The seconds those were counted over: the BPF statistics are on for a sampled window of
	 * 1 s in 10 by default (--probe-stats), all the time with --probe-stats on. */
	double probe_stats_s;
	bool probe_stats;	     /* the kernel counted those (BPF statistics on) */
};

/* The totals now: closed sessions' and the open one's. */
void agent_totals(struct agent *a, struct agent_totals *t);

/* Turns the families on and off and applies the settings of n (a request or the config read
 * again): in place when only families, periods and output directories change, else by
 * opening the session again with n. 0, or -errno with one line in err. */
int agent_apply(struct agent *a, const struct record_opts *n, char *err, size_t errlen);
/* The options the agent runs with now. */
const struct record_opts *agent_opts(const struct agent *a);
/* Its session, NULL while none is open. */
struct session *agent_session(struct agent *a);
/* Its sinks: their count, the array in *out (owned by a). */
size_t agent_sinks(struct agent *a, struct agent_sink ***out);
const char *agent_hostname(const struct agent *a);
/* When it started (UNIX seconds). */
double agent_start_unix(const struct agent *a);
/* The L7 rows of the probe sessions closed since the agent started (new targets or settings
 * restart the probes), which /metrics adds to the open session's; NULL when none closed. */
const struct l7_table *agent_l7_before(const struct agent *a);
/* Sets record's periodic file switches from the directories o names: files are written only
 * when --out-dir, svg_dir or flame_dir says where. */
void agent_files_default(struct record_opts *o);

#endif
