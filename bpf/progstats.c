#include "progstats.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

int progstats_enable(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	return fd < 0 ? -errno : fd;
}

/* The program's full function name from its BTF (the kernel's name stops at 15 characters);
 * *btf and *btf_id cache the last object's BTF. False when it has none. */
static bool full_name(int fd, struct btf **btf, __u32 *btf_id, char *name, size_t len)
{
	struct bpf_func_info fi[1];
	struct bpf_prog_info info;
	__u32 ilen = sizeof(info);
	const struct btf_type *t;
	const char *s;

	memset(&info, 0, sizeof(info));
	memset(fi, 0, sizeof(fi));
	info.nr_func_info = 1;
	info.func_info_rec_size = sizeof(fi[0]);
	info.func_info = (__u64)(unsigned long)fi;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen) || !info.btf_id || !info.nr_func_info)
		return false;
	if (!*btf || *btf_id != info.btf_id) {
		btf__free(*btf);
		*btf = btf__load_from_kernel_by_id(info.btf_id);
		*btf_id = info.btf_id;
		if (libbpf_get_error(*btf)) {
			*btf = NULL;
			return false;
		}
	}
	t = btf__type_by_id(*btf, fi[0].type_id);
	s = t ? btf__name_by_offset(*btf, t->name_off) : NULL;
	if (!s || !*s)
		return false;
	snprintf(name, len, "%s", s);
	return true;
}

int progstats_read(struct cost_reading *out, size_t max, const struct cost *known)
{
	struct btf *btf = NULL;
	__u32 btf_id = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		char path[300], link[64];
		ssize_t k;
		int fd;
		size_t i;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		k = readlink(path, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = 0;
		if (strcmp(link, "anon_inode:bpf-prog"))
			continue;
		fd = atoi(de->d_name);
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		for (i = 0; i < n && out[i].id != info.id; i++)
			;
		if (i < n)
			continue;
		out[n].id = info.id;
		out[n].name[0] = 0;
		if (!cost__find(known, info.id) &&
		    !full_name(fd, &btf, &btf_id, out[n].name, sizeof(out[n].name)))
			snprintf(out[n].name, sizeof(out[n].name), "%s", info.name);
		out[n].run_ns = info.run_time_ns;
		out[n].run_cnt = info.run_cnt;
		n++;
	}
	closedir(d);
	btf__free(btf);
	return (int)n;
}
