/* Trigger conditions (`galatop record --trigger 'cpu>80'`): a small expression over system
 * metrics sampled once a second, and the state that decides when a condition that holds
 * becomes a capture (the seconds before and after it) and when the next one may start.
 * Pure: the metrics are passed in (see util/procstat.h for reading them).
 *
 * Grammar (spaces allowed between tokens):
 *   expr   := and ( "||" and )*
 *   and    := cond ( "&&" cond )*
 *   cond   := metric op number
 *   metric := "cpu"     host CPU busy %, 0..100 over every CPU (with -p: the targets' CPU %,
 *                       100 = one CPU, as top shows it)
 *           | "cpu" N   CPU N's busy %, 0..100
 *           | "load"    1-minute load average
 *   op     := ">" | ">=" | "<" | "<="
 *   number := decimal, fractions allowed ("80", "2.5") */
#ifndef GALATOP_MODEL_TRIGGER_H
#define GALATOP_MODEL_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>

#define TRIGGER_MAX_CONDS 16
#define TRIGGER_MAX_CPU 4095

enum trigger_metric { TRIGGER_CPU = 0, TRIGGER_CPU_N, TRIGGER_LOAD };
enum trigger_op { TRIGGER_GT = 0, TRIGGER_GE, TRIGGER_LT, TRIGGER_LE };

struct trigger_cond {
	enum trigger_metric metric;
	int cpu; /* TRIGGER_CPU_N: which CPU */
	enum trigger_op op;
	double value;
	bool or_next; /* joined to the next condition by || (else &&) */
};

struct trigger_expr {
	struct trigger_cond c[TRIGGER_MAX_CONDS];
	size_t n;
};

/* One second's metrics; a metric that could not be read is NaN (its conditions are false). */
struct trigger_metrics {
	double cpu;	    /* host or target CPU %, see the grammar */
	const double *cpus; /* per-CPU busy %, ncpus of them (may be NULL) */
	size_t ncpus;
	double load;
};

/* Parses text into e. 0, or -EINVAL with one line in err saying what is wrong and where
 * ("at 'x>1': unknown metric 'x' (cpu, cpuN, load)"). */
int trigger_parse(const char *text, struct trigger_expr *e, char *err, size_t errlen);
/* Whether e holds for m; *why (when not NULL) gets the first condition that made it hold as
 * text, e.g. "cpu=93.4 > 80" (at most 64 bytes). */
bool trigger_eval(const struct trigger_expr *e, const struct trigger_metrics *m, char *why,
		  size_t whylen);
/* Whether e uses metric (what a sampler must read). */
bool trigger_uses(const struct trigger_expr *e, enum trigger_metric metric);

/* When captures happen: a condition holding at t fires unless a capture is under way or the
 * cooldown since the last capture's end has not passed. Times in seconds on one clock. */
struct trigger_state {
	double before, after, cooldown;
	double fired_at;   /* time of the capture under way; NaN when none */
	double quiet_until; /* no new capture before this */
	unsigned fired;	   /* captures started so far */
};

/* Starts the state with the capture's seconds before and after the moment, and the cooldown
 * after each capture ends. */
void trigger_state_init(struct trigger_state *s, double before, double after, double cooldown);
/* Feeds the condition's value at t: true when a capture of [t - before, t + after] starts. */
bool trigger_state_step(struct trigger_state *s, double t, bool holds);
/* Whether the capture under way is complete at t (its range has ended); if so it is closed
 * (*moment gets its time) and the cooldown starts. */
bool trigger_state_due(struct trigger_state *s, double t, double *moment);

#endif
