/* galatop's own cost, measured while it runs: the kernel's BPF statistics are held on while the
 * meter is open, or sampled (on for COST_WINDOW_S seconds in every period: each program run
 * pays two clock reads while they are on); each window's readings of its programs' run time
 * and count and the process's CPU time go into the model (model/cost.h). */
#ifndef GALATOP_ENGINE_SELF_COST_H
#define GALATOP_ENGINE_SELF_COST_H

#include <stddef.h>

#include "model/cost.h"

struct self_cost {
	struct cost model; /* what the status line, the popup and the summaries read */
	int stats_fd;	   /* holds the kernel's statistics on; -1 when they are not (or cannot be) */
	int stats_err;	   /* why they cannot be (-errno), 0 when they can */
	double next_open;  /* sampled: when the next window opens */
};

/* SELF_COST_HELD: the statistics stay on; SELF_COST_OFF: never turned on. */
#define SELF_COST_HELD 0.0
#define SELF_COST_OFF -1.0

/* Turns the statistics on and takes the first sample (the totals start there); period is the
 * seconds between sampled windows (> COST_WINDOW_S), SELF_COST_HELD or SELF_COST_OFF. Never
 * fails: without statistics (sc->stats_err) the process CPU is still measured. */
void self_cost__open(struct self_cost *sc, double period);
/* Sampled: the open window starts again now (once the probes are attached, so that their
 * loading does not dilute the first window's rates). */
void self_cost__restart(struct self_cost *sc);
/* Sampled statistics: closes the window that has lasted COST_WINDOW_S (its readings into the
 * model, the statistics off) and opens the next when its time has come. Cheap: call it from
 * the poll loop. */
void self_cost__tick(struct self_cost *sc);
/* Takes a sample now: the process CPU and, held on, the programs' readings (the model's
 * interval figures are since the previous sample; sampled, the last window's). */
void self_cost__sample(struct self_cost *sc);
/* As self_cost__sample, and an open sampled window's readings so far too (at the end of a
 * run, for its summary: the window stays open). */
void self_cost__sample_all(struct self_cost *sc);
/* The process's CPU seconds so far (user + system, every thread). */
double self_cost__cpu_s(void);
/* Closes the statistics fd (the kernel turns them off unless another holder keeps them on)
 * and frees the model; NULL-safe. */
void self_cost__close(struct self_cost *sc);

#endif
