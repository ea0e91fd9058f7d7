/* Unit tests for model/slices (the time-slice ring and the accumulate/window/decay folding)
 * and profile__scale, which decay builds on. */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "harness.h"
#include "profile_fixture.h"
#include "model/frames.h"
#include "model/profile.h"
#include "model/slices.h"
#include "model/strtab.h"

TEST_CASE(profile_scale_multiplies_every_column)
{
	struct fixture fx;

	fx_init(&fx, false);
	fx_add_stack(fx.ft, fx.p, "main;a", 6, 8, -1);
	fx_add_stack(fx.ft, fx.p, "main;b", 6, 4, -1);
	fx_add_stack(fx.ft, fx.p, "main", 4, 2, -1);
	profile__scale(fx.p, 0.25);
	CHECK_NUM(profile__total(fx.p), 3.5);
	CHECK_NUM(fx_total_at(fx.ft, fx.p, "main;a"), 2);
	CHECK_NUM(fx_total_at(fx.ft, fx.p, "main;b"), 1);
	CHECK_NUM(profile__node(fx.p, profile__find_child(fx.p, PROFILE_ROOT,
							  frames__intern_name(fx.ft, "main", 4)))->self,
		  0.5);
	/* Two-column profiles scale both columns. */
	CHECK(profile__set_two_column(fx.p) == 0);
	fx_add_stack(fx.ft, fx.p, "main;a", 6, 0, 10);
	profile__scale(fx.p, 2);
	CHECK_NUM(profile__total(fx.p), 7);
	CHECK_NUM(profile__total2(fx.p, PROFILE_ROOT), 3.5 * 2 + 20);
	profile__scale(fx.p, 0);
	CHECK_NUM(profile__total(fx.p), 0);
	CHECK_NUM(profile__total2(fx.p, PROFILE_ROOT), 0);
	fx_free(&fx);
}

TEST_CASE(slices_push_copy_and_range)
{
	struct fixture fx;
	struct slices *r;
	struct profile *out;

	fx_init(&fx, false);
	r = slices__new(fx.ft, VALUE_SAMPLES, 16, 0);
	CHECK(r && slices__count(r) == 0 && slices__start(r) == 0 && slices__end(r) == 0);
	CHECK(slices__new(fx.ft, VALUE_SAMPLES, 1, 0) == NULL);
	for (int i = 0; i < 5; i++) {
		struct profile *p = fx_one(fx.ft, i < 3 ? "main;early" : "main;late", 1 + i);

		CHECK(slices__push(r, i, i + 1, p) == 0);
		profile__free(p); /* the ring holds its own copy */
	}
	CHECK(slices__push(r, 5, 5, fx.p) == -EINVAL);
	CHECK(slices__push(r, NAN, 6, fx.p) == -EINVAL);
	CHECK(slices__count(r) == 5);
	CHECK_NUM(slices__start(r), 0);
	CHECK_NUM(slices__end(r), 5);
	CHECK_NUM(slices__get(r, 2)->t0, 2);
	CHECK_NUM(profile__total(slices__get(r, 2)->p), 3);
	CHECK(slices__get(r, 5) == NULL);
	out = profile__new(fx.ft, VALUE_SAMPLES, false);
	CHECK(slices__fold_range(r, 0, 3, out) == 0);
	CHECK_NUM(fx_total_at(fx.ft, out, "main;early"), 1 + 2 + 3);
	CHECK_NUM(fx_total_at(fx.ft, out, "main;late"), 0);
	profile__clear(out);
	CHECK(slices__fold_range(r, 3, INFINITY, out) == 0);
	CHECK_NUM(fx_total_at(fx.ft, out, "main;late"), 4 + 5);
	CHECK_NUM(fx_total_at(fx.ft, out, "main;early"), 0);
	/* A range picked by a person takes every slice it touches, and says how long they last. */
	profile__clear(out);
	CHECK(slices__fold_overlap(r, 2.5, 3.2, out) == 0);
	CHECK_NUM(fx_total_at(fx.ft, out, "main;early"), 3);
	CHECK_NUM(fx_total_at(fx.ft, out, "main;late"), 4);
	CHECK_NUM(slices__overlap_secs(r, 2.5, 3.2), 2);
	CHECK_NUM(slices__overlap_secs(r, 1, 2), 1);
	CHECK_NUM(slices__overlap_secs(r, 7, 9), 0);
	CHECK(slices__mem(r) > 0);
	slices__clear(r);
	CHECK(slices__count(r) == 0 && slices__mem(r) == 0);
	profile__free(out);
	slices__free(r);
	slices__free(NULL);
	fx_free(&fx);
}

