/* cgroup paths; see cgroups.h. */
#include "cgroups.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "hmap.h"
#include "ident.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#define SCAN_DEPTH 32

struct cgroups {
	char *host_root;
	char v2[PATH_MAX]; /* "" without v2 */
	uint64_t v2_id;
	struct hmap *paths; /* id -> malloc'ed path */
	time_t scanned;
};

static bool is_cgroup2(const char *dir)
{
	struct statfs sfs;

	return !statfs(dir, &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC;
}

struct cgroups *cgroups__new(const char *host_root)
{
	struct cgroups *c = calloc(1, sizeof(*c));
	const char *cands[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	struct stat st;

	if (!c)
		return NULL;
	c->host_root = strdup(host_root && strcmp(host_root, "/") ? host_root : "");
	c->paths = hmap__new();
	if (!c->host_root || !c->paths) {
		cgroups__free(c);
		return NULL;
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(c->v2, sizeof(c->v2), "%s%s", c->host_root, cands[i]);
		if (is_cgroup2(c->v2) && !stat(c->v2, &st)) {
			c->v2_id = st.st_ino;
			return c;
		}
	}
	c->v2[0] = 0;
	return c;
}

static void free_val(const void *key, size_t len, void *val, void *arg)
{
	free(val);
}

void cgroups__free(struct cgroups *c)
{
	if (!c)
		return;
	if (c->paths)
		hmap__each(c->paths, free_val, NULL);
	hmap__free(c->paths);
	free(c->host_root);
	free(c);
}

const char *cgroups__v2_root(const struct cgroups *c)
{
	return c->v2[0] ? c->v2 : NULL;
}

uint64_t cgroups__v2_root_id(const struct cgroups *c)
{
	return c->v2_id;
}

static void remember(struct cgroups *c, uint64_t id, const char *rel)
{
	char *p = strdup(rel[0] ? rel : "/");

	if (!p)
		return;
	free(hmap__get(c->paths, &id, sizeof(id)));
	if (!hmap__put(c->paths, &id, sizeof(id), p))
		free(p);
}

/* Walks dir (rel: its path below the v2 root) and remembers every cgroup's id. */
static void scan(struct cgroups *c, const char *dir, const char *rel, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX], sub[PATH_MAX];

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name) >= (int)sizeof(sub) ||
		    stat(path, &st))
			continue;
		remember(c, st.st_ino, sub);
		if (depth < SCAN_DEPTH)
			scan(c, path, sub, depth + 1);
	}
	closedir(d);
}

int cgroups__v2_path(struct cgroups *c, uint64_t id, char *buf, size_t n)
{
	const char *p;

	if (!c->v2[0])
		return -ENOENT;
	if (id == c->v2_id) {
		snprintf(buf, n, "/");
		return 0;
	}
	p = hmap__get(c->paths, &id, sizeof(id));
	if (!p && time(NULL) != c->scanned) {
		c->scanned = time(NULL);
		scan(c, c->v2, "", 0);
		p = hmap__get(c->paths, &id, sizeof(id));
	}
	if (!p)
		return -ENOENT;
	snprintf(buf, n, "%s", p);
	return 0;
}

int cgroups__v1_dir(const struct cgroups *c, const char *controller, char *buf, size_t n)
{
	const char *name = !strncmp(controller, "name=", 5) ? controller + 5 : controller;
	const char *alts[] = { name, "cpu,cpuacct", "cpuacct,cpu" };
	struct stat st;

	for (size_t i = 0; i < (strcmp(name, "cpu") ? 1u : 3u); i++) {
		snprintf(buf, n, "%s/sys/fs/cgroup/%s", c->host_root, alts[i]);
		if (!stat(buf, &st) && S_ISDIR(st.st_mode) && !is_cgroup2(buf))
			return 0;
	}
	return -ENOENT;
}

int cgroup_text_v1_path(const char *text, const char *controller, char *buf, size_t n)
{
	size_t cl = strlen(controller);

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		const char *c1 = memchr(p, ':', len), *c2;

		c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - p)) : NULL;
		if (c2 && c2 > c1 + 1) {
			/* Controllers c1+1..c2, comma-separated. */
			for (const char *t = c1 + 1; t < c2;) {
				size_t tl = strcspn(t, ",:");

				if (t + tl > c2)
					tl = (size_t)(c2 - t);
				if (tl == cl && !memcmp(t, controller, cl)) {
					size_t pl = len - (size_t)(c2 + 1 - p);

					if (pl + 1 > n)
						return -ENOENT;
					memcpy(buf, c2 + 1, pl);
					buf[pl] = 0;
					return 0;
				}
				t += tl + 1;
			}
		}
		p += len + (p[len] == '\n');
	}
	return -ENOENT;
}

int cgroup_v1_path(const char *proc_root, int pid, const char *controller, char *buf, size_t n)
{
	char path[PATH_MAX], text[4096];

	snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root, pid);
	if (ident_read_small(path, text, sizeof(text)) < 0)
		return -ENOENT;
	return cgroup_text_v1_path(text, controller, buf, n);
}
