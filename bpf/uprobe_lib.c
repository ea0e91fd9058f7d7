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
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/loadlog.h"
#include "bpf/probes.h"
#include "symbols/elf_func.h"
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
	int *fds; /* session links (opts.session), by their file descriptors */
	size_t nfds;
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

bool uprobe_lib_session_supported(void)
{
	static int known; /* 0: not asked yet, 1: yes, -1: no */
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po,
		    .expected_attach_type = (enum bpf_attach_type)UPROBE_SESSION_ATTACH_TYPE);
	int fd;

	if (known)
		return known > 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "gt_session_chk", "GPL", insns, 2, &po);
	known = fd >= 0 ? 1 : -1;
	if (fd >= 0)
		close(fd);
	return known > 0;
}

/* The uprobe_multi part of the kernel's union bpf_attr for BPF_LINK_CREATE (Linux 6.6), which
 * the headers of libbpf 1.1 and Debian 12 do not have. */
struct link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, mflags, pid;
	uint32_t pad[9]; /* zeros: the rest of the union the kernel may read */
};

/* One uprobe_multi link of prog at offs[0..n) of the file at path, with cookies, in process
 * pid (-1: every one). Its file descriptor, or -errno. */
static int session_link(struct bpf_program *prog, const char *path, const uint64_t *offs,
			const uint64_t *cookies, size_t n, int pid)
{
	struct link_create_uprobe_multi a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)bpf_program__fd(prog);
	a.attach_type = UPROBE_SESSION_ATTACH_TYPE;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offs;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = (uint32_t)n;
	a.pid = pid > 0 ? (uint32_t)pid : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

/* Attaches the probes of a session program to the file at full into f: one link for all the
 * functions found there. 0 or -ENOMEM. */
static int attach_session(struct uprobe_lib *u, const char *full, struct uprobe_lib_file *f,
			  const uint64_t *place)
{
	size_t n = u->o.nprobes, k = 0;
	const char **names = calloc(n ? n : 1, sizeof(*names));
	uint8_t (*code)[ELF_FUNC_CODE] = calloc(n ? n : 1, sizeof(*code));
	uint64_t *offs = calloc(n ? n : 1, sizeof(*offs)), *at = calloc(n ? n : 1, sizeof(*at));
	uint64_t *cookies = calloc(n ? n : 1, sizeof(*cookies));
	bool *found = calloc(n ? n : 1, sizeof(*found));
	int fd, err = 0;

	if (!names || !code || !offs || !at || !cookies || !found) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		names[i] = u->probes[i].ret ? "" : u->probes[i].func;
	fd = elf_func_code(full, names, n, found, code, offs);
	for (size_t i = 0; fd > 0 && i < n; i++) {
		if (u->probes[i].ret)
			continue;
		if (!found[i]) {
			f->failed++;
			continue;
		}
		at[k] = offs[i] + place[i];
		cookies[k++] = u->probes[i].cookie;
	}
	if (fd < 0 || !k) {
		f->err = fd < 0 ? fd : -ENOENT;
		goto cleanup;
	}
	fd = session_link(u->probes[0].prog, full, at, cookies, k, target_pid(u));
	if (fd < 0) {
		f->failed += k;
		f->err = fd;
	} else if (array_resize(&u->fds, u->nfds + 1, sizeof(*u->fds))) {
		close(fd);
		err = -ENOMEM;
	} else {
		u->fds[u->nfds++] = fd;
		f->attached += k;
	}
cleanup:
	free(names);
	free(code);
	free(offs);
	free(at);
	free(cookies);
	free(found);
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
		if (u->o.session)
			err = attach_session(u, full, f, off);
		for (size_t i = 0; !u->o.session && i < u->o.nprobes && !err; i++) {
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
	for (size_t i = 0; i < u->nfds; i++)
		close(u->fds[i]);
	free(u->links);
	free(u->fds);
	free(u->probes);
	free(u->files);
	free(u->seen);
	free(u->passed);
	free(u);
}
