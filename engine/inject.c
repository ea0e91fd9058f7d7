/* Calls into a running process through ptrace: see inject.h. */
#include "inject.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/file.h"
#include "util/grow.h"

#define RED_ZONE 128
#define RETURN_TO 0x10ull	  /* where a call returns: unmapped, the stop tells it ended */
#define STACK_SCAN (32u << 10)	  /* bytes of a thread's stack looked at for avoided frames */
#define XSTATE_MAX (64u << 10)
#define TRIES_PER_THREAD 10

/* System calls a thread may be stopped in when it is called into: none of them is made by the
 * allocators or the dynamic linker while holding a lock (those make futex, mmap, munmap,
 * mremap, madvise, brk, mprotect, openat, read of a library file: the stack check covers the
 * dynamic linker's). */
static const long safe_calls[] = {
	SYS_read,	    SYS_write,	      SYS_readv,	 SYS_writev,	 SYS_pread64,
	SYS_pwrite64,	    SYS_poll,	      SYS_ppoll,	 SYS_select,	 SYS_pselect6,
	SYS_epoll_wait,	    SYS_epoll_pwait,  SYS_epoll_pwait2,	 SYS_accept,	 SYS_accept4,
	SYS_connect,	    SYS_recvfrom,     SYS_recvmsg,	 SYS_recvmmsg,	 SYS_sendto,
	SYS_sendmsg,	    SYS_sendmmsg,     SYS_nanosleep,	 SYS_clock_nanosleep, SYS_pause,
	SYS_rt_sigsuspend,  SYS_rt_sigtimedwait, SYS_wait4,	 SYS_waitid,	 SYS_io_getevents,
	SYS_msgrcv,
};

static bool safe_call(long nr)
{
	for (size_t i = 0; i < sizeof(safe_calls) / sizeof(safe_calls[0]); i++)
		if (safe_calls[i] == nr)
			return true;
	return false;
}

static int mem_open(int pid, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	return open(path, flags | O_CLOEXEC);
}

static int mem_io(int pid, uint64_t addr, void *buf, size_t len, bool write)
{
	int fd = mem_open(pid, write ? O_RDWR : O_RDONLY), err = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

int inject_mem_read(int pid, uint64_t addr, void *buf, size_t len)
{
	return mem_io(pid, addr, buf, len, false);
}

int inject_mem_write(int pid, uint64_t addr, const void *buf, size_t len)
{
	return mem_io(pid, addr, (void *)buf, len, true);
}

/* Waits for tid's next stop (or end): the status, or -errno. */
static int wait_stop(int tid)
{
	int status;

	for (;;) {
		if (waitpid(tid, &status, __WALL) == tid)
			return status & 0x7fffffff;
		if (errno != EINTR)
			return -errno;
	}
}

/* The thread's tracer, for the reason a seize failed (0: none or unknown). */
static int tracer_of(int pid, int tid)
{
	char path[64], *buf = NULL, *p;
	size_t size = 0;
	int tracer = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (file_read(path, 1 << 16, 0, &buf, &size))
		return 0;
	p = strstr(buf, "TracerPid:");
	if (p)
		tracer = atoi(p + 10);
	free(buf);
	return tracer;
}

/* Whether a word of the stack above sp points into one of avoid's ranges. */
static bool stack_avoided(int pid, uint64_t sp, const uint64_t *avoid, size_t navoid)
{
	static uint64_t words[STACK_SCAN / 8];
	int fd = mem_open(pid, O_RDONLY);
	ssize_t n = 0, r;

	if (fd < 0)
		return true;
	/* Short at the stack's end: what was read is what there is. */
	while ((size_t)n < sizeof(words) &&
	       (r = pread(fd, (char *)words + n, sizeof(words) - (size_t)n, (off_t)(sp + (uint64_t)n))) > 0)
		n += r;
	close(fd);
	for (size_t i = 0; i < (size_t)n / 8; i++)
		for (size_t k = 0; k + 1 < navoid * 2; k += 2)
			if (words[i] >= avoid[k] && words[i] < avoid[k + 1])
				return true;
	return false;
}

/* The threads of pid, the main one first, into *tids (malloc'ed). Their number, or -errno. */
static int list_threads(int pid, int **tids)
{
	char path[64];
	struct dirent *de;
	size_t n = 0, cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	*tids = NULL;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name);

		if (tid <= 0)
			continue;
		if (ARRAY_GROW(*tids, cap, n + 1)) {
			closedir(d);
			free(*tids);
			return -ENOMEM;
		}
		(*tids)[n++] = tid;
		if (tid == pid) {
			(*tids)[n - 1] = (*tids)[0];
			(*tids)[0] = tid;
		}
	}
	closedir(d);
	return (int)n;
}

