/* libgalatop-leak.so injected into a running process (engine/leak_inject.c loads it with
 * dlopen through ptrace and calls galatop_leak_attach): the allocator was bound before the
 * library came, so it cannot interpose; instead every loaded module's GOT entries (and data
 * pointers) for the allocator's entries are pointed at hooks here, which call the entry the
 * process's global scope defines (the one the dynamic linker bound or would bind) and feed the
 * sampler (sampler.h) with what they allocate and free. galatop takes the hooks out by writing
 * the old values back through /proc/PID/mem (the state below, leak_inject.h), with every
 * thread stopped; the library itself stays mapped (its code may be on a stack). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "leak_inject.h"
#include "sampler.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

typedef uintptr_t arg;

/* The thread's depth in hooked calls: an entry that calls another one through a GOT (glibc's
 * reallocarray jumps to realloc) is counted once, by the outer call. */
static TLS int depth;

#define ENTER bool outer = depth++ == 0
#define LEAVE depth--

/* A hook per entry: o_NAME is the process's definition of NAME, h_NAME the hook. jemalloc's
 * extended entries and the C++ operators take the size (or the block) first and up to two
 * more arguments, passed on as they came. */
#define ALLOC3(name)                                                                             \
	static void *(*o_##name)(size_t, arg, arg);                                              \
	static void *h_##name(size_t n, arg a, arg b)                                            \
	{                                                                                        \
		ENTER;                                                                           \
		void *p = o_##name(n, a, b);                                                     \
		LEAVE;                                                                           \
		return outer ? sampler_made(p, n) : p;                                           \
	}
/* operator new may throw (bad_alloc) through the hook: no depth to restore. It is hooked only
 * where the allocator defines it (jemalloc, tcmalloc), which calls no other hooked entry. */
#define NEW(name)                                                                                \
	static void *(*o_##name)(size_t, arg, arg);                                              \
	static void *h_##name(size_t n, arg a, arg b)                                            \
	{                                                                                        \
		void *p = o_##name(n, a, b);                                                     \
		return depth ? p : sampler_made(p, n);                                           \
	}
#define FREE3(name)                                                                              \
	static void (*o_##name)(void *, arg, arg);                                               \
	static void h_##name(void *p, arg a, arg b)                                              \
	{                                                                                        \
		ENTER;                                                                           \
		if (outer && p)                                                                  \
			sampler_gone(p);                                                         \
		o_##name(p, a, b);                                                               \
		LEAVE;                                                                           \
	}
/* Allocations with the alignment first: memalign, aligned_alloc. */
#define ALIGNED(name)                                                                            \
	static void *(*o_##name)(size_t, size_t);                                                \
	static void *h_##name(size_t align, size_t n)                                            \
	{                                                                                        \
		ENTER;                                                                           \
		void *p = o_##name(align, n);                                                    \
		LEAVE;                                                                           \
		return outer ? sampler_made(p, n) : p;                                           \
	}

ALLOC3(malloc)
ALLOC3(valloc)
ALLOC3(mallocx)
NEW(_Znwm)
NEW(_Znam)
NEW(_ZnwmRKSt9nothrow_t)
NEW(_ZnamRKSt9nothrow_t)
NEW(_ZnwmSt11align_val_t)
NEW(_ZnamSt11align_val_t)
NEW(_ZnwmSt11align_val_tRKSt9nothrow_t)
NEW(_ZnamSt11align_val_tRKSt9nothrow_t)
FREE3(free)
FREE3(cfree)
FREE3(dallocx)
FREE3(sdallocx)
FREE3(_ZdlPv)
FREE3(_ZdaPv)
FREE3(_ZdlPvm)
FREE3(_ZdaPvm)
FREE3(_ZdlPvRKSt9nothrow_t)
FREE3(_ZdaPvRKSt9nothrow_t)
FREE3(_ZdlPvSt11align_val_t)
FREE3(_ZdaPvSt11align_val_t)
FREE3(_ZdlPvmSt11align_val_t)
FREE3(_ZdaPvmSt11align_val_t)
FREE3(_ZdlPvSt11align_val_tRKSt9nothrow_t)
FREE3(_ZdaPvSt11align_val_tRKSt9nothrow_t)
ALIGNED(memalign)
ALIGNED(aligned_alloc)

static void *(*o_calloc)(size_t, size_t);
static void *h_calloc(size_t k, size_t n)
{
	ENTER;
	size_t size;
	void *p = o_calloc(k, n);

	LEAVE;
	return outer && !__builtin_mul_overflow(k, n, &size) ? sampler_made(p, size) : p;
}

/* The old block is reported freed before the call, which may free it (another thread's block
 * at the same address must come after); a failed call leaves it reported freed. */
static void *(*o_realloc)(void *, size_t);
static void *h_realloc(void *old, size_t n)
{
	ENTER;
	void *p;

	if (outer && old)
		sampler_gone(old);
	p = o_realloc(old, n);
	LEAVE;
	return outer ? sampler_made(p, n) : p;
}

static void *(*o_reallocarray)(void *, size_t, size_t);
static void *h_reallocarray(void *old, size_t k, size_t n)
{
	ENTER;
	size_t size;
	void *p;

	if (outer && old)
		sampler_gone(old);
	p = o_reallocarray(old, k, n);
	LEAVE;
	return outer && !__builtin_mul_overflow(k, n, &size) ? sampler_made(p, size) : p;
}

/* jemalloc's realloc: rallocx(block, size, flags). */
static void *(*o_rallocx)(void *, size_t, int);
static void *h_rallocx(void *old, size_t n, int flags)
{
	ENTER;
	void *p;

	if (outer && old)
		sampler_gone(old);
	p = o_rallocx(old, n, flags);
	LEAVE;
	return outer ? sampler_made(p, n) : p;
}

static int (*o_posix_memalign)(void **, size_t, size_t);
static int h_posix_memalign(void **out, size_t align, size_t n)
{
	ENTER;
	int r = o_posix_memalign(out, align, n);

	LEAVE;
	if (outer && !r)
		sampler_made(*out, n);
	return r;
}

static void *(*o_pvalloc)(size_t);
static void *h_pvalloc(size_t n)
{
	ENTER;
	void *p = o_pvalloc(n);

	LEAVE;
	return outer ? sampler_made(p, (n + 4095) & ~(size_t)4095) : p;
}

#define HOOK(name) { #name, (void *)h_##name, (void **)&o_##name }

/* Every entry that allocates or frees a block the sampler must see. xallocx (resizes in
 * place) and the queries (malloc_usable_size, sallocx, nallocx, mallctl) are left alone. */
static const struct hook {
	const char *name;
	void *hook;
	void **orig;
} hooks[] = {
	HOOK(malloc), HOOK(calloc), HOOK(realloc), HOOK(reallocarray), HOOK(free), HOOK(cfree),
	HOOK(posix_memalign), HOOK(aligned_alloc), HOOK(memalign), HOOK(valloc), HOOK(pvalloc),
	HOOK(mallocx), HOOK(rallocx), HOOK(dallocx), HOOK(sdallocx),
	HOOK(_Znwm), HOOK(_Znam), HOOK(_ZnwmRKSt9nothrow_t), HOOK(_ZnamRKSt9nothrow_t),
	HOOK(_ZnwmSt11align_val_t), HOOK(_ZnamSt11align_val_t),
	HOOK(_ZnwmSt11align_val_tRKSt9nothrow_t), HOOK(_ZnamSt11align_val_tRKSt9nothrow_t),
	HOOK(_ZdlPv), HOOK(_ZdaPv), HOOK(_ZdlPvm), HOOK(_ZdaPvm), HOOK(_ZdlPvRKSt9nothrow_t),
	HOOK(_ZdaPvRKSt9nothrow_t), HOOK(_ZdlPvSt11align_val_t), HOOK(_ZdaPvSt11align_val_t),
	HOOK(_ZdlPvmSt11align_val_t), HOOK(_ZdaPvmSt11align_val_t),
	HOOK(_ZdlPvSt11align_val_tRKSt9nothrow_t), HOOK(_ZdaPvSt11align_val_tRKSt9nothrow_t),
};
#define NHOOKS (sizeof(hooks) / sizeof(hooks[0]))

static struct leak_inject_state state = { .version = LEAK_INJECT_VERSION };
static void *target[NHOOKS]; /* this attach's definitions, NULL: none in the process */

static const struct hook *hook_named(const char *name, size_t *i)
{
	/* Every name starts with one of a few letters: most symbols are out at once. */
	if (name[0] != 'm' && name[0] != 'c' && name[0] != 'r' && name[0] != 'f' &&
	    name[0] != 'p' && name[0] != 'a' && name[0] != 'v' && name[0] != 'd' &&
	    name[0] != 's' && name[0] != '_')
		return NULL;
	for (*i = 0; *i < NHOOKS; (*i)++)
		if (!strcmp(hooks[*i].name, name))
			return &hooks[*i];
	return NULL;
}

/* One module's dynamic section, its addresses made absolute (glibc relocates most of them in
 * place, not the vDSO's: an address below the load base is still relative). */
struct dyn {
	const ElfW(Sym) *sym;
	const char *str;
	const ElfW(Rela) *rela, *jmprel;
	size_t relasz, pltrelsz;
};

static uintptr_t absolute(uintptr_t base, uintptr_t v)
{
	return v < base ? v + base : v;
}

static bool read_dyn(const struct dl_phdr_info *info, struct dyn *d)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t b = info->dlpi_addr;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(b + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return false;
	for (; dyn->d_tag != DT_NULL; dyn++)
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->sym = (const ElfW(Sym) *)absolute(b, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->str = (const char *)absolute(b, dyn->d_un.d_ptr);
			break;
		case DT_RELA:
			d->rela = (const ElfW(Rela) *)absolute(b, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->relasz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			d->jmprel = (const ElfW(Rela) *)absolute(b, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->pltrelsz = dyn->d_un.d_val;
			break;
		}
	return d->sym && d->str;
}

/* The pages of a module that glibc made read-only after relocating them (PT_GNU_RELRO; the
 * partial page at its end stays writable, as glibc leaves it). */
static void relro_of(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	*lo = *hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			*lo = (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr) & ~(page - 1);
			*hi = (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz) &
			      ~(page - 1);
		}
}

/* The span of a module's loaded segments: a lazy GOT entry not bound yet points into it (its
 * PLT). */
static void span_of(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	*lo = UINTPTR_MAX;
	*hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			uintptr_t a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;

			*lo = a < *lo ? a : *lo;
			*hi = a + info->dlpi_phdr[i].p_memsz > *hi ? a + info->dlpi_phdr[i].p_memsz : *hi;
		}
}

static bool have_slot(uintptr_t addr)
{
	for (uint32_t i = 0; i < state.nslots; i++)
		if (state.slots[i].addr == addr)
			return true;
	return false;
}

/* Points the slot at addr (holding v now) at hook h; false when not done. */
static bool patch(uintptr_t addr, uintptr_t v, uintptr_t h, uintptr_t relro_lo, uintptr_t relro_hi)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), pg = addr & ~(page - 1);
	bool ro = pg >= relro_lo && pg < relro_hi;

	if (state.nslots >= LEAK_INJECT_SLOTS) {
		state.full++;
		return false;
	}
	if (ro && mprotect((void *)pg, page, PROT_READ | PROT_WRITE))
		return false;
	state.slots[state.nslots] = (struct leak_inject_slot){ addr, v, h };
	__atomic_store_n((uintptr_t *)addr, h, __ATOMIC_RELEASE);
	state.nslots++;
	if (ro)
		mprotect((void *)pg, page, PROT_READ);
	return true;
}

struct walk {
	uintptr_t self; /* this library's load base */
};

/* The relocations rel[0..n) of one module: each of a hooked entry (JUMP_SLOT, GLOB_DAT, or a
 * data pointer to it) bound to the process's definition, or lazy and not bound yet, points at
 * the hook. The number pointed. */
static int patch_relocs(const struct dl_phdr_info *info, const struct dyn *d,
			const ElfW(Rela) *rel, size_t n)
{
	uintptr_t lo, hi, rlo, rhi;
	int done = 0;

	span_of(info, &lo, &hi);
	relro_of(info, &rlo, &rhi);
	for (size_t i = 0; rel && i < n; i++) {
		unsigned type = ELF64_R_TYPE(rel[i].r_info);
		const struct hook *h;
		uintptr_t addr, v;
		size_t k;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64)
			continue;
		if (!ELF64_R_SYM(rel[i].r_info) || (type == R_X86_64_64 && rel[i].r_addend))
			continue;
		h = hook_named(d->str + d->sym[ELF64_R_SYM(rel[i].r_info)].st_name, &k);
		if (!h || !target[k])
			continue;
		addr = info->dlpi_addr + rel[i].r_offset;
		v = *(const uintptr_t *)addr;
		if (v == (uintptr_t)h->hook) {
			done += have_slot(addr);
			continue;
		}
		/* Not the process's definition, nor a lazy entry's PLT stub: bound elsewhere. */
		if (v != (uintptr_t)target[k] && !(type == R_X86_64_JUMP_SLOT && v >= lo && v < hi)) {
			state.elsewhere++;
			continue;
		}
		done += patch(addr, v, (uintptr_t)h->hook, rlo, rhi);
	}
	return done;
}

static int patch_module(struct dl_phdr_info *info, size_t size, void *ctx)
{
	const struct walk *w = ctx;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	struct dyn d;
	int n;

	(void)size;
	/* Not this library, nor the dynamic linker (its allocations go through pointers of its
	 * own, and are freed through them), nor the vDSO. */
	if (info->dlpi_addr == w->self || strstr(name, "/ld-linux") || strstr(name, "linux-vdso") ||
	    !read_dyn(info, &d))
		return 0;
	n = patch_relocs(info, &d, d.rela, d.relasz / sizeof(ElfW(Rela)));
	n += patch_relocs(info, &d, d.jmprel, d.pltrelsz / sizeof(ElfW(Rela)));
	state.modules += n > 0;
	return 0;
}

static bool alive(int32_t pid)
{
	return pid > 0 && (!kill(pid, 0) || errno == EPERM);
}

/* Called by galatop through ptrace, at a point where the thread holds no allocator lock:
 * samples with mean bytes (1: every allocation) and points the modules' allocator entries at
 * the hooks. The state's address, or -LEAK_INJECT_E*. */
EXPORT long galatop_leak_attach(uint64_t mean, int32_t owner)
{
	struct walk w = { 0 };
	Dl_info self, mine;
	struct link_map *lm = NULL;
	void *malloc_module;
	size_t k;

	if (sampler_preloaded())
		return -LEAK_INJECT_EPRELOAD;
	if (state.owner && state.owner != owner && state.nslots && alive(state.owner))
		return -LEAK_INJECT_EBUSY;
	if (!dladdr((void *)galatop_leak_attach, &self))
		return -LEAK_INJECT_ENOMALLOC;
	w.self = (uintptr_t)self.dli_fbase;
	for (k = 0; k < NHOOKS; k++) {
		target[k] = dlsym(RTLD_DEFAULT, hooks[k].name);
		if (target[k] == hooks[k].hook)
			target[k] = NULL;
	}
	hook_named("malloc", &k);
	if (!target[k])
		return -LEAK_INJECT_ENOMALLOC;
	/* The executable's own malloc: its calls of it are direct, no GOT to point. */
	if (!dladdr1(target[k], &mine, (void **)&lm, RTLD_DL_LINKMAP))
		return -LEAK_INJECT_ENOMALLOC;
	if (lm && !lm->l_name[0])
		return -LEAK_INJECT_EEXE;
	malloc_module = mine.dli_fbase;
	/* The C++ operators of libstdc++ call malloc and free through its GOT: seen there. */
	for (k = 0; k < NHOOKS; k++)
		if (target[k] && hooks[k].name[0] == '_' &&
		    (!dladdr(target[k], &mine) || mine.dli_fbase != malloc_module))
			target[k] = NULL;
	for (k = 0; k < NHOOKS; k++)
		if (target[k])
			__atomic_store_n(hooks[k].orig, target[k], __ATOMIC_RELEASE);
	sampler_start(mean);
	state.owner = owner;
	state.modules = 0;
	state.elsewhere = 0;
	state.full = 0;
	dl_iterate_phdr(patch_module, &w);
	if (!state.nslots)
		return -LEAK_INJECT_ENONE;
	return (long)(uintptr_t)&state;
}
