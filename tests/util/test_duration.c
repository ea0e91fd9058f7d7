/* Unit tests for util/duration: the one duration formatter, at every unit and its edges. */
#include "harness.h"
#include "util/duration.h"

static const char *fmt(double ns)
{
	static char buf[DURATION_MAX];

	duration_format(ns, buf, sizeof(buf));
	return buf;
}

TEST_CASE(nanoseconds_and_zero)
{
	CHECK_STR(fmt(0), "0ns");
	CHECK_STR(fmt(0.4), "0ns");
	CHECK_STR(fmt(1), "1ns");
	CHECK_STR(fmt(812), "812ns");
	CHECK_STR(fmt(999.4), "999ns");
	CHECK_STR(fmt(999.5), "1.00us"); /* rounds into the next unit */
}

TEST_CASE(three_significant_digits_up_to_a_minute)
{
	CHECK_STR(fmt(1000), "1.00us");
	CHECK_STR(fmt(1500), "1.50us");
	CHECK_STR(fmt(9994), "9.99us");
	CHECK_STR(fmt(9995), "10.0us");
	CHECK_STR(fmt(35200), "35.2us");
	CHECK_STR(fmt(99949), "99.9us");
	CHECK_STR(fmt(99950), "100us");
	CHECK_STR(fmt(999499), "999us");
	CHECK_STR(fmt(999500), "1.00ms"); /* 999.5 us */
	CHECK_STR(fmt(1.5e6), "1.50ms");
	CHECK_STR(fmt(12.5e6), "12.5ms");
	CHECK_STR(fmt(250e6), "250ms");
	CHECK_STR(fmt(999.5e6), "1.00s");
	CHECK_STR(fmt(2.31e9), "2.31s");
	CHECK_STR(fmt(59.94e9), "59.9s");
}

TEST_CASE(minutes_hours_and_days)
{
	CHECK_STR(fmt(59.95e9), "1m00s"); /* rounds to a minute */
	CHECK_STR(fmt(65e9), "1m05s");
	CHECK_STR(fmt(3599.4e9), "59m59s");
	CHECK_STR(fmt(3599.5e9), "1h00m");
	CHECK_STR(fmt((2 * 3600 + 7 * 60) * 1e9), "2h07m");
	CHECK_STR(fmt((99 * 3600 + 59 * 60) * 1e9), "99h59m");
	CHECK_STR(fmt((99 * 3600 + 59.6 * 60) * 1e9), "4d04h");
	CHECK_STR(fmt((3 * 86400 + 4 * 3600) * 1e9), "76h00m");
	CHECK_STR(fmt((5 * 86400 + 4 * 3600) * 1e9), "5d04h");
	CHECK_STR(fmt(400 * 86400 * 1e9), "400d");
}

TEST_CASE(negative_nan_and_infinite)
{
	CHECK_STR(fmt(-1.5e6), "-1.50ms");
	CHECK_STR(fmt(-812), "-812ns");
	CHECK_STR(fmt(-0.2), "0ns");
	CHECK_STR(fmt(-3599.4e9), "-59m59s");
	CHECK_STR(fmt(NAN), "-");
	CHECK_STR(fmt(INFINITY), "inf");
	CHECK_STR(fmt(-INFINITY), "-inf");
}

TEST_CASE(columns_stay_aligned)
{
	size_t widest = 0;

	/* Every non-negative value up to 99 days takes at most 6 columns. */
	for (double ns = 0.3; ns < 99 * 86400e9; ns *= 1.0007) {
		size_t w = strlen(fmt(ns));

		widest = w > widest ? w : widest;
		if (w > 6) {
			printf("  %g ns is \"%s\"\n", ns, fmt(ns));
			break;
		}
	}
	CHECK(widest == 6);
}

TEST_CASE(truncates_to_the_buffer)
{
	char b[4];

	duration_format(1.5e6, b, sizeof(b));
	CHECK_STR(b, "1.5");
	b[0] = 'x';
	duration_format(1.5e6, b, 0); /* no room: untouched */
	CHECK(b[0] == 'x');
}

int main(void)
{
	RUN(nanoseconds_and_zero);
	RUN(three_significant_digits_up_to_a_minute);
	RUN(minutes_hours_and_days);
	RUN(negative_nan_and_infinite);
	RUN(columns_stay_aligned);
	RUN(truncates_to_the_buffer);
	HARNESS_EXIT();
}
