/* JIT symbols from perf map files (/tmp/perf-PID.map: "START SIZE NAME" lines, hex). */
#ifndef GALATOP_SYMBOLS_JITMAP_H
#define GALATOP_SYMBOLS_JITMAP_H

#include <stddef.h>

struct sym_table;

/* Writes the path of pid's perf map as seen from here into buf:
 * /proc/PID/root/tmp/perf-NSPID.map, NSPID being pid inside its own pid namespace (last NSpid
 * field of /proc/PID/status; pid itself when unknown). 0 or -errno. */
int jitmap__path(int pid, char *buf, size_t len);
/* The pid of pid in its innermost pid namespace, or pid when /proc does not tell. */
int jitmap__ns_pid(int pid);
#define JITMAP_MAX_BYTES (256u << 20) /* a JIT appends forever; refuse a file beyond reason */

/* Name of the lines galatop's JVMTI agent writes over the code of an unloaded method. */
#define JITMAP_UNLOADED "[unloaded]"
/* Name separator of an inlining chain, outermost first: "A.run->B.inlined->C.innermost". */
#define JITMAP_INLINE_SEP "->"

/* Parses perf map text (untrusted: malformed lines are skipped) into a new finished table
 * (*out). Later lines win: a line whose start a later line covers is dropped, and lines named
 * JITMAP_UNLOADED only hide the earlier lines they cover. 0 or -ENOMEM. */
int jitmap__parse(const char *buf, size_t len, struct sym_table **out);
/* Reads a perf map file, which the profiled process controls, with file_read(FILE_UNTRUSTED):
 * a symlink, FIFO, device or file past JITMAP_MAX_BYTES is refused without blocking.
 * 0, or -errno (see file_strerror), -ENOMEM. */
int jitmap_load(const char *path, struct sym_table **out);

#endif