/* Stops tid (PTRACE_INTERRUPT) and waits for the stop, however long it takes (a thread in
 * an uninterruptible sleep stops when it leaves it: one given up on would stop later, with
 * nobody to let it go); its signal (0: the interrupt's own stop) into *sig. */
static int interrupt(int tid, int *sig)
{
	int st;

	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
		return -errno;
	st = wait_stop(tid);
	if (st < 0)
		return st;
	if (!WIFSTOPPED(st))
		return -ESRCH;
	*sig = (st >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(st);
	return 0;
}

/* Seizes tid and stops it. */
static int seize_stop(int tid, int *sig)
{
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL))
		return -errno;
	return interrupt(tid, sig);
}

/* Resumes a stopped tid with sig (0: none) and stops it again a little later. */
static int restop(int tid, int *sig)
{
	if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)*sig))
		return -errno;
	usleep(300 + (unsigned)(clock_mono_ns() % 1700));
	return interrupt(tid, sig);
}

/* Whether stopped tid is at a safe point; its registers into *regs. */
static bool at_safe_point(int pid, int tid, struct user_regs_struct *regs, const uint64_t *avoid,
			  size_t navoid)
{
	if (ptrace(PTRACE_GETREGS, tid, NULL, regs))
		return false;
	return (long)regs->orig_rax >= 0 && safe_call((long)regs->orig_rax) &&
	       !stack_avoided(pid, regs->rsp, avoid, navoid);
}

int inject_thread__seize(struct inject_thread *t, int pid, const uint64_t *avoid, size_t navoid,
			 int timeout_ms, char *why, size_t len)
{
	uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000;
	int *tids = NULL, n = list_threads(pid, &tids), err = -EAGAIN;

	memset(t, 0, sizeof(*t));
	t->memfd = -1;
	if (n <= 0) {
		snprintf(why, len, "cannot list its threads: %s", strerror(n ? -n : ESRCH));
		return n ? n : -ESRCH;
	}
	/* Each thread a few times in turn (the main one first) until the time is up. */
	for (int i = 0; clock_mono_ns() < deadline; i = (i + 1) % n) {
		int sig = 0, tid = tids[i], r = seize_stop(tid, &sig);

		if (r == -EPERM || r == -EBUSY) {
			int tracer = tracer_of(pid, tid);

			if (tracer)
				snprintf(why, len, "it is traced by pid %d already", tracer);
			else
				snprintf(why, len, "cannot ptrace it: %s", strerror(-r));
			free(tids);
			return -EPERM;
		}
		for (int k = 0; !r && k < TRIES_PER_THREAD && clock_mono_ns() < deadline; k++) {
			if (!sig && at_safe_point(pid, tid, &t->saved, avoid, navoid)) {
				struct iovec iov;

				t->pid = pid;
				t->tid = tid;
				t->top = t->saved.rsp - RED_ZONE;
				t->xstate = malloc(XSTATE_MAX);
				iov = (struct iovec){ t->xstate, XSTATE_MAX };
				if (!t->xstate || ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov)) {
					err = t->xstate ? -errno : -ENOMEM;
					snprintf(why, len, "cannot read its registers: %s", strerror(-err));
					free(t->xstate);
					t->xstate = NULL;
					ptrace(PTRACE_DETACH, tid, NULL, NULL);
					free(tids);
					return err;
				}
				t->xlen = iov.iov_len;
				free(tids);
				return 0;
			}
			if (sig && t->nsigs < INJECT_MAX_SIGS)
				t->sigs[t->nsigs++] = sig; /* passed on when it is let go */
			sig = 0;
			r = restop(tid, &sig);
		}
		if (r == -ESRCH || r == -ECHILD) {
			/* The thread ended: the others. */
			free(tids);
			tids = NULL;
			n = list_threads(pid, &tids);
			if (n <= 0) {
				snprintf(why, len, "it exited");
				return -ESRCH;
			}
			i = -1 + n; /* the main thread next */
			continue;
		}
		ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
		for (size_t s = 0; s < t->nsigs; s++)
			syscall(SYS_tgkill, pid, tid, t->sigs[s]);
		t->nsigs = 0;
	}
	free(tids);
	snprintf(why, len, "no thread stopped in a system call where it is safe to call into it "
		 "within %d ms", timeout_ms);
	return err;
}

