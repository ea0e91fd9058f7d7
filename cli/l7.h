/* The L7 side of `galatop record --type l7` (its outputs) and the --protocols names. */
#ifndef GALATOP_CLI_L7_H
#define GALATOP_CLI_L7_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "record.h"

struct session;

/* The .jsonl output of `galatop record --type l7`: the request trace, written as it comes. */
struct record_l7 {
	FILE *f;	  /* NULL when there is none */
	const char *path;
	uint64_t ts0_ns;  /* the trace's time 0 (l7_capture__clock0) */
	double wall0;
};

/* Opens s's .jsonl output, if any, and has the L7 capture write every paired request to it.
 * 0, or 1 after reporting. */
int record_l7_start(struct session *s, struct record_l7 *r);
/* At the end of the recording (secs long): closes the trace and writes the tables to the .json
 * and .prom outputs (a text table on standard output when there is no output). An exit code. */
int record_l7_finish(struct session *s, struct record_l7 *r, double secs);

/* Parses "http,pgsql,..." into a mask of 1 << enum l7_proto; reports and returns -1 on an
 * unknown name. */
int l7_parse_protocols(const char *cmd, const char *arg, unsigned *mask);

#endif
