/* Unit tests for symbols/elf_func's elf_needs: the libraries an ELF file needs, read from its
 * DT_NEEDED entries, on this test's own executable (built with ASan by gcc: it needs libasan
 * and libc) and on files that are no ELF. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/elf_func.h"

TEST_CASE(elf_needs_reads_the_needed_libraries)
{
	CHECK_NUM(elf_needs("/proc/self/exe", "libasan.so"), 1);
	CHECK_NUM(elf_needs("/proc/self/exe", "libc.so."), 1);
	CHECK_NUM(elf_needs("/proc/self/exe", "libtsan.so"), 0);
	/* a prefix of a name, not a part of it */
	CHECK_NUM(elf_needs("/proc/self/exe", "asan"), 0);
}

TEST_CASE(elf_needs_says_what_is_no_elf)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/galatop-elf-needs-%d.txt", (int)getpid());
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("not an ELF file\n", f);
		fclose(f);
	}
	CHECK_NUM(elf_needs(path, "libc.so."), -ENOEXEC);
	remove(path);
	CHECK_NUM(elf_needs("/nonexistent/galatop-elf-needs", "libc.so."), -ENOENT);
}

int main(void)
{
	RUN(elf_needs_reads_the_needed_libraries);
	RUN(elf_needs_says_what_is_no_elf);
	HARNESS_EXIT();
}
