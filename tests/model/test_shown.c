/* Unit tests for model/shown (what a live view shows of each stack type: the update modes and
 * their memory bounds) and model/renew (moving it all onto a fresh frame table). */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "harness.h"
#include "profile_fixture.h"
#include "model/frames.h"
#include "model/renew.h"
#include "model/shown.h"
#include "model/slices.h"
#include "model/strtab.h"

/* The modes switched at run time over one ring: accumulate, then a 3 s window, then a 2 s
 * half-life, each showing exactly what its definition says of the same 1 s slices. */
TEST_CASE(shown_modes_switch_over_one_ring)
{
	struct fixture fx;
	struct shown s;
	struct slices *rings[STACK_TYPES] = { NULL };
	struct profile *a, *b, *empty;
	int t = STACK_OFFCPU;

	fx_init(&fx, false);
	a = fx_one(fx.ft, "main;a", 10);
	b = fx_one(fx.ft, "main;b", 4);
	empty = profile__new(fx.ft, VALUE_SAMPLES, false);
	rings[t] = slices__new(fx.ft, VALUE_SAMPLES, 64, 0);
	shown_init(&s, FOLD_ACCUMULATE, 10, 0);
	CHECK(shown_fold(&s, t, rings[t], a, 0, 1, 10) == -EINVAL); /* not shown yet */
	CHECK(shown_add(&s, t, fx.ft, VALUE_SAMPLES, rings[t]) == 0);
	CHECK(shown_add(&s, t, fx.ft, VALUE_SAMPLES, rings[t]) == 0); /* a no-op */
	CHECK(s.p[t] && !s.p[STACK_ONCPU] && !s.p[STACK_MEM]);
	for (int i = 0; i < 5; i++)
		CHECK(shown_fold(&s, t, rings[t], a, i, i + 1, s.window_s) == 0);
	CHECK_NUM(fx_total_at(fx.ft, s.p[t], "main;a"), 50);

	CHECK(shown_set_mode(&s, rings, FOLD_WINDOW, 0) == -EINVAL);
	CHECK(shown_set_mode(&s, rings, FOLD_MODE_MAX, 3) == -EINVAL);
	CHECK(s.mode == FOLD_ACCUMULATE);
	CHECK(shown_set_mode(&s, rings, FOLD_WINDOW, 3) == 0);
	/* What is shown stays until the next fold; that fold shows the last 3 s of the ring. */
	CHECK_NUM(fx_total_at(fx.ft, s.p[t], "main;a"), 50);
	CHECK(shown_fold(&s, t, rings[t], b, 5, 6, s.window_s) == 0);
	CHECK_NUM(fx_total_at(fx.ft, s.p[t], "main;a"), 20);
	CHECK_NUM(fx_total_at(fx.ft, s.p[t], "main;b"), 4);
	/* A caller whose data restarted 1 s ago shortens the window to that. */
	CHECK(shown_fold(&s, t, rings[t], b, 6, 7, 1) == 0);
	CHECK_NUM(fx_total_at(fx.ft, s.p[t], "main;a"), 0);
	CHECK_NUM(fx_total_at(fx.ft, s.p[t], "main;b"), 4);

	/* Decay: what is shown halves every 2 s from here on. */
	CHECK(shown_set_mode(&s, rings, FOLD_DECAY, 2) == 0);
	CHECK(shown_fold(&s, t, rings[t], empty, 7, 9, s.window_s) == 0);
	CHECK_NUM(fx_total_at(fx.ft, s.p[t], "main;b"), 2);
	/* The ring kept every slice, undecayed, for the history. */
	CHECK(slices__count(rings[t]) == 8);
	CHECK_NUM(profile__total(slices__get(rings[t], 0)->p), 10);

	shown_clear(&s);
	CHECK_NUM(profile__total(s.p[t]), 0);
	shown_free(&s);
	shown_free(&s); /* twice: a no-op */
	slices__free(rings[t]);
	profile__free(a);
	profile__free(b);
	profile__free(empty);
	fx_free(&fx);
}

/* Memory bounds: accumulating 400 distinct stacks under a cap of 100 keeps about 100 (the
 * rarest in [other] as the tree grows, the total exact); decaying lets nodes go once faded below SHOWN_FADED of
 * the total, while a steady stack stays. */
