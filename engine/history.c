/* Per-second history of a session's profiles: see history.h. */
#include "history.h"

#include <errno.h>
#include <string.h>

#include "model/slices.h"
#include "util/clock.h"

void history_free(struct history *h)
{
	for (int i = 0; i < STACK_TYPES; i++) {
		slices__free(h->ring[i]);
		profile__free(h->total[i]);
		h->ring[i] = NULL;
		h->total[i] = NULL;
	}
}

int history_add(struct history *h, struct session *s, enum stack_type i)
{
	enum value_kind kind;

	if (h->ring[i])
		return 0;
	kind = profile__kind(collector__profile(s->col, i));
	h->ring[i] = slices__new(s->ft, kind, h->max_slices < 2 ? 2 : h->max_slices,
				 HISTORY_BYTES);
	if (h->totals && h->ring[i])
		h->total[i] = profile__new(s->ft, kind, false);
	if (!h->ring[i] || (h->totals && !h->total[i])) {
		slices__free(h->ring[i]);
		h->ring[i] = NULL;
		return -ENOMEM;
	}
	slices__set_keep(h->ring[i], h->keep_s);
	return 0;
}

int history_open(struct history *h, struct session *s, double keep_s, size_t max_slices,
		 bool totals)
{
	memset(h, 0, sizeof(*h));
	h->mono0 = clock_mono_s();
	h->wall0 = clock_wall_s();
	h->keep_s = keep_s;
	h->max_slices = max_slices;
	h->totals = totals;
	for (int i = 0; i < STACK_TYPES; i++) {
		if (!(s->o->types & stack_types[i].probe) || !s->col)
			continue;
		if (history_add(h, s, i)) {
			history_free(h);
			return -ENOMEM;
		}
	}
	return 0;
}

void history_heat(struct history *h, struct session *s, enum stack_type i)
{
	size_t n;
	const struct collector_tick *tk = collector__ticks(s->col, i, &n);

	for (size_t k = 0; h->ring[i] && k < n; k++) {
		/* A tick's middle names its bucket on the ring's clock; records taken between the
		 * probes' attach and time 0 count at 0. */
		double t = (double)(tk[k].ns + COLLECTOR_TICK_NS / 2) / 1e9 - h->mono0;

		slices__heat_add(h->ring[i], t > 0 ? t : 0, tk[k].value);
	}
}

int history_cut(struct history *h, struct session *s, double now)
{
	double t1 = now - h->mono0;

	if (!(t1 > h->last))
		return 0;
	for (int i = 0; i < STACK_TYPES; i++) {
		const struct profile *p;

		if (!h->ring[i])
			continue;
		p = collector__profile(s->col, i);
		history_heat(h, s, i);
		if (slices__push(h->ring[i], h->last, t1, p) ||
		    (h->total[i] && profile__merge(h->total[i], p)))
			return -ENOMEM;
	}
	collector__clear(s->col);
	h->last = t1;
	return 0;
}

int history_finish(struct history *h, struct session *s, double now)
{
	int ret = history_cut(h, s, now);

	for (int i = 0; !ret && i < STACK_TYPES; i++)
		if (h->total[i] && profile__merge(collector__profile(s->col, i), h->total[i]))
			ret = -ENOMEM;
	return ret;
}
