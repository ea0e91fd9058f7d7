/* Unit tests for model/leak: the live set of sampled allocations behind the leak profile. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "model/leak.h"

#define SEC 1000000000ull

static struct strtab *st;
static struct frames *ft;

/* The stack root;name (root-first frame ids) into f; its length. */
static size_t stack_of(const char *name, uint32_t *f)
{
	f[0] = frames__intern_name(ft, "[1]prog", 7);
	f[1] = frames__intern_name(ft, name, strlen(name));
	return 2;
}

/* The value of the leaf named name under the root, 0 when absent. */
static double value_of(const struct profile *p, const char *name)
{
	uint32_t f[2], node;

	stack_of(name, f);
	node = profile__find_child(p, PROFILE_ROOT, f[0]);
	if (node != PROFILE_NONE)
		node = profile__find_child(p, node, f[1]);
	return node == PROFILE_NONE ? 0 : profile__node(p, node)->total;
}

TEST_CASE(leak_weight_is_one_over_the_sampling_probability)
{
	CHECK_NUM(leak_weight(100, 1), 1);
	CHECK_NUM(leak_weight(0, 4096), 1);
	CHECK_NUM(leak_weight(4096, 4096), 1 / (1 - exp(-1)));
	CHECK_NUM(leak_weight(64, 524288), 1 / -expm1(-64.0 / 524288));
	/* Blocks far above the mean are always taken. */
	CHECK_NUM(leak_weight(1u << 30, 4096), 1);
}

static uint64_t forgot[8];
static size_t nforgot;

static void on_forget(void *ctx, uint32_t tgid, uint64_t addr)
{
	if (nforgot < 8)
		forgot[nforgot++] = addr;
}

TEST_CASE(leak_set_shows_blocks_past_the_minimum_age_until_freed)
{
	struct leak_set *s = leak_set__new();
	struct profile *p = profile__new(ft, VALUE_BYTES, false);
	struct leak_set_stats ls;
	uint32_t f[2];
	size_t n;

	CHECK(s && p);
	n = stack_of("a", f);
	CHECK(leak_set__alloc(s, 1, 0x1000, 1 * SEC, 100, 1, f, n, p) == 0);
	CHECK(leak_set__alloc(s, 1, 0x2000, 2 * SEC, 50, 2, f, n, p) == 0);
	n = stack_of("b", f);
	CHECK(leak_set__alloc(s, 2, 0x1000, 3 * SEC, 10, 1, f, n, p) == 0);
	/* Nothing is shown before it is old enough. */
	CHECK_NUM(profile__total(p), 0);
	CHECK(leak_set__age(s, 2 * SEC, p) == 2);
	CHECK_NUM(value_of(p, "a"), 200);
	CHECK_NUM(value_of(p, "b"), 0);
	/* The same address in another process is another block. */
	CHECK(leak_set__release(s, 2, 0x2000, p) == 0);
	CHECK(leak_set__release(s, 1, 0x2000, p) == 1);
	CHECK_NUM(value_of(p, "a"), 100);
	CHECK(leak_set__release(s, 1, 0x2000, p) == 0); /* an unknown free is ignored */
	CHECK(leak_set__age(s, 10 * SEC, p) == 1);
	CHECK_NUM(value_of(p, "b"), 10);
	/* A profile emptied meanwhile (a history slice cut) gets the free as a negative value. */
	profile__clear(p);
	CHECK(leak_set__release(s, 2, 0x1000, p) == 1);
	CHECK_NUM(value_of(p, "b"), -10);
	leak_set__stats(s, &ls);
	CHECK(ls.blocks == 1 && ls.allocs == 3 && ls.frees == 2);
	CHECK_NUM(ls.bytes, 100);
	profile__free(p);
	leak_set__free(s);
}

/* What the observer is told: the changes of the shown bytes, each with its block. */
static double told_sum, told_join, told_leave;
static uint64_t told_last_ts;

static void on_change(void *ctx, const struct leak_block *b, double bytes)
{
	told_sum += bytes;
	if (bytes > 0)
		told_join += bytes;
	else
		told_leave += bytes;
	told_last_ts = b->ts_ns;
}

TEST_CASE(leak_set_observer_sees_every_change_of_the_shown_bytes)
{
	struct leak_set *s = leak_set__new();
	struct profile *p = profile__new(ft, VALUE_BYTES, false);
	uint32_t f[2];
	size_t n;

	CHECK(s && p);
	leak_set__observe(s, on_change, NULL);
	n = stack_of("a", f);
	CHECK(leak_set__alloc(s, 1, 0x10, 1 * SEC, 100, 1, f, n, p) == 0);
	CHECK(leak_set__alloc(s, 1, 0x20, 2 * SEC, 40, 2, f, n, p) == 0);
	CHECK(leak_set__alloc(s, 1, 0x30, 5 * SEC, 7, 1, f, n, p) == 0);
	CHECK_NUM(told_sum, 0); /* nothing shown yet */
	CHECK(leak_set__release(s, 1, 0x30, p) == 1);
	CHECK_NUM(told_sum, 0); /* freed before it was shown: no change */
	CHECK(leak_set__age(s, 3 * SEC, p) == 2);
	CHECK_NUM(told_join, 180);
	CHECK(told_last_ts == 2 * SEC);
	CHECK(leak_set__release(s, 1, 0x10, p) == 1);
	CHECK_NUM(told_leave, -100);
	/* Replaced at its address, then its process gone: each takes its bytes back. */
	CHECK(leak_set__alloc(s, 1, 0x20, 6 * SEC, 1, 1, f, n, p) == 0);
	CHECK_NUM(told_sum, 0);
	CHECK(leak_set__age(s, 7 * SEC, p) == 1);
	CHECK(leak_set__forget_pid(s, 1, p, NULL, NULL) == 1);
	CHECK_NUM(told_sum, 0);
	CHECK_NUM(told_join, 181);
	CHECK_NUM(profile__total(p), told_sum);
	profile__free(p);
	leak_set__free(s);
}

