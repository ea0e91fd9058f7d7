/* Durations as text: see duration.h. */
#include "duration.h"

#include <math.h>
#include <stdio.h>

/* Whole units above a minute: minutes and seconds, hours and minutes, days and hours. */
static void format_long(double s, const char *sign, char *buf, size_t len)
{
	double sec = round(s), min = round(s / 60), hour = round(s / 3600);

	if (sec < 3600)
		snprintf(buf, len, "%s%.0fm%02.0fs", sign, floor(sec / 60), fmod(sec, 60));
	else if (min < 100 * 60)
		snprintf(buf, len, "%s%.0fh%02.0fm", sign, floor(min / 60), fmod(min, 60));
	else if (hour < 100 * 24)
		snprintf(buf, len, "%s%.0fd%02.0fh", sign, floor(hour / 24), fmod(hour, 24));
	else
		snprintf(buf, len, "%s%.0fd", sign, round(s / 86400));
}

void duration_format(double ns, char *buf, size_t len)
{
	static const char *const units[] = { "us", "ms", "s" };
	const char *sign = ns < 0 ? "-" : "";
	double v;

	if (!len)
		return;
	if (isnan(ns)) {
		snprintf(buf, len, "-");
		return;
	}
	if (isinf(ns)) {
		snprintf(buf, len, "%sinf", sign);
		return;
	}
	v = fabs(ns);
	if (round(v) < 1000) {
		snprintf(buf, len, "%s%.0fns", round(v) ? sign : "", round(v));
		return;
	}
	/* Three significant digits, rounded before the unit is chosen: what rounds up to 1000
	 * (or to a minute) is shown in the next unit. Each rounding divides ns itself, so that
	 * 9995 ns is 999.5 hundredths of a microsecond exactly. */
	for (int u = 0; u < 3; u++) {
		double unit = u == 0 ? 1e3 : u == 1 ? 1e6 : 1e9;
		double c2 = round(v / (unit / 100)), c1 = round(v / (unit / 10)), c0 = round(v / unit);

		if (c2 < 1000)
			snprintf(buf, len, "%s%.2f%s", sign, c2 / 100, units[u]);
		else if (c1 < (u < 2 ? 1000 : 600))
			snprintf(buf, len, "%s%.1f%s", sign, c1 / 10, units[u]);
		else if (u < 2 && c0 < 1000)
			snprintf(buf, len, "%s%.0f%s", sign, c0, units[u]);
		else
			continue;
		return;
	}
	format_long(fabs(ns) / 1e9, sign, buf, len);
}
