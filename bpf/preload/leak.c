/* libgalatop-leak.so: the leak probe's in-process half, preloaded (LD_PRELOAD) into the
 * commands galatop starts (`galatop record --type leak -- CMD`; docs/leak.md). It interposes
 * glibc's malloc family and samples allocations by bytes itself, as the BPF programs of
 * bpf/leak.bpf.h do in the kernel (a Poisson process of mean GALATOP_LEAK_SAMPLE bytes, per
 * thread here), so that an unsampled call costs a few nanoseconds instead of a uprobe trap.
 * Only sampled allocations, and the frees of sampled blocks, call the marker functions
 * galatop_leak_alloc and galatop_leak_free, on which galatop puts its uprobes: those calls
 * feed the same live set and records as the allocator uprobes do. Without galatop's uprobes
 * the markers are empty functions; without GALATOP_LEAK_SAMPLE in the environment, or when
 * another allocator (jemalloc, tcmalloc, a program's own malloc) takes the calls, every call
 * goes straight on to the allocator and nothing is sampled: galatop then probes that
 * allocator with uprobes. Injected into a running process instead (dlopen through ptrace),
 * its GOT hooks (leak_hooks.c) feed the same sampler, whatever the allocator. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sampler.h"

#define EXPORT __attribute__((visibility("default")))
#define unlikely(x) __builtin_expect(!!(x), 0)

/* glibc's allocator under its own names: calls that reach it without going through the
 * symbols this library interposes. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

/* The marker functions galatop puts its uprobes on: a sampled allocation of size bytes at
 * addr, with the thread's allocation calls since its last sample (calls, this one included);
 * the free of a sampled block (or of any block with a mean of 1). Each is a 5-byte nop and a
 * return: Linux 6.18 and later turn a uprobe on a 5-byte nop into a call (no trap) after its
 * first hit. */
#define NOP5_RET ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret\n\t"
EXPORT __attribute__((naked, noinline, used)) void galatop_leak_alloc(void *addr, size_t size,
								   uint64_t calls)
{
	__asm__ volatile(NOP5_RET);
}

EXPORT __attribute__((naked, noinline, used)) void galatop_leak_free(void *addr)
{
	__asm__ volatile(NOP5_RET);
}

/* What the library does: not decided yet, deciding (its calls served from the early
 * arena), sampling glibc's calls, or passing every call on (no galatop, another allocator). */
enum mode { MODE_NEW, MODE_INIT, MODE_SAMPLE, MODE_PASS };
static _Atomic int mode = MODE_NEW;
static uint64_t mean; /* bytes between samples; 1: every allocation */
static _Atomic bool atfork_set; /* the child's reset is registered */

/* The next definitions of the interposed functions (glibc's, or another allocator's). */
static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
} next;

/* Allocations made while the library looks its neighbours up (dlsym may allocate): served
 * from here, never freed. */
static _Alignas(64) char early[65536];
static _Atomic size_t early_used;

static void *early_alloc(size_t n, size_t align)
{
	size_t cur = atomic_load(&early_used), at, end;

	if (align < 16)
		align = 16;
	do {
		at = (cur + align - 1) & ~(align - 1);
		end = at + n;
		if (end > sizeof(early) || end < at)
			return NULL;
	} while (!atomic_compare_exchange_weak(&early_used, &cur, end));
	return early + at;
}

static bool is_early(const void *p)
{
	return (const char *)p >= early && (const char *)p < early + sizeof(early);
}

/* Per thread: bytes left before the next sample (0: not drawn yet), allocation calls since
 * the last sample, the random state. Initial-exec TLS: no __tls_get_addr, which allocates. */
#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS int64_t left;
static TLS uint64_t calls;
static TLS uint64_t rng;

/* A draw of the exponential distribution of mean `mean`: -ln(U) * mean, U uniform in (0, 1]. */
static int64_t draw(void)
{
	double u, gap;

	if (!rng) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		rng = ((uint64_t)(uintptr_t)&left * 0x9e3779b97f4a7c15ull) ^
		      ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ 1;
	}
	rng ^= rng >> 12; /* xorshift64* */
	rng ^= rng << 25;
	rng ^= rng >> 27;
	u = (double)(((rng * 0x2545f4914f6cdd1dull) >> 11) + 1) * 0x1p-53;
	gap = -log(u) * (double)mean;
	return gap < 1 ? 1 : gap > 0x1p62 ? (int64_t)1 << 62 : (int64_t)gap;
}

