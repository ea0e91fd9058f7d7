/* The thread timeline's side of `galatop record` (see record_threads.c). */
#ifndef GALATOP_CLI_RECORD_THREADS_H
#define GALATOP_CLI_RECORD_THREADS_H

#include <stdbool.h>

struct session;

/* Reads the last calls in progress, writes the timeline outputs of s->o but the snapshot
 * (JSON lines to standard output when there is none and only threads were recorded) and
 * prints the lock hints on standard error. 0 or 1 after reporting. */
int record_threads_write(struct session *s);

#endif
