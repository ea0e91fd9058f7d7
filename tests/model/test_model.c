/* Unit tests for model/: strtab, frames, profile, sanitize. */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "harness.h"
#include "profile_fixture.h"
#include "model/frames.h"
#include "model/profile.h"
#include "model/sanitize.h"
#include "model/strtab.h"

TEST_CASE(strtab_interns_and_finds)
{
	struct strtab *st = strtab__new();
	char big[70000];
	uint32_t a, b, c, d;

	CHECK(st && strtab__count(st) == 1 && strtab__len(st, 0) == 0);
	a = strtab__intern(st, "main", 4);
	b = strtab__intern(st, "mid", 3);
	c = strtab__intern(st, "main", 4);
	CHECK(a == c && a != b);
	CHECK_STR(strtab__str(st, b), "mid");
	CHECK(strtab__find(st, "mid", 3) == b);
	CHECK(strtab__find(st, "nope", 4) == UINT32_MAX);
	{
		uint32_t ids[3] = { a, b, strtab__intern(st, "mai", 3) };

		strtab__sort_ids(st, ids, 3); /* "mai" < "main" < "mid" */
		CHECK_STR(strtab__str(st, ids[0]), "mai");
		CHECK(ids[1] == a && ids[2] == b);
	}
	/* NUL bytes inside are part of the string. */
	d = strtab__intern(st, "a\0b", 3);
	CHECK(d != strtab__intern(st, "a", 1) && strtab__len(st, d) == 3);
	memset(big, 'x', sizeof(big));
	CHECK(strtab__len(st, strtab__intern(st, big, sizeof(big))) == sizeof(big));
	strtab__free(st);
	strtab__free(NULL);
}

TEST_CASE(strtab_grows_to_many_strings)
{
	struct strtab *st = strtab__new();
	char buf[32];
	int ok = 1;

	for (int i = 0; i < 200000; i++) {
		int n = snprintf(buf, sizeof(buf), "fn_%d", i);

		if (strtab__intern(st, buf, (size_t)n) != (uint32_t)i + 1)
			ok = 0;
	}
	CHECK(ok);
	CHECK(strtab__count(st) == 200001);
	CHECK_STR(strtab__str(st, 12346), "fn_12345");
	CHECK(strtab__find(st, "fn_199999", 9) == 200000);
	strtab__free(st);
}

/* The one-pass field scan agrees with strtab__hash and with a byte-by-byte check, for every
 * length around the word size, the separator anywhere, and bad bytes before, at and after
 * the field's end (only those before it count). */
TEST_CASE(strtab_hash_field_matches_hash)
{
	static const unsigned char bad[] = { 0x00, 0x09, 0x1f, 0x7f, 0x80, 0xc3, 0xff };
	char buf[64];
	uint32_t h;
	bool printable;

	for (size_t len = 0; len < 40; len++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (char)('a' + (i * 7 + len) % 26);
		/* no separator: the field is max bytes */
		CHECK(strtab__hash_field(buf, len, ';', &h, &printable) == len);
		CHECK(h == strtab__hash(buf, len) && printable);
		buf[len] = ';';
		CHECK(strtab__hash_field(buf, sizeof(buf), ';', &h, &printable) == len);
		CHECK(h == strtab__hash(buf, len) && printable);
		for (size_t b = 0; b < sizeof(bad); b++) {
			for (size_t at = 0; at < len + 12 && at < sizeof(buf); at++) {
				char keep = buf[at];

				if (at == len)
					continue;
				buf[at] = (char)bad[b];
				CHECK(strtab__hash_field(buf, sizeof(buf), ';', &h, &printable) == len);
				CHECK(h == strtab__hash(buf, len));
				CHECK(printable == (at > len));
				buf[at] = keep;
			}
		}
	}
	/* a string interned whole is found by the scanned hash */
	{
		struct strtab *st = strtab__new();
		const char *stack = "main;engine::Row0<Row&>::flush;x";
		size_t n = strtab__hash_field(stack + 5, strlen(stack) - 5, ';', &h, &printable);
		uint32_t id = strtab__intern(st, "engine::Row0<Row&>::flush", 25);

		CHECK(n == 25 && printable);
		CHECK(strtab__intern_hashed(st, stack + 5, n, h) == id);
		strtab__free(st);
	}
}

