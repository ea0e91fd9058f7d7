/* The L7 engine: the capture (bpf/l7_probe), the connection tracker and the session tables
 * (model/l7), user stacks named through the session's symbol cache; used by `galatop record
 * --type l7` and by the live view's L7 pane. */
#ifndef GALATOP_CLI_L7_H
#define GALATOP_CLI_L7_H

#include <stdbool.h>
#include <stdio.h>

#include "record.h"
#include "session.h"
#include "model/l7/table.h"

struct l7_engine;

/* Opens the capture for session s's targets and o's L7 options (s->o). NULL with a one-line
 * reason in err. */
struct l7_engine *l7_engine__open(struct session *s, char *err, size_t errlen);
/* Waits up to timeout_ms and takes in what the capture delivered. Returns records read or
 * -errno. */
int l7_engine__poll(struct l7_engine *e, int timeout_ms);
/* The tables; owned by the engine. */
struct l7_table *l7_engine__table(struct l7_engine *e);
/* Warnings of the capture (TLS coverage), "" if none. */
const char *l7_engine__warnings(struct l7_engine *e);
/* Writes every paired request to f as a JSON line (NULL stops). */
void l7_engine__set_trace(struct l7_engine *e, FILE *f);
/* Ends every connection so that waiting requests are counted (end of a recording). */
void l7_engine__flush(struct l7_engine *e);
/* Messages the kernel could not deliver (ring buffer full) so far. */
uint64_t l7_engine__drops(struct l7_engine *e);
/* Prints the recording summary on stderr. */
void l7_engine__summary(struct l7_engine *e, double secs);
/* Detaches and frees; NULL is a no-op. */
void l7_engine__free(struct l7_engine *e);

/* `galatop record --type l7`: runs the capture and writes o's outputs. An exit code. */
int l7_record(struct record_opts *o);

/* Parses "http,pgsql,..." into a mask of 1 << enum l7_proto; reports and returns -1 on an
 * unknown name. */
int l7_parse_protocols(const char *cmd, const char *arg, unsigned *mask);
/* Whether ext (".json", ...) is a format record --type l7 writes. */
bool l7_output_ext(const char *ext);

#endif
