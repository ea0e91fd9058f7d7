/* Functions of an ELF file by name: see elf_func.h. */
#include "elf_func.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

int64_t elf_vaddr_to_off(Elf *elf, uint64_t vaddr, size_t len)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr + len <= ph.p_vaddr + ph.p_filesz)
			return (int64_t)(vaddr - ph.p_vaddr + ph.p_offset);
	return -1;
}

/* Reads the code of every name found in the symbol table scn. */
static void scan_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, int fd,
		       const char *const *names, size_t n, bool *found,
		       uint8_t (*code)[ELF_FUNC_CODE], uint64_t *offs)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < count; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		for (size_t k = 0; name && k < n; k++) {
			int64_t off;

			if (found[k] || strcmp(name, names[k]))
				continue;
			off = elf_vaddr_to_off(elf, sym.st_value, 1);
			memset(code[k], 0, ELF_FUNC_CODE);
			if (off >= 0 && pread(fd, code[k], ELF_FUNC_CODE, off) > 0)
				found[k] = true;
			if (found[k] && offs)
				offs[k] = (uint64_t)off;
		}
	}
}

/* The ELF file at path opened into *elf (with its descriptor, which the caller closes after
 * elf_end): the descriptor, or -errno (-ENOEXEC: no ELF). */
static int elf_open(const char *path, Elf **elf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	*elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		elf_end(*elf);
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

int elf_needs(const char *path, const char *prefix)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Dyn dyn;
	Elf_Data *d;
	Elf *elf;
	int fd = elf_open(path, &elf), found = 0;

	if (fd < 0)
		return fd;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; !found && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			found = name && !strncmp(name, prefix, strlen(prefix));
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

int elf_func_code(const char *path, const char *const *names, size_t n, bool *found,
		  uint8_t (*code)[ELF_FUNC_CODE], uint64_t *offs)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int fd, count = 0;
	Elf *elf = NULL;

	memset(found, 0, n * sizeof(*found));
	fd = elf_open(path, &elf);
	if (fd < 0)
		return fd;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			scan_table(elf, scn, &sh, fd, names, n, found, code, offs);
	elf_end(elf);
	close(fd);
	for (size_t k = 0; k < n; k++)
		count += found[k];
	return count;
}