TEST_CASE(frame_kinds_are_guessed)
{
	CHECK(frame_kind_guess("vfs_read_[k]", 12) == FRAME_KERNEL);
	CHECK(frame_kind_guess("Lfoo;.bar_[j]", 13) == FRAME_JIT);
	CHECK(frame_kind_guess("inl_[i]", 7) == FRAME_INLINED);
	CHECK(frame_kind_guess("[Pod]web", 8) == FRAME_POD);
	CHECK(frame_kind_guess("[Con]nginx", 10) == FRAME_CONTAINER);
	CHECK(frame_kind_guess("[1234]nginx", 11) == FRAME_PROCESS);
	CHECK(frame_kind_guess("[unknown]", 9) == FRAME_SPECIAL);
	CHECK(frame_kind_guess("-", 1) == FRAME_SPECIAL);
	CHECK(frame_kind_guess("main", 4) == FRAME_USER);
	CHECK(frame_kind_guess("[12", 3) == FRAME_USER);
	CHECK(frame_kind_parse(frame_kind_str(FRAME_CONTAINER)) == FRAME_CONTAINER);
	CHECK(frame_kind_parse("bogus") == -1);
}

TEST_CASE(frames_intern_by_function)
{
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct frame f = { .name = strtab__intern(st, "read", 4), .kind = FRAME_USER };
	uint32_t a = frames__intern(ft, &f), b;

	f.kind = FRAME_KERNEL;
	b = frames__intern(ft, &f);
	CHECK(a != b && a != 0);
	CHECK(frames__intern(ft, &f) == b);
	/* Another line of the same function is the same frame; the first line seen stays. */
	f.line = 42;
	CHECK(frames__intern(ft, &f) == b && frames__get(ft, b)->line == 0);
	CHECK_STR(frames__name(ft, b), "read");
	CHECK(frames__get(ft, b)->kind == FRAME_KERNEL);
	CHECK(frames__intern_name(ft, "x_[k]", 5) == frames__intern_name(ft, "x_[k]", 5));
	frames__free(ft);
	strtab__free(st);
}

/* A renewed table holds a subset of the frames under other ids (and another strtab):
 * frames__find_from carries ids over by name, module and kind. */
TEST_CASE(frames_find_from_another_table)
{
	struct strtab *st = strtab__new(), *st2 = strtab__new();
	struct frames *ft = frames__new(st), *ft2 = frames__new(st2);
	struct frame f = { .name = strtab__intern(st, "read", 4),
			   .module = strtab__intern(st, "/lib/libc.so.6", 14), .kind = FRAME_USER };
	uint32_t gone = frames__intern_name(ft, "[123]gone", 9), a = frames__intern(ft, &f), b, k;

	CHECK(frames__find(ft, &f) == a);
	f.kind = FRAME_KERNEL;
	CHECK(frames__find(ft, &f) == UINT32_MAX);
	k = frames__intern(ft, &f);
	/* ft2 interns other names first, so ids differ. */
	frames__intern_name(ft2, "other", 5);
	frames__intern_name(ft2, "more", 4);
	b = frames__intern(ft2, &(struct frame){ .name = strtab__intern(st2, "read", 4),
						 .module = strtab__intern(st2, "/lib/libc.so.6", 14),
						 .kind = FRAME_USER });
	CHECK(b != a);
	CHECK(frames__find_from(ft2, ft, a) == b);
	CHECK(frames__find_from(ft2, ft, k) == UINT32_MAX); /* the kernel one is not in ft2 */
	CHECK(frames__find_from(ft2, ft, gone) == UINT32_MAX);
	CHECK(frames__find_from(ft2, ft, 0) == 0);
	CHECK(frames__find_from(ft2, ft, 99999) == UINT32_MAX);
	CHECK(frames__find_from(ft, ft, gone) == gone);
	frames__free(ft);
	frames__free(ft2);
	strtab__free(st);
	strtab__free(st2);
}

/* Adds "a;b;c" to p, one of fx's profiles or another over fx's frames. */
static void add(struct fixture *fx, struct profile *p, const char *stack, double v)
{
	fx_add_stack(fx->ft, p, stack, strlen(stack), v, -1);
}

