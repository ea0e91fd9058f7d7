/* Symbol tables read ahead on a thread of their own (sym_cache__preload). Not part of the API:
 * include symbols.h instead. */
#ifndef GALATOP_SYMBOLS_ELF_PRELOAD_H
#define GALATOP_SYMBOLS_ELF_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "elf_syms.h"
#include "symbols.h"

struct elf_preload;

/* Starts reading files[0..n) (host paths; those that do not stat as regular files are left
 * out) in that order, as elf_syms__load would with these settings. NULL on failure. */
struct elf_preload *elf_preload__start(const struct sym_preload *files, size_t n,
				       const char *debug_root, int lines, int lazy_names);
/* The table of the listed file (dev, ino), once: waits while the thread reads it. true with
 * *es (loaded: *load is elf_syms__load's result) and *fd (a descriptor of the file, or -1);
 * false when the file was not listed, taken before, not reached yet or not usable as listed
 * (the caller reads it itself: the thread will not). */
bool elf_preload__take(struct elf_preload *pl, dev_t dev, ino_t ino, struct elf_syms **es,
		       int *load, int *fd);
/* Waits until the thread has gone through its list. */
void elf_preload__wait(struct elf_preload *pl);
/* Stops the thread (after the file it reads) and frees what was not taken; NULL is a no-op. */
void elf_preload__free(struct elf_preload *pl);

#endif
