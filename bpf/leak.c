/* The leak probe's attachments: see leak.h. One bpf/uprobe_lib per allocator family, each
 * with the functions that allocator really enters: an alias (glibc's aligned_alloc is
 * memalign) or a wrapper that jumps to another listed entry (glibc's reallocarray, jemalloc's
 * operator new[] and its unsized operator delete) is left out, or a call would be counted
 * twice. */
#include "bpf/leak.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/leak_event.h"
#include "bpf/loadlog.h"
#include "bpf/uprobe_lib.h"
#include "symbols/elf_func.h"
#include "symbols/probe_spot.h"
#include "symbols/proc_maps.h"
#include "util/file.h"
#include "util/grow.h"

struct leak_fn_name {
	const char *name;
	unsigned cookie;
};

#define END { NULL, 0 }

/* glibc 2.36: aligned_alloc is memalign (one address); reallocarray jumps to realloc;
 * realloc(NULL, n) jumps to malloc. */
static const struct leak_fn_name glibc_fns[] = {
	{ "malloc", LEAK_FN_MALLOC },
	{ "calloc", LEAK_FN_CALLOC },
	{ "realloc", LEAK_FN_REALLOC | LEAK_NULL_VIA_MALLOC },
	{ "free", LEAK_FN_FREE },
	{ "memalign", LEAK_FN_MEMALIGN },
	{ "posix_memalign", LEAK_FN_POSIX_MEMALIGN },
	{ "valloc", LEAK_FN_VALLOC },
	{ "pvalloc", LEAK_FN_PVALLOC },
	END,
};

/* jemalloc 5 (Debian's libjemalloc2; redis-server links it): its operator new and sized
 * deletes do not go through malloc and free; operator new[] jumps to operator new, the unsized
 * deletes to free, the aligned news call aligned_alloc. */
static const struct leak_fn_name jemalloc_fns[] = {
	{ "malloc", LEAK_FN_MALLOC },
	{ "calloc", LEAK_FN_CALLOC },
	{ "realloc", LEAK_FN_REALLOC },
	{ "free", LEAK_FN_FREE },
	{ "memalign", LEAK_FN_MEMALIGN },
	{ "aligned_alloc", LEAK_FN_MEMALIGN },
	{ "posix_memalign", LEAK_FN_POSIX_MEMALIGN },
	{ "valloc", LEAK_FN_VALLOC },
	{ "mallocx", LEAK_FN_MALLOC },
	{ "rallocx", LEAK_FN_REALLOC },
	{ "dallocx", LEAK_FN_FREE },
	{ "sdallocx", LEAK_FN_FREE },
	{ "_Znwm", LEAK_FN_MALLOC },
	{ "_ZnwmRKSt9nothrow_t", LEAK_FN_MALLOC },
	{ "_ZdlPvm", LEAK_FN_FREE },
	{ "_ZdaPvm", LEAK_FN_FREE },
	{ "_ZdlPvmSt11align_val_t", LEAK_FN_FREE },
	{ "_ZdaPvmSt11align_val_t", LEAK_FN_FREE },
	END,
};

/* gperftools' tcmalloc (libgoogle-perftools4): free is also operator delete, operator new[]
 * is operator new, aligned_alloc is memalign; posix_memalign, valloc and pvalloc call or jump
 * to memalign through the PLT. */
static const struct leak_fn_name tcmalloc_fns[] = {
	{ "malloc", LEAK_FN_MALLOC },
	{ "calloc", LEAK_FN_CALLOC },
	{ "realloc", LEAK_FN_REALLOC },
	{ "free", LEAK_FN_FREE },
	{ "memalign", LEAK_FN_MEMALIGN },
	{ "_Znwm", LEAK_FN_MALLOC },
	{ "_ZnwmRKSt9nothrow_t", LEAK_FN_MALLOC },
	{ "_ZdlPvm", LEAK_FN_FREE },
	END,
};

/* An executable with an allocator linked in (static glibc, a bundled jemalloc with its je_
 * prefix): whichever of these it defines. */
