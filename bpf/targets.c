#include "targets.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include <bpf/libbpf.h>

/* The kernel's largest pid (PID_MAX_LIMIT on 64 bits): the pid set's bitmap covers them all
 * (512 KiB), so that no pid_max raised at run time falls outside it. */
#define TARGETS_PID_LIMIT (4u << 20)

static struct bpf_map *map(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	if (!m)
		errno = ENOENT;
	return m;
}

int targets_size(struct bpf_object *obj, const struct probe_opts *o)
{
	struct bpf_map *pids = map(obj, "gt_pids"), *tids = map(obj, "gt_tids");
	struct bpf_map *cgs = map(obj, "gt_cgroups");
	int err;

	if (!pids || !tids || !cgs)
		return -ENOENT;
	err = bpf_map__set_max_entries(pids, targets_pid_filter(o) ? TARGETS_PID_LIMIT / 64 : 1);
	err = err ?: bpf_map__set_max_entries(tids, o->ntids ? o->ntids : 1);
	err = err ?: bpf_map__set_max_entries(cgs, o->ncgroups ? o->ncgroups : 1);
	return err;
}

static int add(struct bpf_map *m, const void *key, size_t key_size)
{
	uint8_t one = 1;

	return bpf_map__update_elem(m, key, key_size, &one, 1, 0);
}

/* Sets pid's bit in the pid set of a loaded obj: through a mapping of the bitmap's page with an
 * atomic OR, as the programs set and clear bits of the same words (followed children, ended
 * processes). 0 or -errno. */
static int add_pid(struct bpf_object *obj, uint32_t pid)
{
	struct bpf_map *pids = map(obj, "gt_pids");
	long page = sysconf(_SC_PAGESIZE);
	size_t byte = pid / 64 * sizeof(uint64_t);
	uint64_t *w;
	void *m;

	if (!pids)
		return -ENOENT;
	if (page <= 0 || pid / 64 >= bpf_map__max_entries(pids))
		return -E2BIG;
	m = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(pids),
		 (off_t)(byte / (size_t)page * (size_t)page));
	if (m == MAP_FAILED)
		return -errno;
	w = (uint64_t *)((char *)m + byte % (size_t)page);
	__atomic_fetch_or(w, 1ull << (pid % 64), __ATOMIC_SEQ_CST);
	munmap(m, (size_t)page);
	return 0;
}

int targets_fill(struct bpf_object *obj, const struct probe_opts *o)
{
	struct bpf_map *tids = map(obj, "gt_tids"), *cgs = map(obj, "gt_cgroups");
	int err = 0;

	if (!tids || !cgs)
		return -ENOENT;
	for (size_t i = 0; i < o->npids && !err; i++)
		err = add_pid(obj, (uint32_t)o->pids[i]);
	for (size_t i = 0; i < o->ntids && !err; i++) {
		uint32_t tid = o->tids[i];

		err = add(tids, &tid, sizeof(tid));
	}
	for (size_t i = 0; i < o->ncgroups && !err; i++)
		err = add(cgs, &o->cgroup_ids[i], sizeof(o->cgroup_ids[i]));
	return err;
}

int targets_add_pid(struct bpf_object *obj, int tgid)
{
	return tgid > 0 ? add_pid(obj, (uint32_t)tgid) : -EINVAL;
}
