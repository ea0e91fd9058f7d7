/* Time travel: a range of the source's per-second history shown instead of everything (picked
 * in the heatmap, `a` drops it), and a baseline that what is shown is compared with (`b`):
 * the views then show a differential profile, red where a frame grew, blue where it shrank.
 * The two sides are compared per second of each (a 5 s spike against the minute before it),
 * or by their totals when a side's duration is unknown (a folded file). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "text.h"
#include "model/slices.h"
#include "export/input.h"
#include "util/clock.h"

/* How long the source's own profile of type t lasted, in seconds; 0 when unknown. */
static double source_secs(const struct tui_app *a, enum stack_type t)
{
	const struct slices *h = app_history(a, t);
	double span = h && slices__count(h) ? slices__end(h) - slices__start(h) : 0;
	struct tui_stats st;

	a->src->ops->stats(a->src->ctx, &st);
	if (!st.live)
		return span;
	switch (st.mode) {
	case MODE_WINDOW:
		return span > 0 && span < st.window_s ? span : st.window_s;
	case MODE_DECAY:
		/* Every second counts 2^(-age / half-life): the weights add up to h / ln 2. */
		return st.window_s / M_LN2;
	default:
		/* Everything since the start (or since the CPU set changed): the history may hold
		 * less (--history). */
		return st.since > 0 ? clock_wall_s() - fmax(st.since, st.cpus ? st.cpus_since : 0)
				    : span;
	}
}

/* Merges [from, to) of history h into out; returns how long the slices taken last, -2 on
 * ENOMEM. */
static double fold_range(const struct slices *h, double from, double to, struct profile *out)
{
	return slices__fold_overlap(h, from, to, out) ? -2 : slices__overlap_secs(h, from, to);
}

/* Into out (over any frame table): what type t shows before the baseline is applied (the
 * range, or the source's profile). Returns how long that lasted (0: unknown), -1 when the
 * source has no such profile, -2 on ENOMEM. */
static double shown_of(struct tui_app *a, enum stack_type t, struct profile *out)
{
	const struct profile *p = a->src->ops->profile(a->src->ctx, t);
	const struct slices *h = app_history(a, t);

	if (!p)
		return -1;
	if (a->travel.range_on && h)
		return fold_range(h, a->travel.from, a->travel.to, out);
	if (profile__merge(out, p))
		return -2;
	return source_secs(a, t);
}

/* The range's profile of the current type, or the source's own. */
static const struct profile *apply_range(struct tui_app *a, const struct profile *p,
					 double *secs)
{
	struct travel *tr = &a->travel;
	const struct slices *h = app_history(a, a->ptype);

	profile__free(tr->ranged);
	tr->ranged = NULL;
	*secs = source_secs(a, a->ptype);
	if (!tr->range_on || !p)
		return p;
	if (!h) {
		app_msg(a, ROLE_STATUS_ALERT, "no per-second history of %s here: showing all of it",
			stack_type_name(a->ptype));
		return p;
	}
	tr->ranged = profile__new(profile__frames(p), profile__kind(p), false);
	if (!tr->ranged || (*secs = fold_range(h, tr->from, tr->to, tr->ranged)) == -2) {
		*secs = 0;
		app_msg(a, ROLE_ERROR, "out of memory selecting the range");
		return p;
	}
	return tr->ranged;
}

const struct profile *travel_apply(struct tui_app *a, const struct profile *p)
{
	struct travel *tr = &a->travel;
	const struct profile *b = tr->base.p[a->ptype];
	double secs;

	p = apply_range(a, p, &secs);
	profile__free(tr->diff);
	tr->diff = NULL;
	if (!p || !tr->base.ft)
		return p;
	if (!b) {
		app_msg(a, ROLE_STATUS_ALERT, "the baseline has no %s profile: not compared",
			stack_type_name(a->ptype));
		return p;
	}
	tr->per_second = tr->base.secs[a->ptype] > 0 && secs > 0;
	if (tr->per_second)
		tr->factor = secs / tr->base.secs[a->ptype];
	else
		tr->factor = profile__total(b) > 0 ? profile__total(p) / profile__total(b) : 1;
	tr->diff = profile__new(tr->base.ft, profile__kind(p), false);
	if (!tr->diff || profile__merge_column(tr->diff, b, 0, tr->factor) ||
	    profile__merge_column(tr->diff, p, 1, 1)) {
		profile__free(tr->diff);
		tr->diff = NULL;
		app_msg(a, ROLE_ERROR, "out of memory comparing with the baseline");
		return p;
	}
	return tr->diff;
}