static uint32_t find_path(struct fixture *fx, const struct profile *p, const char *path)
{
	uint32_t node = PROFILE_ROOT;
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		uint32_t f = frames__intern_name(fx->ft, t, strlen(t));

		node = profile__find_child(p, node, f);
		if (node == PROFILE_NONE)
			return node;
	}
	return node;
}

TEST_CASE(profile_totals_and_selfs)
{
	struct fixture fx;

	fx_init(&fx, false);
	add(&fx, fx.p, "main;mid;alpha", 60);
	add(&fx, fx.p, "main;mid;beta", 30);
	add(&fx, fx.p, "main;mid;gamma", 10);
	add(&fx, fx.p, "main;mid", 5);
	add(&fx, fx.p, "main;mid;alpha", 1);
	CHECK_NUM(profile__total(fx.p), 106);
	CHECK(profile__node_count(fx.p) == 6);
	CHECK_NUM(profile__node(fx.p, find_path(&fx, fx.p, "main;mid"))->total, 106);
	CHECK_NUM(profile__node(fx.p, find_path(&fx, fx.p, "main;mid"))->self, 5);
	CHECK_NUM(profile__node(fx.p, find_path(&fx, fx.p, "main;mid;alpha"))->self, 61);
	CHECK(find_path(&fx, fx.p, "main;alpha") == PROFILE_NONE);
	CHECK(profile__max_depth(fx.p) == 3);
	fx_free(&fx);
}

TEST_CASE(profile_child_order)
{
	struct fixture fx;
	uint32_t kids[8], mid;
	size_t n;

	fx_init(&fx, false);
	add(&fx, fx.p, "m;b", 1);
	add(&fx, fx.p, "m;c", 5);
	add(&fx, fx.p, "m;a", 3);
	add(&fx, fx.p, "m;a b", 2);
	mid = find_path(&fx, fx.p, "m");
	n = profile__children(fx.p, mid, ORDER_NAME, kids);
	CHECK(n == 4);
	/* flamegraph.pl sorts lines: "m;a b" < "m;a;" because ' ' < ';'. */
	CHECK_STR(frames__name(fx.ft, profile__node(fx.p, kids[0])->frame), "a b");
	CHECK_STR(frames__name(fx.ft, profile__node(fx.p, kids[1])->frame), "a");
	CHECK_STR(frames__name(fx.ft, profile__node(fx.p, kids[3])->frame), "c");
	n = profile__children(fx.p, mid, ORDER_WEIGHT, kids);
	CHECK_STR(frames__name(fx.ft, profile__node(fx.p, kids[0])->frame), "c");
	CHECK_STR(frames__name(fx.ft, profile__node(fx.p, kids[1])->frame), "a");
	n = profile__children(fx.p, mid, ORDER_INSERTION, kids);
	CHECK_STR(frames__name(fx.ft, profile__node(fx.p, kids[0])->frame), "b");
	CHECK_STR(frames__name(fx.ft, profile__node(fx.p, kids[3])->frame), "a b");
	fx_free(&fx);
}

TEST_CASE(profile_chart_merges_only_adjacent)
{
	struct fixture fx;
	uint32_t kids[8];

	fx_init(&fx, true);
	add(&fx, fx.p, "m;a", 1);
	add(&fx, fx.p, "m;a", 1);
	add(&fx, fx.p, "m;b", 1);
	add(&fx, fx.p, "m;a", 1);
	CHECK(profile__child_count(fx.p, PROFILE_ROOT) == 1);
	CHECK(profile__children(fx.p, profile__node(fx.p, PROFILE_ROOT)->first_child,
				ORDER_INSERTION, kids) == 3);
	CHECK_NUM(profile__node(fx.p, kids[0])->total, 2);
	CHECK_STR(frames__name(fx.ft, profile__node(fx.p, kids[1])->frame), "b");
	CHECK_NUM(profile__node(fx.p, kids[2])->total, 1);
	fx_free(&fx);
}

struct collected {
	char text[4096];
	struct frames *ft;
};

