/* The leak probe's attachments (bpf/leak.bpf.h holds its programs): uprobes on the allocator
 * functions of every allocator a target maps (glibc, jemalloc, tcmalloc, and an executable
 * with an allocator of its own linked in), through bpf/uprobe_lib, one set per file. Used by
 * bpf/probes.c, which owns the programs. */
#ifndef GALATOP_BPF_LEAK_H
#define GALATOP_BPF_LEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LEAK_SAMPLE_DEFAULT (512u << 10) /* mean bytes between samples (--leak-sample) */
/* The in-process sampler (bpf/preload/leak.c) and the variable that gives it the mean. */
#define LEAK_PRELOAD_LIB "libgalatop-leak.so"
#define LEAK_PRELOAD_ENV "GALATOP_LEAK_SAMPLE"

/* How a process's allocations are seen. */
enum leak_path {
	LEAK_PATH_UNKNOWN, /* not looked at yet */
	LEAK_PATH_PRELOAD, /* the in-process sampler, uprobes on its markers only */
	LEAK_PATH_UPROBES, /* uprobes on its allocator */
	LEAK_PATH_INJECTED, /* the in-process sampler loaded into it running, uprobes on its markers */
};

struct bpf_program;
struct leak_probes;

/* The probe kit over the programs entry and ret (borrowed), or over the uprobe.session
 * program session when not NULL (bpf/uprobe_lib.h); mark (NULL: none) goes on the markers
 * of the in-process sampler in processes that run it. per_pid: each process is
 * probed alone (the kernel puts the breakpoints in its memory only, other processes pay
 * nothing), its executable too (an allocator of its own, static or bundled); else the
 * allocator files are probed in every process that maps them. NULL on ENOMEM. */
struct leak_probes *leak_probes__new(struct bpf_program *entry, struct bpf_program *ret,
				     struct bpf_program *session, struct bpf_program *mark,
				     bool per_pid);
/* per_pid: process pid is about to run a program with the in-process sampler preloaded from
 * path (its maps do not show it yet): the sampler's markers are probed in it instead of its
 * allocator, unless its program turns out to bring another allocator. 0 or -EINVAL (not per
 * process, or no marker program). */
int leak_probes__preload(struct leak_probes *l, int pid, const char *path);
/* per_pid: the in-process sampler at path is being injected into running process pid
 * (engine/leak_inject.h), whatever its allocator: its markers are probed (on the file, so
 * before the process maps it) and its allocator is not; with inject false, it was not (or is
 * no more): its allocator gets the uprobes at the next scan. 0 or -EINVAL (not per process,
 * or no marker program). */
int leak_probes__inject(struct leak_probes *l, int pid, const char *path, bool inject);
/* How process pid's allocations are seen (LEAK_PATH_UPROBES for every one when not per
 * process). */
enum leak_path leak_probes__path(const struct leak_probes *l, int pid);
/* Probes the allocators mapped by pids[0..n) (with per_pid, each one's own; else NULL means
 * every process) not probed yet; with again, processes looked at before are read again
 * (dlopen, exec). The number of files newly probed. */
int leak_probes__scan(struct leak_probes *l, const int *pids, size_t n, bool again);
/* per_pid: the probes of process pid go (it exited). */
void leak_probes__forget(struct leak_probes *l, int pid);
/* Allocator files with probes attached. */
size_t leak_probes__files(const struct leak_probes *l);
/* Files of the in-process sampler with its markers probed. */
size_t leak_probes__marker_files(const struct leak_probes *l);
/* Whether process pid maps no allocator file with probes attached: then why[] says what was
 * found (a file whose probes failed, or none known). -ESRCH when the process is gone. */
int leak_probes__unhooked(const struct leak_probes *l, int pid, char *why, size_t len);
/* Newline-separated warnings (files whose probes all failed), "" if none; owned by l. */
const char *leak_probes__warnings(const struct leak_probes *l);
/* Detaches every uprobe and frees l; NULL is a no-op. */
void leak_probes__free(struct leak_probes *l);

/* The sampler's constants for a mean of mean bytes: mean * ln 2 * 256 and the 65-entry table
 * of log2(1 + i/64) * 65536 that bpf/leak.bpf.h draws its gaps with. */
void leak_sampler_constants(uint64_t mean, uint64_t *mean_ln2_q8, uint32_t table[65]);

#endif
