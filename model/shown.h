/* What a live view shows of each stack type: a profile that each refresh's new samples join in
 * the update mode chosen (accumulate, sliding window, decay: model/slices' folds), kept bounded
 * (an accumulated profile at --max-stacks, a decaying one by letting faded nodes go), beside the
 * per-second history ring it folds from (owned by the caller). */
#ifndef GALATOP_MODEL_SHOWN_H
#define GALATOP_MODEL_SHOWN_H

#include <stddef.h>

#include "profile.h"
#include "slices.h"
#include "stack_cap.h"
#include "stack_type.h"

/* A decaying profile lets a node go once its total is below this share of the whole: less
 * than any view shows (the top view's 0.01%). */
#define SHOWN_FADED 1e-4

struct shown {
	struct profile *p[STACK_TYPES]; /* owned; NULL for the types not shown */
	struct stack_cap cap[STACK_TYPES];
	enum fold_mode mode;
	double window_s; /* window length (FOLD_WINDOW) or half-life (FOLD_DECAY) */
	size_t max_stacks; /* accumulate: distinct stacks kept (0: no cap) */
};

/* Starts s showing no type, in mode with window_s, capped at max_stacks. */
void shown_init(struct shown *s, enum fold_mode mode, double window_s, size_t max_stacks);
/* Shows type t from now on, an empty profile of kind over ft, fed from ring (its fine part set
 * to the window); a no-op when shown already. 0 or -ENOMEM. */
int shown_add(struct shown *s, enum stack_type t, struct frames *ft, enum value_kind kind,
	      struct slices *ring);
/* Switches to mode m with window_s (> 0); rings[t] (may be NULL) are the types' rings. What is
 * shown stays until the next fold brings new samples in the new way: the rings keep each
 * slice's times, so a window of any length starts from the slices it covers. 0 or -EINVAL. */
int shown_set_mode(struct shown *s, struct slices *const *rings, enum fold_mode m,
		   double window_s);
/* Folds slice, the new samples of type t over [t0, t1), into what is shown and into ring (a
 * window reaches back at most window_s seconds, <= s->window_s: a caller that restarted its data
 * shortens it), then bounds the shown profile's memory. A type whose values go down (leak) is
 * accumulated in every mode (it shows what is held now) and its stacks freed to nothing go.
 * 0, -EINVAL or -ENOMEM (what is shown then holds part of the update). */
int shown_fold(struct shown *s, enum stack_type t, struct slices *ring,
	       const struct profile *slice, double t0, double t1, double window_s);
/* Empties every shown profile (the data restarts, e.g. on another CPU set). */
void shown_clear(struct shown *s);
/* Frees the profiles; a zeroed s is a no-op. */
void shown_free(struct shown *s);

#endif
