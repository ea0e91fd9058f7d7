/* Unit tests for util/cpulist: the kernel's CPU list syntax, both ways. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "harness.h"
#include "util/cpulist.h"

TEST_CASE(parses_lists_and_ranges)
{
	uint8_t set[8];
	long bad = -1;

	CHECK_NUM(cpulist_parse("0,2-3", set, 8, NULL), 3);
	CHECK(set[0] && !set[1] && set[2] && set[3] && !set[4]);
	CHECK_NUM(cpulist_parse("1", set, 8, NULL), 1);
	CHECK(!set[0] && set[1] && !set[2]);
	CHECK_NUM(cpulist_parse("0-7\n", set, 8, NULL), 8); /* as sysfs writes it */
	CHECK_NUM(cpulist_parse("3,3,2-4", set, 8, NULL), 3); /* repeats count once */
	CHECK_NUM(cpulist_parse("7", set, 8, &bad), 1);
	CHECK(bad == -1);
}

TEST_CASE(refuses_bad_lists)
{
	static const char *const bad_syntax[] = { "", ",", "1,", "a", "-1", "1-", "3-1", " 1",
						  "1 ", "1;2", "0x1", "+1", "1--2", "1,,2" };
	uint8_t set[8];
	long bad = -1;

	for (size_t i = 0; i < sizeof(bad_syntax) / sizeof(bad_syntax[0]); i++)
		CHECK_NUM(cpulist_parse(bad_syntax[i], set, 8, NULL), -EINVAL);
	CHECK_NUM(cpulist_parse("8", set, 8, &bad), -ERANGE);
	CHECK_NUM(bad, 8);
	CHECK_NUM(cpulist_parse("1,6-9", set, 8, &bad), -ERANGE);
	CHECK_NUM(bad, 9);
	CHECK_NUM(cpulist_parse("99999999999999999999", set, 8, &bad), -ERANGE);
}

TEST_CASE(formats_what_it_parses)
{
	static const char *const lists[] = { "0", "0,2-3", "1-7", "0,2,4,6", "0-1,5-6" };
	uint8_t set[8];
	char buf[64];

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		CHECK(cpulist_parse(lists[i], set, 8, NULL) > 0);
		cpulist_format(set, 8, buf, sizeof(buf));
		CHECK_STR(buf, lists[i]);
	}
	memset(set, 0, sizeof(set));
	cpulist_format(set, 8, buf, sizeof(buf));
	CHECK_STR(buf, "");
	CHECK(cpulist_parse("0,2,4,6", set, 8, NULL) == 4);
	cpulist_format(set, 8, buf, 4); /* truncated, still terminated */
	CHECK(strlen(buf) < 4);
}

TEST_CASE(online_cpus_match_sysconf)
{
	uint8_t set[4096];
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CHECK_NUM(cpulist_online(set, sizeof(set)), n);
}

int main(void)
{
	RUN(parses_lists_and_ranges);
	RUN(refuses_bad_lists);
	RUN(formats_what_it_parses);
	RUN(online_cpus_match_sysconf);
	HARNESS_EXIT();
}