static int collect(void *ctx, const uint32_t *frames, size_t depth, double self, double self2)
{
	struct collected *c = ctx;
	size_t n = strlen(c->text);

	for (size_t i = 0; i < depth; i++)
		n += (size_t)snprintf(c->text + n, sizeof(c->text) - n, "%s%s", i ? ";" : "",
				      frames__name(c->ft, frames[i]));
	snprintf(c->text + n, sizeof(c->text) - n, " %g %g\n", self, self2);
	return 0;
}

TEST_CASE(profile_merge_prune_walk)
{
	struct fixture a, b;
	struct profile *q;
	struct collected c = { "", NULL };

	fx_init(&a, false);
	fx_init(&b, false);
	add(&a, a.p, "x;y", 10);
	add(&a, a.p, "x;z", 1);
	add(&b, b.p, "x;y", 5);
	add(&b, b.p, "w", 2);
	CHECK(profile__merge(a.p, b.p) == 0); /* different frame tables */
	CHECK_NUM(profile__total(a.p), 18);
	CHECK_NUM(profile__node(a.p, find_path(&a, a.p, "x;y"))->self, 15);
	CHECK_NUM(profile__node(a.p, find_path(&a, a.p, "w"))->total, 2);
	q = profile__pruned(a.p, 2);
	CHECK(q && profile__node_count(q) == 4); /* root, x, y, w */
	CHECK_NUM(profile__total(q), 18);
	c.ft = a.ft;
	CHECK(profile__for_each_stack(q, ORDER_NAME, collect, &c) == 0);
	CHECK_STR(c.text, "w 2 0\nx;y 15 0\n");
	profile__free(q);
	/* Bulk load: own values first, then one pass of totals. */
	profile__add_self(a.p, find_path(&a, a.p, "w"), 3, 0);
	profile__sum_totals(a.p);
	CHECK_NUM(profile__total(a.p), 21);
	CHECK_NUM(profile__node(a.p, find_path(&a, a.p, "x"))->total, 16);
	fx_free(&a);
	fx_free(&b);
}

TEST_CASE(profile_two_column)
{
	struct fixture fx;
	uint32_t f[2];

	fx_init(&fx, false);
	add(&fx, fx.p, "a;b", 4); /* before it turned two-column: same in both columns */
	f[0] = frames__intern_name(fx.ft, "a", 1);
	f[1] = frames__intern_name(fx.ft, "c", 1);
	CHECK(profile__add_stack2(fx.p, f, 2, 1, 7) == 0);
	CHECK(profile__two_column(fx.p));
	CHECK_NUM(profile__total(fx.p), 5);
	CHECK_NUM(profile__total2(fx.p, PROFILE_ROOT), 11);
	CHECK_NUM(profile__self2(fx.p, find_path(&fx, fx.p, "a;c")), 7);
	CHECK_NUM(profile__self2(fx.p, find_path(&fx, fx.p, "a;b")), 4);
	fx_free(&fx);
}

TEST_CASE(profile_many_nodes_and_clear)
{
	struct fixture fx;
	uint32_t ids[40];
	int ok = 1;

	fx_init(&fx, false);
	for (int s = 0; s < 3000; s++) {
		for (int d = 0; d < 40; d++) {
			char name[32];
			int n = snprintf(name, sizeof(name), "f%d_%d", d, (s >> (d % 12)) % 7);

			ids[d] = frames__intern_name(fx.ft, name, (size_t)n);
		}
		if (profile__add_stack(fx.p, ids, 40, 1))
			ok = 0;
	}
	CHECK(ok);
	CHECK_NUM(profile__total(fx.p), 3000);
	CHECK(profile__node_count(fx.p) > 10000);
	CHECK(profile__mem(fx.p) > 0);
	profile__clear(fx.p);
	CHECK(profile__node_count(fx.p) == 1 && profile__total(fx.p) == 0);
	CHECK(profile__find_child(fx.p, PROFILE_ROOT, ids[0]) == PROFILE_NONE);
	fx_free(&fx);
}

