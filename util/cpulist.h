/* CPU lists as the kernel writes them (/sys/devices/system/cpu/online, cpuset.cpus) and as
 * --cpu takes them: "0,2-3". A set is an array of flags, one per CPU. */
#ifndef GALATOP_UTIL_CPULIST_H
#define GALATOP_UTIL_CPULIST_H

#include <stddef.h>
#include <stdint.h>

/* Parses s (one trailing newline allowed) into set[0..n): set[c] = 1 for each CPU listed, 0 for
 * the others. Returns how many CPUs are listed, -EINVAL for bad syntax, an empty list or a
 * backwards range, -ERANGE when a CPU is n or more (*bad gets it, if bad is not NULL). */
int cpulist_parse(const char *s, uint8_t *set, size_t n, long *bad);

/* Writes set[0..n) as a list ("0,2-3") into buf (truncated to len, always terminated); "" when
 * no CPU is set. */
void cpulist_format(const uint8_t *set, size_t n, char *buf, size_t len);

/* The online CPUs (/sys/devices/system/cpu/online) into set[0..n); how many, or -errno. */
int cpulist_online(uint8_t *set, size_t n);

#endif
