/* The in-process sampler injected into a running process: see leak_inject.h. */
#include "leak_inject.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inject.h"
#include "bpf/leak.h"
#include "bpf/probes.h"
#include "bpf/preload/leak_inject.h"
#include "symbols/elf_func.h"
#include "symbols/proc_maps.h"
#include "util/clock.h"
#include "util/companion.h"

#define SAFE_POINT_MS 3000     /* how long safe points are waited for, all processes together */
#define SAFE_POINT_MIN_MS 300  /* at least, for each process */
#define MAX_AVOID 8

/* libc's dlopen, dlsym and dlerror in pid; the address ranges of the dynamic linker and of
 * the known allocators' code into avoid[] (pairs, *navoid of them). 0 or -errno with why. */
static int find_libc(int pid, uint64_t fns[3], uint64_t *avoid, size_t *navoid, char *why,
		     size_t len)
{
	static const char *const names[3] = { "dlopen", "dlsym", "dlerror" };
	uint8_t code[3][ELF_FUNC_CODE];
	uint64_t offs[3];
	bool found[3];
	struct proc_map *maps;
	size_t n;
	int err = proc_maps__read(pid, &maps, &n), libc = -1;

	if (err) {
		snprintf(why, len, "cannot read its maps: %s", strerror(-err));
		return err;
	}
	*navoid = 0;
	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(maps[i].path, '/');

		if (!base || !maps[i].inode)
			continue;
		if (!strcmp(base + 1, "libc.so.6") && libc < 0)
			libc = (int)i;
		if ((!strncmp(base + 1, "ld-linux", 8) || !strncmp(base + 1, "libjemalloc", 11) ||
		     !strncmp(base + 1, "libtcmalloc", 11)) && *navoid < MAX_AVOID) {
			avoid[2 * *navoid] = maps[i].start;
			avoid[2 * (*navoid)++ + 1] = maps[i].end;
		}
	}
	err = -ENOENT;
	if (libc < 0) {
		snprintf(why, len, "it maps no libc.so.6 (a static program?)");
	} else {
		char path[4200];

		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, maps[libc].path);
		if (elf_func_code(path, names, 3, found, code, offs) != 3) {
			snprintf(why, len, "its libc (%s) has no dlopen (glibc before 2.34?)",
				 maps[libc].path);
		} else {
			err = 0;
			for (int k = 0; k < 3; k++) {
				fns[k] = 0;
				for (size_t i = 0; i < n; i++)
					if (maps[i].dev == maps[libc].dev && maps[i].inode == maps[libc].inode &&
					    offs[k] >= maps[i].pgoff &&
					    offs[k] < maps[i].pgoff + (maps[i].end - maps[i].start))
						fns[k] = maps[i].start + offs[k] - maps[i].pgoff;
				if (!fns[k])
					err = -ENOENT;
			}
			if (err)
				snprintf(why, len, "its libc's dlopen is not in its executable mappings");
		}
	}
	proc_maps__free(maps, n);
	return err;
}

