/* The BPF programs a process holds, read from its fdinfo: tests that check "nothing left
 * behind" compare these ids rather than every program on the box, so that other galatops
 * running at the same time cannot make them fail. */
#ifndef GALATOP_TESTS_PROG_IDS_H
#define GALATOP_TESTS_PROG_IDS_H

#include <bpf/bpf.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* The program ids process pid (0: this one) holds through its program and link fds, into
 * ids[0..cap); their count. */
static inline size_t proc_prog_ids(int pid, uint32_t *ids, size_t cap)
{
	char dirpath[64], path[384], line[256];
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	if (pid)
		snprintf(dirpath, sizeof(dirpath), "/proc/%d/fdinfo", pid);
	else
		snprintf(dirpath, sizeof(dirpath), "/proc/self/fdinfo");
	dir = opendir(dirpath);
	while (dir && (d = readdir(dir)) && n < cap) {
		FILE *f;
		unsigned id;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirpath, d->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f) && n < cap)
			if (sscanf(line, "prog_id: %u", &id) == 1)
				ids[n++] = id;
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return n;
}

/* Whether any of ids[0..n) is still loaded, after waiting up to 2 s for the kernel's
 * deferred release. */
static inline bool prog_ids_linger(const uint32_t *ids, size_t n)
{
	for (int tries = 0; tries < 40; tries++) {
		size_t left = 0;

		for (size_t i = 0; i < n; i++) {
			int fd = bpf_prog_get_fd_by_id(ids[i]);

			if (fd >= 0) {
				left++;
				close(fd);
			}
		}
		if (!left)
			return false;
		usleep(50000);
	}
	return true;
}

#endif
