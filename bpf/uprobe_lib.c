/* Uprobes on every copy of a library mapped on the box (uprobe_lib.h): maps are read with
 * symbols/proc_maps, files told apart by the device and inode the maps show, each probed once
 * through /proc/PID/map_files/START-END: the mapped file itself, whichever root or mount
 * namespace the process has (a container's path, a chroot's, a file replaced since). */
#include "bpf/uprobe_lib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/loadlog.h"
#include "bpf/probes.h"
#include "symbols/proc_maps.h"
#include "util/grow.h"
#include "util/procfs.h"

#define DEFAULT_MAX_FILES 256

struct uprobe_lib {
	struct uprobe_lib_opts o;
	struct uprobe_lib_probe *probes;
	struct uprobe_lib_file *files;
	size_t nfiles, files_cap, nattached;
	bool full;
	struct bpf_link **links;
	size_t nlinks;
	int *seen; /* sorted pids whose maps were read */
	size_t nseen, seen_cap;
	struct file_id {
		uint64_t dev, ino;
	} *passed; /* files the sites callback turned down */
	size_t npassed, passed_cap;
};

struct uprobe_lib *uprobe_lib__new(const struct uprobe_lib_opts *o)
{
	struct uprobe_lib *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->o = *o;
	if (!u->o.max_files)
		u->o.max_files = DEFAULT_MAX_FILES;
	u->probes = calloc(o->nprobes ? o->nprobes : 1, sizeof(*u->probes));
	if (!u->probes) {
		free(u);
		return NULL;
	}
	if (o->nprobes)
		memcpy(u->probes, o->probes, o->nprobes * sizeof(*u->probes));
	u->o.probes = u->probes;
	return u;
}

static bool wanted(const struct uprobe_lib *u, const char *path)
{
	const char *base = strrchr(path, '/');

	if (path[0] != '/')
		return false; /* anonymous, [vdso] and the like */
	if (u->o.prefix)
		return !strncmp(base + 1, u->o.prefix, strlen(u->o.prefix));
	return u->o.match && u->o.match(u->o.ctx, path);
}

static bool known(const struct uprobe_lib *u, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < u->nfiles; i++)
		if (u->files[i].dev == dev && u->files[i].ino == ino)
			return true;
	for (size_t i = 0; i < u->npassed; i++)
		if (u->passed[i].dev == dev && u->passed[i].ino == ino)
			return true;
	return false;
}

/* The process the probes fire in, -1 for all. */
static int target_pid(const struct uprobe_lib *u)
{
	return u->o.pid > 0 ? u->o.pid : -1;
}

/* Keeps link in u (destroying it on ENOMEM) and counts it in f. 0 or -ENOMEM. */
static int keep_link(struct uprobe_lib *u, struct uprobe_lib_file *f, struct bpf_link *link)
{
	if (!link) {
		f->failed++;
		f->err = -errno;
		return 0;
	}
	if (probe_links_add(&u->links, &u->nlinks, link)) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	f->attached++;
	return 0;
}

/* Attaches the probes the sites callback finds in the file at full into f: 0, 1 when the
 * file is not one to probe, or -ENOMEM. */
static int attach_sites(struct uprobe_lib *u, const char *full, struct uprobe_lib_file *f)
{
	struct uprobe_lib_site s[UPROBE_LIB_MAX_SITES];
	int n = u->o.sites(u->o.ctx, full, s), err = 0;

	if (n == 0)
		return 1;
	if (n < 0) {
		f->err = n;
		return 0;
	}
	for (int i = 0; i < n && i < UPROBE_LIB_MAX_SITES && !err; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = s[i].cookie);

		loadlog_reset();
		err = keep_link(u, f,
				bpf_program__attach_uprobe_opts(s[i].prog, target_pid(u), full,
								s[i].offset, &uo));
	}
	return err;
}

/* Attaches every probe to the file at full (the path as galatop opens it) into f. */
static int attach_file(struct uprobe_lib *u, const char *full, struct uprobe_lib_file *f)
{
	uint64_t *off;
	int err = 0;

	if (u->o.sites) {
		err = attach_sites(u, full, f);
		if (err)
			return err;
	} else {
		off = calloc(u->o.nprobes ? u->o.nprobes : 1, sizeof(*off));
		if (!off)
			return -ENOMEM;
		if (u->o.offsets)
			u->o.offsets(u->o.ctx, full, u->probes, u->o.nprobes, off);
		for (size_t i = 0; i < u->o.nprobes && !err; i++) {
			const struct uprobe_lib_probe *pr = &u->probes[i];
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = pr->func, .retprobe = pr->ret,
				    .bpf_cookie = pr->cookie);

			loadlog_reset();
			err = keep_link(u, f,
					bpf_program__attach_uprobe_opts(pr->prog, target_pid(u), full,
									off[i], &uo));
		}
		free(off);
		if (err)
			return err;
	}
	if (f->attached) {
		f->err = 0;
		u->nattached++;
	}
	return 0;
}

