/* Unit tests for model/group: regrouping the identity roots of stacks. */
#include "harness.h"

#include <errno.h>

#include "export/folded.h"
#include "model/filter.h"
#include "model/group.h"

/* p with every stack regrouped for g (model/filter does it for the views and svg). */
static struct profile *group_profile(const struct profile *p, enum group_by g)
{
	struct profile_filter f = { .regroup = true, .group = g };

	return profile__filter(p, &f);
}

/* Folded text of p, in a static buffer. */
static const char *folded(const struct profile *p)
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	folded_write(f, p);
	fclose(f);
	return buf;
}

/* A build: three cc1 processes (one with a thread frame), one as, in a container. */
static struct profile *build(struct frames *ft)
{
	static const char *const stacks[][5] = {
		{ "[101]cc1", "main", "parse", NULL }, { "[102]cc1", "main", "parse", NULL },
		{ "[103]cc1", "[104]cc1", "main", "opt", NULL }, { "[200]as", "main", NULL },
		{ "[Con]web", "[300]cc1", "main", NULL },
	};
	static const double counts[] = { 5, 3, 2, 1, 4 };
	struct profile *p = profile__new(ft, VALUE_SAMPLES, false);

	for (size_t i = 0; p && i < sizeof(counts) / sizeof(counts[0]); i++) {
		uint32_t fr[5];
		size_t n = 0;

		for (; stacks[i][n]; n++)
			fr[n] = frames__intern_name(ft, stacks[i][n], strlen(stacks[i][n]));
		profile__add_stack(p, fr, n, counts[i]);
	}
	return p;
}

TEST_CASE(group_names_parse)
{
	for (int g = 0; g < GROUP_MAX; g++)
		CHECK(group_by_parse(group_by_str((enum group_by)g)) == g);
	CHECK(group_by_parse("threads") == -1);
	CHECK(group_by_parse("") == -1);
}

TEST_CASE(group_command_merges_processes_of_a_name)
{
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct profile *p = build(ft), *q = group_profile(p, GROUP_COMMAND);

	CHECK(q != NULL);
	CHECK_STR(folded(q), "[Con]web;cc1;main 4\nas;main 1\ncc1;main;opt 2\ncc1;main;parse 8\n");
	CHECK_NUM(profile__total(q), profile__total(p));
	profile__free(q);
	q = group_profile(p, GROUP_PROCESS);
	CHECK_STR(folded(q), "[101]cc1;main;parse 5\n[102]cc1;main;parse 3\n[103]cc1;main;opt 2\n"
			     "[200]as;main 1\n[Con]web;[300]cc1;main 4\n");
	profile__free(q);
	q = group_profile(p, GROUP_THREAD); /* as recorded */
	CHECK_STR(folded(q), folded(p));
	profile__free(q);
	q = group_profile(p, GROUP_NONE);
	CHECK_STR(folded(q), "main 5\nmain;opt 2\nmain;parse 8\n");
	profile__free(q);
	profile__free(p);
	frames__free(ft);
	strtab__free(st);
}

TEST_CASE(group_process_names)
{
	char buf[64];

	CHECK(group_process_name(GROUP_COMMAND, 42, "cc1", buf, sizeof(buf)) == 3);
	CHECK_STR(buf, "cc1");
	group_process_name(GROUP_PROCESS, 42, "cc1", buf, sizeof(buf));
	CHECK_STR(buf, "[42]cc1");
}

TEST_CASE(group_leaves_other_frames_alone)
{
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	const char *names[] = { "[7]x", "[8]y", "main", "[9]z" }; /* "[9]z" below a function */
	uint32_t fr[4], out[4];
	long n;

	for (int i = 0; i < 4; i++)
		fr[i] = frames__intern_name(ft, names[i], strlen(names[i]));
	n = group_stack(ft, GROUP_COMMAND, fr, 4, out);
	CHECK(n == 3);
	CHECK_STR(frames__name(ft, out[0]), "x");
	CHECK(out[1] == fr[2] && out[2] == fr[3]);
	n = group_stack(ft, GROUP_NONE, fr, 4, fr); /* in place */
	CHECK(n == 2);
	frames__free(ft);
	strtab__free(st);
}

int main(void)
{
	RUN(group_names_parse);
	RUN(group_command_merges_processes_of_a_name);
	RUN(group_process_names);
	RUN(group_leaves_other_frames_alone);
	HARNESS_EXIT();
}
