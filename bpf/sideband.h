/* Side band of the probes: process mappings, forks, execs and exits as the kernel reports them
 * to perf (PERF_RECORD_MMAP2, FORK, COMM with exec, EXIT from one dummy software event per
 * CPU), timestamped on the probes' clock (CLOCK_MONOTONIC) and handed out in time order up to
 * a given time, so that each probe record is read against the mappings its process had when
 * it was taken, even if the process is long gone when the record is read (perf's approach). */
#ifndef GALATOP_BPF_SIDEBAND_H
#define GALATOP_BPF_SIDEBAND_H

#include <stdbool.h>
#include <stdint.h>

enum sb_kind {
	SB_MMAP = 1, /* an executable file or anonymous mapping appeared */
	SB_FORK,     /* a new process (not a thread): pid, parent ppid */
	SB_EXEC,     /* pid runs a new program: its old mappings are gone */
	SB_EXIT,     /* a process's leader exited (pid == tid) */
};

struct sb_event {
	enum sb_kind kind;
	uint32_t pid, tid, ppid;
	uint64_t ts_ns;		  /* CLOCK_MONOTONIC, as bpf_ktime_get_ns() */
	uint64_t start, len, pgoff; /* SB_MMAP */
	uint64_t dev, inode;	  /* SB_MMAP: makedev(maj, min) and inode of the file, 0 if none */
	uint32_t prot;		  /* SB_MMAP: PROT_* */
	const char *path;	  /* SB_MMAP: the file as the kernel names it (untrusted bytes,
				   * NUL-terminated), valid during the call */
};

typedef void (*sideband_fn)(void *ctx, const struct sb_event *ev);

struct sideband;

/* Opens the side band on the CPUs c with cpus[c] set, c < ncpus (a ring of ring_kb KiB each;
 * 0 = 2048). NULL with errno set when no CPU's event could be opened. */
struct sideband *sideband__open(sideband_fn fn, void *ctx, unsigned ring_kb, const uint8_t *cpus,
				 int ncpus);
/* Hands out, in time order, every side-band event that happened up to ts_ns (reading the
 * rings first when they were last read before ts_ns). */
void sideband__until(struct sideband *sb, uint64_t ts_ns);
/* Reads the rings now and hands out what happened before the last call to sideband__mark. */
void sideband__flush(struct sideband *sb);
/* Notes the current time: every probe record taken before it has been read once the caller's
 * read that follows is done (see sideband__flush). */
void sideband__mark(struct sideband *sb);
/* Events lost because a ring was full (PERF_RECORD_LOST), and events handed out. */
uint64_t sideband__lost(const struct sideband *sb);
uint64_t sideband__events(const struct sideband *sb);
/* Closes the events and frees everything; NULL is a no-op. */
void sideband__free(struct sideband *sb);

#endif
