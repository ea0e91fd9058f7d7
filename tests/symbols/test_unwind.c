/* DWARF unwinding without root: the stack-copy reader's bounds, the record checks of stack
 * copies, and real unwinds of this process's own stack (copied the way the BPF side does),
 * symbolized by the sym_cache; the per-process cache's cap and exit. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "bpf/probes.h"
#include "symbols/symbols.h"
#include "symbols/unwind.h"

#define COPY_MAX 16384

static char copy[COPY_MAX];
static uint64_t stack_top;

/* End of this process's [stack] mapping, so the copy never reads past it. */
static uint64_t find_stack_top(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;
	uint64_t top = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			top = hi;
	if (f)
		fclose(f);
	return top;
}

/* Takes this thread's registers and stack as the BPF side would: rip, rsp, rbp, then bytes
 * from rsp up. Not instrumented: the copy reads other frames' redzones. */
__attribute__((noinline, no_sanitize_address)) void unwind_capture(struct unwind_sample *s,
								    size_t cap)
{
	uint64_t ip, sp, bp;
	size_t len;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	len = stack_top - sp < cap ? stack_top - sp : cap;
	for (size_t i = 0; i < len; i++)
		copy[i] = ((volatile const char *)sp)[i];
	s->pid = getpid();
	s->tid = gettid();
	s->ip = ip;
	s->sp = sp;
	s->bp = bp;
	s->stack = copy;
	s->stack_len = len;
	s->stack_full = len == cap;
}

__attribute__((noinline)) void unwind_caller_two(struct unwind_sample *s, size_t cap)
{
	unwind_capture(s, cap);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) void unwind_caller_one(struct unwind_sample *s, size_t cap)
{
	unwind_caller_two(s, cap);
	__asm__ volatile("" ::: "memory");
}

/* Whether the symbol names of pcs[0..n) contain want, in that order from innermost. */
static int names_in_order(struct sym_cache *sc, const uint64_t *pcs, size_t n,
			  const char *const *want, size_t nwant)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < nwant; i++) {
		struct sym_info si;

		if (sym_cache__user(sc, getpid(), pcs[i], &si) == 0 && !strcmp(si.name, want[k]))
			k++;
	}
	return k == nwant;
}

TEST_CASE(stack_word_bounds)
{
	uint64_t words[4] = { 11, 22, 33, 44 }, w = 0;
	uint64_t sp = 0x7000;

	CHECK(unwind_stack_word(words, sizeof(words), sp, sp, &w) == 0 && w == 11);
	CHECK(unwind_stack_word(words, sizeof(words), sp, sp + 24, &w) == 0 && w == 44);
	CHECK(unwind_stack_word(words, sizeof(words), sp, sp + 25, &w) == -EFAULT);
	CHECK(unwind_stack_word(words, sizeof(words), sp, sp + 32, &w) == -EFAULT);
	CHECK(unwind_stack_word(words, sizeof(words), sp, sp - 8, &w) == -EFAULT);
	CHECK(unwind_stack_word(words, sizeof(words), sp, UINT64_MAX - 3, &w) == -EFAULT);
	CHECK(unwind_stack_word(words, 7, sp, sp, &w) == -EFAULT);
	CHECK(unwind_stack_word(words, 0, sp, sp, &w) == -EFAULT);
	CHECK(unwind_stack_word(words, sizeof(words), sp, sp + 4, &w) == 0); /* unaligned is fine */
}

