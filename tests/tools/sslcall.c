/* A process that maps OpenSSL's libssl when told to and calls SSL_write on an SSL object with
 * no connection (OpenSSL returns an error without touching a socket): a known number of
 * SSL calls from a known file, for the uprobe tests. Commands, one per line on standard input,
 * each answered "ok" (or "error ...") on standard output:
 *   chroot DIR   change root to DIR (its libraries are then mapped from inside it)
 *   unshare DIR  enter a mount namespace of its own with a tmpfs on DIR, as a container's
 *                files are: galatop cannot see them under their path
 *   copy A B     copy file A to B
 *   open PATH    dlopen PATH
 *   call N       N calls of SSL_write
 *   quit */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

typedef void *(*method_fn)(void);
typedef void *(*ctx_new_fn)(void *method);
typedef void *(*ssl_new_fn)(void *ctx);
typedef int (*ssl_write_fn)(void *ssl, const void *buf, int num);

static int copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;
	int ret = in >= 0 && out >= 0 ? 0 : -1;

	while (!ret && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			ret = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

int main(void)
{
	char line[4096];
	void *ssl = NULL;
	ssl_write_fn ssl_write = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "chroot ", 7)) {
			if (chroot(line + 7) || chdir("/")) {
				printf("error chroot %s\n", line + 7);
				continue;
			}
		} else if (!strncmp(line, "unshare ", 8)) {
			if (unshare(CLONE_NEWNS) ||
			    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("tmpfs", line + 8, "tmpfs", 0, NULL)) {
				printf("error unshare %s\n", line + 8);
				continue;
			}
		} else if (!strncmp(line, "copy ", 5)) {
			char *to = strchr(line + 5, ' ');

			if (!to || (*to++ = 0, copy(line + 5, to))) {
				printf("error copy %s\n", line + 5);
				continue;
			}
		} else if (!strncmp(line, "open ", 5)) {
			void *h = dlopen(line + 5, RTLD_NOW);
			method_fn method = h ? (method_fn)dlsym(h, "TLS_client_method") : NULL;
			ctx_new_fn ctx_new = h ? (ctx_new_fn)dlsym(h, "SSL_CTX_new") : NULL;
			ssl_new_fn ssl_new = h ? (ssl_new_fn)dlsym(h, "SSL_new") : NULL;
			void *ctx;

			ssl_write = h ? (ssl_write_fn)dlsym(h, "SSL_write") : NULL;
			ctx = method && ctx_new ? ctx_new(method()) : NULL;
			ssl = ctx && ssl_new ? ssl_new(ctx) : NULL;
			if (!ssl || !ssl_write) {
				printf("error open %s: %s\n", line + 5,
				       h ? "no SSL object" : dlerror());
				continue;
			}
		} else if (!strncmp(line, "call ", 5)) {
			int n = atoi(line + 5);

			if (!ssl) {
				printf("error call: nothing open\n");
				continue;
			}
			for (int i = 0; i < n; i++)
				ssl_write(ssl, "x", 1);
		} else if (!strcmp(line, "quit")) {
			printf("ok\n");
			return 0;
		} else {
			printf("error unknown command %s\n", line);
			continue;
		}
		printf("ok\n");
	}
	return 0;
}
