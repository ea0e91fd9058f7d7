/* Unit tests of the display filters (model/filter): prompt checks, kernel/pid/comm/container
 * filters and regrouping, thread roots and search totals. */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "profile_fixture.h"
#include "../model/filter.h"

static struct strtab *st;
static struct frames *ft;

static struct profile *sample(void)
{
	return fx_identities(ft);
}

TEST_CASE(prompt_checks)
{
	const char *why = NULL;
	uint32_t pid = 0;

	CHECK(filter_check_pid("1", &pid, &why) == 0 && pid == 1);
	CHECK(filter_check_pid("4194304", &pid, &why) == 0 && pid == 4194304);
	CHECK(filter_check_pid("4194305", &pid, &why) == -EINVAL);
	CHECK(filter_check_pid("0", &pid, &why) == -EINVAL);
	CHECK(filter_check_pid("-1", &pid, &why) == -EINVAL);
	CHECK(filter_check_pid("12a", &pid, &why) == -EINVAL);
	CHECK(filter_check_pid("99999999999999999999", &pid, &why) == -EINVAL);
	CHECK(filter_check_comm("nginx", &why) == 0);
	CHECK(filter_check_comm("123456789012345", &why) == 0);
	CHECK(filter_check_comm("1234567890123456", &why) == -EINVAL);
	CHECK(filter_check_comm("a\tb", &why) == -EINVAL);
	CHECK(filter_check_container("web", &why) == 0);
	CHECK(filter_check_container("0123456789ab", &why) == 0);
	CHECK(filter_check_container("0123ab", &why) == -EINVAL);
	CHECK(filter_check_container("a b", &why) == -EINVAL);
	CHECK(filter_check_container("", &why) == -EINVAL);
}

TEST_CASE(filters)
{
	struct profile *p = sample(), *q;
	struct profile_filter f = { 0 };

	CHECK(!profile_filter__active(&f));
	f.pid = 10;
	q = profile__filter(p, &f);
	CHECK_NUM(profile__total(q), 6);
	profile__free(q);
	f.pid = 40; /* perf script's comm-PID/TID roots count too */
	q = profile__filter(p, &f);
	CHECK_NUM(profile__total(q), 5);
	profile__free(q);
	f.pid = 0;
	snprintf(f.comm, sizeof(f.comm), "redis");
	q = profile__filter(p, &f);
	CHECK_NUM(profile__total(q), 3);
	profile__free(q);
	f.comm[0] = 0;
	snprintf(f.container, sizeof(f.container), "0123456789ab");
	q = profile__filter(p, &f);
	CHECK_NUM(profile__total(q), 1);
	profile__free(q);
	f.container[0] = 0;
	f.hide_kernel = true;
	q = profile__filter(p, &f);
	CHECK_NUM(profile__total(q), 15);
	CHECK(profile__node_count(q) == profile__node_count(p) - 1);
	profile__free(q);
	f.hide_kernel = false;
	uint32_t prefix[2] = { frames__intern_name(ft, "[10]nginx", 9),
			       frames__intern_name(ft, "main", 4) };

	f.prefix = prefix;
	f.prefix_n = 2;
	q = profile__filter(p, &f);
	CHECK_NUM(profile__total(q), 6);
	profile__free(q);
	profile__free(p);
}

TEST_CASE(threads)
{
	struct profile *p = profile__new(ft, VALUE_SAMPLES, false), *q;
	struct frame th = { .name = strtab__intern(st, "t1", 2), .kind = FRAME_THREAD };
	uint32_t fr[3] = { frames__intern_name(ft, "[10]nginx", 9), frames__intern(ft, &th),
			   frames__intern_name(ft, "main", 4) };
	struct profile_filter f = { .regroup = true, .group = GROUP_PROCESS };

	CHECK(!profile__has_threads(p));
	profile__add_stack(p, fr, 3, 2);
	CHECK(profile__has_threads(p));
	q = profile__filter(p, &f);
	CHECK(profile__node_count(q) == 3);
	CHECK(!profile__has_threads(q));
	profile__free(q);
	profile__free(p);
}

TEST_CASE(match_totals)
{
	struct profile *p = sample();
	uint32_t n = frames__count(ft);
	uint8_t *bits = calloc(n / 8 + 1, 1);
	regex_t re;

	CHECK(regcomp(&re, "^(rec|work)$", REG_EXTENDED | REG_NOSUB) == 0);
	frames__match(ft, &re, 0, bits, 0, n);
	/* rec under rec counts once; work's total includes read_[k]. */
	CHECK_NUM(profile__matched_total(p, PROFILE_ROOT, bits, n), 9);
	regfree(&re);
	frames__match(ft, NULL, strtab__find(st, "main", 4), bits, 0, n);
	CHECK_NUM(profile__matched_total(p, PROFILE_ROOT, bits, n), 9);
	CHECK_NUM(profile__matched_total(p, PROFILE_ROOT, NULL, 0), 0);
	free(bits);
	profile__free(p);
}

/* A diff (two-column) profile keeps both columns through the filters. */
TEST_CASE(two_columns)
{
	struct profile *p = profile__new(ft, VALUE_SAMPLES, false), *q;
	struct profile_filter f = { .hide_kernel = true };
	uint32_t a[3], b[2];

	a[0] = frames__intern_name(ft, "main", 4);
	a[1] = frames__intern_name(ft, "work", 4);
	a[2] = frames__intern_name(ft, "read_[k]", 8);
	b[0] = a[0];
	b[1] = frames__intern_name(ft, "gamma", 5);
	CHECK(profile__set_two_column(p) == 0);
	CHECK(profile__add_stack2(p, a, 3, 10, 4) == 0);
	CHECK(profile__add_stack2(p, b, 2, 0, 15) == 0);
	q = profile__filter(p, &f);
	CHECK(q && profile__two_column(q));
	if (q) {
		double t2 = 0;

		for (uint32_t i = 1; i < profile__node_count(q); i++)
			t2 += profile__self2(q, i);
		CHECK_NUM(t2, 19);
		CHECK_NUM(profile__total(q), 10);
	}
	profile__free(q);
	profile__free(p);
}

int main(void)
{
	st = strtab__new();
	ft = frames__new(st);
	RUN(prompt_checks);
	RUN(filters);
	RUN(threads);
	RUN(match_totals);
	RUN(two_columns);
	frames__free(ft);
	strtab__free(st);
	HARNESS_EXIT();
}
