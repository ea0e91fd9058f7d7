// SPDX-License-Identifier: GPL-2.0
/* Who a pid is: comm, container and pod from /proc/PID/cgroup plus runtime metadata, and the
 * cgroup v2 directories a --container/--pod filter stands for. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "container_meta.h"
#include "hmap.h"
#include "ident.h"
#include "util/file.h"
#include "util/grow.h"
#include "util/procfs.h"

#define POD_LEN 128
#define WALK_MAX_DEPTH 64
#define CGROUP_FILE_MAX 16384 /* /proc/PID/cgroup is a line per hierarchy; longer text is cut */

/* Container id and pod uid named by one cgroup path. */
struct cg_names {
	char id[IDENT_ID_LEN + 1];
	char pod[POD_LEN];
};

/* Metadata per container id; found == false caches a miss. */
struct meta_entry {
	bool found;
	struct container_meta m;
};

#define CG_ROOTS 2

struct ident_cache {
	char *proc_root;
	char *host_root;    /* without trailing '/', so "" for "/" */
	struct hmap *pids;  /* int pid -> struct proc_ident */
	struct hmap *metas; /* container id -> struct meta_entry */
	int nroots;
	char roots[CG_ROOTS][PATH_MAX]; /* cgroup v2 hierarchies, preferred first */
	dev_t root_dev[CG_ROOTS];
	ino_t root_ino[CG_ROOTS];
};

static bool is_hex(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return false;
	}
	return len > 0;
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

static void copy_trunc(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	if (!dst || !dstlen)
		return;
	if (srclen >= dstlen)
		srclen = dstlen - 1;
	memcpy(dst, src, srclen);
	dst[srclen] = '\0';
}

/* Pod uids are hex with dashes; the systemd driver writes the dashes as underscores. */
static void pod_uid_set(struct cg_names *n, const char *s, size_t len)
{
	size_t i;

	if (!len || len >= sizeof(n->pod))
		return;
	for (i = 0; i < len; i++)
		if (!is_hex(s + i, 1) && s[i] != '-' && s[i] != '_')
			return;
	for (i = 0; i < len; i++)
		n->pod[i] = s[i] == '_' ? '-' : s[i];
	n->pod[len] = '\0';
}

/* "docker-<id>.scope", "cri-containerd-<id>.scope", "crio-<id>.scope", "libpod-<id>.scope"
 * (".scope" optional for the cgroupfs drivers); conmon monitors are not the container. */
static bool scope_id(const char *c, size_t len, struct cg_names *n)
{
	static const char *const prefixes[] = {"docker-", "cri-containerd-", "crio-", "libpod-"};
	size_t i, plen;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (!has_prefix(c, len, prefixes[i]))
			continue;
		plen = strlen(prefixes[i]);
		c += plen;
		len -= plen;
		if (len > 6 && !memcmp(c + len - 6, ".scope", 6))
			len -= 6;
		if (has_prefix(c, len, "conmon-") || len < IDENT_SHORT_ID || len > IDENT_ID_LEN ||
		    !is_hex(c, len))
			return false;
		copy_trunc(n->id, sizeof(n->id), c, len);
		return true;
	}
	return false;
}

/* One path component: the innermost container id and pod uid win, so nested cgroups
 * (docker in docker, a container's own sub-cgroups) name their closest container. */
static void cgroup_component(const char *c, size_t len, bool *kube, struct cg_names *n)
{
	const char *p;

	if (has_prefix(c, len, "kubepods")) {
		*kube = true;
		/* systemd driver: kubepods-burstable-pod<uid_with_underscores>.slice */
		p = memmem(c, len, "-pod", 4);
		if (p) {
			size_t rest = len - (size_t)(p + 4 - c);

			if (rest > 6 && !memcmp(p + 4 + rest - 6, ".slice", 6))
				rest -= 6;
			pod_uid_set(n, p + 4, rest);
		}
		return;
	}
	if (*kube &&
	    has_prefix(c, len, "pod")) { /* cgroupfs driver: /kubepods/burstable/pod<uid> */
		pod_uid_set(n, c + 3, len - 3);
		return;
	}
	if (scope_id(c, len, n))
		return;
	if (len == IDENT_ID_LEN && is_hex(c, len)) /* /docker/<id>, /kubepods/.../<id> */
		copy_trunc(n->id, sizeof(n->id), c, len);
}

