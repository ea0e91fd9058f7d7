/* galatop's own cost, measured while it runs: the kernel's BPF statistics are on for as long as
 * the meter is open, and each sample reads its programs' run time and count and the process's
 * CPU time into the model (model/cost.h). */
#ifndef GALATOP_ENGINE_SELF_COST_H
#define GALATOP_ENGINE_SELF_COST_H

#include <stddef.h>

#include "model/cost.h"

struct self_cost {
	struct cost model; /* what the status line, the popup and the summaries read */
	int stats_fd;	   /* holds the kernel's statistics on; -1 when they could not be */
	int stats_err;	   /* why not (-errno), 0 when on */
};

/* Turns the statistics on and takes the first sample (the totals start there). Never fails:
 * without statistics (sc->stats_err) the process CPU is still measured. */
void self_cost__open(struct self_cost *sc);
/* Takes a sample now; the model's interval figures are since the previous one. */
void self_cost__sample(struct self_cost *sc);
/* The process's CPU seconds so far (user + system, every thread). */
double self_cost__cpu_s(void);
/* Closes the statistics fd (the kernel turns them off unless another holder keeps them on)
 * and frees the model; NULL-safe. */
void self_cost__close(struct self_cost *sc);

#endif
