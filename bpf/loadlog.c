#include "loadlog.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

static __thread char reason[256];

static int catch_warning(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	const char *s = line;

	if (level != LIBBPF_WARN || reason[0])
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (!strncmp(s, "libbpf: ", 8))
		s += 8;
	snprintf(reason, sizeof(reason), "%.*s", (int)strcspn(s, "\n"), s);
	return 0;
}

void loadlog_install(void)
{
	libbpf_set_print(catch_warning);
}

void loadlog_reset(void)
{
	reason[0] = 0;
}

const char *loadlog_reason(void)
{
	return reason;
}

void loadlog_vwarn(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t len = strlen(buf);

	if (len + 2 >= size)
		return;
	vsnprintf(buf + len, size - len - 1, fmt, ap);
	len = strlen(buf);
	if (reason[0])
		snprintf(buf + len, size - len - 1, " (libbpf: %s)", reason);
	strcat(buf, "\n");
	reason[0] = 0;
}