static const struct leak_fn_name exe_fns[] = {
	{ "malloc", LEAK_FN_MALLOC },
	{ "calloc", LEAK_FN_CALLOC },
	{ "realloc", LEAK_FN_REALLOC },
	{ "reallocarray", LEAK_FN_REALLOCARRAY },
	{ "free", LEAK_FN_FREE },
	{ "memalign", LEAK_FN_MEMALIGN },
	{ "posix_memalign", LEAK_FN_POSIX_MEMALIGN },
	{ "valloc", LEAK_FN_VALLOC },
	{ "pvalloc", LEAK_FN_PVALLOC },
	{ "je_malloc", LEAK_FN_MALLOC },
	{ "je_calloc", LEAK_FN_CALLOC },
	{ "je_realloc", LEAK_FN_REALLOC },
	{ "je_free", LEAK_FN_FREE },
	{ "je_posix_memalign", LEAK_FN_POSIX_MEMALIGN },
	{ "je_aligned_alloc", LEAK_FN_MEMALIGN },
	{ "je_memalign", LEAK_FN_MEMALIGN },
	END,
};

/* The in-process sampler's markers (bpf/preload/leak.c): the sampled allocations and the
 * frees of sampled blocks of the processes it is preloaded into, and nothing else. */
static const struct leak_fn_name preload_fns[2] = {
	{ "galatop_leak_alloc", LEAK_FN_MALLOC },
	{ "galatop_leak_free", LEAK_FN_FREE },
};

enum { KIT_GLIBC, KIT_JEMALLOC, KIT_TCMALLOC, KIT_EXE, NKITS };

static const struct {
	const char *prefix; /* NULL: the targets' executables */
	const struct leak_fn_name *fns;
} kits[NKITS] = {
	[KIT_GLIBC] = { "libc.so.6", glibc_fns },
	[KIT_JEMALLOC] = { "libjemalloc.so", jemalloc_fns },
	[KIT_TCMALLOC] = { "libtcmalloc", tcmalloc_fns },
	[KIT_EXE] = { NULL, exe_fns },
};

#define MAX_PROBES 64
#define MAX_SETS 256 /* processes probed one by one at most */

/* The probes of one process (pid > 0), or of every process (pid -1). */
struct leak_set_of {
	int pid;
	struct uprobe_lib *lib[NKITS];
	size_t reported[NKITS]; /* files looked at for warnings */
	char exe[4096];		/* its executable as its maps name it ("" when unknown) */
	char preload[4096];	/* the sampler library it runs with, as galatop opens it ("": none) */
	enum leak_path path;
	bool injected; /* the sampler is injected into it: preload[] is its library */
	bool settled; /* its libraries are mapped (libc is, or it is static): its path stays */
};

struct leak_probes {
	struct bpf_program *entry, *ret, *session;
	/* The sampler's markers, in every process that maps its library: only processes it was
	 * preloaded into do, and there they fire from the program's first allocation on (a
	 * child is seen before galatop reads its exec). NULL without a marker program. */
	struct uprobe_lib *marks;
	size_t marks_reported;
	bool per_pid;
	struct leak_set_of **sets;
	size_t nsets, sets_cap;
	bool full_said;
	char warnings[2048];
	struct {
		int pid;
		enum leak_path path;
	} gone[MAX_SETS]; /* how processes probed alone and gone since were seen, the last ones */
	size_t ngone;
};

/* The registers holding the arguments the probe reads for a function of kind fn (LEAK_FN_*),
 * in x86-64's order: rdi, rsi, rdx, rcx. */
static unsigned args_read(unsigned fn)
{
	switch (fn) {
	case LEAK_FN_MALLOC:
	case LEAK_FN_VALLOC:
	case LEAK_FN_PVALLOC:
	case LEAK_FN_FREE:
		return 1;
	case LEAK_FN_CALLOC:
	case LEAK_FN_REALLOC:
	case LEAK_FN_MEMALIGN:
		return 2;
	default:
		return 4;
	}
}

/* The probes of a function go to their spot (symbols/probe_spot.h): an instruction the
 * kernel must single-step costs ten times one it emulates (40 us against 3 us on a 6.18 VM). */
