/* Symbols of one ELF image (file or memory): .symtab/.dynsym, separate debuginfo by build-id or
 * .gnu_debuglink, PT_LOAD segments to turn file offsets into link-time addresses, DWARF lines. */
#ifndef GALATOP_SYMBOLS_ELF_SYMS_H
#define GALATOP_SYMBOLS_ELF_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

struct elf_syms;

/* The section named want of elf (with file contents: not SHT_NOBITS), its header in *sh; or
 * NULL. */
Elf_Scn *elf_find_section(Elf *elf, const char *want, GElf_Shdr *sh);

/* Where the image came from, for finding its separate debuginfo. */
struct elf_src {
	const char *root;	/* prefix under which the process sees its files ("/proc/42/root"),
				 * "" for the host */
	const char *path;	/* the image's path under root, NULL for memory images */
	const char *debug_root; /* "/usr/lib/debug" or an override */
	int lines;		/* keep DWARF open (elf_syms__line, elf_syms__inlines) */
	int lazy_names;		/* leave the names in the file, mapped until elf_syms__free, rather
				 * than copy them all at load (files only, not memory images) */
};

/* Whether libelf is ready (set up once, from any thread); elf_syms__begin checks it. */
bool elf_syms__ready(void);
/* Starts reading an image from fd (ownership taken: closed by elf_syms__free or earlier) or, when
 * fd < 0, from mem[0..len) (which must stay valid until elf_syms__load returns); reads its
 * build-id. 0, -ENOEXEC when it is not ELF, -ENOMEM. */
int elf_syms__begin(int fd, const void *mem, size_t len, struct elf_syms **out);
/* The GNU build-id of the image (NULL when it has none); *len gets its size. */
const unsigned char *elf_syms__build_id(const struct elf_syms *es, size_t *len);
/* Loads the symbols (image and separate debuginfo), then releases the image unless DWARF lines
 * are kept. 0, -ENODATA when no code symbol was found, -ENOMEM. */
int elf_syms__load(struct elf_syms *es, const struct elf_src *src);
/* Frees es and closes its files; NULL is a no-op. */
void elf_syms__free(struct elf_syms *es);
/* Resolves a file offset of the image: the symbol name (raw, mangled) or NULL, its start distance
 * in *off; *vaddr gets the link-time address either way. Name valid until es is freed. */
const char *elf_syms__find(const struct elf_syms *es, uint64_t file_off, uint64_t *off,
			   uint64_t *vaddr);
/* Source file and line of link-time address vaddr from DWARF; 0, or -ENOENT when unknown. The
 * file name is valid until es is freed. */
int elf_syms__line(struct elf_syms *es, uint64_t vaddr, const char **file, unsigned *line);
/* Most inline frames returned for one address. */
#define ELF_MAX_INLINES 32
/* The functions inlined at link-time address vaddr, outermost first (the symbol holding vaddr
 * is not among them), as raw (mangled) names into names[0..max): from Go's inline trees
 * (.gopclntab) for Go images, else from DWARF's inlined subroutines (when DWARF lines are
 * kept). Returns how many (the innermost ones when there are more than max); names valid
 * until es is freed. */
size_t elf_syms__inlines(struct elf_syms *es, uint64_t vaddr, const char **names, size_t max);
/* The Go frame at file offset file_off (gopcln__frame), for Go images; -ENOENT otherwise. */
int elf_syms__go_frame(const struct elf_syms *es, uint64_t file_off, int32_t *spdelta, bool *top);
/* Number of symbols held. */
size_t elf_syms__count(const struct elf_syms *es);
/* Approximate heap bytes held (names and arrays; not libdw's internal line tables). */
size_t elf_syms__mem(const struct elf_syms *es);
/* Whether a separate debuginfo file was used (for tests and the detail pane). */
int elf_syms__has_debuginfo(const struct elf_syms *es);

#endif
