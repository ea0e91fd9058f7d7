/* Address -> name for kernel and user stacks: kallsyms, ELF/DWARF of mapped files, [vdso],
 * perf-PID.map JIT maps, demangling; ELF tables are shared across processes (keyed by
 * build-id or (dev, inode)). One sym_cache per session; not thread-safe. See docs/symbols.md. */
#ifndef GALATOP_SYMBOLS_SYMBOLS_H
#define GALATOP_SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/frames.h"
#include "proc_maps.h"

struct sym_cache; /* shared across all processes */

struct sym_info {
	const char *name;   /* demangled symbol, or "module+0xOFF" / "[unknown]" when unknown; never NULL;
			     * owned by the cache, valid until sym_cache__free */
	const char *module; /* ELF path as mapped, "[kernel.kallsyms]", "[vdso]", "[ext4]" for kernel
			     * modules, "[jit]"; never NULL ("" when no mapping); owned by the cache */
	uint64_t offset;    /* addr - symbol start (or module-relative file offset when unknown) */
	int kind;	    /* enum frame_kind: FRAME_USER, FRAME_KERNEL, FRAME_JIT; FRAME_SPECIAL when
			     * nothing at all is known ("[unknown]") */
	const char *file;   /* source file from DWARF line info, or NULL; owned by the cache */
	unsigned line;	    /* source line or 0 */
	/* The functions inlined at the address, outermost first (name is the function holding
	 * them; the last one is where the address is): demangled, from DWARF or Go's inline
	 * trees; owned by the cache, the array valid until the next lookup. */
	const char *const *inlined;
	unsigned ninlined;
};

struct sym_stats {
	size_t processes;      /* processes with per-process state (maps, JIT map) */
	size_t maps;	       /* mappings held over all processes */
	size_t maps_reads;     /* /proc/PID/maps reads so far */
	size_t elf_cached;     /* ELF symbol tables held (with symbols) */
	size_t elf_negative;   /* negative entries: files that could not be opened or had no symbols */
	size_t elf_opens;      /* ELF files opened so far (main files, not debuginfo) */
	size_t elf_evictions;  /* ELF tables dropped by the cap */
	size_t elf_symbols;    /* symbols held over all ELF tables */
	size_t kernel_symbols; /* kallsyms text symbols held */
	size_t jit_symbols;    /* perf-PID.map symbols held over all processes */
	size_t strings;	       /* interned result strings (names, modules, files) */
	size_t mem_bytes;      /* approximate heap bytes held by the cache */
	size_t hostile_files;  /* perf map reads refused: a symlink, FIFO, device or past the cap */
};

/* Creates an empty cache; nothing is read until the first lookup. NULL on ENOMEM. */
struct sym_cache *sym_cache__new(void);
/* Frees the cache and every string it returned; NULL is a no-op. */
void sym_cache__free(struct sym_cache *sc);

/* Resolves a kernel text address from /proc/kallsyms (loaded on first use, reloaded at most every
 * few seconds when an address is not covered). 0, or -ENOENT when unknown (out still filled with
 * a printable name); -ENOMEM. */
int sym_cache__kernel(struct sym_cache *sc, uint64_t addr, struct sym_info *out);
/* Starts reading kallsyms on a thread of its own (a few hundred ms of kernel time), so that the
 * first sym_cache__kernel only waits for what is left of it. No-op once loaded or started.
 * 0 or -errno (nothing started; the first lookup reads it then). */
int sym_cache__kernel_preload(struct sym_cache *sc);
/* Names the kernel addresses addrs[0..n) now (any order, repeats allowed; sorted in place) by
 * one pass over kallsyms that keeps only what names them: a fraction of the time of loading
 * its table when a few thousand addresses are asked (a perf.data file's). sym_cache__kernel
 * answers them from these names from then on, others from the table as before. Replaces an
 * earlier prefetch. 0 or -errno (nothing kept). */
int sym_cache__kernel_prefetch(struct sym_cache *sc, uint64_t *addrs, size_t n);
/* A file whose symbols a reader will need, and the build-id it must have (build_id_len 0: any). */
struct sym_preload {
	const char *path; /* on the host */
	const unsigned char *build_id;
	size_t build_id_len;
};
/* Starts reading the symbol tables of files[0..n) on a thread of their own, in that order, for
 * a reader that knows them before it names anything (a perf.data file's build-id list): a
 * lookup that maps one of them (by its device and inode now) takes its table from there,
 * waiting while the thread reads it, or reads it itself when the thread has not reached it.
 * Call before the first lookup and after the settings; replaces an earlier preload. 0 or
 * -errno (nothing started: lookups read the files as before). */
int sym_cache__preload(struct sym_cache *sc, const struct sym_preload *files, size_t n);
/* Resolves a user address of pid through its mappings (read on first use, re-read at most every
 * 200 ms when addr is in no known mapping). 0, or -ENOENT when unknown (out still filled with
 * "module+0xOFF" or "[unknown]"); -ENOMEM. */