void travel_range_text(const struct tui_app *a, char *buf, size_t n)
{
	struct tui_stats st;
	char h0[16], h1[16];

	a->src->ops->stats(a->src->ctx, &st);
	if (st.since > 0) {
		tui_fmt_clock(st.since + a->travel.from, h0, sizeof(h0));
		tui_fmt_clock(st.since + a->travel.to, h1, sizeof(h1));
		snprintf(buf, n, "%.2f-%.2f s (%s-%s)", a->travel.from, a->travel.to, h0, h1);
	} else {
		snprintf(buf, n, "%.2f-%.2f s", a->travel.from, a->travel.to);
	}
}

void travel_scale_text(const struct tui_app *a, char *buf, size_t n)
{
	buf[0] = 0;
	if (a->travel.diff && a->travel.factor != 1)
		snprintf(buf, n, " (scaled x%.3g: %s)", a->travel.factor,
			 a->travel.per_second ? "per second" : "same total");
}

void app_set_range(struct tui_app *a, double from, double to)
{
	if (!(to > from))
		return;
	a->travel.range_on = true;
	a->travel.from = from;
	a->travel.to = to;
	app_rebuild(a);
	app_msg(a, ROLE_STATUS, "the views show this range (a: all time, b: compare with it)");
}

void app_all_time(struct tui_app *a)
{
	if (!a->travel.range_on) {
		app_msg(a, ROLE_DIM, "already showing all time");
		return;
	}
	a->travel.range_on = false;
	app_rebuild(a);
	app_msg(a, ROLE_STATUS, "all time shown");
}

static void baseline_free(struct baseline *b)
{
	for (int t = 0; t < STACK_TYPES; t++)
		profile__free(b->p[t]);
	frames__free(b->ft);
	strtab__free(b->st);
	memset(b, 0, sizeof(*b));
}

/* Makes nb the baseline (NULL: none). The old one's tables stay until the next rebuild has
 * carried the views' frame ids over from them (its diff profile is still what they show). */
static void baseline_replace(struct travel *tr, struct baseline *nb)
{
	baseline_free(&tr->old);
	tr->old = tr->base;
	for (int t = 0; t < STACK_TYPES; t++) {
		profile__free(tr->old.p[t]);
		tr->old.p[t] = NULL;
	}
	tr->old_diff = tr->diff;
	tr->diff = NULL;
	if (nb)
		tr->base = *nb;
	else
		memset(&tr->base, 0, sizeof(tr->base));
}

/* The baseline from the source into nb: what is shown (shown), or [from, to) of the history. */
static int baseline_from_source(struct tui_app *a, struct baseline *nb, bool shown, double from,
				double to, char *err, size_t errlen)
{
	int n = 0;

	for (int k = 0; k < STACK_TYPES; k++) {
		enum stack_type t = (enum stack_type)k;
		const struct profile *p = a->src->ops->profile(a->src->ctx, t);
		const struct slices *h = app_history(a, t);
		double secs;

		if (!p || (!shown && !h))
			continue;
		nb->p[t] = profile__new(nb->ft, profile__kind(p), false);
		if (!nb->p[t])
			return -ENOMEM;
		secs = shown ? shown_of(a, t, nb->p[t]) : fold_range(h, from, to, nb->p[t]);
		if (secs == -2)
			return -ENOMEM;
		nb->secs[t] = secs > 0 ? secs : 0;
		n += profile__total(nb->p[t]) > 0;
	}
	if (!n) {
		snprintf(err, errlen, shown ? "nothing shown to take as the baseline"
				     : "no samples in %.2f-%.2f s of the history", from, to);
		return -EINVAL;
	}
	return 0;
}

/* The baseline from a file (folded, perf script or .gtop, FILE@A-B for a range of one). */
static int baseline_from_file(struct tui_app *a, struct baseline *nb, const char *spec,
			      char *err, size_t errlen)
{
	static const struct perfscript_opts perf = { .include_pid = true, .annotate_kernel = true,
						     .count_samples = true, .annotate_jit = true };
	struct input_opts io = { .perf = &perf };
	struct input in = { 0 };
	char path[256];
	const char *at = strrchr(spec, '@');
	int r = 0, n = 0;

	snprintf(path, sizeof(path), "%.*s", at ? (int)(at - spec) : (int)strlen(spec), spec);
	if (at && input_range_parse(at + 1, &io.range, err, errlen))
		return -EINVAL;
	if (input_load(path, nb->ft, &io, &in, err, errlen)) {
		if (!err[0])
			snprintf(err, errlen, "%s: not a valid profile", path);
		return -EINVAL;
	}
	for (int k = 0; k < STACK_TYPES && !r; k++) {
		enum stack_type t = (enum stack_type)k;
		/* A folded or perf file holds one profile: it is the baseline of the type shown. */
		struct profile *p = in.format == INPUT_SNAPSHOT ? input_profile(&in, stack_type_name(t))
				    : t == a->ptype		    ? in.own
								    : NULL;

		if (!p)
			continue;
		nb->p[t] = profile__new(nb->ft, profile__kind(p), false);
		if (!nb->p[t] || profile__merge(nb->p[t], p))
			r = -ENOMEM;
		if (io.range.set)
			nb->secs[t] = in.to - in.from;
		else if (in.format == INPUT_SNAPSHOT && in.snap.meta.end > in.snap.meta.start)
			nb->secs[t] = in.snap.meta.end - in.snap.meta.start;
		n++;
	}
	input_release(&in);
	if (!r && !n) {
		snprintf(err, errlen, "%s has no %s profile", path, stack_type_list());
		r = -EINVAL;
	}
	return r;
}

