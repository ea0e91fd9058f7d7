/* galatop's own cost: its process CPU and, from the kernel's BPF statistics, the run time and
 * run count of each of its programs, per probe family. Readings come in cumulative (as the
 * kernel keeps them); the model keeps the totals and the rates over the last interval. Pure
 * data: the engine reads the kernel (bpf/progstats.h), the status line, the `$` popup, `record`
 * and the agent read this. */
#ifndef GALATOP_MODEL_COST_H
#define GALATOP_MODEL_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The probe families, by their programs' name prefixes (gt_l7_, gt_tl_, gt_sli_; every other
 * program galatop loads is a stack type's). */
enum cost_family { COST_STACKS = 0, COST_THREADS, COST_L7, COST_SLI, COST_FAMILIES };

/* One program's cumulative figures as the kernel reports them. */
struct cost_reading {
	uint32_t id;	  /* the kernel's program id */
	char name[48];	  /* its function's name ("" when already known to the model) */
	uint64_t run_ns;  /* time spent running it since load (while statistics were on) */
	uint64_t run_cnt; /* times it ran since load (while statistics were on) */
};

struct cost_prog {
	struct cost_reading r;	 /* the latest reading */
	enum cost_family fam;
	uint64_t d_ns, d_cnt;	 /* over the last interval */
	bool gone;		 /* absent from the latest reading (its family detached) */
};

struct cost {
	struct cost_prog *p;   /* every program seen, in order of first sight */
	size_t n, cap;
	bool stats_on;	       /* the kernel's statistics are on: run_ns / run_cnt mean something */
	double t0, cpu0;       /* first sample: monotonic seconds, process CPU seconds */
	double t, cpu;	       /* latest sample */
	double dt, dcpu;       /* the last interval's length and process CPU */
};

/* The family a program of this name belongs to. */
enum cost_family cost_family_of(const char *name);
/* "stacks", "threads", "l7", "sli". */
const char *cost_family_name(enum cost_family f);
/* Takes in a sample taken at monotonic time now: the process's CPU seconds so far and the
 * cumulative readings r[0..n) of the programs loaded now. The first sample starts the totals.
 * 0, or -ENOMEM (the sample is then not taken). */
int cost__sample(struct cost *c, double now, double cpu_s, const struct cost_reading *r, size_t n);
/* The program of kernel id id that c has seen, or NULL (also when c is NULL). */
const struct cost_prog *cost__find(const struct cost *c, uint32_t id);
/* Frees what c holds (c itself is the caller's); NULL-safe. */
void cost__free(struct cost *c);

/* Figures of one family (or of every program, f == COST_FAMILIES), over the last interval
 * (interval true) or since the first sample. */
struct cost_figures {
	uint64_t ns, calls;
	double secs;	  /* the span they were taken over */
	double ns_per_call; /* 0 without calls */
	double calls_per_s;
	double cpu_pct;	  /* kernel time in the programs, percent of one CPU */
};
void cost__figures(const struct cost *c, int f, bool interval, struct cost_figures *out);
/* galatop's process CPU in percent of one CPU, over the last interval or since the first
 * sample; -1 before two samples. */
double cost__own_cpu(const struct cost *c, bool interval);
/* The summary as lines of text into buf (always terminated): galatop's CPU, its probes' kernel
 * time per family, and per program ns per call, calls/s and CPU %, over the last interval or
 * since the first sample. Returns the length it needed (as snprintf). */
size_t cost__format(const struct cost *c, bool interval, char *buf, size_t len);

#endif