TEST_CASE(shown_bounds_accumulate_and_decay)
{
	struct fixture fx;
	struct shown s;
	struct profile *slice;
	char stack[64];
	double sum = 0;

	fx_init(&fx, false);
	shown_init(&s, FOLD_ACCUMULATE, 10, 100);
	CHECK(shown_add(&s, STACK_ONCPU, fx.ft, VALUE_SAMPLES, NULL) == 0);
	slice = profile__new(fx.ft, VALUE_SAMPLES, false);
	for (int i = 0; i < 400; i++) {
		int len = snprintf(stack, sizeof(stack), "[1]w;main;f%d", i);

		profile__clear(slice);
		fx_add_stack(fx.ft, slice, stack, (size_t)len, 1 + i % 5, -1);
		sum += 1 + i % 5;
		CHECK(shown_fold(&s, STACK_ONCPU, NULL, slice, i, i + 1, 10) == 0);
	}
	CHECK(profile__child_count(s.p[STACK_ONCPU], PROFILE_ROOT) == 1);
	CHECK(s.cap[STACK_ONCPU].folded > 0);
	/* The cap looks again once the tree doubled since it last found it under: 2 x 100. */
	CHECK(profile__node_count(s.p[STACK_ONCPU]) <= 2 * 100 + 8);
	CHECK_NUM(profile__total(s.p[STACK_ONCPU]), sum);
	CHECK(fx_total_at(fx.ft, s.p[STACK_ONCPU], "[1]w;[other]") > 0);

	/* Decay with a 1 s half-life: an early stack, then 40 s of another; the early one fades
	 * below 1e-4 of the total within 14 half-lives and is let go. */
	shown_free(&s);
	shown_init(&s, FOLD_DECAY, 1, 0);
	CHECK(shown_add(&s, STACK_ONCPU, fx.ft, VALUE_SAMPLES, NULL) == 0);
	profile__clear(slice);
	fx_add_stack(fx.ft, slice, "main;early", 10, 100, -1);
	CHECK(shown_fold(&s, STACK_ONCPU, NULL, slice, 0, 1, 1) == 0);
	profile__clear(slice);
	fx_add_stack(fx.ft, slice, "main;steady", 11, 100, -1);
	for (int i = 1; i < 40; i++)
		CHECK(shown_fold(&s, STACK_ONCPU, NULL, slice, i, i + 1, 1) == 0);
	CHECK_NUM(fx_total_at(fx.ft, s.p[STACK_ONCPU], "main;early"), 0);
	CHECK(fabs(fx_total_at(fx.ft, s.p[STACK_ONCPU], "main;steady") - 200) < 1e-6);
	shown_free(&s);
	profile__free(slice);
	fx_free(&fx);
}

TEST_CASE(renew_due_policy)
{
	/* Past the minimum and twice what was carried over, not before. */
	CHECK(!renew_due(RENEW_FRAMES_MIN - 1, 0, 0));
	CHECK(renew_due(RENEW_FRAMES_MIN, 0, 0));
	CHECK(!renew_due(RENEW_FRAMES_MIN, RENEW_FRAMES_MIN / 2 + 1, 0));
	CHECK(renew_due(2 * 30000, 30000, 0));
	CHECK(!renew_due(2 * 30000 - 1, 30000, 0));
	/* A lower minimum (tests) and no overflow on huge counts. */
	CHECK(renew_due(300, 10, 300) && !renew_due(299, 10, 300));
	CHECK(!renew_due(UINT32_MAX, UINT32_MAX / 2 + 1, 0));
}

static int move_fails(void *ctx, struct frames *ft)
{
	(void)ft;
	++*(int *)ctx;
	return -ENOMEM;
}

static int move_ok(void *ctx, struct frames *ft)
{
	*(struct frames **)ctx = ft;
	return 0;
}

/* What is held moves onto the fresh table with the same names and values, rings with their
 * slices and heat; a refusal by the caller's move leaves everything as it was. */