static void place(void *ctx, const char *file, const struct uprobe_lib_probe *pr, size_t n,
		  uint64_t *off)
{
	const char *names[MAX_PROBES] = { NULL };
	uint8_t code[MAX_PROBES][ELF_FUNC_CODE];
	bool found[MAX_PROBES];

	if (n > MAX_PROBES)
		return;
	for (size_t i = 0; i < n; i++)
		names[i] = pr[i].func;
	if (elf_func_code(file, names, n, found, code, NULL) <= 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (found[i])
			off[i] = probe_spot(code[i], ELF_FUNC_CODE,
					    args_read((unsigned)(pr[i].cookie & LEAK_FN_MASK)));
}

static bool exe_match(void *ctx, const char *path)
{
	const struct leak_set_of *ls = ctx;

	return ls->exe[0] && !strcmp(ls->exe, path);
}

static void set_free(struct leak_set_of *ls)
{
	if (!ls)
		return;
	for (int k = 0; k < NKITS; k++)
		uprobe_lib__free(ls->lib[k]);
	free(ls);
}

/* The kits for pid (-1: every process; then no executable kit). NULL on ENOMEM. */
static struct leak_set_of *set_new(struct leak_probes *l, int pid)
{
	struct leak_set_of *ls = calloc(1, sizeof(*ls));

	if (!ls)
		return NULL;
	ls->pid = pid;
	for (int k = 0; k < NKITS; k++) {
		struct uprobe_lib_probe pr[MAX_PROBES];
		struct uprobe_lib_opts o = { .prefix = kits[k].prefix, .probes = pr,
					     .offsets = place, .pid = pid > 0 ? pid : 0,
					     .session = l->session != NULL };
		size_t n = 0;

		if (!kits[k].prefix) {
			if (pid <= 0)
				continue;
			o.match = exe_match;
			o.ctx = ls;
		}
		for (const struct leak_fn_name *f = kits[k].fns; f->name && n + 2 <= MAX_PROBES; f++) {
			if (l->session) {
				pr[n++] = (struct uprobe_lib_probe){ f->name, l->session, false,
								     f->cookie };
				continue;
			}
			pr[n++] = (struct uprobe_lib_probe){ f->name, l->entry, false, f->cookie };
			if ((f->cookie & LEAK_FN_MASK) != LEAK_FN_FREE)
				pr[n++] = (struct uprobe_lib_probe){ f->name, l->ret, true, f->cookie };
		}
		o.nprobes = n;
		ls->lib[k] = uprobe_lib__new(&o);
		if (!ls->lib[k]) {
			set_free(ls);
			return NULL;
		}
	}
	return ls;
}

struct leak_probes *leak_probes__new(struct bpf_program *entry, struct bpf_program *ret,
				     struct bpf_program *session, struct bpf_program *mark,
				     bool per_pid)
{
	struct leak_probes *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->entry = entry;
	l->ret = ret;
	l->session = session;
	l->per_pid = per_pid;
	if (mark && per_pid) {
		/* Plain uprobes at the markers' first instruction (a 5-byte nop). */
		struct uprobe_lib_probe pr[2];
		struct uprobe_lib_opts o = { .prefix = LEAK_PRELOAD_LIB, .probes = pr, .nprobes = 2 };

		for (int i = 0; i < 2; i++)
			pr[i] = (struct uprobe_lib_probe){ preload_fns[i].name, mark, false,
							   preload_fns[i].cookie };
		l->marks = uprobe_lib__new(&o);
		if (!l->marks) {
			free(l);
			return NULL;
		}
	}
	return l;
}

/* The set of pid (-1 when not per process), made if new; NULL when out of room. */
static struct leak_set_of *set_of(struct leak_probes *l, int pid)
{
	struct leak_set_of *ls;

	if (!l->per_pid)
		pid = -1;
	for (size_t i = 0; i < l->nsets; i++)
		if (l->sets[i]->pid == pid)
			return l->sets[i];
	if (l->nsets == MAX_SETS) {
		if (!l->full_said) {
			size_t len = strlen(l->warnings);

			snprintf(l->warnings + len, sizeof(l->warnings) - len,
				 "%sleak: %d processes probed already; the others are not",
				 len ? "\n" : "", MAX_SETS);
			l->full_said = true;
		}
		return NULL;
	}
	if (ARRAY_GROW(l->sets, l->sets_cap, l->nsets + 1))
		return NULL;
	ls = set_new(l, pid);
	if (ls)
		l->sets[l->nsets++] = ls;
	return ls;
}

/* Remembers the executable of ls's process (as its maps name it) for the executables' kit. */
static void note_exe(struct leak_set_of *ls)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", ls->pid);
	n = readlink(link, ls->exe, sizeof(ls->exe) - 1);
	ls->exe[n > 0 ? n : 0] = '\0';
	if (n > 10 && !strcmp(ls->exe + n - 10, " (deleted)"))
		ls->exe[n - 10] = '\0';
}

