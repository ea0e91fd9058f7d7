/* Inside the symbol cache: its state and the ELF object cache's entry points, shared by
 * symbols.c (processes, kernel, settings) and elf_cache.c (ELF tables shared by (dev, inode),
 * build-id and the vDSO). Not part of the API: include symbols.h instead. */
#ifndef GALATOP_SYMBOLS_SYMCACHE_H
#define GALATOP_SYMBOLS_SYMCACHE_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf_preload.h"
#include "elf_syms.h"
#include "hmap.h"
#include "kallsyms.h"
#include "proc_maps.h"
#include "symbols.h"
#include "symtab.h"

#define NSEC 1000000000ULL
#define MAPS_REFRESH_NS (200 * 1000000ULL)  /* re-read maps / JIT map at most this often */
#define KSYMS_RELOAD_NS (10 * NSEC)	     /* re-read kallsyms at most this often */
#define OPEN_RETRY_NS (10 * NSEC)	     /* files that could not be opened are retried after */
#define VDSO_MAX (1 << 20)
#define MAX_KEYS 4

/* A shared ELF table, or a negative entry (syms == NULL) for a file without usable symbols. */
struct elf_obj {
	struct elf_syms *syms;
	uint64_t retry_ns;	     /* negative entries from open failures: retry after; 0: never */
	unsigned refs;		     /* mappings of known processes using it */
	uint64_t last_use;	     /* sc->tick of the last use, for LRU eviction */
	size_t index;		     /* position in sc->objs */
	int fd;			     /* the file (a memfd for the vDSO), kept open for the
				      * unwinder so it resolves once the file is gone; -1 */
	const void *keys[MAX_KEYS]; /* hmap keys ('F' dev ino, 'B' build-id, 'V' vdso) */
	size_t key_lens[MAX_KEYS];
	size_t nkeys;
};

struct proc {
	int pid;
	struct proc_map *maps;
	struct elf_obj **elfs; /* per mapping, NULL until resolved */
	size_t nmaps, maps_cap; /* mappings, and room for so many in maps and elfs */
	uint64_t maps_ns; /* when maps were last read (or tried), by clock_coarse_ns */
	struct sym_table *jit;
	uint64_t jit_ns;
	uint32_t jit_gen; /* JIT map reads that found one */
	off_t jit_size;	  /* its size then: an unchanged map (maps only grow) is not read again */
	bool tracked;	  /* maps kept from side-band events since its exec: /proc not read */
	char root[48];	  /* "/proc/PID/root" */
};

struct sym_cache {
	struct hmap *strs;  /* plain interned strings (value: the key itself) */
	struct hmap *names; /* raw symbol name -> display name (in strs) */
	struct hmap *procs; /* pid -> struct proc */
	struct proc *last_proc; /* the last one proc_get found (NULL when freed) */
	struct hmap *files; /* key -> struct elf_obj */
	struct elf_obj **objs;
	size_t nobjs, objs_cap, unused; /* unused: objs with refs == 0 */
	size_t elf_cap;
	uint64_t tick;
	int lines;
	int inlines; /* inline frames (DWARF, Go's inline trees) */
	int lazy_names; /* ELF names left in the mapped files (elf_src.lazy_names) */
	int plain_unknowns; /* unknown offsets of files named "[unknown]", not "file+0xOFF" */
	int perf_names;	    /* C++ names demangled as perf does: no parameters */
	const char *unknown_name; /* "[unknown]", interned */
	struct kallsyms *ks;
	uint64_t ks_ns;
	int ks_tried;
	bool ks_pending;	   /* a preload thread is reading kallsyms into ks_pre */
	pthread_t ks_thread;
	struct kallsyms *ks_pre;
	uint64_t *kaddrs; /* kernel addresses named ahead (sym_cache__kernel_prefetch), ascending */
	struct kallsyms_hit *khits; /* what names them */
	size_t nkaddrs;
	char *karena; /* their strings */
	struct elf_preload *pre; /* tables read ahead (sym_cache__preload), or NULL */
	char *debug_root, *kallsyms_path;
	size_t maps_reads, elf_opens, evictions;
	size_t hostile;		      /* files a process controls that were refused */
	const char *inlined[ELF_MAX_INLINES]; /* the last lookup's inline frames */
	char hostile_first[PATH_MAX + 64]; /* the first of them and why */
};

/* The ELF object cache (elf_cache.c). */
/* The ELF table of mapping i of p, opened and shared on first use (NULL: none usable). */
struct elf_obj *elf_cache_map(struct sym_cache *sc, struct proc *p, size_t i);
/* A mapping of a known process starts or stops using o. */
void elf_cache_ref(struct sym_cache *sc, struct elf_obj *o);
void elf_cache_unref(struct sym_cache *sc, struct elf_obj *o);
/* Drops unused tables past the cap, least recently used first. */
void elf_cache_evict(struct sym_cache *sc);
/* Frees o and its table (at teardown). */
void elf_cache_destroy(struct sym_cache *sc, struct elf_obj *o);

#endif