/* A full ring merges old slices into coarser ones: nothing is lost, spans stay contiguous,
 * old slices are coarser than new ones, and the fine period keeps its resolution. */
TEST_CASE(slices_cap_merges_old_slices_into_coarser_ones)
{
	struct fixture fx;
	struct slices *r;
	struct profile *p;
	double sum = 0;
	int ok = 1;

	fx_init(&fx, false);
	r = slices__new(fx.ft, VALUE_SAMPLES, 32, 0);
	slices__set_fine(r, 10);
	p = fx_one(fx.ft, "main;tick", 1);
	for (int i = 0; i < 3600; i++)
		if (slices__push(r, i, i + 1, p))
			ok = 0;
	CHECK(ok);
	CHECK(slices__count(r) == 32);
	CHECK_NUM(slices__start(r), 0);
	CHECK_NUM(slices__end(r), 3600);
	for (size_t i = 0; i < slices__count(r); i++) {
		const struct slice *s = slices__get(r, i);

		sum += profile__total(s->p);
		/* Each slice holds one sample per second it covers. */
		CHECK_NUM(profile__total(s->p), s->t1 - s->t0);
		if (i)
			CHECK_NUM(s->t0, slices__get(r, i - 1)->t1);
	}
	CHECK_NUM(sum, 3600);
	/* The last 10 s are still one slice per second; the oldest slice is much coarser. */
	for (size_t i = slices__count(r) - 10; i < slices__count(r); i++)
		CHECK_NUM(slices__get(r, i)->t1 - slices__get(r, i)->t0, 1);
	CHECK(slices__get(r, 0)->t1 - slices__get(r, 0)->t0 > 60);
	/* Spans grow with age (allowing the factor-two steps of pairwise merging). */
	for (size_t i = 1; i < slices__count(r); i++)
		CHECK(slices__get(r, i)->t1 - slices__get(r, i)->t0 <=
		      2 * (slices__get(r, i - 1)->t1 - slices__get(r, i - 1)->t0));
	profile__free(p);
	slices__free(r);
	fx_free(&fx);
}

TEST_CASE(slices_memory_cap_bounds_growth)
{
	struct fixture fx;
	struct slices *r;
	char name[32];
	size_t one_mem, cap;
	int ok = 1;

	fx_init(&fx, false);
	/* 200 slices of the same 200 stacks: 200 copies would take 200 times one slice's
	 * memory, merged ones share their nodes. */
	{
		struct profile *p = profile__new(fx.ft, VALUE_SAMPLES, false);

		for (int f = 0; f < 200; f++) {
			snprintf(name, sizeof(name), "main;f%d", f);
			fx_add_stack(fx.ft, p, name, strlen(name), 1, -1);
		}
		one_mem = profile__mem(p);
		profile__free(p);
	}
	cap = 8 * one_mem;
	r = slices__new(fx.ft, VALUE_SAMPLES, 1000, cap);
	for (int i = 0; i < 200; i++) {
		struct profile *p = profile__new(fx.ft, VALUE_SAMPLES, false);

		for (int f = 0; f < 200; f++) {
			snprintf(name, sizeof(name), "main;f%d", f);
			fx_add_stack(fx.ft, p, name, strlen(name), 1, -1);
		}
		if (slices__push(r, i, i + 1, p))
			ok = 0;
		profile__free(p);
	}
	CHECK(ok);
	CHECK(slices__mem(r) <= cap);
	CHECK(slices__count(r) >= 2 && slices__count(r) < 200);
	{
		struct profile *all = profile__new(fx.ft, VALUE_SAMPLES, false);

		CHECK(slices__fold_range(r, -INFINITY, INFINITY, all) == 0);
		CHECK_NUM(profile__total(all), 200 * 200);
		profile__free(all);
	}
	slices__free(r);
	fx_free(&fx);
}

