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

#define COST_WINDOW_S 1.0 /* a sampled window of the BPF statistics, seconds */
#define COST_PERIOD_S 10.0 /* by default, one window in this many seconds */

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
	uint64_t d_ns, d_cnt;	 /* over the last statistics window */
	uint64_t tot_ns, tot_cnt; /* summed over every window */
	bool gone;		 /* absent from the latest reading (its family detached) */
};

struct cost {
	struct cost_prog *p;   /* every program seen, in order of first sight */
	size_t n, cap;
	bool stats_on;	       /* the kernel's statistics are on: run_ns / run_cnt mean something */
	/* 0: the statistics are held on and every sample's readings close a window; else they
	 * are sampled, on for COST_WINDOW_S seconds in every `period`. */
	double period;
	double t0, cpu0;       /* first sample: monotonic seconds, process CPU seconds */
	double t, cpu;	       /* latest sample */
	double dt, dcpu;       /* the last interval's length and process CPU */
	double win_t0;	       /* when the open window's readings were taken; < 0: none open */
	double win_secs;       /* the last closed window's length */
	double on_secs;	       /* the closed windows' lengths summed */
};

/* The family a program of this name belongs to. */
enum cost_family cost_family_of(const char *name);
/* "stacks", "threads", "l7", "sli". */
const char *cost_family_name(enum cost_family f);
/* Takes in a sample taken at monotonic time now: the process's CPU seconds so far and, when r
 * is not NULL, the cumulative readings r[0..n) of the programs loaded now, which close the
 * statistics window open since the previous readings (its figures: the programs' growth over
 * it) and open the next. r NULL (the statistics are off between sampled windows): the
 * programs keep the last window's figures. The first sample starts the totals. 0, or -ENOMEM
 * (the sample is then not taken). */
int cost__sample(struct cost *c, double now, double cpu_s, const struct cost_reading *r, size_t n);
/* Readings r[0..n) taken at now, when the statistics were just turned on: they open a window
 * (what the programs ran before is not counted). 0 or -ENOMEM. */
int cost__window_open(struct cost *c, double now, const struct cost_reading *r, size_t n);
/* The program of kernel id id that c has seen, or NULL (also when c is NULL). */
const struct cost_prog *cost__find(const struct cost *c, uint32_t id);
/* Frees what c holds (c itself is the caller's); NULL-safe. */
void cost__free(struct cost *c);

/* Figures of one family (or of every program, f == COST_FAMILIES), over the last statistics
 * window (interval true: held on, the last interval) or summed over every window (sampled: a
 * part of the time since the first sample; the rates are the windows'). */
struct cost_figures {
	uint64_t ns, calls;
	double secs;	  /* the time the statistics counted them over */
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
 * since the first sample; sampled figures say so and over how long they were taken. Returns
 * the length it needed (as snprintf). */
size_t cost__format(const struct cost *c, bool interval, char *buf, size_t len);

#endif