/* Whether an allocation of size bytes is taken: the bytes left to the next sample run out
 * within it (as bpf/leak.bpf.h's leak_sample). */
static bool sample(size_t size)
{
	calls++;
	if (mean <= 1)
		return true;
	if (!left)
		left = draw();
	if ((int64_t)size < left && size < ((size_t)1 << 62)) {
		left -= (int64_t)size;
		return false;
	}
	left = draw();
	return true;
}

/* The sampled blocks not freed yet, so that a free looks only its address up: SHARDS small
 * arrays by address hash, each written under its lock and read without one (a sequence count
 * tells a reader that a writer was there: it reads again). Not used with a mean of 1 (every
 * free is reported then). */
#define SHARDS 4096
#define SLOTS 60
struct shard {
	_Atomic uint32_t seq;  /* odd while written */
	_Atomic uint32_t lock; /* writers */
	_Atomic uint32_t n;
	uint32_t pad;
	_Atomic(uintptr_t) addr[SLOTS];
};
static struct shard shards[SHARDS];

static struct shard *shard_of(const void *p)
{
	return &shards[((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 52];
}

static void shard_lock(struct shard *s)
{
	while (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire))
		while (atomic_load_explicit(&s->lock, memory_order_relaxed))
			__builtin_ia32_pause();
	atomic_store_explicit(&s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void shard_unlock(struct shard *s)
{
	atomic_store_explicit(&s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1,
			      memory_order_release);
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

/* Whether p is a sampled block. Only its owner asks, so a block being added or removed by
 * another thread is never the one looked for. */
static bool tracked(const void *p)
{
	struct shard *s = shard_of(p);
	uint32_t seq, n;
	bool found;

	do {
		seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (seq & 1)
			continue;
		n = atomic_load_explicit(&s->n, memory_order_relaxed);
		found = false;
		for (uint32_t i = 0; i < n && i < SLOTS && !found; i++)
			found = atomic_load_explicit(&s->addr[i], memory_order_relaxed) == (uintptr_t)p;
		atomic_thread_fence(memory_order_acquire);
	} while ((seq & 1) || atomic_load_explicit(&s->seq, memory_order_relaxed) != seq);
	return found;
}

/* Adds p; false when its shard is full (the sample is dropped). */
static bool track(void *p)
{
	struct shard *s = shard_of(p);
	uint32_t n;
	bool ok;

	shard_lock(s);
	n = atomic_load_explicit(&s->n, memory_order_relaxed);
	ok = n < SLOTS;
	if (ok) {
		atomic_store_explicit(&s->addr[n], (uintptr_t)p, memory_order_relaxed);
		atomic_store_explicit(&s->n, n + 1, memory_order_relaxed);
	}
	shard_unlock(s);
	return ok;
}

static void untrack(void *p)
{
	struct shard *s = shard_of(p);
	uint32_t n;

	shard_lock(s);
	n = atomic_load_explicit(&s->n, memory_order_relaxed);
	for (uint32_t i = 0; i < n && i < SLOTS; i++)
		if (atomic_load_explicit(&s->addr[i], memory_order_relaxed) == (uintptr_t)p) {
			atomic_store_explicit(&s->addr[i],
					      atomic_load_explicit(&s->addr[n - 1], memory_order_relaxed),
					      memory_order_relaxed);
			atomic_store_explicit(&s->n, n - 1, memory_order_relaxed);
			break;
		}
	shard_unlock(s);
}

/* A fork's child: a lock held by another thread of the parent is held by nobody now. */
static void after_fork_child(void)
{
	for (size_t i = 0; i < SHARDS; i++) {
		atomic_store(&shards[i].lock, 0);
		atomic_store(&shards[i].seq, atomic_load(&shards[i].seq) & ~1u);
	}
}

/* The mean from the environment; 0 when galatop did not set it (or set nonsense). */
static uint64_t mean_from_env(void)
{
	const char *v = getenv("GALATOP_LEAK_SAMPLE");
	char *end;
	unsigned long long m;

	if (!v || !*v)
		return 0;
	errno = 0;
	m = strtoull(v, &end, 10);
	return errno || *end || !m ? 0 : m;
}

static TLS bool deciding; /* this thread is in init(): its calls go to the early arena */

#define LOOKUP(f) next.f = dlsym(RTLD_NEXT, #f)

/* Decides what the library does (once, at load or on the first call): sampling only when
 * galatop asked for it and glibc's malloc is the one behind this library's. */
static void init(void)
{
	int expect = MODE_NEW;
	uint64_t m;
	bool glibc;

	if (!atomic_compare_exchange_strong(&mode, &expect, MODE_INIT)) {
		while (atomic_load(&mode) == MODE_INIT)
			__builtin_ia32_pause();
		return;
	}
	deciding = true;
	LOOKUP(malloc);
	LOOKUP(calloc);
	LOOKUP(realloc);
	LOOKUP(reallocarray);
	LOOKUP(free);
	LOOKUP(posix_memalign);
	LOOKUP(aligned_alloc);
	LOOKUP(memalign);
	LOOKUP(valloc);
	LOOKUP(pvalloc);
	if (!next.malloc || !next.calloc || !next.realloc || !next.free || !next.memalign ||
	    !next.posix_memalign || !next.aligned_alloc || !next.valloc || !next.pvalloc) {
		/* nothing after this library (it was linked, not preloaded): glibc's */
		next.malloc = __libc_malloc;
		next.calloc = __libc_calloc;
		next.realloc = __libc_realloc;
		next.free = __libc_free;
		next.memalign = __libc_memalign;
		next.aligned_alloc = __libc_memalign;
		next.valloc = __libc_valloc;
		next.pvalloc = __libc_pvalloc;
		next.posix_memalign = NULL;
	}
	glibc = next.malloc == __libc_malloc && next.free == __libc_free &&
		next.realloc == __libc_realloc && next.calloc == __libc_calloc;
	m = mean_from_env();
	mean = m;
	/* Still deciding: pthread_atfork may allocate. */
	glibc = m && glibc && !atomic_exchange(&atfork_set, true) &&
		!pthread_atfork(NULL, NULL, after_fork_child);
	deciding = false;
	atomic_store(&mode, glibc ? MODE_SAMPLE : MODE_PASS);
}

__attribute__((constructor)) static void load(void)
{
	if (atomic_load(&mode) == MODE_NEW)
		init();
}

void sampler_start(uint64_t m)
{
	/* A block sampled by an earlier attach may have been freed unseen since: none is kept. */
	for (size_t i = 0; m > 1 && i < SHARDS; i++) {
		shard_lock(&shards[i]);
		atomic_store_explicit(&shards[i].n, 0, memory_order_relaxed);
		shard_unlock(&shards[i]);
	}
	if (!atomic_exchange(&atfork_set, true))
		pthread_atfork(NULL, NULL, after_fork_child);
	mean = m;
}

int sampler_preloaded(void)
{
	return atomic_load(&mode) == MODE_SAMPLE;
}

/* The mode for a call; MODE_INIT only for the thread deciding it (dlsym allocating). */
static int mode_now(void)
{
	int m = atomic_load_explicit(&mode, memory_order_acquire);

	if (__builtin_expect(m == MODE_SAMPLE || m == MODE_PASS, 1))
		return m;
	if (deciding)
		return MODE_INIT;
	init();
	return atomic_load(&mode);
}

/* A sampled allocation of size bytes at p: tracked and reported (dropped when its shard is
 * full), with the calls counted since the thread's last sample. */
static void report(void *p, size_t size)
{
	uint64_t c = calls;

	calls = 0;
	if (mean > 1 && !track(p))
		return;
	galatop_leak_alloc(p, size, c);
}

void *sampler_made(void *p, size_t size)
{
	if (p && sample(size))
		report(p, size);
	return p;
}

void sampler_gone(void *p)
{
	if (mean <= 1) {
		galatop_leak_free(p);
	} else if (tracked(p)) {
		untrack(p);
		galatop_leak_free(p);
	}
}

EXPORT void *malloc(size_t n)
{
	switch (mode_now()) {
	case MODE_SAMPLE:
		return sampler_made(__libc_malloc(n), n);
	case MODE_PASS:
		return next.malloc(n);
	}
	return early_alloc(n, 16);
}

EXPORT void *calloc(size_t k, size_t n)
{
	size_t size;

	switch (mode_now()) {
	case MODE_SAMPLE:
		if (__builtin_mul_overflow(k, n, &size))
			return __libc_calloc(k, n); /* fails with ENOMEM */
		return sampler_made(__libc_calloc(k, n), size);
	case MODE_PASS:
		return next.calloc(k, n);
	}
	if (__builtin_mul_overflow(k, n, &size))
		return NULL;
	return early_alloc(size, 16); /* zero: the arena is never reused */
}

EXPORT void free(void *p)
{
	if (!p || is_early(p))
		return;
	switch (mode_now()) {
	case MODE_SAMPLE:
		sampler_gone(p);
		__libc_free(p);
		return;
	case MODE_PASS:
		next.free(p);
		return;
	}
}

/* realloc of a block from the early arena: a new block with its bytes (as many as the arena
 * holds past it: its size is not kept). */
static void *early_realloc(void *p, size_t n)
{
	void *q = malloc(n);
	size_t room = (size_t)(early + sizeof(early) - (char *)p);

	if (q)
		memcpy(q, p, n < room ? n : room);
	return q;
}

EXPORT void *realloc(void *p, size_t n)
{
	if (!p)
		return malloc(n);
	if (is_early(p))
		return early_realloc(p, n);
	switch (mode_now()) {
	case MODE_SAMPLE:
		/* Reported before the call, which may free p: another thread's block at the same
		 * address must come after it. */
		sampler_gone(p);
		return sampler_made(__libc_realloc(p, n), n);
	case MODE_PASS:
		return next.realloc(p, n);
	}
	return NULL;
}

EXPORT void *reallocarray(void *p, size_t k, size_t n)
{
	size_t size;

	if (mode_now() == MODE_PASS && next.reallocarray)
		return next.reallocarray(p, k, n);
	if (__builtin_mul_overflow(k, n, &size)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, size);
}

EXPORT void *memalign(size_t align, size_t n)
{
	switch (mode_now()) {
	case MODE_SAMPLE:
		return sampler_made(__libc_memalign(align, n), n);
	case MODE_PASS:
		return next.memalign(align, n);
	}
	return align <= 4096 ? early_alloc(n, align) : NULL;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	switch (mode_now()) {
	case MODE_SAMPLE:
		return sampler_made(next.aligned_alloc(align, n), n);
	case MODE_PASS:
		return next.aligned_alloc(align, n);
	}
	return align <= 4096 ? early_alloc(n, align) : NULL;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;
	int r;

	switch (mode_now()) {
	case MODE_SAMPLE:
		if (!next.posix_memalign) {
			if (!align || align % sizeof(void *) || (align & (align - 1)))
				return EINVAL;
			p = __libc_memalign(align, n);
			if (!p)
				return ENOMEM;
			*out = sampler_made(p, n);
			return 0;
		}
		r = next.posix_memalign(out, align, n);
		if (!r)
			sampler_made(*out, n);
		return r;
	case MODE_PASS:
		if (next.posix_memalign)
			return next.posix_memalign(out, align, n);
		p = next.memalign(align, n);
		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	p = align <= 4096 ? early_alloc(n, align) : NULL;
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *valloc(size_t n)
{
	switch (mode_now()) {
	case MODE_SAMPLE:
		return sampler_made(__libc_valloc(n), n);
	case MODE_PASS:
		return next.valloc(n);
	}
	return early_alloc(n, 4096);
}

EXPORT void *pvalloc(size_t n)
{
	size_t pages = (n + 4095) & ~(size_t)4095;

	switch (mode_now()) {
	case MODE_SAMPLE:
		return sampler_made(__libc_pvalloc(n), pages);
	case MODE_PASS:
		return next.pvalloc(n);
	}
	return early_alloc(pages, 4096);
}