TEST_CASE(fold_accumulate_window_decay)
{
	struct fixture fx;
	struct slices *r;
	struct profile *shown, *a, *b;

	fx_init(&fx, false);
	a = fx_one(fx.ft, "main;a", 10);
	b = fx_one(fx.ft, "main;b", 4);

	/* Accumulate: everything adds up; the ring is optional. */
	shown = profile__new(fx.ft, VALUE_SAMPLES, false);
	for (int i = 0; i < 3; i++)
		CHECK(slices__fold(NULL, shown, FOLD_ACCUMULATE, 0, i ? b : a, i, i + 1) == 0);
	CHECK_NUM(fx_total_at(fx.ft, shown, "main;a"), 10);
	CHECK_NUM(fx_total_at(fx.ft, shown, "main;b"), 8);
	CHECK(slices__fold(NULL, shown, FOLD_WINDOW, 10, a, 3, 4) == -EINVAL);
	CHECK(slices__fold(NULL, shown, FOLD_DECAY, 0, a, 3, 4) == -EINVAL);
	CHECK(slices__fold(NULL, shown, FOLD_MODE_MAX, 1, a, 3, 4) == -EINVAL);
	profile__free(shown);

	/* Window of 3 s with 1 s slices: a for 5 s, then b; after 2 b-slices the window holds
	 * one a-slice and two b-slices, after 3 only b. */
	shown = profile__new(fx.ft, VALUE_SAMPLES, false);
	r = slices__new(fx.ft, VALUE_SAMPLES, 8, 0);
	for (int i = 0; i < 5; i++)
		CHECK(slices__fold(r, shown, FOLD_WINDOW, 3, a, i, i + 1) == 0);
	CHECK_NUM(fx_total_at(fx.ft, shown, "main;a"), 30);
	CHECK(slices__fold(r, shown, FOLD_WINDOW, 3, b, 5, 6) == 0);
	CHECK(slices__fold(r, shown, FOLD_WINDOW, 3, b, 6, 7) == 0);
	CHECK_NUM(fx_total_at(fx.ft, shown, "main;a"), 10);
	CHECK_NUM(fx_total_at(fx.ft, shown, "main;b"), 8);
	CHECK(slices__fold(r, shown, FOLD_WINDOW, 3, b, 7, 8) == 0);
	CHECK_NUM(fx_total_at(fx.ft, shown, "main;a"), 0);
	CHECK_NUM(fx_total_at(fx.ft, shown, "main;b"), 12);
	/* The window length can change at any time: the ring keeps the slices' times (the full
	 * ring of 8 merged [0,1) and [1,2) into one slice whose midpoint is before the window). */
	CHECK(slices__fold(r, shown, FOLD_WINDOW, 6, b, 8, 9) == 0);
	CHECK_NUM(fx_total_at(fx.ft, shown, "main;a"), 20);
	CHECK_NUM(fx_total_at(fx.ft, shown, "main;b"), 16);
	profile__free(shown);

	/* Decay with a 2 s half-life: 16 samples of a, then 4 s of nothing leave a quarter;
	 * slices of uneven length decay by their own length. */
	shown = profile__new(fx.ft, VALUE_SAMPLES, false);
	slices__clear(r);
	{
		struct profile *a16 = fx_one(fx.ft, "main;a", 16);
		struct profile *empty = profile__new(fx.ft, VALUE_SAMPLES, false);

		CHECK(slices__fold(r, shown, FOLD_DECAY, 2, a16, 0, 1) == 0);
		CHECK_NUM(fx_total_at(fx.ft, shown, "main;a"), 16);
		CHECK(slices__fold(r, shown, FOLD_DECAY, 2, empty, 1, 2) == 0);
		CHECK(slices__fold(r, shown, FOLD_DECAY, 2, empty, 2, 5) == 0);
		CHECK_NUM(fx_total_at(fx.ft, shown, "main;a"), 4);
		CHECK(slices__fold(r, shown, FOLD_DECAY, 2, b, 5, 7) == 0);
		CHECK_NUM(fx_total_at(fx.ft, shown, "main;a"), 2);
		CHECK_NUM(fx_total_at(fx.ft, shown, "main;b"), 4);
		/* A steady rate converges to rate * half-life / ln 2 per second of slices. */
		profile__clear(shown);
		for (int i = 0; i < 200; i++)
			CHECK(slices__fold(NULL, shown, FOLD_DECAY, 2, b, i, i + 1) == 0);
		CHECK(fabs(fx_total_at(fx.ft, shown, "main;b") - 4 / (1 - pow(0.5, 0.5))) < 1e-6);
		/* The ring kept every slice for history, undecayed. */
		CHECK(slices__count(r) == 4);
		CHECK_NUM(profile__total(slices__get(r, 0)->p), 16);
		profile__free(a16);
		profile__free(empty);
	}
	profile__free(shown);
	slices__free(r);
	profile__free(a);
	profile__free(b);
	fx_free(&fx);
}