/* Warns once about each file found whose probes all failed. */
static void report(struct leak_probes *l, struct leak_set_of *ls)
{
	for (; l->marks && l->marks_reported < uprobe_lib__nfiles(l->marks); l->marks_reported++) {
		const struct uprobe_lib_file *f = uprobe_lib__file(l->marks, l->marks_reported);
		size_t len = strlen(l->warnings);

		if (!f->attached && len + 1 < sizeof(l->warnings))
			snprintf(l->warnings + len, sizeof(l->warnings) - len,
				 "%sleak: cannot probe the sampler's markers in %s: %s",
				 len ? "\n" : "", f->path, strerror(-f->err));
	}
	for (int k = 0; k < NKITS; k++) {
		size_t n = ls->lib[k] ? uprobe_lib__nfiles(ls->lib[k]) : 0;

		for (; ls->reported[k] < n; ls->reported[k]++) {
			const struct uprobe_lib_file *f = uprobe_lib__file(ls->lib[k], ls->reported[k]);
			size_t len = strlen(l->warnings);

			/* An executable without an allocator of its own is the common case. */
			if (f->attached || k == KIT_EXE || len + 1 >= sizeof(l->warnings))
				continue;
			snprintf(l->warnings + len, sizeof(l->warnings) - len,
				 "%sleak: cannot probe the allocator in %s: %s", len ? "\n" : "",
				 f->path, strerror(-f->err));
		}
	}
}

/* Whether pid runs with the in-process sampler preloaded: a dynamic program with the library
 * in its LD_PRELOAD (a library mapped without it was injected, and interposes nothing); the
 * library's path into path[len] (as its maps show it, or, not mapped yet, as galatop opens
 * it). 1 when it does, 0 when not (always 0 with known, when that was found before: then
 * only *settled is looked at), -ESRCH when pid is gone or a zombie. *settled says whether
 * its libraries are in place (glibc is mapped, or it is a static program), *mapped whether
 * it maps the library (preloaded or injected). */
static int preload_of(int pid, char *path, size_t len, bool known, bool *settled, bool *mapped)
{
	static const char lib[] = LEAK_PRELOAD_LIB;
	struct proc_map *maps;
	size_t n, size = 0;
	bool dynamic = false, found = false, preloaded = false;
	char env[64], *buf = NULL, *v, *tok, *save;

	if (proc_maps__read(pid, &maps, &n))
		return -ESRCH;
	*settled = false;
	*mapped = false;
	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(maps[i].path, '/');

		if (!maps[i].inode || !base)
			continue;
		*settled |= !strcmp(base + 1, "libc.so.6");
		*mapped |= !strncmp(base + 1, lib, sizeof(lib) - 1);
		if (!found && !known && !strncmp(base + 1, lib, sizeof(lib) - 1)) {
			snprintf(path, len, "%s", maps[i].path);
			found = true;
		}
		dynamic |= !strncmp(base + 1, "ld-linux", 8);
	}
	proc_maps__free(maps, n);
	if (!n)
		return -ESRCH;
	*settled |= !dynamic;
	if (known || !dynamic)
		return 0;
	/* Preloaded: in its LD_PRELOAD (mapped without it, the library was injected by a galatop
	 * before and does not interpose). */
	snprintf(env, sizeof(env), "/proc/%d/environ", pid);
	if (file_read(env, 1 << 20, 0, &buf, &size))
		return 0;
	for (v = buf; v < buf + size && !preloaded; v += strlen(v) + 1) {
		if (strncmp(v, "LD_PRELOAD=", 11))
			continue;
		for (tok = strtok_r(v + 11, " :", &save); tok && !preloaded;
		     tok = strtok_r(NULL, " :", &save)) {
			const char *base = strrchr(tok, '/');

			if (tok[0] == '/' && !strncmp(base + 1, lib, sizeof(lib) - 1)) {
				if (!found)
					snprintf(path, len, "/proc/%d/root%s", pid, tok);
				preloaded = true;
			}
		}
		break;
	}
	free(buf);
	if (!preloaded)
		path[0] = '\0';
	return preloaded;
}

/* Probes what ls's process (or, for the set of every process, pids[0..n), NULL: all) maps.
 * A process running the in-process sampler gets the markers' probes only, unless another
 * allocator takes its calls (the sampler then passes them on: bpf/preload/leak.c). */