TEST_CASE(leak_set_replaces_and_forgets_whole_processes)
{
	struct leak_set *s = leak_set__new();
	struct profile *p = profile__new(ft, VALUE_BYTES, false);
	struct leak_set_stats ls;
	uint32_t f[2];
	size_t n = stack_of("a", f);

	/* Enough blocks to grow the index several times, freed again in another order. */
	for (uint64_t i = 0; i < 5000; i++)
		CHECK(leak_set__alloc(s, 7, 0x10000 + i * 16, SEC, 16, 1, f, n, p) == 0);
	CHECK(leak_set__age(s, SEC, p) == 5000);
	CHECK_NUM(value_of(p, "a"), 80000);
	for (uint64_t i = 0; i < 5000; i += 2)
		CHECK(leak_set__release(s, 7, 0x10000 + (4999 - i) * 16, p) == 1);
	CHECK_NUM(value_of(p, "a"), 40000);
	/* A new block at a known address: the free of the old one was missed. */
	CHECK(leak_set__alloc(s, 7, 0x10000, 2 * SEC, 32, 1, f, n, p) == 0);
	CHECK_NUM(value_of(p, "a"), 39984);
	n = stack_of("b", f);
	CHECK(leak_set__alloc(s, 8, 0x99, SEC, 5, 1, f, n, p) == 0);
	CHECK(leak_set__age(s, 3 * SEC, p) == 2);
	nforgot = 0;
	CHECK(leak_set__forget_pid(s, 8, p, on_forget, NULL) == 1);
	CHECK(nforgot == 1 && forgot[0] == 0x99);
	CHECK_NUM(value_of(p, "b"), 0);
	CHECK(leak_set__forget_pid(s, 7, p, NULL, NULL) == 2500);
	CHECK_NUM(profile__total(p), 0);
	leak_set__stats(s, &ls);
	CHECK(ls.blocks == 0 && ls.replaced == 1 && ls.forgotten == 2501);
	profile__free(p);
	leak_set__free(s);
	leak_set__free(NULL);
}

TEST_CASE(leak_set_moves_its_stacks_to_a_renewed_frame_table)
{
	struct leak_set *s = leak_set__new();
	struct strtab *st2 = strtab__new();
	struct frames *ft2 = frames__new(st2);
	struct profile *p = profile__new(ft2, VALUE_BYTES, false);
	uint32_t f[2], g[2];

	stack_of("moved", f);
	CHECK(leak_set__alloc(s, 1, 0x10, SEC, 7, 1, f, 2, NULL) == 0);
	CHECK(leak_set__move_frames(s, ft2, ft) == 0);
	CHECK(leak_set__age(s, SEC, p) == 1);
	g[0] = frames__find_from(ft2, ft, f[0]);
	g[1] = frames__find_from(ft2, ft, f[1]);
	CHECK(g[0] != UINT32_MAX && g[1] != UINT32_MAX);
	CHECK_STR(frames__name(ft2, g[1]), "moved");
	CHECK_NUM(profile__total(p), 7);
	profile__free(p);
	leak_set__free(s);
	frames__free(ft2);
	strtab__free(st2);
}

/* Per function name: the allocations the shown blocks hold (each once per stack) and the
 * oldest one's time. */
TEST_CASE(leak_set_by_name_counts_and_ages)
{
	struct leak_set *s = leak_set__new();
	struct leak_by_name b = { 0 };
	uint32_t f[2], root, a, c;

	stack_of("a", f);
	root = frames__get(ft, f[0])->name;
	a = frames__get(ft, f[1])->name;
	CHECK(leak_set__alloc(s, 1, 0x10, 3 * SEC, 64, 2.5, f, 2, NULL) == 0);
	CHECK(leak_set__alloc(s, 1, 0x20, 2 * SEC, 64, 1, f, 2, NULL) == 0);
	stack_of("c", f);
	c = frames__get(ft, f[1])->name;
	CHECK(leak_set__alloc(s, 1, 0x30, 1 * SEC, 64, 1, f, 2, NULL) == 0);
	CHECK(leak_set__alloc(s, 1, 0x40, 9 * SEC, 64, 1, f, 2, NULL) == 0); /* not shown */
	CHECK(leak_set__age(s, 5 * SEC, NULL) == 3);
	CHECK(leak_set__by_name(s, ft, 6 * SEC, &b) == 0);
	CHECK(b.at == 6 * SEC && b.n > a && b.n > c && b.n > root);
	CHECK_NUM(b.count[a], 3.5);
	CHECK_NUM(b.count[c], 1);
	CHECK_NUM(b.count[root], 4.5);
	CHECK(b.oldest[a] == 2 * SEC && b.oldest[c] == 1 * SEC && b.oldest[root] == 1 * SEC);
	leak_by_name__free(&b);
	leak_by_name__free(&b);
	leak_set__free(s);
}

int main(void)
{
	st = strtab__new();
	ft = frames__new(st);
	RUN(leak_weight_is_one_over_the_sampling_probability);
	RUN(leak_set_shows_blocks_past_the_minimum_age_until_freed);
	RUN(leak_set_observer_sees_every_change_of_the_shown_bytes);
	RUN(leak_set_replaces_and_forgets_whole_processes);
	RUN(leak_set_moves_its_stacks_to_a_renewed_frame_table);
	RUN(leak_set_by_name_counts_and_ages);
	frames__free(ft);
	strtab__free(st);
	HARNESS_EXIT();
}
