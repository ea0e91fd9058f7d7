/* The kernel's CPU accounting: see procstat.h. */
#include "procstat.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

#define STAT_MAX (4u << 20) /* /proc/stat of a big machine: about 150 bytes per CPU */

/* The fields after "cpu..." on one line. */
static void cpu_line(const char *p, struct procstat_cpu *c)
{
	unsigned long long v[8] = { 0 };

	sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
	       &v[5], &v[6], &v[7]);
	/* user nice system idle iowait irq softirq steal */
	c->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	c->total = c->busy + v[3] + v[4];
}

int procstat_parse(const char *text, struct procstat_cpu *all, struct procstat_cpu *cpus,
		   size_t n)
{
	const char *line = text;
	int seen = 0, found = 0;

	if (cpus)
		memset(cpus, 0, n * sizeof(*cpus));
	while (line && *line) {
		if (!strncmp(line, "cpu ", 4)) {
			cpu_line(line + 4, all);
			found = 1;
		} else if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9') {
			char *end;
			unsigned long c = strtoul(line + 3, &end, 10);

			if (*end == ' ' && c < 1u << 20) {
				if (cpus && c < n)
					cpu_line(end, &cpus[c]);
				if ((int)c + 1 > seen)
					seen = (int)c + 1;
			}
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return found ? seen : -EINVAL;
}

double procstat_busy_pct(const struct procstat_cpu *before, const struct procstat_cpu *after)
{
	if (after->total <= before->total)
		return NAN;
	return 100.0 * (double)(after->busy - before->busy) / (double)(after->total - before->total);
}

int procstat_parse_pid(const char *text, uint64_t *ticks)
{
	const char *p = strrchr(text, ')');
	unsigned long long ut, st;

	/* After the name: state, then 10 fields, then utime and stime (fields 14 and 15). */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -EINVAL;
	*ticks = ut + st;
	return 0;
}

int procstat_parse_load(const char *text, double *load1)
{
	char *end;

	*load1 = strtod(text, &end);
	return end != text && isfinite(*load1) && *load1 >= 0 ? 0 : -EINVAL;
}

/* Reads a /proc file whole. */
static int read_text(const char *path, char **text)
{
	size_t len;

	return file_read(path, STAT_MAX, 0, text, &len);
}

int procstat_read(struct procstat_cpu *all, struct procstat_cpu *cpus, size_t n)
{
	char *text;
	int r = read_text("/proc/stat", &text);

	if (r)
		return r;
	r = procstat_parse(text, all, cpus, n);
	free(text);
	return r;
}

int procstat_read_pid(int pid, uint64_t *ticks)
{
	char path[64], *text;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	r = read_text(path, &text);
	if (r)
		return r;
	r = procstat_parse_pid(text, ticks);
	free(text);
	return r;
}

int procstat_read_load(double *load1)
{
	char *text;
	int r = read_text("/proc/loadavg", &text);

	if (r)
		return r;
	r = procstat_parse_load(text, load1);
	free(text);
	return r;
}