static int scan_set(struct leak_probes *l, struct leak_set_of *ls, const int *pids, size_t n,
		    bool again)
{
	int added = 0, r;
	size_t other = 0;

	if (ls->pid > 0) {
		bool settled, mapped;

		pids = &ls->pid;
		n = 1;
		r = preload_of(ls->pid, ls->preload, sizeof(ls->preload),
			       ls->preload[0] || ls->path != LEAK_PATH_UNKNOWN || !l->marks, &settled,
			       &mapped);
		if (r < 0)
			return 0; /* gone (or a zombie): its exit takes its set */
		/* Injected, then exec'ed: the new program has no sampler, its allocator the probes. */
		if (ls->path == LEAK_PATH_INJECTED && !mapped) {
			ls->injected = false;
			ls->preload[0] = '\0';
			ls->path = LEAK_PATH_UPROBES;
		}
		/* Until its libraries are mapped another allocator may still come: looked at
		 * again at each scan till then. */
		again |= !ls->settled;
		ls->settled = settled;
		if (again || !ls->exe[0])
			note_exe(ls); /* an exec changes it */
	}
	if (ls->preload[0] && ls->path != LEAK_PATH_UPROBES) {
		for (int k = KIT_JEMALLOC; k <= KIT_EXE && !ls->injected; k++) {
			r = ls->lib[k] ? uprobe_lib__scan(ls->lib[k], pids, n, again) : 0;
			added += r > 0 ? r : 0;
			other += ls->lib[k] ? uprobe_lib__attached(ls->lib[k]) : 0;
		}
		if (!other) {
			/* Found in its maps, else (not mapped yet) by the path it will map. */
			ls->path = ls->injected ? LEAK_PATH_INJECTED : LEAK_PATH_PRELOAD;
			r = uprobe_lib__scan(l->marks, pids, n, again);
			added += r > 0 ? r : 0;
			r = uprobe_lib__scan_path(l->marks, ls->preload);
			added += r > 0 ? r : 0;
			report(l, ls);
			return added;
		}
		/* Another allocator takes the calls: the sampler passes them on, it gets uprobes. */
	}
	if (ls->pid > 0)
		ls->path = LEAK_PATH_UPROBES;
	for (int k = 0; k < NKITS; k++) {
		r = ls->lib[k] ? uprobe_lib__scan(ls->lib[k], pids, n, again) : 0;
		added += r > 0 ? r : 0;
	}
	report(l, ls);
	return added;
}

int leak_probes__preload(struct leak_probes *l, int pid, const char *path)
{
	struct leak_set_of *ls = l->per_pid && pid > 0 ? set_of(l, pid) : NULL;

	if (!ls || !l->marks)
		return -EINVAL;
	snprintf(ls->preload, sizeof(ls->preload), "%s", path);
	return 0;
}

int leak_probes__inject(struct leak_probes *l, int pid, const char *path, bool inject)
{
	struct leak_set_of *ls = l->per_pid && pid > 0 ? set_of(l, pid) : NULL;

	if (!ls || !l->marks)
		return -EINVAL;
	snprintf(ls->preload, sizeof(ls->preload), "%s", inject ? path : "");
	ls->injected = inject;
	/* Not injected: its allocator, even with the library mapped (it then passes every call
	 * on). */
	ls->path = inject ? LEAK_PATH_UNKNOWN : LEAK_PATH_UPROBES;
	return 0;
}

enum leak_path leak_probes__path(const struct leak_probes *l, int pid)
{
	for (size_t i = 0; i < l->nsets; i++)
		if (l->sets[i]->pid == pid && l->sets[i]->path != LEAK_PATH_UNKNOWN)
			return l->sets[i]->path;
	for (size_t i = l->ngone; i > 0 && i + MAX_SETS > l->ngone; i--)
		if (l->gone[(i - 1) % MAX_SETS].pid == pid)
			return l->gone[(i - 1) % MAX_SETS].path;
	return l->per_pid ? LEAK_PATH_UNKNOWN : LEAK_PATH_UPROBES;
}

