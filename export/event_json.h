/* Thread events and L7 requests as messages for an event bus (Kafka): gala-gopher's JSON (its
 * tprofiling events: Timestamp, Resource with thread.pid/tgid/comm and container, Attributes
 * with a list of event.name, event.type, start_time, end_time, duration, count, func.stack...;
 * its L7 trace objects) or OTLP/JSON LogsData (one resourceLogs, attributes typed as OTLP
 * wants). docs/agent.md. */
#ifndef GALATOP_EXPORT_EVENT_JSON_H
#define GALATOP_EXPORT_EVENT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "model/l7/table.h"

enum event_format { EVENT_GALA = 0, EVENT_OTLP, EVENT_FORMATS };

/* "gala" or "otlp" to the format, -1 for other names; and back. */
int event_format_parse(const char *s);
const char *event_format_str(enum event_format f);

/* Who the events are of: a thread of a process (tid 0: the process), on a host. Strings may
 * be NULL or "" (left out). */
struct event_who {
	const char *host_id, *host_name;
	uint32_t pid, tid;
	const char *comm;   /* the process's name */
	const char *thread; /* the thread's name */
	const char *container_id, *container, *pod;
};

/* One interval of a thread (the thread timeline). */
struct event_thread {
	const char *kind;  /* tl_kind_str: "oncpu", "file", "net", "lock", ... */
	const char *name;  /* system call name, or the kind */
	const char *attr;  /* file path or socket text (kind "net"), NULL if none */
	const char *stack; /* user stack, root first, ';'-separated, NULL if none */
	double start, end; /* UNIX seconds */
	uint32_t count;	   /* calls it stands for */
};

/* The message of events ev[0..n) of thread w, made at UNIX time now: gala-gopher's tprofiling
 * event (its values list) or a LogsData with a log record per event. NUL-terminated, caller
 * frees; NULL on ENOMEM. */
char *event_thread_message(enum event_format f, const struct event_who *w,
			   const struct event_thread *ev, size_t n, double now);
/* The message of one L7 request of session s (the thread tid sent or received it) at UNIX time
 * timestamp: gala-gopher's trace object (export/l7_tables.h), or a LogsData whose resource is
 * w's process and whose record holds the trace object's fields. NULL on ENOMEM. */
char *event_l7_message(enum event_format f, const struct event_who *w, const struct l7_session *s,
		       const struct l7_record *r, uint32_t tid, double timestamp, double now);

#endif
