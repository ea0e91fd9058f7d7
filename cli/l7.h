/* `galatop record --type l7` and the --protocols names. */
#ifndef GALATOP_CLI_L7_H
#define GALATOP_CLI_L7_H

#include <stdbool.h>

#include "record.h"

/* `galatop record --type l7`: runs the capture and writes o's outputs. An exit code. */
int l7_record(struct record_opts *o);

/* Parses "http,pgsql,..." into a mask of 1 << enum l7_proto; reports and returns -1 on an
 * unknown name. */
int l7_parse_protocols(const char *cmd, const char *arg, unsigned *mask);
/* Whether ext (".json", ...) is a format record --type l7 writes. */
bool l7_output_ext(const char *ext);

#endif
