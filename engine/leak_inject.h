/* leak: the in-process sampler injected into a running process (docs/leak.md): loaded with
 * dlopen and attached by a call through ptrace (engine/inject.h) at a safe point, which
 * points the allocator entries of the process's GOTs at its hooks (bpf/preload/leak_hooks.c);
 * detached by writing the old GOT values back with every thread stopped. Used by
 * engine/session.c. */
#ifndef GALATOP_ENGINE_LEAK_INJECT_H
#define GALATOP_ENGINE_LEAK_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One process with the sampler attached by this galatop. */
struct leak_inject {
	int pid;
	uint64_t state;		  /* the library's struct leak_inject_state in the process */
	uint32_t entries, modules; /* GOT entries pointed at hooks, in how many modules */
	uint32_t left;		  /* entries left alone: bound to another definition, or past
				   * the library's table */
	bool loaded;		  /* the library was mapped before (a galatop before this one) */
	double held_ms;		  /* how long the thread called into was held */
};

/* Loads lib (galatop's libgalatop-leak.so, an absolute path that must be the same file in the
 * process's mount namespace) into pid if not there yet and attaches it with mean bytes
 * between samples, waiting up to timeout_ms for a safe point. 0, or -errno with the reason
 * in why[len]; nothing is changed in the process then, except the library that may be
 * mapped (it stays, doing nothing). */
int leak_inject__attach(struct leak_inject *li, int pid, const char *lib, uint64_t mean,
			int timeout_ms, char *why, size_t len);
/* Takes the hooks out: the GOT entries that still point at them get their old values back,
 * every thread stopped meanwhile. 0, or -errno with the reason in why[len] (the hooks stay:
 * the process runs on, sampling for nobody, a few nanoseconds a call). */
int leak_inject__detach(struct leak_inject *li, char *why, size_t len);

/* A session's running processes with the sampler injected, or why not. */
struct leak_injected {
	struct leak_inject li;
	int pid;
	bool attached; /* li holds the hooks now */
	char why[256];	/* why not attached ("" before the attach was tried) */
};

struct leak_injects {
	struct leak_injected *t;
	int *pids; /* the processes, as a list for struct probe_opts */
	size_t n;
	char lib[4096]; /* galatop's libgalatop-leak.so */
};

struct probes;

/* The set for pids[0..n) (the caller decides which processes get it), with galatop's library
 * found; 0, or -errno with why[len] (the library not found: the set stays empty). */
int leak_injects__init(struct leak_injects *set, const int *pids, size_t n, char *why, size_t len);
/* Injects the sampler (mean bytes between samples) into the set's processes not attached yet,
 * waiting for safe points 3 s in all (at least 0.3 s each); those where it fails get their
 * allocator probed in p instead (probes__leak_uninject). */
void leak_injects__attach(struct leak_injects *set, struct probes *p, uint64_t mean);
/* Takes the hooks out of every attached process (a process gone is skipped); the problems as
 * "pid N: reason" lines into warn[len] ("" when none). */
void leak_injects__detach(struct leak_injects *set, char *warn, size_t len);
/* The entry of pid, or NULL. */
const struct leak_injected *leak_injects__find(const struct leak_injects *set, int pid);
/* Frees the set (after leak_injects__detach); NULL-safe. */
void leak_injects__free(struct leak_injects *set);

#endif