TEST_CASE(profile_wide_fanout_is_indexed)
{
	struct fixture fx;
	char name[32];

	/* Past 8 children a node's children move into the hash: lookups must still find each
	 * one exactly once, before and after the switch and across growth. */
	fx_init(&fx, false);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 3000; i++) {
			snprintf(name, sizeof(name), "root;kid%d;leaf", i);
			add(&fx, fx.p, name, 1);
		}
	CHECK(profile__node_count(fx.p) == 1 + 1 + 3000 * 2);
	CHECK(profile__child_count(fx.p, find_path(&fx, fx.p, "root")) == 3000);
	CHECK_NUM(profile__node(fx.p, find_path(&fx, fx.p, "root;kid2999;leaf"))->total, 2);
	CHECK_NUM(profile__node(fx.p, find_path(&fx, fx.p, "root;kid0"))->total, 2);
	CHECK_NUM(profile__total(fx.p), 6000);
	fx_free(&fx);
}

TEST_CASE(profile_child_path_matches_child)
{
	static const char *const stacks[] = { "m;x;y;z", "m;x;w", "m;x;y;q", "n", "m;x;y;z;deep;er" };
	struct fixture fx;
	struct profile *q;
	uint32_t ids[8], path[8];

	/* The same stacks added frame by frame (profile__child) and by path, where the nodes
	 * below the first new one are made without lookups: the same trees, node for node, and
	 * path[] holds the nodes walked. */
	fx_init(&fx, false);
	q = profile__new(fx.ft, VALUE_SAMPLES, false);
	for (size_t s = 0; s < sizeof(stacks) / sizeof(stacks[0]); s++) {
		const char *at = stacks[s], *semi;
		uint32_t node = PROFILE_ROOT;
		size_t n = 0;

		do {
			semi = strchr(at, ';');
			ids[n++] = frames__intern_name(fx.ft, at, semi ? (size_t)(semi - at) : strlen(at));
			at = semi + 1;
		} while (semi);
		for (size_t i = 0; i < n; i++)
			node = profile__child(fx.p, node, ids[i]);
		CHECK(profile__child_path(q, PROFILE_ROOT, ids, n, path) == node);
		for (size_t i = 0; i < n; i++)
			CHECK(profile__node(q, path[i])->frame == ids[i] &&
			      profile__node(q, path[i])->parent == (i ? path[i - 1] : PROFILE_ROOT));
	}
	CHECK(profile__node_count(q) == profile__node_count(fx.p) && profile__node_count(q) == 10);
	for (uint32_t id = 0; id < profile__node_count(q); id++) {
		const struct profile_node *a = profile__node(fx.p, id), *b = profile__node(q, id);

		CHECK(a->parent == b->parent && a->frame == b->frame &&
		      a->first_child == b->first_child && a->next_sibling == b->next_sibling);
	}
	CHECK(profile__child_path(q, path[0], ids, 0, NULL) == path[0]);
	profile__free(q);
	fx_free(&fx);
}

TEST_CASE(sanitize_replaces_controls_and_bad_utf8)
{
	char out[64];
	size_t n;

	CHECK(sanitize_is_clean("caf\xc3\xa9 <ok>", 10));
	CHECK(!sanitize_is_clean("a\x1b[2Jb", 6));
	CHECK(!sanitize_is_clean("a\0b", 3));
	CHECK(!sanitize_is_clean("\xc2\x9b", 2)); /* C1 CSI */
	CHECK(!sanitize_is_clean("\xed\xa0\x80", 3)); /* surrogate */
	CHECK(!sanitize_is_clean("\xc0\xaf", 2));     /* overlong '/' */
	n = sanitize_text("a\x1b[2J\xff", 6, out);
	CHECK(n == 1 + 3 + 3 + 3);
	CHECK(!memcmp(out, "a\xef\xbf\xbd[2J\xef\xbf\xbd", n));
	n = sanitize_text("\xe2\x82", 2, out); /* truncated sequence */
	CHECK(n == 6);
	CHECK(sanitize_is_clean(out, n));
}

/* Long printable runs go eight bytes at a time: a byte that is not printable ASCII is caught
 * at every position of a word, and the range's ends (space, '~') pass. */
