/* Uprobes on every copy of a library mapped on the box: the files processes map (found in
 * /proc/PID/maps, reached through /proc/PID/map_files, so containers' and chroots' files and
 * files deleted since are probed too) that a path test picks get the caller's programs on the
 * caller's symbols, once per file (device and inode), however many processes map it. Libraries mapped later are found when the caller rescans (on exec events,
 * or every few seconds). Used by the OpenSSL probes of the L7 capture; made for any library
 * (malloc in libc, jemalloc, tcmalloc) or executable (Go's crypto/tls). Nothing is pinned:
 * the probes go when uprobe_lib__free runs or galatop exits. */
#ifndef GALATOP_BPF_UPROBE_LIB_H
#define GALATOP_BPF_UPROBE_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_program;

/* One probe put on every matching file: prog at the entry of func (or at its returns). */
struct uprobe_lib_probe {
	const char *func; /* symbol name; libbpf finds it in the file's symbol tables */
	struct bpf_program *prog;
	bool ret; /* a uretprobe */
	uint64_t cookie; /* what bpf_get_attach_cookie gives the program there */
};

/* One probe of one file, as a sites callback finds it from the file's contents: prog at file
 * offset offset (an entry, or any instruction), with a BPF cookie the program reads with
 * bpf_get_attach_cookie (per-file constants: structure offsets, ...). */
struct uprobe_lib_site {
	struct bpf_program *prog;
	uint64_t offset;
	uint64_t cookie;
};

#define UPROBE_LIB_MAX_SITES 64

struct uprobe_lib_opts {
	/* Which mapped files: those whose base name starts with prefix ("libssl.so.3"), or, when
	 * prefix is NULL, those match(ctx, path) accepts; path is as /proc/PID/maps shows it to
	 * galatop (inside a container's root for a container's file). */
	const char *prefix;
	bool (*match)(void *ctx, const char *path);
	void *ctx;
	const struct uprobe_lib_probe *probes;
	size_t nprobes;
	/* Instead of probes by symbol name: the probes of the file galatop opens at full, read
	 * from its contents into out[0..UPROBE_LIB_MAX_SITES). Returns how many; 0 when the
	 * file is not one to probe (it is then not looked at again and not listed), or -errno
	 * (listed with the error). */
	int (*sites)(void *ctx, const char *full, struct uprobe_lib_site *out);
	size_t max_files; /* distinct files probed at most; 0 = 256 */
	int pid; /* > 0: the probes fire in this process only (the kernel puts its breakpoints
		  * in no other process); 0: in every process that maps the file */
	/* Where in each function the probes go: offsets(ctx, file, probes, n, off) fills off[i]
	 * (bytes past the function's start; 0 when left alone) for the file galatop opens at
	 * file; NULL: every probe at its function's start. */
	void (*offsets)(void *ctx, const char *file, const struct uprobe_lib_probe *probes,
			size_t n, uint64_t *off);
	/* The probes are the entries of one uprobe.session program (loaded with expected attach
	 * type UPROBE_SESSION_ATTACH_TYPE: its return part runs at a function's return only when
	 * its entry returned 0): each file gets one uprobe_multi link with all of them, made by
	 * bpf(2) itself (libbpf 1.1 has no call for it). Probes with ret set are left out. */
	bool session;
};

/* BPF_TRACE_UPROBE_SESSION (Linux 6.10), missing from the headers of libbpf 1.1. */
#define UPROBE_SESSION_ATTACH_TYPE 57

/* Whether this kernel loads and attaches uprobe.session programs: a two-instruction program
 * with that attach type is loaded (and dropped) once. */
bool uprobe_lib_session_supported(void);

/* One distinct file found, with what attaching to it gave. */
struct uprobe_lib_file {
	uint64_t dev, ino;
	int pid;	    /* the process it was found in */
	char path[256];	    /* as that process's maps show it (cut to fit) */
	unsigned attached;  /* probes attached */
	unsigned failed;    /* probes that could not be (the symbol is missing, ...) */
	int err;	    /* 0 when some probe is attached, else the last -errno */
};

struct uprobe_lib;

/* A helper that attaches o's probes (the array is copied, the programs and names are
 * borrowed: they must outlive the helper). NULL on ENOMEM. */
struct uprobe_lib *uprobe_lib__new(const struct uprobe_lib_opts *o);

/* Looks at the maps of pid and probes each matching file not probed yet. The number of files
 * newly probed, or -errno when pid's maps cannot be read (-ESRCH: the process is gone). */
int uprobe_lib__scan_pid(struct uprobe_lib *u, int pid);

/* Probes the file at path (a program about to be started, whose maps do not show it yet)
 * when it is one to probe and not probed yet. 1 when newly probed, 0, or -errno (-ENOENT:
 * no such file). */
int uprobe_lib__scan_path(struct uprobe_lib *u, const char *path);

/* uprobe_lib__scan_pid over pids[0..n), or every process in /proc when pids is NULL; with
 * again false, only processes this helper has not looked at before (new processes), with
 * again true every one of them (libraries loaded with dlopen since). The number of files
 * newly probed; processes that are gone are skipped. */
int uprobe_lib__scan(struct uprobe_lib *u, const int *pids, size_t n, bool again);

/* Files found so far (attached or not), in the order found; i < uprobe_lib__nfiles. */
size_t uprobe_lib__nfiles(const struct uprobe_lib *u);
const struct uprobe_lib_file *uprobe_lib__file(const struct uprobe_lib *u, size_t i);
/* Files with at least one probe attached. */
size_t uprobe_lib__attached(const struct uprobe_lib *u);
/* Whether matching files were left out because max_files were probed already. */
bool uprobe_lib__full(const struct uprobe_lib *u);

/* Detaches every probe and frees the helper; NULL is a no-op. */
void uprobe_lib__free(struct uprobe_lib *u);

#endif