int inject_thread__push(struct inject_thread *t, const void *data, size_t len, uint64_t *addr)
{
	uint64_t at = (t->top - len) & ~15ull;
	int err = inject_mem_write(t->pid, at, data, len);

	if (err)
		return err;
	t->top = at;
	*addr = at;
	return 0;
}

int inject_thread__call(struct inject_thread *t, uint64_t fn, const uint64_t *args, size_t n,
			uint64_t *ret)
{
	struct user_regs_struct r = t->saved;
	uint64_t back = RETURN_TO, sp = ((t->top - 64) & ~15ull) - 8;
	unsigned long long *argr[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };
	int err, st;

	if (n > 6)
		return -EINVAL;
	/* At a function's entry rsp + 8 is 16-byte aligned, the return address at rsp. */
	err = inject_mem_write(t->pid, sp, &back, sizeof(back));
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		*argr[i] = args[i];
	r.rip = fn;
	r.rsp = sp;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1; /* no system call to restart on the way out */
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r) || ptrace(PTRACE_CONT, t->tid, NULL, NULL))
		return -errno;
	for (;;) {
		int sig;

		st = wait_stop(t->tid);
		if (st < 0)
			return st == -ECHILD ? -ESRCH : st;
		if (!WIFSTOPPED(st))
			return -ESRCH;
		sig = (st >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(st);
		if (sig == SIGSEGV) {
			if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r))
				return -errno;
			if (r.rip != RETURN_TO)
				return -EFAULT;
			*ret = r.rax;
			return 0;
		}
		/* Another signal: kept for the thread's own code, after the call. */
		if (sig && t->nsigs < INJECT_MAX_SIGS)
			t->sigs[t->nsigs++] = sig;
		if (ptrace(PTRACE_CONT, t->tid, NULL, NULL))
			return -errno;
	}
}

void inject_thread__release(struct inject_thread *t)
{
	struct iovec iov;

	if (!t || !t->tid)
		return;
	iov = (struct iovec){ t->xstate, t->xlen };
	if (t->xstate)
		ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov);
	ptrace(PTRACE_SETREGS, t->tid, NULL, &t->saved);
	ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
	for (size_t s = 0; s < t->nsigs; s++)
		syscall(SYS_tgkill, t->pid, t->tid, t->sigs[s]);
	free(t->xstate);
	t->xstate = NULL;
	t->tid = 0;
}

static bool frozen_has(const struct inject_frozen *f, int tid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->tids[i] == tid)
			return true;
	return false;
}

int inject_freeze(struct inject_frozen *f, int pid, char *why, size_t len)
{
	size_t sigs_cap = 0;
	bool more = true;

	memset(f, 0, sizeof(*f));
	f->pid = pid;
	/* Until a look at the task list finds no thread that is not stopped yet. */
	while (more) {
		int *tids = NULL, n = list_threads(pid, &tids);

		more = false;
		if (n <= 0) {
			snprintf(why, len, "cannot list its threads: %s", strerror(n ? -n : ESRCH));
			inject_thaw(f);
			return n ? n : -ESRCH;
		}
		for (int i = 0; i < n; i++) {
			int sig = 0, r;

			if (frozen_has(f, tids[i]))
				continue;
			if (ARRAY_GROW(f->tids, f->cap, f->n + 1) || ARRAY_GROW(f->sigs, sigs_cap, f->n + 1)) {
				free(tids);
				inject_thaw(f);
				snprintf(why, len, "out of memory");
				return -ENOMEM;
			}
			r = seize_stop(tids[i], &sig);
			if (r == -ESRCH)
				continue; /* ended meanwhile */
			if (r) {
				if (r != -EPERM)
					ptrace(PTRACE_DETACH, tids[i], NULL, NULL);
				snprintf(why, len, "cannot stop thread %d: %s", tids[i], strerror(-r));
				free(tids);
				inject_thaw(f);
				return r;
			}
			f->tids[f->n] = tids[i];
			f->sigs[f->n++] = sig;
			more = true;
		}
		free(tids);
	}
	return 0;
}

void inject_thaw(struct inject_frozen *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		ptrace(PTRACE_DETACH, f->tids[i], NULL, (void *)(long)f->sigs[i]);
	free(f->tids);
	free(f->sigs);
	f->tids = NULL;
	f->sigs = NULL;
	f->n = f->cap = 0;
}