TEST_CASE(record_check_stack_copy)
{
	static union {
		struct gt_event e;
		char bytes[sizeof(struct gt_event) + sizeof(struct gt_uregs) + GT_USTACK_MAX + 64];
	} r;
	struct gt_uregs *u;
	size_t size;

	memset(&r, 0, sizeof(r));
	r.e.type = GT_EV_ONCPU;
	r.e.kstack_len = 2;
	CHECK(probe_record_check(&r, GT_EVENT_HDR_SIZE + 16) == 0);
	CHECK(probe_record_check(&r, GT_EVENT_HDR_SIZE + 15) == -EINVAL);
	CHECK(probe_record_check(&r, GT_EVENT_HDR_SIZE - 1) == -EINVAL);
	r.e.flags = GT_EVF_UREGS;
	u = (struct gt_uregs *)((char *)r.e.stack + 16);
	CHECK((const void *)gt_event_uregs(&r.e) == (void *)u);
	u->size = 64;
	size = GT_EVENT_HDR_SIZE + 16 + sizeof(*u) + 64;
	CHECK(probe_record_check(&r, size) == 0);
	CHECK(probe_record_check(&r, size - 1) == -EINVAL);
	CHECK(probe_record_check(&r, GT_EVENT_HDR_SIZE + 16 + sizeof(*u) - 1) == -EINVAL);
	u->size = GT_USTACK_MAX + 8;
	CHECK(probe_record_check(&r, sizeof(r)) == -EINVAL);
	u->size = GT_USTACK_MAX;
	CHECK(probe_record_check(&r, GT_EVENT_HDR_SIZE + 16 + sizeof(*u) + GT_USTACK_MAX) == 0);
	r.e.kstack_len = GT_MAX_STACK + 1;
	CHECK(probe_record_check(&r, sizeof(r)) == -EINVAL);
}

TEST_CASE(self_unwind_complete)
{
	static const char *const want[] = { "unwind_capture", "unwind_caller_two",
					    "unwind_caller_one", "test_self_unwind_complete",
					    "main" };
	struct sym_cache *sc = sym_cache__new();
	struct unwinder *u = unwinder__new(4, sc);
	struct unwind_sample s;
	enum unwind_status st;
	uint64_t pcs[127];
	size_t n;

	CHECK(u && sc);
	if (!u || !sc)
		goto out;
	unwind_caller_one(&s, COPY_MAX);
	CHECK(!s.stack_full); /* the whole stack fits: the walk ends at its top */
	n = unwinder__unwind(u, &s, pcs, 127, &st);
	CHECK(st == UNWIND_OK);
	CHECK(n >= 5 && pcs[0] == s.ip);
	CHECK(names_in_order(sc, pcs, n, want, 5));
	if (!names_in_order(sc, pcs, n, want, 5))
		for (size_t i = 0; i < n; i++) {
			struct sym_info si;

			sym_cache__user(sc, getpid(), pcs[i], &si);
			printf("  #%zu %#llx %s\n", i, (unsigned long long)pcs[i], si.name);
		}
	/* At most 3 frames asked: 3 given, no error. */
	n = unwinder__unwind(u, &s, pcs, 3, &st);
	CHECK(n == 3 && st == UNWIND_OK);
out:
	sym_cache__free(sc);
	unwinder__free(u);
}

TEST_CASE(short_copy_is_truncated)
{
	struct sym_cache *sc = sym_cache__new();
	struct unwinder *u = unwinder__new(4, sc);
	struct unwind_sample s;
	enum unwind_status st;
	uint64_t pcs[127];
	size_t n;

	CHECK(u != NULL);
	if (!u)
		return;
	unwind_caller_one(&s, 64); /* not even the caller's frames */
	CHECK(s.stack_full);
	n = unwinder__unwind(u, &s, pcs, 127, &st);
	CHECK(st == UNWIND_TRUNCATED);
	CHECK(n >= 1 && n < 5);
	/* The same copy, said to end where the stack does: the walk just stops there. */
	s.stack_full = false;
	unwinder__unwind(u, &s, pcs, 127, &st);
	CHECK(st == UNWIND_OK);
	unwinder__free(u);
	sym_cache__free(sc);
}

/* A second sample with the same registers and the same stack words replays the first walk;
 * one word the walk read changed (a return address) makes libdw walk again, to another
 * result. */
