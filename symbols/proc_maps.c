/* /proc/PID/maps parser: "start-end perms offset major:minor inode   path". Only executable
 * mappings matter, since stacks hold code addresses. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "proc_maps.h"
#include "util/file.h"
#include "util/grow.h"

#define LINE_MAX_BYTES 8192

void proc_maps__free(struct proc_map *maps, size_t n)
{
	if (!maps)
		return;
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

/* Fills m from one line; 1 when it is an executable mapping, 0 to skip, -ENOMEM. */
static int parse_line(const char *line, struct proc_map *m)
{
	unsigned int maj, min;
	char perms[5];
	int pos = 0;
	size_t len;
	const char *path;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n", &m->start,
		   &m->end, perms, &m->pgoff, &maj, &min, &m->inode, &pos) < 7 || !pos)
		return 0;
	if (perms[2] != 'x' || m->end <= m->start)
		return 0;
	m->dev = makedev(maj, min);
	path = line + pos;
	path += strspn(path, " \t");
	len = strcspn(path, "\n");
	m->deleted = 0;
	m->interned = NULL;
	if (len > 10 && !memcmp(path + len - 10, " (deleted)", 10)) {
		m->deleted = 1;
		len -= 10;
	}
	m->path = strndup(path, len);
	return m->path ? 1 : -ENOMEM;
}

static int cmp_map(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int proc_maps__parse(const char *buf, size_t len, struct proc_map **out, size_t *n)
{
	struct proc_map *maps = NULL;
	const char *end = buf + len;
	size_t count = 0, cap = 0;
	char line[LINE_MAX_BYTES];
	int err = 0;

	while (buf < end) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf));
		size_t ll = (size_t)((nl ? nl : end) - buf);
		struct proc_map m;
		int r;

		/* A path is at most PATH_MAX: a longer line is not from the kernel. */
		if (ll >= sizeof(line)) {
			buf += ll + (nl != NULL);
			continue;
		}
		memcpy(line, buf, ll);
		line[ll] = '\0';
		buf += ll + (nl != NULL);
		r = parse_line(line, &m);
		if (r < 0) {
			err = r;
			goto cleanup;
		}
		if (!r)
			continue;
		if (ARRAY_GROW(maps, cap, count + 1)) {
			free(m.path);
			err = -ENOMEM;
			goto cleanup;
		}
		maps[count++] = m;
	}
	if (count)
		qsort(maps, count, sizeof(*maps), cmp_map);
	*out = maps;
	*n = count;
	maps = NULL;
cleanup:
	if (err)
		proc_maps__free(maps, count);
	return err;
}

int proc_maps__read(int pid, struct proc_map **out, size_t *n)
{
	char path[64], *buf;
	size_t len;
	int err;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = file_read(path, PROC_MAPS_MAX_BYTES, FILE_UNTRUSTED, &buf, &len);
	/* A process that exits while its maps are read yields an empty file or ESRCH. */
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	err = proc_maps__parse(buf, len, out, n);
	free(buf);
	return err;
}

const struct proc_map *proc_maps__find(const struct proc_map *maps, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < maps[lo - 1].end)
		return &maps[lo - 1];
	return NULL;
}
