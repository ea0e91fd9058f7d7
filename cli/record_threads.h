/* The thread timeline's side of `galatop record` (see record_threads.c). */
#ifndef GALATOP_CLI_RECORD_THREADS_H
#define GALATOP_CLI_RECORD_THREADS_H

#include <stdbool.h>

struct session;

/* True when an -o path is the timeline's (.json, .jsonl, .gtop) rather than a profile's. */
bool record_threads_output(const char *path);
/* Reads the last calls in progress, writes the timeline outputs of s->o (JSON lines to
 * standard output when there is none and only threads were recorded) and prints the lock
 * hints on standard error. start_unix: when the recording began. 0 or 1 after reporting. */
int record_threads_write(struct session *s, double start_unix);

#endif