/* Probes the file (dev, ino) that pid (0: none) shows as path and galatop opens at full,
 * when it is one to probe and not known yet. 1 when newly probed, 0, or -ENOMEM. */
static int probe_file(struct uprobe_lib *u, uint64_t dev, uint64_t ino, int pid,
		      const char *path, const char *full)
{
	struct uprobe_lib_file *f;
	int ret;

	if (!wanted(u, path) || known(u, dev, ino))
		return 0;
	if (u->nfiles == u->o.max_files) {
		u->full = true;
		return 0;
	}
	if (ARRAY_GROW(u->files, u->files_cap, u->nfiles + 1))
		return -ENOMEM;
	f = &u->files[u->nfiles++];
	memset(f, 0, sizeof(*f));
	f->dev = dev;
	f->ino = ino;
	f->pid = pid;
	snprintf(f->path, sizeof(f->path), "%s", path);
	ret = attach_file(u, full, f);
	if (ret == 1) {
		/* not one to probe: remembered so that its file is not read again */
		u->nfiles--;
		if (!ARRAY_GROW(u->passed, u->passed_cap, u->npassed + 1))
			u->passed[u->npassed++] = (struct file_id){ dev, ino };
		return 0;
	}
	if (ret)
		return ret;
	if (!f->attached && access(full, F_OK)) {
		u->nfiles--; /* unmapped meanwhile: the next scan tries again */
		return 0;
	}
	return 1;
}

int uprobe_lib__scan_pid(struct uprobe_lib *u, int pid)
{
	struct proc_map *maps;
	size_t n;
	int ret = proc_maps__read(pid, &maps, &n), added = 0;

	if (ret)
		return ret;
	for (size_t i = 0; i < n && !ret && !u->full; i++) {
		const struct proc_map *m = &maps[i];
		char full[64];

		if (!m->inode)
			continue;
		snprintf(full, sizeof(full), "/proc/%d/map_files/%llx-%llx", pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		ret = probe_file(u, m->dev, m->inode, pid, m->path, full);
		if (ret > 0)
			added++, ret = 0;
	}
	proc_maps__free(maps, n);
	return ret ? ret : added;
}

int uprobe_lib__scan_path(struct uprobe_lib *u, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	return probe_file(u, (uint64_t)st.st_dev, (uint64_t)st.st_ino, 0, path, path);
}

/* Whether pid was looked at before; remembers it. */
static bool seen_before(struct uprobe_lib *u, int pid)
{
	size_t lo = 0, hi = u->nseen;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (u->seen[mid] == pid)
			return true;
		if (u->seen[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (ARRAY_GROW(u->seen, u->seen_cap, u->nseen + 1))
		return true; /* out of memory: look at it no more, nothing breaks */
	memmove(u->seen + lo + 1, u->seen + lo, (u->nseen - lo) * sizeof(int));
	u->seen[lo] = pid;
	u->nseen++;
	return false;
}

struct scan {
	struct uprobe_lib *u;
	bool again;
	int added;
};

static int scan_one(void *ctx, int pid)
{
	struct scan *s = ctx;
	int n;

	if (seen_before(s->u, pid) && !s->again)
		return 0;
	n = uprobe_lib__scan_pid(s->u, pid);
	if (n > 0)
		s->added += n;
	return 0;
}

int uprobe_lib__scan(struct uprobe_lib *u, const int *pids, size_t n, bool again)
{
	struct scan s = { u, again, 0 };

	if (!pids) {
		procfs_each_id("/proc", scan_one, &s);
		return s.added;
	}
	for (size_t i = 0; i < n; i++)
		scan_one(&s, pids[i]);
	return s.added;
}

size_t uprobe_lib__nfiles(const struct uprobe_lib *u)
{
	return u->nfiles;
}

const struct uprobe_lib_file *uprobe_lib__file(const struct uprobe_lib *u, size_t i)
{
	return i < u->nfiles ? &u->files[i] : NULL;
}

size_t uprobe_lib__attached(const struct uprobe_lib *u)
{
	return u->nattached;
}

bool uprobe_lib__full(const struct uprobe_lib *u)
{
	return u->full;
}

void uprobe_lib__free(struct uprobe_lib *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nlinks; i++)
		bpf_link__destroy(u->links[i]);
	free(u->links);
	free(u->probes);
	free(u->files);
	free(u->seen);
	free(u->passed);
	free(u);
}