int leak_probes__scan(struct leak_probes *l, const int *pids, size_t n, bool again)
{
	struct leak_set_of *ls;
	int added = 0;

	if (!l->per_pid) {
		ls = set_of(l, -1);
		return ls ? scan_set(l, ls, pids, n, again) : 0;
	}
	for (size_t i = 0; pids && i < n; i++) {
		ls = set_of(l, pids[i]);
		added += ls ? scan_set(l, ls, NULL, 0, again) : 0;
	}
	/* Processes whose libraries were not all mapped at their last look. */
	for (size_t i = 0; i < l->nsets; i++)
		if (l->sets[i]->pid > 0 && !l->sets[i]->settled)
			added += scan_set(l, l->sets[i], NULL, 0, true);
	return added;
}

void leak_probes__forget(struct leak_probes *l, int pid)
{
	for (size_t i = 0; l->per_pid && i < l->nsets; i++)
		if (l->sets[i]->pid == pid) {
			l->gone[l->ngone % MAX_SETS].pid = pid;
			l->gone[l->ngone++ % MAX_SETS].path = l->sets[i]->path;
			set_free(l->sets[i]);
			l->sets[i] = l->sets[--l->nsets];
			return;
		}
}

size_t leak_probes__marker_files(const struct leak_probes *l)
{
	return l->marks ? uprobe_lib__attached(l->marks) : 0;
}

size_t leak_probes__files(const struct leak_probes *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nsets; i++)
		for (int k = 0; k < NKITS; k++)
			n += l->sets[i]->lib[k] ? uprobe_lib__attached(l->sets[i]->lib[k]) : 0;
	return n;
}

/* The file with dev and ino among the sets' kits that apply to pid, or NULL; *kit says
 * which kit found it. */
static const struct uprobe_lib_file *file_of(const struct leak_probes *l, int pid, uint64_t dev,
					     uint64_t ino, int *kit)
{
	for (size_t i = 0; i < l->nsets; i++) {
		const struct leak_set_of *ls = l->sets[i];

		if (ls->pid > 0 && ls->pid != pid)
			continue;
		if (ls->path == LEAK_PATH_PRELOAD || ls->path == LEAK_PATH_INJECTED)
			for (size_t j = 0; l->marks && j < uprobe_lib__nfiles(l->marks); j++) {
				const struct uprobe_lib_file *f = uprobe_lib__file(l->marks, j);

				if (f->dev == dev && f->ino == ino) {
					*kit = NKITS;
					return f;
				}
			}
		for (int k = 0; k < NKITS; k++)
			for (size_t j = 0; ls->lib[k] && j < uprobe_lib__nfiles(ls->lib[k]); j++) {
				const struct uprobe_lib_file *f = uprobe_lib__file(ls->lib[k], j);

				if (f->dev == dev && f->ino == ino) {
					*kit = k;
					return f;
				}
			}
	}
	return NULL;
}

int leak_probes__unhooked(const struct leak_probes *l, int pid, char *why, size_t len)
{
	const struct uprobe_lib_file *failed = NULL;
	struct proc_map *maps;
	size_t n;
	bool hooked = false;
	int r = proc_maps__read(pid, &maps, &n), kit;

	if (r)
		return r;
	if (!n) {
		proc_maps__free(maps, n);
		return -ESRCH; /* a zombie: its memory is gone */
	}
	for (size_t i = 0; i < n && !hooked; i++) {
		const struct uprobe_lib_file *f = file_of(l, pid, maps[i].dev, maps[i].inode, &kit);

		if (f && f->attached)
			hooked = true;
		else if (f && kit != KIT_EXE)
			failed = f;
	}
	proc_maps__free(maps, n);
	if (hooked)
		return 0;
	if (failed)
		snprintf(why, len, "its allocator %s could not be probed: %s", failed->path,
			 strerror(-failed->err));
	else
		snprintf(why, len, "it maps no allocator galatop knows (glibc, jemalloc, tcmalloc), "
			 "and its executable has no malloc symbol (static and stripped?)");
	return 1;
}

const char *leak_probes__warnings(const struct leak_probes *l)
{
	return l->warnings;
}

void leak_probes__free(struct leak_probes *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nsets; i++)
		set_free(l->sets[i]);
	uprobe_lib__free(l->marks);
	free(l->sets);
	free(l);
}

void leak_sampler_constants(uint64_t mean, uint64_t *mean_ln2_q8, uint32_t table[65])
{
	*mean_ln2_q8 = (uint64_t)((double)mean * M_LN2 * 256.0 + 0.5);
	for (int i = 0; i <= 64; i++)
		table[i] = (uint32_t)(log2(1.0 + i / 64.0) * 65536.0 + 0.5);
}
