#include "util/companion.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GALATOP_PREFIX
#define GALATOP_PREFIX "/usr/local"
#endif

static int readable(const char *p)
{
	return access(p, R_OK) == 0;
}

int companion_path(const char *name, const char *env, char *buf, size_t len)
{
	static const char *const rel[] = { "", "build/", "../" };
	const char *set = env ? getenv(env) : NULL;
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (set && set[0]) {
		snprintf(buf, len, "%s", set);
		return readable(buf) ? 0 : -ENOENT;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(buf, len, "%s/%s%s", exe, rel[i], name);
			if (readable(buf))
				return 0;
		}
	}
	snprintf(buf, len, "%s/lib/galatop/%s", GALATOP_PREFIX, name);
	return readable(buf) ? 0 : -ENOENT;
}
