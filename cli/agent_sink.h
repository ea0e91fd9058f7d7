/* What `galatop agent` sends away each --period, and the sinks that send it (Pyroscope,
 * Kafka, ...). A sink is one file defining a struct agent_sink_ops plus its line in
 * agent_sink_table[] (agent_sink.c): its options join the agent's command line, and it gets
 * every period's batch on a thread of its own through a bounded queue, so a slow or dead
 * server never stalls the probes: a batch that finds the queue full is dropped and counted. */
#ifndef GALATOP_CLI_AGENT_SINK_H
#define GALATOP_CLI_AGENT_SINK_H

#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/l7/proto.h"
#include "model/l7/table.h"
#include "model/stack_type.h"

/* Log levels of the agent's standard error (--log-level). */
enum agent_log_level { AGENT_LOG_ERROR, AGENT_LOG_WARNING, AGENT_LOG_INFO, AGENT_LOG_DEBUG };

/* Writes one line "galatop agent: LEVEL: text" to standard error when level is within
 * --log-level; callable from any thread. */
void agent_log(enum agent_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Sets the level agent_log lets through. */
void agent_log_set_level(enum agent_log_level level);
/* The level named s ("error", "warning", "info", "debug"), or -1. */
int agent_log_level_parse(const char *s);

/* Who a profile or an event belongs to: a process, with its container and pod. */
struct agent_ident {
	uint32_t pid;			/* 0: several processes merged (--group command/none) */
	char comm[16];			/* sanitized */
	char container_id[65];		/* full id, "" if none */
	char container[128];		/* runtime name (or short id), "" if none */
	char pod[128];			/* pod name (or uid), "" if none */
};

/* One period's stack profile of one process (or of everything when not split). */
struct agent_profile {
	enum stack_type type;	/* stack_types[type]: name, event */
	enum value_kind kind;	/* the counts' unit (mem counts bytes with --bytes) */
	struct agent_ident who;
	char *folded;		/* "frame;frame;frame COUNT\n" lines, root first, without the
				 * identity frames ([Pod], [Con], [PID]); NUL-terminated */
	size_t len;
	double total;		/* sum of the counts */
};

/* One interval of a thread (the thread timeline, --type threads). */
struct agent_thread_event {
	struct agent_ident who;
	uint32_t tid;
	char thread[16];	/* the thread's name */
	const char *kind;	/* tl_kind_str: "oncpu", "file", "net", "lock", "sched", "runq", ... */
	char *name;		/* system call name, or the kind ("oncpu", "runq", "dstate") */
	char *attr;		/* file path or socket text, NULL if none */
	char *stack;		/* user stack, root first, ';'-separated, NULL if none */
	double start, end;	/* UNIX seconds */
	uint32_t count;		/* calls it stands for */
};

/* One L7 request with its response (--type l7), as the connection tracker paired it. */
struct agent_l7_request {
	double timestamp;		/* UNIX seconds of the request's first byte */
	uint32_t tid;
	struct l7_session_key key;	/* tgid, addresses, port, roles, protocol, ssl */
	char comm[16], container[128], pod[128];
	struct l7_record rec;		/* latency, status, error, endpoint, detail */
};

/* What one period hands to every sink; immutable once pushed, shared by the sinks'
 * threads (reference counted), freed after the last one is done with it. */
struct agent_batch {
	double from, until;		/* UNIX seconds the batch covers */
	const char *hostname;
	unsigned sample_rate;		/* oncpu samples per second per CPU (-F) */
	struct agent_profile *profiles;
	size_t nprofiles;
	struct agent_thread_event *events;
	size_t nevents;
	uint64_t events_dropped;	/* thread events past AGENT_BATCH_EVENTS_MAX */
	struct agent_l7_request *requests;
	size_t nrequests;
	uint64_t requests_dropped;	/* requests past AGENT_BATCH_REQUESTS_MAX */
	int refs;			/* owned by agent_sink.c */
};

#define AGENT_BATCH_EVENTS_MAX 200000
#define AGENT_BATCH_REQUESTS_MAX 200000
#define AGENT_QUEUE_LEN 4 /* batches a sink may have waiting */

/* What a sink wants in its batches (the agent skips gathering what no sink wants). */
#define AGENT_WANTS_PROFILES 1u
#define AGENT_WANTS_EVENTS 2u
#define AGENT_WANTS_REQUESTS 4u

/* A sink's own counters, for the logs and the agent's metrics. */
struct agent_sink_stats {
	uint64_t sent;		/* batches (or messages) delivered */
	uint64_t failed;	/* deliveries that failed for good (after retries) */
	uint64_t dropped;	/* items the sink itself gave up on (its own queue full) */
};

struct agent_sink_ops {
	const char *name;		/* "pyroscope": logs and metrics labels */
	const char *help;		/* its lines of `galatop help agent`, each ending in '\n' */
	const struct option *options;	/* its long options ({0}-terminated); .val is ignored */
	/* A new sink state (NULL on ENOMEM), before its options. */
	void *(*create)(void);
	/* Takes one of its options (name without "--", arg NULL for flags): 0, or -EINVAL with a
	 * one-line reason in err. */
	int (*option)(void *st, const char *name, const char *arg, char *err, size_t errlen);
	/* Whether its options ask for it (a sink not asked for is freed unstarted). */
	bool (*enabled)(const void *st);
	/* AGENT_WANTS_* of the batches it gets. */
	unsigned (*wants)(const void *st);
	/* Starts it (connections, credentials) before the probes attach: 0, or -errno with one
	 * line in err (the agent then exits). */
	int (*start)(void *st, char *err, size_t errlen);
	/* Sends one batch, on the sink's own thread; may block (bounded by its own timeouts).
	 * 0, or -errno: counted as a failure and logged with err. */
	int (*send)(void *st, const struct agent_batch *b, char *err, size_t errlen);
	/* Its own counters (may be NULL: the queue's are enough); called from the agent's thread. */
	void (*stats)(void *st, struct agent_sink_stats *out);
	/* Flushes and frees; NULL-safe. */
	void (*destroy)(void *st);
};

/* Every sink galatop has, one line each in agent_sink.c. */
extern const struct agent_sink_ops *const agent_sink_table[];
extern const size_t agent_sink_count;

/* The counters the agent keeps per sink around its queue. */
struct agent_sink_counters {
	uint64_t queued;	/* batches handed to its thread */
	uint64_t dropped;	/* batches dropped: its queue was full */
	uint64_t sent;		/* batches its send took */
	uint64_t failed;	/* batches its send refused */
};

struct agent_sink;

/* A running sink: its state st (taken: destroyed by agent_sink__stop) on a thread of its own.
 * NULL with one line in err. */
struct agent_sink *agent_sink__start(const struct agent_sink_ops *ops, void *st, char *err,
				     size_t errlen);
/* Hands b to the sink's queue without waiting: false (and counted as dropped) when the queue
 * is full. */
bool agent_sink__push(struct agent_sink *s, struct agent_batch *b);
/* Its counters, and its own when it keeps some (zero otherwise). */
void agent_sink__counters(struct agent_sink *s, struct agent_sink_counters *c,
			  struct agent_sink_stats *own);
const struct agent_sink_ops *agent_sink__ops(const struct agent_sink *s);
/* Sends what is queued (each send bounded by the sink's own timeouts), stops its thread and
 * frees it; NULL is a no-op. */
void agent_sink__stop(struct agent_sink *s);

/* A new empty batch with one reference (NULL on ENOMEM). */
struct agent_batch *agent_batch__new(void);
/* Takes one reference more. */
void agent_batch__get(struct agent_batch *b);
/* Drops one reference, freeing the batch with the last; NULL is a no-op. */
void agent_batch__put(struct agent_batch *b);

#endif