int sym_cache__user(struct sym_cache *sc, int pid, uint64_t addr, struct sym_info *out);
/* (Re)reads /proc/PID/maps and the JIT map now and loads the symbols of every executable mapping,
 * e.g. at exec, so short-lived processes resolve after they exit. 0 or -errno (-ESRCH: gone). */
int sym_cache__process_load(struct sym_cache *sc, int pid);
/* How many times pid's JIT map was read (0 when never): names of JIT addresses found before
 * may have changed when it moves (code freed, other code in its place). */
uint32_t sym_cache__jit_gen(struct sym_cache *sc, int pid);
/* Drops per-process state (maps, JIT symbols); shared ELF caches are kept. Unknown pid: no-op. */
void sym_cache__process_exit(struct sym_cache *sc, int pid);
/* Mappings kept from the kernel's own reports (bpf/sideband.h) rather than read from
 * /proc/PID/maps, so processes resolve after they are gone. sym_cache__exec: pid runs a new
 * program; from now on its mappings are only the ones sym_cache__mmap adds. sym_cache__fork:
 * pid is a new child of ppid and inherits its mappings (when ppid's are followed this way).
 * sym_cache__mmap: m appeared in pid (m->path "" for anonymous code; copied), replacing what
 * it covers; ignored for processes not known yet (their /proc maps are read on first use).
 * 0 or -ENOMEM. */
int sym_cache__exec(struct sym_cache *sc, int pid);
int sym_cache__fork(struct sym_cache *sc, int ppid, int pid);
int sym_cache__mmap(struct sym_cache *sc, int pid, const struct proc_map *m);

/* The file mapping at addr in pid, for the unwinder. */
struct sym_module {
	uint64_t start, end, pgoff, dev, inode;
	const char *path; /* as mapped; owned by the cache */
	int fd;		  /* with open_file, a new descriptor of the file (the caller closes it);
			   * else -1 */
};
/* Finds the file mapped at addr in pid (reading /proc/PID/maps as sym_cache__user does) and,
 * with open_file, opens it, by the mapping's (dev, inode) when the process or the path are gone
 * but the file was opened before. 0, -ENOENT (no file mapping, or the file cannot be opened),
 * -ENOMEM. */
int sym_cache__module(struct sym_cache *sc, int pid, uint64_t addr, bool open_file,
		      struct sym_module *out);

/* For addr in a Go function of pid (from its image's .gopclntab), the frame's stack pointer
 * distance below its return address slot and whether it is the outermost frame of a stack
 * (gopcln__frame). 0, or -ENOENT when addr is not in Go code with such a table. */
int sym_cache__go_frame(struct sym_cache *sc, int pid, uint64_t addr, int32_t *spdelta, bool *top);

/* The one warning about refused files a profiled process controls (the first one, why, and
 * how many refusals), written into buf; NULL when there was none. */
const char *sym_cache__warning(const struct sym_cache *sc, char *buf, size_t len);
/* Fills out with counters and sizes (see struct sym_stats). */
void sym_cache__stats(const struct sym_cache *sc, struct sym_stats *out);

/* Directory used instead of /usr/lib/debug for separate debuginfo (build-id and debuglink);
 * NULL restores the default. Copied. For tests and unusual installs. 0 or -ENOMEM. */
int sym_cache__set_debug_root(struct sym_cache *sc, const char *dir);
/* File read instead of /proc/kallsyms (for tests); NULL restores the default. 0 or -ENOMEM. */
int sym_cache__set_kallsyms_path(struct sym_cache *sc, const char *path);
/* Keeps at most max ELF tables not used by a live process (default 256); least recently used go
 * first. */
void sym_cache__set_elf_cap(struct sym_cache *sc, size_t max);
/* Turns DWARF source file:line lookup on (default) or off. */
void sym_cache__set_lines(struct sym_cache *sc, int on);
/* Turns inline frames (sym_info.inlined: DWARF's inlined subroutines, Go's inline trees) on
 * (default) or off. With either on, the DWARF of images that have it is kept open. */
void sym_cache__set_inlines(struct sym_cache *sc, int on);
/* Leaves the names of ELF tables read from now on in their files, mapped until the table is
 * dropped, instead of copying them all at load (off by default): a file's table loads in a
 * fraction of the time, for a reader of many binaries that asks few names of each (a
 * perf.data file). Same names either way. */
void sym_cache__set_lazy_names(struct sym_cache *sc, int on);
/* Names an address of a mapped file that no symbol covers "[unknown]" (out->offset still its
 * offset in the file) instead of "file+0xOFF" (off by default): for a reader that prints its
 * own text for unknown frames and meets thousands of junk addresses (a perf.data file). */
void sym_cache__set_plain_unknowns(struct sym_cache *sc, int on);
/* Demangles C++ names as perf does (off by default): without their parameters, and so
 * without a template function's return type, for a reader whose names must be perf's (a
 * perf.data file's, compared with `perf script`'s); cheaper too. Before any lookup. */
void sym_cache__set_perf_names(struct sym_cache *sc, int on);

#endif
