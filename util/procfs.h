/* Walking /proc: the numbered entries of a directory (the processes in /proc, the threads in
 * /proc/PID/task) and the fields of /proc/PID/status. */
#ifndef GALATOP_UTIL_PROCFS_H
#define GALATOP_UTIL_PROCFS_H

#include <stddef.h>

/* Calls fn(ctx, id) for each entry of dir whose name is a positive number, until fn returns
 * non-zero, which is returned; 0 at the end, -errno when dir cannot be opened. */
int procfs_each_id(const char *dir, int (*fn)(void *ctx, int id), void *ctx);

/* Reads /proc/PID/status into a new NUL-terminated buffer that the caller frees. 0, or -errno
 * (-ENOENT: the process is gone). */
int procfs_status(int pid, char **text);

/* The value of the field key ("Uid", "SigCgt", "NSpid") in status text: where it starts, past
 * "key:" and its blanks, with *len its length to the end of the line; NULL when absent. */
const char *procfs_field(const char *text, const char *key, size_t *len);

#endif
