/* The kernel's BPF run-time statistics (run_time_ns, run_cnt per program) for galatop's own
 * programs: turned on while galatop runs, read per program. */
#ifndef GALATOP_BPF_PROGSTATS_H
#define GALATOP_BPF_PROGSTATS_H

#include <stddef.h>

#include "model/cost.h"

/* Turns the statistics on for as long as the returned fd stays open (BPF_ENABLE_STATS: the
 * kernel turns them off again when its last holder closes it, also when galatop crashes).
 * The fd, or -errno. */
int progstats_enable(void);
/* Reads the statistics of every BPF program this process holds a file descriptor of (each
 * program once) into out[0..max): the number read (at most max), or -errno when /proc/self/fd
 * cannot be read. Names are looked up only for programs known (NULL: none) has not seen
 * ("" for the others). */
int progstats_read(struct cost_reading *out, size_t max, const struct cost *known);

#endif