TEST_CASE(same_stack_replays_walk)
{
	struct sym_cache *sc = sym_cache__new();
	struct unwinder *u = unwinder__new(4, sc);
	struct unwind_sample s;
	struct unwind_stats stats;
	enum unwind_status st, st2;
	uint64_t pcs[127], pcs2[127], w;
	size_t n, n2, ret_at = 0;

	CHECK(u != NULL);
	if (!u)
		return;
	unwind_caller_one(&s, COPY_MAX);
	n = unwinder__unwind(u, &s, pcs, 127, &st);
	unwinder__stats(u, &stats);
	CHECK(n >= 5 && stats.replays == 0);
	n2 = unwinder__unwind(u, &s, pcs2, 127, &st2);
	unwinder__stats(u, &stats);
	CHECK(stats.replays == 1);
	CHECK(n2 == n && st2 == st && !memcmp(pcs, pcs2, n * sizeof(*pcs)));
	/* The return address into unwind_caller_two (pcs[1] + 1), overwritten. */
	for (size_t off = 0; off + 8 <= s.stack_len; off += 8)
		if (!unwind_stack_word(s.stack, s.stack_len, s.sp, s.sp + off, &w) && w == pcs[1] + 1) {
			ret_at = off;
			break;
		}
	CHECK(ret_at != 0);
	memcpy(&w, copy + ret_at, 8);
	memset(copy + ret_at, 0, 8);
	n2 = unwinder__unwind(u, &s, pcs2, 127, &st2);
	memcpy(copy + ret_at, &w, 8);
	unwinder__stats(u, &stats);
	CHECK(stats.replays == 1);
	CHECK(n2 < n || pcs2[1] != pcs[1]);
	/* Fewer frames asked: not the same walk either. */
	CHECK(unwinder__unwind(u, &s, pcs2, 3, &st2) == 3);
	unwinder__stats(u, &stats);
	CHECK(stats.replays == 1);
	unwinder__free(u);
	sym_cache__free(sc);
}

TEST_CASE(gone_process_and_cache_cap)
{
	struct sym_cache *sc = sym_cache__new();
	struct unwinder *u = unwinder__new(2, sc);
	struct unwind_stats stats;
	struct unwind_sample s;
	enum unwind_status st;
	uint64_t pcs[127];
	pid_t kids[2];
	size_t n;

	CHECK(u != NULL);
	if (!u)
		return;
	unwind_caller_one(&s, COPY_MAX);
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			pause();
			_exit(0);
		}
	}
	/* Forked children map the same files at the same addresses: the copy unwinds there. */
	n = unwinder__unwind(u, &s, pcs, 127, &st);
	CHECK(st == UNWIND_OK && n >= 5);
	for (int i = 0; i < 2; i++) {
		s.pid = s.tid = kids[i];
		n = unwinder__unwind(u, &s, pcs, 127, &st);
		CHECK(st == UNWIND_OK && n >= 5);
	}
	unwinder__stats(u, &stats);
	CHECK(stats.processes == 2);
	CHECK(stats.evictions == 1);
	unwinder__process_exit(u, kids[1]);
	unwinder__process_exit(u, 999999999); /* unknown: no-op */
	unwinder__stats(u, &stats);
	CHECK(stats.processes == 1);
	for (int i = 0; i < 2; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	/* A process that is gone but whose mappings the symbol cache still knows (as it does
	 * until its queued samples are read): it unwinds, its files opened by (dev, inode). */
	s.pid = s.tid = kids[1];
	n = unwinder__unwind(u, &s, pcs, 127, &st);
	CHECK(st == UNWIND_OK && n >= 5);
	/* Gone and forgotten: no modules, so no CFI; libdw's frame-pointer fallback may find a
	 * few frames (this build keeps frame pointers), then an error. */
	unwinder__process_exit(u, kids[1]);
	sym_cache__process_exit(sc, kids[1]);
	n = unwinder__unwind(u, &s, pcs, 127, &st);
	CHECK(n >= 1 && pcs[0] == s.ip && st == UNWIND_ERROR);
	unwinder__free(u);
	unwinder__free(NULL);
	sym_cache__free(sc);
}

int main(void)
{
	stack_top = find_stack_top();
	RUN(stack_word_bounds);
	RUN(record_check_stack_copy);
	if (!stack_top) {
		/* Every process has one: without it /proc is not what these cases read. */
		const char *const need_stack[] = { "self_unwind_complete", "short_copy_is_truncated",
						   "same_stack_replays_walk", "gone_process_and_cache_cap" };

		for (size_t i = 0; i < sizeof(need_stack) / sizeof(need_stack[0]); i++)
			printf("FAIL: %s: no [stack] mapping in /proc/self/maps\n", need_stack[i]);
		return 1;
	}
	RUN(self_unwind_complete);
	RUN(short_copy_is_truncated);
	RUN(same_stack_replays_walk);
	RUN(gone_process_and_cache_cap);
	HARNESS_EXIT();
}