/* Whether lib is the same file at the same path in pid's mount namespace. */
static bool visible(int pid, const char *lib)
{
	char path[4200];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, lib);
	return !stat(lib, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Whether pid maps lib already. */
static bool mapped(int pid, const char *lib)
{
	struct proc_map *maps;
	size_t n;
	struct stat st;
	bool found = false;

	if (stat(lib, &st) || proc_maps__read(pid, &maps, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++)
		found = maps[i].inode == st.st_ino && strstr(maps[i].path, LEAK_PRELOAD_LIB);
	proc_maps__free(maps, n);
	return found;
}

static const char *attach_error(long r)
{
	switch (-r) {
	case LEAK_INJECT_EBUSY:
		return "another galatop that still runs has the sampler attached";
	case LEAK_INJECT_EPRELOAD:
		return "the sampler was preloaded in it";
	case LEAK_INJECT_EEXE:
		return "its malloc is its executable's own (called directly, no GOT entry to point)";
	case LEAK_INJECT_ENOMALLOC:
		return "no malloc found in it";
	case LEAK_INJECT_ENONE:
		return "no module imports an allocator entry through its GOT";
	}
	return "the sampler's attach failed";
}

/* The calls in the stopped thread: dlopen, dlsym, the attach. */
static int load_and_attach(struct inject_thread *t, const uint64_t fns[3], const char *lib,
			   uint64_t mean, uint64_t *state, char *why, size_t len)
{
	uint64_t path, name, handle, attach, r, args[2];
	int err;

	err = inject_thread__push(t, lib, strlen(lib) + 1, &path);
	err = err ?: inject_thread__push(t, LEAK_INJECT_ATTACH, sizeof(LEAK_INJECT_ATTACH), &name);
	args[0] = path;
	args[1] = RTLD_NOW;
	err = err ?: inject_thread__call(t, fns[0], args, 2, &handle);
	if (err) {
		snprintf(why, len, "calling dlopen in it failed: %s", strerror(-err));
		return err;
	}
	if (!handle) {
		char msg[256] = "";

		if (!inject_thread__call(t, fns[2], NULL, 0, &r) && r)
			for (size_t i = 0; i + 1 < sizeof(msg); i++)
				if (inject_mem_read(t->pid, r + i, &msg[i], 1) || !msg[i])
					break;
		for (char *c = msg; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
				*c = '?';
		snprintf(why, len, "its dlopen of the sampler failed: %s", msg[0] ? msg : "(no reason)");
		return -ENOENT;
	}
	args[0] = handle;
	args[1] = name;
	err = inject_thread__call(t, fns[1], args, 2, &attach);
	if (!err && !attach)
		err = -ENOENT;
	if (err) {
		snprintf(why, len, "the sampler's %s not found in it: %s", LEAK_INJECT_ATTACH,
			 strerror(-err));
		return err;
	}
	args[0] = mean;
	args[1] = (uint64_t)getpid();
	err = inject_thread__call(t, attach, args, 2, &r);
	if (err) {
		snprintf(why, len, "calling the sampler's attach failed: %s", strerror(-err));
		return err;
	}
	if ((int64_t)r < 0) {
		snprintf(why, len, "%s", attach_error((long)r));
		return -ENOTSUP;
	}
	*state = r;
	return 0;
}

int leak_inject__attach(struct leak_inject *li, int pid, const char *lib, uint64_t mean,
			int timeout_ms, char *why, size_t len)
{
	uint64_t fns[3], avoid[2 * MAX_AVOID];
	size_t navoid;
	struct inject_thread t;
	struct leak_inject_state st;
	uint64_t held;
	int err;

	memset(li, 0, sizeof(*li));
	if (!visible(pid, lib)) {
		snprintf(why, len, "%s is not visible at that path in its mount namespace", lib);
		return -ENOENT;
	}
	err = find_libc(pid, fns, avoid, &navoid, why, len);
	if (err)
		return err;
	li->loaded = mapped(pid, lib);
	err = inject_thread__seize(&t, pid, avoid, navoid, timeout_ms, why, len);
	if (err)
		return err;
	held = clock_mono_ns();
	err = load_and_attach(&t, fns, lib, mean, &li->state, why, len);
	inject_thread__release(&t);
	li->held_ms = (double)(clock_mono_ns() - held) / 1e6;
	if (err)
		return err;
	err = inject_mem_read(pid, li->state, &st, offsetof(struct leak_inject_state, slots));
	if (err || st.version != LEAK_INJECT_VERSION) {
		snprintf(why, len, "cannot read the sampler's state in it: %s",
			 err ? strerror(-err) : "another version");
		return err ? err : -EPROTO;
	}
	li->pid = pid;
	li->entries = st.nslots;
	li->modules = st.modules;
	li->left = st.elsewhere + st.full;
	return 0;
}

int leak_inject__detach(struct leak_inject *li, char *why, size_t len)
{
	struct leak_inject_state *st;
	struct inject_frozen f;
	int err;

	if (!li->pid)
		return 0;
	st = malloc(sizeof(*st));
	if (!st) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	err = inject_freeze(&f, li->pid, why, len);
	if (!err) {
		err = inject_mem_read(li->pid, li->state, st, sizeof(*st));
		if (err)
			snprintf(why, len, "cannot read the sampler's state: %s", strerror(-err));
	}
	for (uint32_t i = 0; !err && i < st->nslots && i < LEAK_INJECT_SLOTS; i++) {
		const struct leak_inject_slot *s = &st->slots[i];
		uint64_t cur;

		/* An entry the program changed since is left as it is now. */
		if (!inject_mem_read(li->pid, s->addr, &cur, sizeof(cur)) && cur == s->hook) {
			err = inject_mem_write(li->pid, s->addr, &s->orig, sizeof(s->orig));
			if (err)
				snprintf(why, len, "cannot write its GOT at %#llx: %s",
					 (unsigned long long)s->addr, strerror(-err));
		}
	}
	if (!err) {
		st->nslots = 0;
		st->owner = 0;
		err = inject_mem_write(li->pid, li->state, st, offsetof(struct leak_inject_state, slots));
	}
	inject_thaw(&f);
	free(st);
	if (!err)
		li->pid = 0;
	return err;
}

int leak_injects__init(struct leak_injects *set, const int *pids, size_t n, char *why, size_t len)
{
	memset(set, 0, sizeof(*set));
	if (!n)
		return 0;
	if (companion_path(LEAK_PRELOAD_LIB, "GALATOP_LEAK_LIB", set->lib, sizeof(set->lib))) {
		snprintf(why, len, "%s not found (next to galatop or in %s)", LEAK_PRELOAD_LIB, set->lib);
		return -ENOENT;
	}
	set->t = calloc(n, sizeof(*set->t));
	set->pids = malloc(n * sizeof(*set->pids));
	if (!set->t || !set->pids) {
		leak_injects__free(set);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		set->t[i].pid = set->pids[i] = pids[i];
	set->n = n;
	return 0;
}

void leak_injects__attach(struct leak_injects *set, struct probes *p, uint64_t mean)
{
	int each = set->n ? SAFE_POINT_MS / (int)set->n : 0;

	if (each < SAFE_POINT_MIN_MS)
		each = SAFE_POINT_MIN_MS;
	for (size_t i = 0; i < set->n; i++) {
		struct leak_injected *t = &set->t[i];

		if (t->attached)
			continue;
		t->why[0] = '\0';
		if (leak_inject__attach(&t->li, t->pid, set->lib, mean, each, t->why,
					sizeof(t->why))) {
			probes__leak_uninject(p, t->pid);
			continue;
		}
		t->attached = true;
	}
}

void leak_injects__detach(struct leak_injects *set, char *warn, size_t len)
{
	size_t at = 0;

	if (len)
		warn[0] = '\0';
	for (size_t i = 0; i < set->n; i++) {
		struct leak_injected *t = &set->t[i];
		char why[256];

		if (!t->attached)
			continue;
		if (!mapped(t->pid, set->lib)) {
			t->attached = false; /* gone, or exec'ed: its hooks went with its program */
			continue;
		}
		if (leak_inject__detach(&t->li, why, sizeof(why))) {
			if (at < len)
				at += (size_t)snprintf(warn + at, len - at, "%spid %d: %s", at ? "\n" : "",
						       t->pid, why);
			continue;
		}
		t->attached = false;
	}
}

const struct leak_injected *leak_injects__find(const struct leak_injects *set, int pid)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->t[i].pid == pid)
			return &set->t[i];
	return NULL;
}

void leak_injects__free(struct leak_injects *set)
{
	if (!set)
		return;
	free(set->t);
	free(set->pids);
	set->t = NULL;
	set->pids = NULL;
	set->n = 0;
}
