/* Calling functions inside a running process through ptrace (as debuggers and heaptrack's
 * attach do), and stopping all of its threads while its memory is written: used by
 * engine/leak_inject.c. x86-64 only. The caller must be allowed to ptrace the process. */
#ifndef GALATOP_ENGINE_INJECT_H
#define GALATOP_ENGINE_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#define INJECT_MAX_SIGS 8

/* One thread of a process, stopped at a safe point, its registers saved. */
struct inject_thread {
	int pid, tid, memfd;
	struct user_regs_struct saved;
	uint8_t *xstate; /* its FPU/SSE/AVX state (NT_X86_XSTATE), xlen bytes */
	size_t xlen;
	uint64_t top; /* the lowest byte pushed onto its stack so far */
	int sigs[INJECT_MAX_SIGS]; /* signals it got while stopped, delivered at release */
	size_t nsigs;
};

/* Stops a thread of pid at a safe point: stopped inside a system call that no allocator or
 * the dynamic linker makes while holding its locks (epoll_wait, read, write, poll, accept,
 * nanosleep...), with no return address into the dynamic linker or a known allocator
 * (avoid[0..navoid) as [start, end) pairs) on its stack; tries the main thread first, the
 * others next, resuming and stopping again until timeout_ms. 0, or -errno with the reason in
 * why[len] (-EPERM: cannot be traced, e.g. traced already; -EAGAIN: no safe point in time). */
int inject_thread__seize(struct inject_thread *t, int pid, const uint64_t *avoid, size_t navoid,
			 int timeout_ms, char *why, size_t len);
/* Copies len bytes onto t's stack, below its red zone and what was pushed before; their
 * address in the process into *addr. 0 or -errno. */
int inject_thread__push(struct inject_thread *t, const void *data, size_t len, uint64_t *addr);
/* Calls fn(args[0..n)) (n <= 6, integer arguments) in t and waits for its return, which lands
 * on an unmapped address and stops the thread; its rax into *ret. The interrupted system call
 * is left out of the way while the call runs. 0, or -errno (-ESRCH: the process died,
 * -EFAULT: the call crashed). */
int inject_thread__call(struct inject_thread *t, uint64_t fn, const uint64_t *args, size_t n,
			uint64_t *ret);
/* Restores t's registers exactly as they were (the interrupted system call restarts as it
 * would have) and lets it go; signals it got meanwhile are sent again. NULL-safe. */
void inject_thread__release(struct inject_thread *t);

/* Every thread of a process, stopped. */
struct inject_frozen {
	int pid;
	int *tids;
	int *sigs; /* the signal each one stopped with (0: none), delivered at thaw */
	size_t n, cap;
};

/* Stops every thread of pid (threads started meanwhile too), without calling anything in it.
 * 0, or -errno with why[len] (the ones stopped are let go again). */
int inject_freeze(struct inject_frozen *f, int pid, char *why, size_t len);
/* Lets every thread go again; NULL-safe, idempotent. */
void inject_thaw(struct inject_frozen *f);

/* Reads or writes len bytes at addr of pid's memory through /proc/PID/mem (writes go through
 * read-only pages, as a debugger's do). 0 or -errno. */
int inject_mem_read(int pid, uint64_t addr, void *buf, size_t len);
int inject_mem_write(int pid, uint64_t addr, const void *buf, size_t len);

#endif
