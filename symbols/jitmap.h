/* JIT symbols from perf map files (/tmp/perf-PID.map: "START SIZE NAME" lines, hex). */
#ifndef GALATOP_SYMBOLS_JITMAP_H
#define GALATOP_SYMBOLS_JITMAP_H

#include <stddef.h>

struct sym_table;

/* Writes the path of pid's perf map as seen from here into buf:
 * /proc/PID/root/tmp/perf-NSPID.map, NSPID being pid inside its own pid namespace (last NSpid
 * field of /proc/PID/status; pid itself when unknown). 0 or -errno. */
int jitmap__path(int pid, char *buf, size_t len);
/* Reads a perf map file into a new finished table (*out); later lines win at equal addresses.
 * 0, -errno when it cannot be read, -ENOMEM. */
int jitmap__load(const char *path, struct sym_table **out);

#endif
