/* The one whole-file reader, with a size cap and a clear error, and the safe way to open a
 * file that a profiled process controls (perf maps, /proc/PID/maps, cgroup and container
 * metadata): no symlink as the last component, no FIFO or device, never blocks. */
#ifndef GALATOP_UTIL_FILE_H
#define GALATOP_UTIL_FILE_H

#include <stddef.h>

/* Flags of file_open and file_read. */
#define FILE_UNTRUSTED 1u /* O_NOFOLLOW|O_NONBLOCK, and it must be a regular file (fstat) */

/* Opens path read-only and close-on-exec; with FILE_UNTRUSTED as described above. Returns the
 * fd, or -errno: -ELOOP (a symlink) or -EFTYPE_NOTREG (not a regular file) for a hostile one. */
int file_open(const char *path, unsigned flags);
#define EFTYPE_NOTREG ENODEV

/* Reads fd to its end, at most max bytes, into a new NUL-terminated buffer (*buf, which the
 * caller frees; *len bytes before the NUL). 0, or -EFBIG when the file has more than max bytes,
 * -ENOMEM, -errno of read(). fd stays open. */
int file_read_fd(int fd, size_t max, char **buf, size_t *len);
/* file_open + file_read_fd + close. */
int file_read(const char *path, size_t max, unsigned flags, char **buf, size_t *len);

/* A short reason for an error of these functions ("a symbolic link", "not a regular file",
 * "larger than 16 MiB" for -EFBIG with that max, else strerror); static storage for -EFBIG. */
const char *file_strerror(int err, size_t max);

#endif