/* A churning history (every slice new stacks) with a budget of 16 average slices: merging
 * cannot shrink it, so the oldest slices go; memory stays near the budget whatever the run's
 * length, the window (the fine period) stays whole and exact, and what is kept adds up. */
TEST_CASE(slices_budget_drops_oldest_churn)
{
	struct fixture fx;
	struct slices *r;
	struct profile *all;
	char name[64];
	size_t one_mem = 0, peak = 0;
	int ok = 1;

	fx_init(&fx, false);
	r = slices__new(fx.ft, VALUE_SAMPLES, 128, 0);
	slices__set_budget(r, 16);
	slices__set_fine(r, 10);
	for (int i = 0; i < 400; i++) {
		struct profile *p = profile__new(fx.ft, VALUE_SAMPLES, false);

		for (int f = 0; f < 50; f++) {
			snprintf(name, sizeof(name), "[%d]proc;main;f%d", i, f);
			fx_add_stack(fx.ft, p, name, strlen(name), 1, -1);
		}
		if (!one_mem)
			one_mem = profile__mem(p);
		if (slices__push(r, i, i + 1, p))
			ok = 0;
		profile__free(p);
		if (slices__mem(r) > peak)
			peak = slices__mem(r);
	}
	CHECK(ok);
	CHECK(peak <= 18 * one_mem);
	CHECK(slices__dropped(r) > 50);
	CHECK(slices__end(r) == 400);
	CHECK(slices__start(r) > 300);
	/* The last 10 s are still 10 fine slices: the window is exact. */
	CHECK(slices__count(r) >= 10);
	for (size_t i = slices__count(r) - 10; i < slices__count(r); i++)
		CHECK_NUM(slices__get(r, i)->t1 - slices__get(r, i)->t0, 1);
	all = profile__new(fx.ft, VALUE_SAMPLES, false);
	CHECK(slices__fold_range(r, slices__start(r), INFINITY, all) == 0);
	CHECK_NUM(profile__total(all), 50 * (slices__end(r) - slices__start(r)));
	profile__free(all);
	/* A copy over a fresh frame table holds the same history. */
	{
		struct strtab *st2 = strtab__new();
		struct frames *ft2 = frames__new(st2);
		struct slices *c = slices__copy(r, ft2);

		CHECK(c && slices__count(c) == slices__count(r));
		CHECK(slices__start(c) == slices__start(r) && slices__end(c) == slices__end(r));
		CHECK(slices__dropped(c) == slices__dropped(r));
		CHECK(profile__frames(slices__get(c, 0)->p) == ft2);
		all = profile__new(ft2, VALUE_SAMPLES, false);
		CHECK(slices__fold_range(c, -INFINITY, INFINITY, all) == 0);
		CHECK_NUM(profile__total(all), 50 * (slices__end(r) - slices__start(r)));
		CHECK(frames__count(ft2) < frames__count(fx.ft) / 4); /* only what is kept */
		profile__free(all);
		slices__free(c);
		frames__free(ft2);
		strtab__free(st2);
	}
	slices__free(r);
	fx_free(&fx);
}