static void cgroup_path_names(const char *path, size_t len, struct cg_names *n)
{
	const char *end = path + len, *c = path, *slash;
	bool kube = false;

	memset(n, 0, sizeof(*n));
	while (c < end) {
		slash = memchr(c, '/', (size_t)(end - c));
		if (!slash)
			slash = end;
		if (slash > c)
			cgroup_component(c, (size_t)(slash - c), &kube, n);
		c = slash + 1;
	}
}

/* What /proc/PID/cgroup says: names, the v2 ("0::") path and the path that named the container. */
struct cg_scan {
	struct cg_names n;
	const char *v2;
	size_t v2len;
	const char *cpath;
	size_t cpathlen;
};

static void cgroup_text_scan(const char *text, struct cg_scan *s)
{
	const char *line = text, *nl, *c1, *c2, *path;
	struct cg_names tmp;

	memset(s, 0, sizeof(*s));
	for (; *line; line = *nl ? nl + 1 : nl) {
		nl = line + strcspn(line, "\n");
		c1 = memchr(line, ':', (size_t)(nl - line));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(nl - c1 - 1)) : NULL;
		if (!c2)
			continue;
		path = c2 + 1;
		if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
			s->v2 = path;
			s->v2len = (size_t)(nl - path);
		}
		cgroup_path_names(path, (size_t)(nl - path), &tmp);
		if (tmp.id[0] && !s->n.id[0]) {
			memcpy(s->n.id, tmp.id, sizeof(tmp.id));
			s->cpath = path;
			s->cpathlen = (size_t)(nl - path);
		}
		if (tmp.pod[0] && !s->n.pod[0])
			memcpy(s->n.pod, tmp.pod, sizeof(tmp.pod));
	}
}

int ident_container_from_cgroup(const char *cgroup_file_text, char *id, size_t idlen, char *pod,
				size_t podlen)
{
	struct cg_scan s;

	cgroup_text_scan(cgroup_file_text ? cgroup_file_text : "", &s);
	copy_trunc(id, idlen, s.n.id, strlen(s.n.id));
	copy_trunc(pod, podlen, s.n.pod, strlen(s.n.pod));
	return s.n.id[0] != '\0';
}

/* A cgroup v2 hierarchy candidate: anything but the tmpfs that holds v1 hierarchies or a v1
 * hierarchy itself, so test fixtures on a plain filesystem qualify too. */
static void cgroup_root_add(struct ident_cache *ic, const char *rel)
{
	char *path = ic->roots[ic->nroots];
	struct statfs sfs;
	struct stat st;
	int i;

	snprintf(path, PATH_MAX, "%s%s", ic->host_root, rel);
	if (statfs(path, &sfs) || sfs.f_type == TMPFS_MAGIC || sfs.f_type == CGROUP_SUPER_MAGIC ||
	    stat(path, &st) || !S_ISDIR(st.st_mode))
		return;
	for (i = 0; i < ic->nroots; i++)
		if (ic->root_dev[i] == st.st_dev && ic->root_ino[i] == st.st_ino)
			return;
	ic->root_dev[ic->nroots] = st.st_dev;
	ic->root_ino[ic->nroots] = st.st_ino;
	ic->nroots++;
}

struct ident_cache *ident_cache__new(const char *proc_root, const char *host_root)
{
	struct ident_cache *ic = calloc(1, sizeof(*ic));
	size_t len;

