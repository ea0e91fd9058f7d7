/* `galatop record --trigger EXPR`: a rolling window of per-second slices of the stack
 * profiles, and a snapshot (.gtop, plus what -o asks) of the seconds before and after each
 * moment the condition (model/trigger.h) holds, with a cooldown between captures. */
#ifndef GALATOP_CLI_RECORD_TRIGGER_H
#define GALATOP_CLI_RECORD_TRIGGER_H

#include "engine/session.h"
#include "model/trigger.h"

/* Checks the trigger options of o against the rest (cmd "record" or "live"). 0, or an exit
 * code after a one-line report. */
int record_trigger_check(const struct record_opts *o, const char *cmd);
/* The trigger of a recording, a per-second step of the one record loop (cli/record.c). */
struct record_trigger;
/* Parses o->trigger, takes the sampler's first reading, opens the rolling window on s and
 * says what it waits for. NULL after reporting (out of memory). */
struct record_trigger *record_trigger__open(struct session *s);
/* Once a second (now_mono: CLOCK_MONOTONIC seconds): the window cut, the condition checked
 * (a capture starts unless in cooldown), a capture whose seconds after have passed written.
 * 0, 1 when a capture could not be written, -1 when the window is out of memory (stop). */
int record_trigger__second(struct record_trigger *t, struct session *s, double now_mono);
/* At the end of the loop: a capture in progress is written with what it has, the count of
 * captures said, t freed (NULL is a no-op). 0, or 1 when a capture could not be written. */
int record_trigger__close(struct record_trigger *t, struct session *s);

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