/* Loads the baseline spec says into nb (tables made by the caller). */
static int baseline_load(struct tui_app *a, struct baseline *nb, const char *spec, char *err,
			 size_t errlen)
{
	struct travel *tr = &a->travel;
	struct input_range rg = { 0 };
	struct tui_stats st;
	double n, from, to;

	a->src->ops->stats(a->src->ctx, &st);
	if (!strcmp(spec, ".")) {
		if (tr->range_on)
			travel_range_text(a, nb->desc, sizeof(nb->desc));
		else
			snprintf(nb->desc, sizeof(nb->desc), "%s",
				 st.live ? "the live data at the time" : "the whole file");
		return baseline_from_source(a, nb, true, 0, 0, err, errlen);
	}
	if (sscanf(spec, "first %lf", &n) == 1) {
		const struct slices *h = app_history(a, a->ptype);

		if (!h || !slices__count(h)) {
			snprintf(err, errlen, "no per-second history here to take the first seconds of");
			return -EINVAL;
		}
		if (!(n > 0) || isinf(n)) {
			snprintf(err, errlen, "first %s: want a number of seconds > 0", spec + 6);
			return -EINVAL;
		}
		snprintf(nb->desc, sizeof(nb->desc), "the first %g s", n);
		from = slices__start(h);
		return baseline_from_source(a, nb, false, from, from + n, err, errlen);
	}
	/* A range A-B (seconds from the start or clock times), else a file. */
	if (strchr("0123456789", spec[0]) && !strchr(spec, '/') &&
	    input_range_parse(spec, &rg, err, errlen) == 0) {
		if (input_range_seconds(&rg, st.since, &from, &to)) {
			snprintf(err, errlen, "range %s: the end must come after the start", spec);
			return -EINVAL;
		}
		snprintf(nb->desc, sizeof(nb->desc), "%.2f-%.2f s", from, to);
		return baseline_from_source(a, nb, false, from, to, err, errlen);
	}
	err[0] = 0;
	snprintf(nb->desc, sizeof(nb->desc), "%.100s", spec);
	return baseline_from_file(a, nb, spec, err, errlen);
}

int travel_baseline(struct tui_app *a, const char *spec, char *err, size_t errlen)
{
	struct travel *tr = &a->travel;
	struct baseline nb = { 0 };
	int r;

	err[0] = 0;
	while (*spec == ' ')
		spec++;
	if (!*spec) {
		if (!tr->base.ft) {
			app_msg(a, ROLE_DIM, "no baseline to clear");
			return 0;
		}
		baseline_replace(tr, NULL);
		app_rebuild(a);
		app_msg(a, ROLE_STATUS, "baseline cleared: no comparison");
		return 0;
	}
	nb.st = strtab__new();
	nb.ft = nb.st ? frames__new(nb.st) : NULL;
	r = nb.ft ? baseline_load(a, &nb, spec, err, errlen) : -ENOMEM;
	if (r) {
		if (r == -ENOMEM && !err[0])
			snprintf(err, errlen, "out of memory");
		baseline_free(&nb); /* never shown: the current baseline stays */
		return r;
	}
	baseline_replace(tr, &nb);
	app_rebuild(a);
	app_msg(a, ROLE_STATUS, "baseline: %s; red grew, blue shrank (| side by side)",
		tr->base.desc);
	return 0;
}

void travel_rebuilt(struct tui_app *a)
{
	baseline_free(&a->travel.old);
	profile__free(a->travel.old_diff);
	a->travel.old_diff = NULL;
}

void travel_free(struct tui_app *a)
{
	struct travel *tr = &a->travel;

	baseline_free(&tr->base);
	baseline_free(&tr->old);
	profile__free(tr->diff);
	profile__free(tr->old_diff);
	profile__free(tr->ranged);
	memset(tr, 0, sizeof(*tr));
}