TEST_CASE(slices_heat_map_buckets_and_trim)
{
	struct fixture fx;
	struct slices *r;
	const double *h;
	int64_t first;
	size_t n;

	fx_init(&fx, false);
	r = slices__new(fx.ft, VALUE_SAMPLES, 8, 0);
	CHECK(slices__heat(r, &first, &n) == NULL && n == 0);
	CHECK(slices__heat_add(r, 1.01, 2) == 0);  /* bucket 20 */
	CHECK(slices__heat_add(r, 1.049, 1) == 0); /* the same */
	CHECK(slices__heat_add(r, 1.26, 4) == 0);  /* bucket 25 */
	CHECK(slices__heat_add(r, 0.51, 1) == 0);  /* bucket 10: before the first one */
	CHECK(slices__heat_add(r, -1, 1) == -EINVAL);
	CHECK(slices__heat_add(r, NAN, 1) == -EINVAL);
	h = slices__heat(r, &first, &n);
	CHECK(h && first == 10 && n == 16);
	CHECK_NUM(h[0], 1);
	CHECK_NUM(h[10], 3);
	CHECK_NUM(h[15], 4);
	CHECK_NUM(h[5], 0);
	CHECK_NUM(slices__heat_sum(r, 1, 1.25), 3);
	CHECK_NUM(slices__heat_sum(r, 0, INFINITY), 8);
	/* Keeping 2 s: a push ending at 3.5 drops what ended by 1.5, heat included. */
	slices__set_keep(r, 2);
	CHECK(slices__push(r, 0, 1, fx.p) == 0);
	CHECK(slices__push(r, 1, 2, fx.p) == 0);
	CHECK(slices__push(r, 2, 3.5, fx.p) == 0);
	CHECK(slices__count(r) == 2);
	CHECK_NUM(slices__start(r), 1);
	h = slices__heat(r, &first, &n);
	CHECK(first == 30 && n == 0);
	CHECK_NUM(slices__heat_sum(r, 0, INFINITY), 0);
	/* A jump far ahead keeps the map within its cap. */
	CHECK(slices__heat_add(r, 10, 1) == 0);
	CHECK(slices__heat_add(r, 10 + SLICES_HEAT_MAX * SLICES_BUCKET_S * 1.5, 1) == 0);
	h = slices__heat(r, &first, &n);
	CHECK(n <= SLICES_HEAT_MAX);
	CHECK(slices__heat_add(r, 10, 1) == -ERANGE);
	slices__free(r);
	fx_free(&fx);
}

/* The live view's history: an hour of 1 s slices, 10 minutes kept, 30 distinct stacks a
 * second (so merged slices cannot share everything), under a 2 MiB cap. */
/* A type whose values go down (leak) keeps changes in its buckets: the levels are their running
 * sum, from the sum of what --history dropped, so trimming does not move them. */
