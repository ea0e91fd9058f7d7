#include "source.h"

#include <errno.h>
#include <string.h>

static const char *const mode_names[MODE_MAX] = { "accumulate", "window", "decay" };

const char *tui_mode_str(enum tui_mode m)
{
	return (unsigned)m < MODE_MAX ? mode_names[m] : "?";
}

static const struct profile *static_profile(void *ctx, enum stack_type t)
{
	struct tui_static_source *s = ctx;

	return (unsigned)t < STACK_TYPES ? s->p[t] : NULL;
}

static void static_stats(void *ctx, struct tui_stats *out)
{
	struct tui_static_source *s = ctx;

	memset(out, 0, sizeof(*out));
	out->origin = s->origin;
	out->hz = -1;
	out->samples_per_s = -1;
	out->own_cpu = -1;
	out->probe_cpu = -1;
	out->since = s->since;
	for (int t = 0; t < STACK_TYPES; t++)
		if (s->p[t] && profile__kind(s->p[t]) == VALUE_SAMPLES)
			out->samples += (uint64_t)(profile__two_column(s->p[t])
							   ? profile__total2(s->p[t], PROFILE_ROOT)
							   : profile__total(s->p[t]));
}

static int static_set_mode(void *ctx, enum tui_mode m, double window_s)
{
	return -ENOTSUP;
}

static const void *static_data(void *ctx, enum tui_data d)
{
	struct tui_static_source *s = ctx;

	return (unsigned)d < TUI_DATA_MAX ? s->data[d] : NULL;
}

static const struct slices *static_history(void *ctx, enum stack_type t)
{
	struct tui_static_source *s = ctx;

	return (unsigned)t < STACK_TYPES ? s->history[t] : NULL;
}

static const struct tui_source_ops static_ops = {
	.history = static_history,
	.update = NULL,
	.profile = static_profile,
	.stats = static_stats,
	.set_mode = static_set_mode,
	.data = static_data,
};

void tui_static_source_init(struct tui_static_source *s, const char *origin)
{
	memset(s, 0, sizeof(*s));
	s->src.ops = &static_ops;
	s->src.ctx = s;
	s->origin = origin;
}

void tui_static_source_set(struct tui_static_source *s, enum stack_type t,
			   const struct profile *p)
{
	if ((unsigned)t < STACK_TYPES)
		s->p[t] = p;
}

void tui_static_source_set_data(struct tui_static_source *s, enum tui_data d, const void *obj)
{
	if ((unsigned)d < TUI_DATA_MAX)
		s->data[d] = obj;
}

void tui_static_source_set_history(struct tui_static_source *s, enum stack_type t,
				   const struct slices *h)
{
	if ((unsigned)t < STACK_TYPES)
		s->history[t] = h;
}
