/* galatop agent (cli/agent.c): the long-running loop and what its servers (metrics, REST
 * control) ask of it, from the agent's own thread. */
#ifndef GALATOP_CLI_AGENT_H
#define GALATOP_CLI_AGENT_H

#include <stddef.h>

#include "engine/record_opts.h"

#define AGENT_PERIOD_S 30 /* default --period */

struct agent;
struct agent_sink;
struct session;

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
/* Sets record's periodic file switches from the directories o names: files are written only
 * when --out-dir, svg_dir or flame_dir says where. */
void agent_files_default(struct record_opts *o);

#endif
