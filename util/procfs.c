/* Walking /proc: see procfs.h. */
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

#define STATUS_MAX (64u << 10) /* /proc/PID/status is about 1.5 KiB */

int procfs_each_id(const char *dir, int (*fn)(void *ctx, int id), void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return -errno;
	while (!ret && (e = readdir(d))) {
		int id = atoi(e->d_name);

		if (id > 0)
			ret = fn(ctx, id);
	}
	closedir(d);
	return ret;
}

int procfs_status(int pid, char **text)
{
	char path[64];
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return file_read(path, STATUS_MAX, 0, text, &len);
}

const char *procfs_field(const char *text, const char *key, size_t *len)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');

		if (!strncmp(line, key, klen) && line[klen] == ':') {
			const char *v = line + klen + 1;

			v += strspn(v, " \t");
			*len = eol ? (size_t)(eol - v) : strlen(v);
			return v;
		}
		line = eol ? eol + 1 : NULL;
	}
	return NULL;
}
