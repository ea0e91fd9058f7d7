/* Symbol-resolution test target: prints "name 0xADDR" lines for functions of its own, of libc and,
 * on request, of an exec mapping of a file ("mmap FILE") or an anonymous exec region ("jit"),
 * then "ready", and exits when its stdin closes. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

__attribute__((noinline)) int target_alpha(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int target_beta(int x)
{
	return target_alpha(x) * 5;
}

int main(int argc, char **argv)
{
	char buf[64];

	printf("target_alpha %p\n", (void *)target_alpha);
	printf("target_beta %p\n", (void *)target_beta);
	printf("getpid %p\n", dlsym(RTLD_DEFAULT, "getpid"));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "mmap") && i + 1 < argc) {
			int fd = open(argv[++i], O_RDONLY);
			void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

			printf("mmap %p\n", p == MAP_FAILED ? NULL : p);
		} else if (!strcmp(argv[i], "jit")) {
			void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			printf("jit %p\n", p == MAP_FAILED ? NULL : p);
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return target_beta(argc) == 42;
}
