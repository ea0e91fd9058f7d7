/* The kernel's CPU accounting, for trigger conditions: busy shares from /proc/stat, a
 * process's CPU time from /proc/PID/stat, the load average from /proc/loadavg. The parsers
 * take text (tests feed them fixtures); the readers use util/file.h. */
#ifndef GALATOP_UTIL_PROCSTAT_H
#define GALATOP_UTIL_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>

/* Jiffies of one "cpu" line: busy (user, nice, system, irq, softirq, steal) and total (busy +
 * idle + iowait); guest time is inside user already. */
struct procstat_cpu {
	uint64_t busy, total;
};

/* Parses /proc/stat text: all gets the "cpu" line, cpus[c] the "cpuC" lines with c < n
 * (CPUs not listed stay zero). Returns the highest CPU number seen + 1 (0 when none), or
 * -EINVAL when there is no "cpu" line. */
int procstat_parse(const char *text, struct procstat_cpu *all, struct procstat_cpu *cpus,
		   size_t n);
/* Busy % between two readings of one line (0..100); NaN when no time passed. */
double procstat_busy_pct(const struct procstat_cpu *before, const struct procstat_cpu *after);
/* utime + stime, in clock ticks, from /proc/PID/stat text (whose command name may hold spaces
 * and parentheses). 0 or -EINVAL. */
int procstat_parse_pid(const char *text, uint64_t *ticks);
/* The 1-minute load average from /proc/loadavg text. 0 or -EINVAL. */
int procstat_parse_load(const char *text, double *load1);

/* Reads and parses /proc/stat (as procstat_parse), /proc/PID/stat and /proc/loadavg; -errno
 * when a file cannot be read (-ENOENT: the process is gone). */
int procstat_read(struct procstat_cpu *all, struct procstat_cpu *cpus, size_t n);
int procstat_read_pid(int pid, uint64_t *ticks);
int procstat_read_load(double *load1);

#endif
