/* What a uprobe costs by itself on this machine, apart from any work of galatop's programs
 * (tests/bench/leak.sh): ns per malloc+free pair of this process with empty BPF programs
 * (two instructions: return a constant) on its libc's malloc and free, attached as the leak
 * probe attaches its own: an entry uprobe on each, a uretprobe on malloc beside them, a
 * uprobe.session program whose entry says "skip the return" (what unsampled calls cost with
 * galatop's session probe), and one that lets the return run. Root; raw bpf(2) and
 * perf_event_open(2), no libbpf, so that nothing but the traps is measured.
 *
 *   uprobe_cost SIZE SECONDS
 *
 * prints one line per way: "WAY ns_per_pair X" (WAY: none, entry, entry+uretprobe,
 * session_skip, session_ret); a way the kernel refuses says "WAY unsupported: REASON". Then
 * what the in-process sampler's markers cost (bpf/preload/leak.c): "marker_nop5 ns_per_call X
 * optimized yes|no" for an entry uprobe with an empty program on a function that starts with
 * a 5-byte nop (which Linux 6.18 turns into a call after its first hit, no trap: "yes" when
 * it did), "marker_push ns_per_call X optimized no" for one that starts with a push (a trap,
 * emulated). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pairs.h"

#define SESSION_ATTACH_TYPE 57 /* BPF_TRACE_UPROBE_SESSION, Linux 6.10 */
#define MAX_FDS 8

/* A program returning ret, of type kprobe, with expected attach type eat. fd or -errno. */
static int prog_load(int ret, unsigned eat)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = ret },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.expected_attach_type = eat;
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* A perf uprobe (uretprobe with ret) at off of path in this process, running prog. */
static int perf_uprobe(const char *path, uint64_t off, int ret, int prog)
{
	struct perf_event_attr at;
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int type = -1, fd;

	if (!f || fscanf(f, "%d", &type) != 1)
		type = -1;
	if (f)
		fclose(f);
	if (type < 0)
		return -ENOENT;
	memset(&at, 0, sizeof(at));
	at.size = sizeof(at);
	at.type = (unsigned)type;
	at.config = ret ? 1 : 0; /* format/retprobe: config:0 */
	at.config1 = (uint64_t)(uintptr_t)path;
	at.config2 = off;
	fd = (int)syscall(__NR_perf_event_open, &at, getpid(), -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* The uprobe_multi part of union bpf_attr's link_create (Linux 6.6). */
struct link_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, mflags, pid;
	uint32_t pad[9];
};

static int session_link(int prog, const char *path, const uint64_t *offs, unsigned n)
{
	struct link_multi a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog;
	a.attach_type = SESSION_ATTACH_TYPE;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offs;
	a.cnt = n;
	a.pid = (uint32_t)getpid();
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* The file offset of fn in the file mapped at it: its address less its mapping's start plus
 * that mapping's offset; the probe goes past an endbr64 or a first test %rdi,%rdi as the
 * leak probe places its own (both would be single-stepped). */
static uint64_t file_offset(void *fn, char *path, size_t len)
{
	uint64_t a = (uint64_t)(uintptr_t)fn, lo, hi, off, r = 0;
	const unsigned char *c = fn;
	char line[512], perm[8];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		int n = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perm, &off, &n) < 4 ||
		    a < lo || a >= hi)
			continue;
		r = a - lo + off;
		snprintf(path, len, "%s", line + n);
		path[strcspn(path, "\n")] = '\0';
		break;
	}
	if (f)
		fclose(f);
	if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		r += 4;
	else if (c[0] == 0x48 && c[1] == 0x85 && c[2] == 0xff)
		r += 3;
	return r;
}

/* Two empty functions to probe: one starting with the 5-byte nop of the sampler's markers,
 * one with an instruction the kernel emulates after its trap. */
__attribute__((naked, noinline)) void marker_nop5(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret\n\t");
}

__attribute__((naked, noinline)) void marker_push(void)
{
	__asm__ volatile("push %rbp\n\tpop %rbp\n\tret\n\t");
}

/* ns per call of fn, called for about secs seconds, with an entry uprobe running an empty
 * program on it; -errno when it cannot be attached. *optimized: the kernel made the probe a
 * call (optimized uprobes) rather than a breakpoint. */
static double marker_cost(void (*fn)(void), double secs, bool *optimized)
{
	char path[256] = "";
	uint64_t off = file_offset((void *)fn, path, sizeof(path));
	int prog = prog_load(0, 0), fd = prog < 0 ? prog : perf_uprobe(path, off, 0, prog);
	double t0 = pairs_now(), t1 = t0;
	unsigned long calls = 0;

	if (fd < 0) {
		if (prog >= 0)
			close(prog);
		return fd;
	}
	while (t1 - t0 < secs) {
		for (int i = 0; i < 1000; i++)
			fn();
		calls += 1000;
		t1 = pairs_now();
	}
	/* The kernel's optimization puts a call (0xe8) where the nop was. */
	*optimized = *(const volatile unsigned char *)fn == 0xe8;
	close(fd);
	close(prog);
	return (t1 - t0) * 1e9 / (double)calls;
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? (size_t)atol(argv[1]) : 64;
	double secs = argc > 2 ? atof(argv[2]) : 2;
	static const char *const ways[] = { "none", "entry", "entry+uretprobe", "session_skip",
					    "session_ret" };
	char path[256] = "", path2[256] = "";
	uint64_t offs[2];

	setvbuf(stdout, NULL, _IOLBF, 0);
	offs[0] = file_offset(dlsym(RTLD_DEFAULT, "malloc"), path, sizeof(path));
	offs[1] = file_offset(dlsym(RTLD_DEFAULT, "free"), path2, sizeof(path2));
	if (!path[0] || strcmp(path, path2)) {
		fprintf(stderr, "uprobe_cost: malloc and free are not in one mapped file\n");
		return 1;
	}
	for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
		int fds[MAX_FDS], nfd = 0, prog = -1, err = 0;

		if (w == 1 || w == 2) {
			prog = prog_load(0, 0);
			for (int k = 0; prog >= 0 && k < 2 && !err; k++)
				err = (fds[nfd++] = perf_uprobe(path, offs[k], 0, prog)) < 0
					      ? fds[--nfd]
					      : 0;
			if (w == 2 && prog >= 0 && !err)
				err = (fds[nfd++] = perf_uprobe(path, offs[0], 1, prog)) < 0
					      ? fds[--nfd]
					      : 0;
		} else if (w >= 3) {
			prog = prog_load(w == 3 ? 1 : 0, SESSION_ATTACH_TYPE);
			if (prog >= 0)
				err = (fds[nfd++] = session_link(prog, path, offs, 2)) < 0 ? fds[--nfd]
											 : 0;
		}
		if (prog < 0 && w)
			err = prog;
		if (err)
			printf("%s unsupported: %s\n", ways[w], strerror(-err));
		else
			printf("%s ns_per_pair %.1f\n", ways[w], pairs_run(size, secs, NULL));
		while (nfd > 0)
			close(fds[--nfd]);
		if (prog >= 0)
			close(prog);
	}
	for (int k = 0; k < 2; k++) {
		bool opt = false;
		double ns = marker_cost(k ? marker_push : marker_nop5, secs, &opt);

		if (ns < 0)
			printf("%s unsupported: %s\n", k ? "marker_push" : "marker_nop5",
			       strerror((int)-ns));
		else
			printf("%s ns_per_call %.1f optimized %s\n", k ? "marker_push" : "marker_nop5",
			       ns, opt ? "yes" : "no");
	}
	return 0;
}
