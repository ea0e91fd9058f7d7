/* `galatop record --trigger EXPR`: a rolling window of per-second slices of the stack
 * profiles, and a snapshot (.gtop, plus what -o asks) of the seconds before and after each
 * moment the condition (model/trigger.h) holds, with a cooldown between captures. */
#ifndef GALATOP_CLI_RECORD_TRIGGER_H
#define GALATOP_CLI_RECORD_TRIGGER_H

#include <signal.h>

#include "engine/session.h"
#include "model/trigger.h"

/* Checks the trigger options of o against the rest (cmd "record" or "live"). 0, or an exit
 * code after a one-line report. */
int record_trigger_check(const struct record_opts *o, const char *cmd);
/* Runs the trigger loop over the open session until *stop, -d or the targets' end. Returns an
 * exit code (1 when a capture could not be written or the probes could not be read). */
int record_trigger_run(struct session *s, volatile sig_atomic_t *stop);

/* Samples the trigger metrics once a second, for the record loop and the live view. */
struct trigger_sampler;
/* A sampler for the metrics e uses; pids (borrowed, may change) are the -p targets whose CPU %
 * "cpu" means when *npids > 0. NULL on ENOMEM. */
struct trigger_sampler *trigger_sampler__new(const struct trigger_expr *e, const int *pids,
					     const size_t *npids);
/* Reads the metrics at now (seconds, CLOCK_MONOTONIC) and says whether e holds (why: the
 * condition that did, as in trigger_eval). The first call only takes a reading: false. */
bool trigger_sampler__holds(struct trigger_sampler *ts, double now, char *why, size_t whylen);
void trigger_sampler__free(struct trigger_sampler *ts);

#endif
