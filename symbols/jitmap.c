/* perf map reader; NSpid lookup so containerized JITs (which write their namespace pid) resolve. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap.h"
#include "symtab.h"
#include "util/file.h"

int jitmap__ns_pid(int pid)
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

/* Parses one hex number (0x optional) and the space after it ("START SIZE NAME"); 0 or -EINVAL. */
static int parse_hex(const char **p, const char *eol, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	*v = 0;
	if (eol - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (s < eol && digits < 17) {
		int d = *s >= '0' && *s <= '9'	 ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
			: *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
						 : -1;

		if (d < 0)
			break;
		*v = *v << 4 | (uint64_t)d;
		s++;
		digits++;
	}
	if (!digits || digits > 16 || s >= eol || *s != ' ')
		return -EINVAL;
	*p = s + 1;
	return 0;
}

int jitmap__path(int pid, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/proc/%d/root/tmp/perf-%d.map", pid, jitmap__ns_pid(pid));

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int jitmap__parse(const char *buf, size_t len, struct sym_table **out)
{
	struct sym_table *t = sym_table__new();
	const char *end = buf + len;
	uint32_t seq = 0;
	int err = 0;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	while (buf < end) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf));
		const char *eol = nl ? nl : end, *name;
		uint64_t start, size;

		if (parse_hex(&buf, eol, &start) || parse_hex(&buf, eol, &size)) {
			buf = eol + (nl != NULL);
			continue;
		}
		name = buf;
		buf = eol + (nl != NULL);
		if (eol == name)
			continue;
		err = sym_table__add(t, start, size, name, (size_t)(eol - name), 0, seq++);
		if (err) {
			sym_table__free(t);
			return err;
		}
	}
	sym_table__finish(t, 0);
	*out = t;
	return 0;
}

int jitmap__load(const char *path, struct sym_table **out)
{
	char *buf;
	size_t len;
	int err;

	*out = NULL;
	err = file_read(path, JITMAP_MAX_BYTES, FILE_UNTRUSTED, &buf, &len);
	if (err)
		return err;
	err = jitmap__parse(buf, len, out);
	free(buf);
	return err;
}
