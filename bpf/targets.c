#include "targets.h"

#include <errno.h>
#include <stdint.h>

#include <bpf/libbpf.h>

static struct bpf_map *map(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	if (!m)
		errno = ENOENT;
	return m;
}

int targets_size(struct bpf_object *obj, const struct probe_opts *o, size_t extra_pids)
{
	struct bpf_map *pids = map(obj, "gt_pids"), *tids = map(obj, "gt_tids");
	struct bpf_map *cgs = map(obj, "gt_cgroups");
	size_t npids = o->npids + (targets_pid_filter(o) ? extra_pids : 0);
	int err;

	if (!pids || !tids || !cgs)
		return -ENOENT;
	err = bpf_map__set_max_entries(pids, npids ? npids : 1);
	err = err ?: bpf_map__set_max_entries(tids, o->ntids ? o->ntids : 1);
	err = err ?: bpf_map__set_max_entries(cgs, o->ncgroups ? o->ncgroups : 1);
	return err;
}

static int add(struct bpf_map *m, const void *key, size_t key_size)
{
	uint8_t one = 1;

	return bpf_map__update_elem(m, key, key_size, &one, 1, 0);
}

int targets_fill(struct bpf_object *obj, const struct probe_opts *o)
{
	struct bpf_map *pids = map(obj, "gt_pids"), *tids = map(obj, "gt_tids");
	struct bpf_map *cgs = map(obj, "gt_cgroups");
	int err = 0;

	if (!pids || !tids || !cgs)
		return -ENOENT;
	for (size_t i = 0; i < o->npids && !err; i++) {
		uint32_t pid = o->pids[i];

		err = add(pids, &pid, sizeof(pid));
	}
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
	struct bpf_map *pids = map(obj, "gt_pids");
	uint32_t pid = tgid;

	return pids ? add(pids, &pid, sizeof(pid)) : -ENOENT;
}
