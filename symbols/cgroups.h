/* cgroup paths on v2, v1 and hybrid hosts: the v2 path of a cgroup id (what BPF reports), the
 * v1 path of a process in a controller's hierarchy, and where those hierarchies are mounted.
 * Reads /proc and /sys/fs/cgroup only. */
#ifndef GALATOP_SYMBOLS_CGROUPS_H
#define GALATOP_SYMBOLS_CGROUPS_H

#include <stddef.h>
#include <stdint.h>

struct cgroups;

/* A cache over the cgroup mounts under host_root ("/"; copied). NULL on ENOMEM. */
struct cgroups *cgroups__new(const char *host_root);
/* Frees c; NULL is a no-op. */
void cgroups__free(struct cgroups *c);
/* The v2 hierarchy's directory (/sys/fs/cgroup on v2 hosts, /sys/fs/cgroup/unified on hybrid
 * ones), or NULL when there is none; owned by c. */
const char *cgroups__v2_root(const struct cgroups *c);
/* The id (inode) of the v2 root, 0 without v2. */
uint64_t cgroups__v2_root_id(const struct cgroups *c);
/* Writes the v2 path ("/a/b") of the cgroup with id into buf. Unknown ids rescan the tree, at
 * most once a second. 0 or -ENOENT. */
int cgroups__v2_path(struct cgroups *c, uint64_t id, char *buf, size_t n);
/* The directory of a v1 controller's hierarchy ("cpu", "memory", "name=systemd") into buf.
 * 0 or -ENOENT. */
int cgroups__v1_dir(const struct cgroups *c, const char *controller, char *buf, size_t n);

/* Pure parser of /proc/PID/cgroup text (any bytes, NUL-terminated): the path of the v1 line
 * whose controller list holds controller ("cpu" matches "cpu,cpuacct"; "name=systemd" the
 * named hierarchy) into buf. 0 or -ENOENT. */
int cgroup_text_v1_path(const char *text, const char *controller, char *buf, size_t n);
/* The same for a live process under proc_root ("/proc"). 0 or -ENOENT. */
int cgroup_v1_path(const char *proc_root, int pid, const char *controller, char *buf, size_t n);

#endif