TEST_CASE(renew_move_carries_profiles_and_rings)
{
	struct fixture fx;
	struct strtab *st2 = strtab__new();
	struct frames *ft2 = frames__new(st2), *moved = NULL;
	struct profile *p[STACK_TYPES] = { NULL }, *old;
	struct slices *r[STACK_TYPES] = { NULL };
	struct profile *slice;
	int calls = 0;

	fx_init(&fx, false);
	for (int i = 0; i < 50; i++) { /* frames nothing refers to any more */
		char name[16];

		snprintf(name, sizeof(name), "gone%d", i);
		frames__intern_name(fx.ft, name, strlen(name));
	}
	p[STACK_ONCPU] = fx_one(fx.ft, "[1]a;main;x", 7);
	fx_add_stack(fx.ft, p[STACK_ONCPU], "[1]a;main;y", 11, 3, -1);
	r[STACK_MEM] = slices__new(fx.ft, VALUE_FAULTS, 8, 0);
	slice = fx_one(fx.ft, "[2]b;fault", 5);
	CHECK(slices__push(r[STACK_MEM], 0, 1, slice) == 0);
	CHECK(slices__push(r[STACK_MEM], 1, 2, slice) == 0);
	CHECK(slices__heat_add(r[STACK_MEM], 0.5, 5) == 0);

	old = p[STACK_ONCPU];
	CHECK(renew_move(ft2, p, r, STACK_TYPES, move_fails, &calls) == -ENOMEM);
	CHECK(calls == 1 && p[STACK_ONCPU] == old);
	CHECK(profile__frames(p[STACK_ONCPU]) == fx.ft);

	CHECK(renew_move(ft2, p, r, STACK_TYPES, move_ok, &moved) == 0);
	CHECK(moved == ft2);
	CHECK(profile__frames(p[STACK_ONCPU]) == ft2 && !p[STACK_OFFCPU] && !r[STACK_ONCPU]);
	CHECK_NUM(fx_total_at(ft2, p[STACK_ONCPU], "[1]a;main;x"), 7);
	CHECK_NUM(fx_total_at(ft2, p[STACK_ONCPU], "[1]a;main;y"), 3);
	CHECK(slices__count(r[STACK_MEM]) == 2);
	CHECK_NUM(fx_total_at(ft2, slices__get(r[STACK_MEM], 1)->p, "[2]b;fault"), 5);
	CHECK_NUM(slices__heat_sum(r[STACK_MEM], 0, 1), 5);
	/* Only what is held came along. */
	CHECK(frames__count(ft2) < frames__count(fx.ft) - 40);
	/* No move callback and no arrays: nothing to do, fine. */
	CHECK(renew_move(ft2, NULL, NULL, 0, NULL, NULL) == 0);

	for_each_stack_type(t) {
		profile__free(p[t]);
		slices__free(r[t]);
	}
	profile__free(slice);
	frames__free(ft2);
	strtab__free(st2);
	fx_free(&fx);
}

/* The leak type (values go down) shows what is held now in every mode: the sum of its slices,
 * allocations minus frees. */
TEST_CASE(shown_leak_holds_the_sum_in_every_mode)
{
	struct fixture fx;
	struct shown s;
	struct slices *rings[STACK_TYPES] = { NULL }, *ring;
	struct profile *grow, *shrink, *gone;
	int t = STACK_LEAK;

	fx_init(&fx, false);
	grow = fx_one(fx.ft, "main;leaky", 1000);
	shrink = fx_one(fx.ft, "main;leaky", -300);
	gone = fx_one(fx.ft, "main;leaky", -1400);
	ring = rings[t] = slices__new(fx.ft, VALUE_BYTES, 64, 0);
	shown_init(&s, FOLD_DECAY, 2, 0);
	CHECK(shown_add(&s, t, fx.ft, VALUE_BYTES, ring) == 0);
	CHECK(shown_fold(&s, t, ring, grow, 0, 1, s.window_s) == 0);
	CHECK(shown_fold(&s, t, ring, grow, 1, 5, s.window_s) == 0);
	CHECK_NUM(fx_total_at(fx.ft, s.p[t], "main;leaky"), 2000); /* not decayed */
	CHECK(shown_set_mode(&s, rings, FOLD_WINDOW, 1) == 0);
	CHECK(shown_fold(&s, t, ring, shrink, 5, 6, s.window_s) == 0);
	CHECK_NUM(fx_total_at(fx.ft, s.p[t], "main;leaky"), 1700); /* not the window's -300 */
	CHECK(shown_fold(&s, t, ring, shrink, 6, 7, s.window_s) == 0);
	CHECK(shown_fold(&s, t, ring, gone, 7, 8, s.window_s) == 0);
	CHECK_NUM(profile__total(s.p[t]), 0);
	shown_free(&s);
	slices__free(ring);
	profile__free(grow);
	profile__free(shrink);
	profile__free(gone);
	fx_free(&fx);
}

int main(void)
{
	RUN(shown_modes_switch_over_one_ring);
	RUN(shown_leak_holds_the_sum_in_every_mode);
	RUN(shown_bounds_accumulate_and_decay);
	RUN(renew_due_policy);
	RUN(renew_move_carries_profiles_and_rings);
	HARNESS_EXIT();
}
