/* CPU lists: see cpulist.h. */
#include "cpulist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

/* A CPU number at *s: digits only (no sign, no space), advancing *s. -1 if none. */
static long cpu_number(const char **s)
{
	char *end;
	long v;

	if (**s < '0' || **s > '9')
		return -1;
	errno = 0;
	v = strtol(*s, &end, 10);
	if (errno || v > 1 << 20)
		v = 1 << 20; /* past any machine: -ERANGE below */
	*s = end;
	return v;
}

int cpulist_parse(const char *s, uint8_t *set, size_t n, long *bad)
{
	int count = 0;

	memset(set, 0, n);
	for (;;) {
		long a = cpu_number(&s), b;

		if (a < 0)
			return -EINVAL;
		b = a;
		if (*s == '-') {
			s++;
			b = cpu_number(&s);
			if (b < a)
				return -EINVAL;
		}
		if ((size_t)b >= n) {
			if (bad)
				*bad = (size_t)a >= n ? a : b;
			return -ERANGE;
		}
		for (long c = a; c <= b; c++) {
			count += !set[c];
			set[c] = 1;
		}
		if (*s != ',')
			break;
		s++;
	}
	if (*s == '\n')
		s++;
	return *s ? -EINVAL : count;
}

void cpulist_format(const uint8_t *set, size_t n, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t c = 0; c < n; c++) {
		size_t e = c;
		int w;

		if (!set[c])
			continue;
		while (e + 1 < n && set[e + 1])
			e++;
		w = e == c ? snprintf(buf + used, len - used, "%s%zu", used ? "," : "", c)
			   : snprintf(buf + used, len - used, "%s%zu-%zu", used ? "," : "", c, e);
		if (w < 0 || (size_t)w >= len - used)
			return; /* truncated, terminated by snprintf */
		used += (size_t)w;
		c = e;
	}
}

int cpulist_online(uint8_t *set, size_t n)
{
	char *text;
	size_t len;
	int r = file_read("/sys/devices/system/cpu/online", 4096, 0, &text, &len);

	if (r)
		return r;
	r = cpulist_parse(text, set, n, NULL);
	free(text);
	return r;
}
