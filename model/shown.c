/* What a live view shows: see shown.h. */
#include "shown.h"

#include <errno.h>
#include <string.h>

void shown_init(struct shown *s, enum fold_mode mode, double window_s, size_t max_stacks)
{
	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->window_s = window_s;
	s->max_stacks = max_stacks;
}

/* Each mode's own schedule: decay prunes from its first fold on, as does a type whose values
 * go down (a stack freed to nothing), the cap looks once the tree could hold max_stacks. */
static void cap_init(struct shown *s, enum stack_type t)
{
	if (s->mode == FOLD_DECAY || stack_types[t].can_go_down)
		s->cap[t].next_check = 0;
	else
		stack_cap_init(&s->cap[t], s->max_stacks);
}

int shown_add(struct shown *s, enum stack_type t, struct frames *ft, enum value_kind kind,
	      struct slices *ring)
{
	if (s->p[t])
		return 0;
	s->p[t] = profile__new(ft, kind, false);
	if (!s->p[t])
		return -ENOMEM;
	if (ring)
		slices__set_fine(ring, s->mode == FOLD_WINDOW ? s->window_s : 0);
	cap_init(s, t);
	return 0;
}

int shown_set_mode(struct shown *s, struct slices *const *rings, enum fold_mode m,
		   double window_s)
{
	if ((unsigned)m >= FOLD_MODE_MAX || !(window_s > 0))
		return -EINVAL;
	s->mode = m;
	s->window_s = window_s;
	for_each_stack_type(t) {
		if (rings && rings[t])
			slices__set_fine(rings[t], m == FOLD_WINDOW ? window_s : 0);
		cap_init(s, t);
	}
	return 0;
}

int shown_fold(struct shown *s, enum stack_type t, struct slices *ring,
	       const struct profile *slice, double t0, double t1, double window_s)
{
	struct profile *p = s->p[t];
	bool down = (unsigned)t < STACK_TYPES && stack_types[t].can_go_down;
	int err;

	if (!p)
		return -EINVAL;
	/* A type whose values go down (leak) shows what is held now: the sum of every slice,
	 * whatever the mode; the stacks freed to nothing go. */
	err = slices__fold(ring, p, down ? FOLD_ACCUMULATE : s->mode, window_s, slice, t0, t1);
	if (err)
		return err;
	if (down)
		return stack_cap_decayed(&s->cap[t], p, 0.5) < 0 ? -ENOMEM : 0;
	if (s->mode == FOLD_ACCUMULATE && stack_cap_apply(&s->cap[t], p) < 0)
		return -ENOMEM;
	if (s->mode == FOLD_DECAY &&
	    stack_cap_decayed(&s->cap[t], p, profile__total(p) * SHOWN_FADED) < 0)
		return -ENOMEM;
	return 0;
}

void shown_clear(struct shown *s)
{
	for_each_stack_type(t)
		if (s->p[t])
			profile__clear(s->p[t]);
}

void shown_free(struct shown *s)
{
	for_each_stack_type(t) {
		profile__free(s->p[t]);
		s->p[t] = NULL;
	}
}
