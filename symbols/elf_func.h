/* Functions of an ELF file by name: where their code is in the file and its first bytes (the
 * uprobe placement of bpf/leak.c reads them), the file offset of a link-time address, and the
 * libraries it needs. */
#ifndef GALATOP_SYMBOLS_ELF_FUNC_H
#define GALATOP_SYMBOLS_ELF_FUNC_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_FUNC_CODE 64 /* first code bytes read per function */

/* The file offset of len bytes at link-time address vaddr of elf (a PT_LOAD holds them), or -1. */
int64_t elf_vaddr_to_off(Elf *elf, uint64_t vaddr, size_t len);

/* Looks names[0..n) up among the defined symbols (.dynsym and .symtab) of the ELF file at
 * path; for each found, found[i] is set, code[i] holds its first ELF_FUNC_CODE bytes (zeros
 * past the file's end) and, when offs is not NULL, offs[i] its file offset (a uprobe's). The
 * number found, or -errno (the file cannot be read, or is no ELF). */
int elf_func_code(const char *path, const char *const *names, size_t n, bool *found,
		  uint8_t (*code)[ELF_FUNC_CODE], uint64_t *offs);

/* Whether the ELF file at path names a library whose name starts with prefix among the
 * libraries it needs (DT_NEEDED): 1 or 0, or -errno (the file cannot be read, or is no ELF). */
int elf_needs(const char *path, const char *prefix);

#endif