TEST_CASE(sanitize_words_of_printable_ascii)
{
	static const unsigned char bad[] = { 0x00, 0x09, 0x1f, 0x7f, 0x80, 0xc0, 0xff };
	char in[25], out[64], want[64];
	size_t n;

	for (size_t k = 0; k < 24; k++)
		in[k] = k % 2 ? '~' : ' ';
	n = sanitize_text(in, 24, out);
	CHECK(n == 24 && !memcmp(out, in, 24));
	for (size_t b = 0; b < sizeof(bad); b++)
		for (size_t pos = 0; pos < 24; pos++) {
			for (size_t k = 0; k < 24; k++)
				in[k] = (char)('A' + k);
			in[pos] = (char)bad[b];
			memcpy(want, in, pos);
			memcpy(want + pos, "\xef\xbf\xbd", 3);
			memcpy(want + pos + 3, in + pos + 1, 23 - pos);
			n = sanitize_text(in, 24, out);
			CHECK(n == 26 && !memcmp(out, want, 26));
			if (harness_case_failed) {
				printf("  byte 0x%02x at %zu\n", bad[b], pos);
				return;
			}
		}
}

TEST_CASE(profile_merge_column_builds_a_differential)
{
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct profile *b = profile__new(ft, VALUE_SAMPLES, false);
	struct profile *a = profile__new(ft, VALUE_SAMPLES, false);
	struct profile *d = profile__new(ft, VALUE_SAMPLES, false);
	uint32_t m = frames__intern_name(ft, "main", 4), x = frames__intern_name(ft, "x", 1);
	uint32_t y = frames__intern_name(ft, "y", 1), s1[2] = { m, x }, s2[2] = { m, y };
	uint32_t nx, ny;

	profile__add_stack(b, s1, 2, 60);
	profile__add_stack(b, s2, 2, 40);
	profile__add_stack(a, s1, 2, 10);
	CHECK(profile__merge_column(d, b, 0, 1) == 0 && profile__merge_column(d, a, 1, 1) == 0);
	CHECK(profile__merge_column(d, a, 2, 1) == -EINVAL);
	CHECK(profile__merge_column(d, a, 1, -1) == -EINVAL);
	CHECK(profile__merge_column(d, a, 1, NAN) == -EINVAL);
	CHECK(profile__two_column(d));
	nx = profile__find_child(d, profile__find_child(d, PROFILE_ROOT, m), x);
	ny = profile__find_child(d, profile__find_child(d, PROFILE_ROOT, m), y);
	CHECK(profile__node(d, nx)->self == 60 && profile__self2(d, nx) == 10);
	CHECK(profile__node(d, ny)->self == 40 && profile__self2(d, ny) == 0);
	CHECK(profile__total(d) == 100 && profile__total2(d, PROFILE_ROOT) == 10);
	/* A factor normalizes one side: the baseline at a quarter of its weight. */
	profile__free(d);
	d = profile__new(ft, VALUE_SAMPLES, false);
	CHECK(profile__merge_column(d, b, 0, 0.25) == 0 && profile__merge_column(d, a, 1, 1) == 0);
	nx = profile__find_child(d, profile__find_child(d, PROFILE_ROOT, m), x);
	CHECK(profile__node(d, nx)->self == 15 && profile__self2(d, nx) == 10);
	CHECK(profile__total(d) == 25 && profile__total2(d, PROFILE_ROOT) == 10);
	profile__free(d);
	profile__free(a);
	profile__free(b);
	frames__free(ft);
	strtab__free(st);
}

int main(void)
{
	RUN(strtab_interns_and_finds);
	RUN(strtab_grows_to_many_strings);
	RUN(strtab_hash_field_matches_hash);
	RUN(frame_kinds_are_guessed);
	RUN(frames_intern_by_function);
	RUN(frames_find_from_another_table);
	RUN(profile_totals_and_selfs);
	RUN(profile_child_order);
	RUN(profile_chart_merges_only_adjacent);
	RUN(profile_merge_prune_walk);
	RUN(profile_two_column);
	RUN(profile_merge_column_builds_a_differential);
	RUN(profile_many_nodes_and_clear);
	RUN(profile_wide_fanout_is_indexed);
	RUN(profile_child_path_matches_child);
	RUN(sanitize_replaces_controls_and_bad_utf8);
	RUN(sanitize_words_of_printable_ascii);
	HARNESS_EXIT();
}