	if (!ic)
		return NULL;
	ic->proc_root = strdup(proc_root ? proc_root : "/proc");
	ic->host_root = strdup(host_root ? host_root : "/");
	ic->pids = hmap__new();
	ic->metas = hmap__new();
	if (!ic->proc_root || !ic->host_root || !ic->pids || !ic->metas) {
		ident_cache__free(ic);
		return NULL;
	}
	len = strlen(ic->host_root);
	while (len && ic->host_root[len - 1] == '/')
		ic->host_root[--len] = '\0';
	cgroup_root_add(ic, "/sys/fs/cgroup/unified");
	cgroup_root_add(ic, "/sys/fs/cgroup");
	return ic;
}

static void free_val(const void *key, size_t len, void *val, void *arg)
{
	free(val);
}

void ident_cache__free(struct ident_cache *ic)
{
	if (!ic)
		return;
	if (ic->pids)
		hmap__each(ic->pids, free_val, NULL);
	if (ic->metas)
		hmap__each(ic->metas, free_val, NULL);
	hmap__free(ic->pids);
	hmap__free(ic->metas);
	free(ic->proc_root);
	free(ic->host_root);
	free(ic);
}

/* Runtime metadata for a container id, read once (misses included); NULL if unknown. */
static const struct container_meta *meta_get(struct ident_cache *ic, const char *id)
{
	struct meta_entry *e = hmap__get(ic->metas, id, strlen(id));

	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return NULL;
		e->found = !container_meta_read(ic->host_root, id, &e->m);
		if (!hmap__put(ic->metas, id, strlen(id), e)) {
			free(e);
			return NULL;
		}
	}
	return e->found ? &e->m : NULL;
}

