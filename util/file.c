/* Whole-file reading: see file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "grow.h"

int file_open(const char *path, unsigned flags)
{
	int oflags = O_RDONLY | O_CLOEXEC, fd, err;
	struct stat st;

	if (flags & FILE_UNTRUSTED)
		oflags |= O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	fd = open(path, oflags);
	if (fd < 0)
		return -errno;
	if (!(flags & FILE_UNTRUSTED))
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EFTYPE_NOTREG;
	}
	return fd;
}

int file_read_fd(int fd, size_t max, char **buf, size_t *len)
{
	struct stat st;
	size_t n = 0, cap = 0, hint = 0;
	char *b = NULL;
	ssize_t r;

	*buf = NULL;
	*len = 0;
	/* A regular file's size is known up front (procfs says 0): refuse a huge or sparse one
	 * before reading a byte of it. */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((unsigned long long)st.st_size > max)
			return -EFBIG;
		hint = (size_t)st.st_size + 1;
	}
	for (;;) {
		size_t room;

		/* Room for one more byte and the NUL; reading one byte past max tells a file of
		 * exactly max bytes from a longer one. */
		if (n + 1 >= cap && array_grow(&b, &cap, hint > n + 2 ? hint + 1 : n + 4096, 1)) {
			free(b);
			return -ENOMEM;
		}
		room = cap - 1 - n;
		if (room > max + 1 - n)
			room = max + 1 - n;
		r = read(fd, b + n, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno == EAGAIN ? -EFTYPE_NOTREG : -errno;

			free(b);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(b);
			return -EFBIG;
		}
	}
	if (!b && array_grow(&b, &cap, 1, 1))
		return -ENOMEM;
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

int file_read(const char *path, size_t max, unsigned flags, char **buf, size_t *len)
{
	int fd = file_open(path, flags), err;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return fd;
	err = file_read_fd(fd, max, buf, len);
	close(fd);
	return err;
}

const char *file_strerror(int err, size_t max)
{
	static char big[64];

	switch (-err) {
	case ELOOP:
		return "a symbolic link";
	case EFTYPE_NOTREG:
		return "not a regular file";
	case EFBIG:
		if (max >= (1u << 20))
			snprintf(big, sizeof(big), "larger than %zu MiB", max >> 20);
		else
			snprintf(big, sizeof(big), "larger than %zu bytes", max);
		return big;
	default:
		return strerror(-err);
	}
}