TEST_CASE(slices_heat_levels_keep_the_dropped_buckets_sum)
{
	struct fixture fx;
	struct slices *r;
	double *lv = NULL;
	size_t cap = 0, n;
	int64_t first;

	fx_init(&fx, false);
	r = slices__new(fx.ft, VALUE_BYTES, 8, 0);
	CHECK(slices__heat_levels(r, &lv, &cap) == 0);
	CHECK(slices__heat_add(r, 0.01, 100) == 0); /* bucket 0 */
	CHECK(slices__heat_add(r, 1.01, 50) == 0);  /* bucket 20 */
	CHECK(slices__heat_add(r, 2.01, -30) == 0); /* bucket 40: freed */
	CHECK(slices__heat_add(r, 3.01, 5) == 0);   /* bucket 60 */
	CHECK(slices__heat_levels(r, &lv, &cap) == 0);
	slices__heat(r, &first, &n);
	CHECK(first == 0 && n == 61 && cap >= 61);
	CHECK_NUM(lv[0], 100);
	CHECK_NUM(lv[19], 100);
	CHECK_NUM(lv[20], 150);
	CHECK_NUM(lv[40], 120);
	CHECK_NUM(lv[60], 125);
	CHECK_NUM(slices__heat_base(r), 0);
	/* Keeping 2 s: the push ending at 3.5 drops the buckets before 1.5 s (100 and 50). */
	slices__set_keep(r, 2);
	CHECK(slices__push(r, 0, 1, fx.p) == 0);
	CHECK(slices__push(r, 1, 2, fx.p) == 0);
	CHECK(slices__push(r, 2, 3.5, fx.p) == 0);
	slices__heat(r, &first, &n);
	CHECK(first == 30 && n == 31);
	CHECK_NUM(slices__heat_base(r), 150);
	CHECK(slices__heat_levels(r, &lv, &cap) == 0);
	CHECK_NUM(lv[0], 150);
	CHECK_NUM(lv[10], 120);
	CHECK_NUM(lv[30], 125);
	/* A copy (a snapshot's) keeps the base. */
	{
		struct slices *c = slices__copy(r, fx.ft);

		CHECK(c);
		CHECK_NUM(slices__heat_base(c), 150);
		slices__free(c);
	}
	slices__clear(r);
	CHECK_NUM(slices__heat_base(r), 0);
	free(lv);
	slices__free(r);
	fx_free(&fx);
}

TEST_CASE(slices_long_history_stays_under_cap)
{
	struct fixture fx;
	struct slices *r;
	size_t cap = 2u << 20, peak = 0;
	char name[48];
	int ok = 1;

	fx_init(&fx, false);
	r = slices__new(fx.ft, VALUE_SAMPLES, 602, cap);
	slices__set_keep(r, 600);
	for (int i = 0; i < 3600 && ok; i++) {
		struct profile *p = profile__new(fx.ft, VALUE_SAMPLES, false);

		for (int f = 0; f < 30; f++) {
			snprintf(name, sizeof(name), "main;s%d;f%d", i % 97, (i * 31 + f) % 4000);
			fx_add_stack(fx.ft, p, name, strlen(name), 1, -1);
		}
		ok = slices__push(r, i, i + 1, p) == 0;
		for (int b = 0; b < 20; b++)
			ok &= slices__heat_add(r, i + b * 0.05 + 0.01, 1.5) == 0;
		profile__free(p);
		if (slices__mem(r) > peak)
			peak = slices__mem(r);
	}
	CHECK(ok);
	/* The cap bounds the profiles; the heat map (10 min of 50 ms buckets, in an array grown
	 * by doubling) comes on top. */
	CHECK(peak <= cap + 16384 * sizeof(double));
	CHECK(slices__count(r) <= 602);
	/* At most the last 10 minutes (and the slice reaching into them) remain, or less when
	 * the cap dropped churn that merging could not shrink; what remains is exact. The heat
	 * map keeps exactly 10 minutes. */
	CHECK(slices__start(r) > 2900 && slices__start(r) < 3590);
	CHECK_NUM(slices__end(r), 3600);
	{
		struct profile *all = profile__new(fx.ft, VALUE_SAMPLES, false);
		double from = slices__start(r);

		CHECK(slices__fold_range(r, -INFINITY, INFINITY, all) == 0);
		CHECK_NUM(profile__total(all), 30 * (3600 - from));
		CHECK_NUM(slices__heat_sum(r, 0, INFINITY), 30 * 600);
		profile__free(all);
	}
	slices__free(r);
	fx_free(&fx);
}

int main(void)
{
	RUN(profile_scale_multiplies_every_column);
	RUN(slices_push_copy_and_range);
	RUN(slices_cap_merges_old_slices_into_coarser_ones);
	RUN(slices_memory_cap_bounds_growth);
	RUN(slices_budget_drops_oldest_churn);
	RUN(fold_accumulate_window_decay);
	RUN(slices_heat_map_buckets_and_trim);
	RUN(slices_heat_levels_keep_the_dropped_buckets_sum);
	RUN(slices_long_history_stays_under_cap);
	HARNESS_EXIT();
}