/* Reads up to cap-1 bytes of a small file and NUL-terminates; length or -errno. */
ssize_t ident_read_small(const char *path, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t r;
	int fd, err;

	fd = file_open(path, FILE_UNTRUSTED);
	if (fd < 0)
		return fd;
	while (len < cap - 1) {
		r = read(fd, buf + len, cap - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

ssize_t ident_cache__cmdline(const struct ident_cache *ic, int pid, char *buf, size_t cap)
{
	char path[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/cmdline", ic->proc_root, pid);
	n = ident_read_small(path, buf, cap);
	if (n <= 0)
		return n < 0 ? n : -ENOENT; /* kernel threads have none */
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return n;
}

int ident_cache__each_pid(const struct ident_cache *ic, int (*fn)(void *ctx, int pid), void *ctx)
{
	return procfs_each_id(ic->proc_root, fn, ctx);
}

/* A process that vanished between readdir and read shows up as ENOENT or ESRCH. */
static int gone(ssize_t err)
{
	return err == -ENOENT || err == -ESRCH ? -ENOENT : (int)err;
}

static uint64_t cgroup_inode(const struct ident_cache *ic, const char *path)
{
	char full[PATH_MAX];
	struct stat st;
	int i;

	for (i = 0; i < ic->nroots; i++) {
		snprintf(full, sizeof(full), "%s%s", ic->roots[i], path);
		if (!stat(full, &st) && S_ISDIR(st.st_mode))
			return st.st_ino;
	}
	return 0;
}

static int ident_read(struct ident_cache *ic, int pid, struct proc_ident *out)
{
	char path[PATH_MAX], text[CGROUP_FILE_MAX];
	const struct container_meta *m = NULL;
	struct cg_scan s;
	ssize_t len;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	snprintf(path, sizeof(path), "%s/%d/comm", ic->proc_root, pid);
	len = ident_read_small(path, out->comm, sizeof(out->comm));
	if (len < 0)
		return gone(len);
	if (len && out->comm[len - 1] == '\n')
		out->comm[len - 1] = '\0';

	snprintf(path, sizeof(path), "%s/%d/cgroup", ic->proc_root, pid);
	len = ident_read_small(path, text, sizeof(text));
	if (len < 0)
		return gone(len);
	cgroup_text_scan(text, &s);

	if (s.v2 && s.v2len)
		copy_trunc(out->cgroup_path, sizeof(out->cgroup_path), s.v2, s.v2len);
	else if (s.cpath)
		copy_trunc(out->cgroup_path, sizeof(out->cgroup_path), s.cpath, s.cpathlen);
	if (s.v2 && s.v2len && s.v2len < sizeof(out->cgroup_path))
		out->cgroup_id = cgroup_inode(ic, out->cgroup_path);

	memcpy(out->container_id, s.n.id, sizeof(out->container_id));
	snprintf(out->pod_id, sizeof(out->pod_id), "%s", s.n.pod);
	if (s.n.id[0])
		m = meta_get(ic, s.n.id);
	if (m && m->name[0])
		snprintf(out->container_name, sizeof(out->container_name), "%s", m->name);
	else
		copy_trunc(out->container_name, sizeof(out->container_name), s.n.id,
			   strnlen(s.n.id, IDENT_SHORT_ID));
	if (!out->pod_id[0] && m)
		snprintf(out->pod_id, sizeof(out->pod_id), "%s", m->pod_uid);
	if (m && m->pod_name[0])
		snprintf(out->pod_name, sizeof(out->pod_name), "%s", m->pod_name);
	else
		snprintf(out->pod_name, sizeof(out->pod_name), "%s", out->pod_id);
	return 0;
}

int ident_cache__lookup(struct ident_cache *ic, int pid, struct proc_ident *out)
{
	struct proc_ident *e;
	int err;

	if (pid <= 0)
		return -ENOENT;
	e = hmap__get(ic->pids, &pid, sizeof(pid));
	if (e) {
		*out = *e;
		return 0;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	err = ident_read(ic, pid, e);
	if (!err && !hmap__put(ic->pids, &pid, sizeof(pid), e))
		err = -ENOMEM;
	if (err) {
		free(e);
		return err;
	}
	*out = *e;
	return 0;
}

void ident_cache__forget(struct ident_cache *ic, int pid)
{
	if (ic)
		free(hmap__del(ic->pids, &pid, sizeof(pid)));
}

struct cg_dir {
	uint64_t ino;
	struct cg_names n;
};

struct cg_list {
	struct cg_dir *v;
	size_t n, cap;
};

static int cg_list_push(struct cg_list *l, uint64_t ino, const struct cg_names *n)
{
	if (ARRAY_GROW(l->v, l->cap, l->n + 1))
		return -ENOMEM;
	l->v[l->n].ino = ino;
	l->v[l->n].n = *n;
	l->n++;
	return 0;
}

static bool is_other_root(const struct ident_cache *ic, int ri, const struct stat *st)
{
	int i;

	for (i = 0; i < ic->nroots; i++)
		if (i != ri && ic->root_dev[i] == st->st_dev && ic->root_ino[i] == st->st_ino)
			return true;
	return false;
}

/* Records every directory under fd (which it takes over) that names a container or pod; rel is
 * the cgroup path of fd, a PATH_MAX buffer extended in place. Stays on the root's filesystem. */
static int cgroup_walk(const struct ident_cache *ic, int ri, int fd, char *rel, size_t rlen,
		       int depth, struct cg_list *l)
{
	struct cg_names names;
	struct dirent *de;
	struct stat st;
	int err = 0, cfd;
	size_t nlen;
	DIR *d;

	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	cgroup_path_names(rel, rlen, &names);
	if ((names.id[0] || names.pod[0]) && cg_list_push(l, st.st_ino, &names))
		err = -ENOMEM;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return err;
	}
	while (!err && depth < WALK_MAX_DEPTH && (de = readdir(d))) {
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		nlen = strlen(de->d_name);
		if (rlen + 1 + nlen >= PATH_MAX)
			continue;
		cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		if (fstat(cfd, &st) || st.st_dev != ic->root_dev[ri] ||
		    is_other_root(ic, ri, &st)) {
			close(cfd);
			continue;
		}
		rel[rlen] = '/';
		memcpy(rel + rlen + 1, de->d_name, nlen + 1);
		err = cgroup_walk(ic, ri, cfd, rel, rlen + 1 + nlen, depth + 1, l);
		rel[rlen] = '\0';
	}
	closedir(d);
	return err;
}

static bool key_prefix(const char *s, const char *key)
{
	return s[0] && !strncmp(s, key, strlen(key));
}

/* The pod uid a cgroup directory belongs to: from its path, else its container's metadata. */
static const char *dir_pod_uid(struct ident_cache *ic, const struct cg_dir *d)
{
	const struct container_meta *m;

	if (d->n.pod[0] || !d->n.id[0])
		return d->n.pod;
	m = meta_get(ic, d->n.id);
	return m ? m->pod_uid : "";
}

static bool dir_matches(struct ident_cache *ic, enum ident_kind kind, const struct cg_dir *d,
			const char *key)
{
	const struct container_meta *m = d->n.id[0] ? meta_get(ic, d->n.id) : NULL;

	if (kind == IDENT_CONTAINER)
		return key_prefix(d->n.id, key) || (m && !strcmp(m->name, key));
	return key_prefix(dir_pod_uid(ic, d), key) || (m && !strcmp(m->pod_name, key));
}

/* Which directories match: containers directly; pods through their uid, so that a pod named
 * by one container's metadata also brings in its pod slice and its other containers. */
static int cgroup_select(struct ident_cache *ic, enum ident_kind kind, const char *key,
			 const struct cg_list *l, uint64_t *ids, size_t *n)
{
	const char **uids = NULL;
	size_t i, j, nuids = 0;
	const char *uid;

	if (kind == IDENT_POD) {
		uids = calloc(l->n + 1, sizeof(*uids));
		if (!uids)
			return -ENOMEM;
		for (i = 0; i < l->n; i++) {
			uid = dir_pod_uid(ic, &l->v[i]);
			if (uid[0] && dir_matches(ic, kind, &l->v[i], key))
				uids[nuids++] = uid;
		}
	}
	*n = 0;
	for (i = 0; i < l->n; i++) {
		bool match = false;

		if (kind == IDENT_CONTAINER) {
			match = dir_matches(ic, kind, &l->v[i], key);
		} else {
			uid = dir_pod_uid(ic, &l->v[i]);
			for (j = 0; j < nuids && !match; j++)
				match = uid[0] && !strcmp(uid, uids[j]);
		}
		if (match)
			ids[(*n)++] = l->v[i].ino;
	}
	free(uids);
	return 0;
}

int ident_resolve_container_cgroups(struct ident_cache *ic, enum ident_kind kind, const char *key,
				    uint64_t **ids, size_t *n)
{
	char norm[POD_LEN], rel[PATH_MAX];
	struct cg_list l = {0};
	int err = 0, ri, fd;
	size_t i;

	*ids = NULL;
	*n = 0;
	if (!key || !key[0])
		return -EINVAL;
	/* Accept a pod uid spelled the systemd driver's way; pod names never hold '_'. */
	if (kind == IDENT_POD && strlen(key) < sizeof(norm)) {
		for (i = 0; key[i]; i++)
			norm[i] = key[i] == '_' ? '-' : key[i];
		norm[i] = '\0';
		key = norm;
	}
	for (ri = 0; ri < ic->nroots && !err; ri++) {
		fd = open(ic->roots[ri], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		rel[0] = '\0';
		err = cgroup_walk(ic, ri, fd, rel, 0, 0, &l);
	}
	if (!err && l.n) {
		*ids = malloc(l.n * sizeof(**ids));
		err = *ids ? cgroup_select(ic, kind, key, &l, *ids, n) : -ENOMEM;
	}
	free(l.v);
	if (!err && !*n)
		err = -ENOENT;
	if (err) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	return err;
}
