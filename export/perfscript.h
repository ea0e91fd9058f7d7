/* `perf script` text -> collapsed stacks with the grammar of FlameGraph's stackcollapse-perf.pl:
 * a streaming parser that hands each finished sample to a callback, and an aggregator that sums
 * equal stacks and writes them sorted bytewise, as that script prints them. */
#ifndef GALATOP_EXPORT_PERFSCRIPT_H
#define GALATOP_EXPORT_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A collapsed stack longer than this is cut: frames nearer the leaf than the limit are dropped
 * (the script has no limit; this bounds memory on hostile input). */
#define PERFSCRIPT_MAX_STACK (16u << 20)

struct perfscript_opts {
	bool include_pid;     /* root frame "comm-PID" (--pid) */
	bool include_tid;     /* root frame "comm-PID/TID" (--tid), wins over include_pid */
	bool annotate_kernel; /* "_[k]" after kernel frames (--kernel) */
	bool annotate_jit;    /* "_[j]" after frames from /tmp/perf-PID.map (--jit) */
	bool include_addrs;   /* "[dso <addr>]" for unknown symbols (--addrs) */
	bool count_samples;   /* count 1 per sample instead of its period (--samples) */
	const char *event_filter; /* keep only this event; NULL or "" = the first event seen */
	FILE *warn;	      /* where the script's warnings go (stderr), NULL = nowhere */
};

struct perfscript_stats {
	unsigned long lines;	    /* lines read */
	unsigned long samples;	    /* samples handed to the callback */
	unsigned long valid;	    /* lines matching a header or a frame */
	unsigned long unrecognized; /* lines matching neither a header nor a frame */
	unsigned long filtered;	    /* sample headers skipped by the event filter */
	unsigned long truncated;    /* samples cut at PERFSCRIPT_MAX_STACK */
};

/* Called once per sample: stack[0..len) is "comm;root;...;leaf" exactly as the script would
 * print it (it may hold any byte but '\n'), valid only during the call; count is the sample's
 * period (1 when absent or --samples). A non-zero return stops parsing and is passed back. */
typedef int (*perfscript_stack_fn)(void *ctx, const char *stack, size_t len, uint64_t count);

struct perfscript;

/* Makes a parser with a copy of *o (event_filter is copied too). NULL on ENOMEM. */
struct perfscript *perfscript__new(const struct perfscript_opts *o, perfscript_stack_fn fn,
				   void *ctx);
/* Frees ps; NULL is a no-op. A sample not yet ended by a blank line is dropped, as the script
 * does. */
void perfscript__free(struct perfscript *ps);
/* Parses buf[0..len), any chunking: a line split across calls is joined; warnings are held
 * until perfscript__end_file. Returns 0, the callback's non-zero value, or -ENOMEM. */
int perfscript__feed(struct perfscript *ps, const char *buf, size_t len);
/* Ends one input file: a last line without '\n' is parsed as a line (the sample state carries
 * over to the next file, as perl's <> does). The file's warnings, held until now, go to
 * o->warn; but when it had more unrecognized lines than header and frame lines (not perf
 * script output: a binary file, a log) they are dropped and -EBADMSG is returned (its samples,
 * if any, were passed on). Else same returns as perfscript__feed. */
int perfscript__end_file(struct perfscript *ps);
/* After -EBADMSG: "label: not perf script output: N of M lines unrecognized" into buf. */
void perfscript__strerror(const struct perfscript *ps, const char *label, char *buf,
			  size_t len);
/* Reads f to its end in large blocks and parses it, then ends the file. Same returns as
 * perfscript__end_file, or -EIO when reading fails (errno tells why; not reported). */
int perfscript__parse_file(struct perfscript *ps, FILE *f);
/* Counters so far. */
const struct perfscript_stats *perfscript__stats(const struct perfscript *ps);

/* For a reader that makes perf script text itself and prints the same frame line again and
 * again (the perf.data reader), the parse of a frame line once, then its result pushed as
 * often as the line comes, as feeding it would do. */
/* Parses l[0..n) (one line, without its '\n') as a frame line would be parsed inside a
 * sample now: 1 with *frame[0..*len) what it adds to the stack (NULL when it adds nothing;
 * valid until the next call, and while l[0..n) is: it may be a part of it), 0 when it is not
 * a frame line (feed it instead), -ENOMEM. The
 * result depends on the options and on perfscript__frame_mode only. */
int perfscript__frame_parse(struct perfscript *ps, const char *l, size_t n, const char **frame,
			    size_t *len);
/* What feeding a frame line whose parse gave frame[0..len) (NULL: adds nothing) does: counted
 * as a line, added to the current sample's stack, if any. 0 or -ENOMEM. */
int perfscript__frame_push(struct perfscript *ps, const char *frame, size_t len);
/* The state a frame line's parse depends on besides the options: the current sample's
 * process name starts with "java" (its "Lpkg/Class" frames lose the 'L'). */
bool perfscript__frame_mode(const struct perfscript *ps);

/* Sums of counts per distinct stack string, for printing folded output. */
struct stack_agg;

/* NULL on ENOMEM. */
struct stack_agg *stack_agg__new(void);
/* NULL is a no-op. */
void stack_agg__free(struct stack_agg *sa);
/* Adds count to stack[0..len) (copied). 0 or -ENOMEM. */
int stack_agg__add(struct stack_agg *sa, const char *stack, size_t len, uint64_t count);
/* A perfscript_stack_fn that adds into the stack_agg passed as ctx. */
int stack_agg__add_cb(void *ctx, const char *stack, size_t len, uint64_t count);
/* Number of distinct stacks. */
size_t stack_agg__count(const struct stack_agg *sa);
/* Writes "stack count\n" per stack, sorted bytewise like perl's sort; a sum past 2^64-1 is
 * printed as perl prints a float ("%.15g"). 0 or -errno (ENOMEM, or a write error). */
int stack_agg__write(struct stack_agg *sa, FILE *out);

#endif
