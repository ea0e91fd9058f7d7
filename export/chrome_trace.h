/* Chrome Trace Event Format (JSON) of a thread timeline, as Perfetto and chrome://tracing open
 * it: "X" slices in microseconds, process and thread names as "M" metadata, and no two slices
 * of one track overlapping (Perfetto drops those). System calls go on the thread's own track;
 * scheduler states (oncpu, runq, dstate) on a second track per thread. docs/formats.md. */
#ifndef GALATOP_EXPORT_CHROME_TRACE_H
#define GALATOP_EXPORT_CHROME_TRACE_H

#include <stdio.h>

#include "../model/timeline.h"

/* The scheduler track of thread tid has this tid in the trace. */
#define CHROME_TRACE_SCHED_TID(tid) ((tid) | 0x40000000u)

/* Writes tl to f; returns 0 or -errno of the first failed write. */
int chrome_trace_write(FILE *f, const struct timeline *tl);

#endif
