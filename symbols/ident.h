/* Process and container identity: who a pid is (comm, container, pod, cgroup), the root frames
 * "[Pod]pod", "[Con]container", "[PID]comm" of every stack, and the cgroup ids that the
 * --container and --pod filters hand to BPF. Reads /proc and runtime metadata files only. */
#ifndef GALATOP_SYMBOLS_IDENT_H
#define GALATOP_SYMBOLS_IDENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IDENT_COMM_LEN 16 /* TASK_COMM_LEN */
#define IDENT_ID_LEN 64	  /* a full docker/containerd/cri-o/podman id */
#define IDENT_SHORT_ID 12 /* what `docker ps` shows */

struct ident_cache;

/* Strings are NUL-terminated and "" when unknown; comm holds the kernel's raw bytes
 * (sanitizing is the model's job). */
struct proc_ident {
	int pid;
	char comm[IDENT_COMM_LEN + 1];
	char container_id[IDENT_ID_LEN + 1]; /* full id */
	char container_name[256];	     /* runtime name, else the short (12-char) id */
	char pod_id[128];		     /* k8s pod uid, with dashes */
	char pod_name[256];		     /* pod name from metadata, else the pod uid */
	uint64_t cgroup_id;    /* cgroup v2 inode of the process's cgroup, 0 if unknown */
	char cgroup_path[512]; /* v2 ("0::") path, else the container's v1 path */
};

/* What ident_resolve_container_cgroups matches its key against. */
enum ident_kind {
	IDENT_CONTAINER, /* container id prefix, or container name from runtime metadata */
	IDENT_POD,	 /* pod uid prefix, or pod name from runtime metadata */
};

/* Creates a cache reading processes under proc_root ("/proc") and runtime metadata and cgroup
 * mounts under host_root ("/"); both strings are copied. NULL on ENOMEM. */
struct ident_cache *ident_cache__new(const char *proc_root, const char *host_root);
/* Frees the cache; NULL is a no-op. */
void ident_cache__free(struct ident_cache *ic);
/* Fills *out with pid's identity, read once and then cached per pid (metadata cached per
 * container id, misses included), so forget the pid at exec and exit; not thread-safe.
 * -ENOENT if the process is gone (or pid <= 0), -ENOMEM. */
int ident_cache__lookup(struct ident_cache *ic, int pid, struct proc_ident *out);
/* Drops pid's cached identity (at exec, comm changes; at exit, pids get reused); unknown pids are
 * a no-op. */
void ident_cache__forget(struct ident_cache *ic, int pid);

/* Pure parser of /proc/PID/cgroup text (v1 or v2, NUL-terminated, any bytes): writes the container
 * id (or "") to id and the k8s pod uid with dashes (or "") to pod; each truncated to its buffer
 * (which may be NULL with length 0). Returns 1 if a container id was found, 0 if not. */
int ident_container_from_cgroup(const char *cgroup_file_text, char *id, size_t idlen, char *pod,
				size_t podlen);

/* Finds every cgroup v2 directory (under host_root's /sys/fs/cgroup/unified and /sys/fs/cgroup)
 * whose path names the container or pod given by key (an id prefix, at least 1 char, or a name
 * from runtime metadata) and returns their inode numbers, i.e. the ids bpf_get_current_cgroup_id()
 * reports, in *ids (malloc'ed, caller frees) and their count in *n. 0 on success, -ENOENT if
 * nothing matched (*ids NULL, *n 0), -EINVAL on an empty key, -ENOMEM. */
int ident_resolve_container_cgroups(struct ident_cache *ic, enum ident_kind kind, const char *key,
				    uint64_t **ids, size_t *n);

/* The command line of pid under the cache's proc root, NULs turned into spaces, trailing ones
 * dropped, cut at cap-1 bytes: the length, or -errno (-ENOENT also for kernel threads). */
ssize_t ident_cache__cmdline(const struct ident_cache *ic, int pid, char *buf, size_t cap);
/* Calls fn(ctx, pid) for every process under the cache's proc root until fn returns non-zero,
 * which is returned; 0 at the end, -errno when the root cannot be read. */
int ident_cache__each_pid(const struct ident_cache *ic, int (*fn)(void *ctx, int pid), void *ctx);

/* Reads up to cap-1 bytes of the small file at path (/proc, /sys) into buf and NUL-terminates,
 * opened as file_open(FILE_UNTRUSTED) says (no symlink, regular files only, never blocks);
 * the length, or -errno. */
ssize_t ident_read_small(const char *path, char *buf, size_t cap);

#endif
