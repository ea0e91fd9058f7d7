/* perf map reader; NSpid lookup so containerized JITs (which write their namespace pid) resolve. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap.h"
#include "symtab.h"

/* The pid of pid in its innermost pid namespace, or pid when /proc does not tell. */
static int ns_pid(int pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int nspid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (getline(&line, &cap, f) > 0) {
		char *p, *last = NULL;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (p = strtok(line + 6, " \t\n"); p; p = strtok(NULL, " \t\n"))
			last = p;
		if (last && atoi(last) > 0)
			nspid = atoi(last);
		break;
	}
	free(line);
	fclose(f);
	return nspid;
}

int jitmap__path(int pid, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/proc/%d/root/tmp/perf-%d.map", pid, ns_pid(pid));

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int jitmap__load(const char *path, struct sym_table **out)
{
	struct sym_table *t = NULL;
	char *line = NULL;
	size_t cap = 0;
	uint32_t seq = 0;
	FILE *f;
	int err = 0;

	*out = NULL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	t = sym_table__new();
	if (!t) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (getline(&line, &cap, f) > 0) {
		char *p = line, *end;
		uint64_t start, size;
		size_t nlen;

		start = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		size = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		nlen = strcspn(p, "\n");
		if (!nlen)
			continue;
		err = sym_table__add(t, start, size, p, nlen, 0, seq++);
		if (err)
			goto cleanup;
	}
	sym_table__finish(t, 0);
	*out = t;
	t = NULL;
cleanup:
	free(line);
	fclose(f);
	sym_table__free(t);
	return err;
}
