/* The agent's Prometheus exposition (GET /metrics); metric names in docs/agent.md. */
#ifndef GALATOP_CLI_AGENT_METRICS_H
#define GALATOP_CLI_AGENT_METRICS_H

#include <stdio.h>

#define AGENT_METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct agent;

/* Writes every metric of a (text format 0.0.4, no timestamps) to f. 0 or -errno. */
int agent_metrics_write(FILE *f, struct agent *a);

#endif
