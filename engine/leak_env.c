/* The environment of a command run with the leak probe's in-process sampler: see
 * leak_env.h. */
#include "leak_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/leak.h"
#include "bpf/probes.h"
#include "symbols/elf_func.h"
#include "util/companion.h"

/* Runtimes that must be the first library of a process (the sampler preloaded before them
 * makes the program abort at start) or that replace malloc themselves. */
static const char *const first_runtimes[] = { "libasan.so", "libhwasan.so", "libtsan.so",
					      "liblsan.so" };

/* The file cmd runs, found as execvp finds it, into buf[len]; false when not found. */
static bool command_path(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(cmd, '/')) {
		snprintf(buf, len, "%s", cmd);
		return true;
	}
	for (p = path && path[0] ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		snprintf(buf, len, "%.*s/%s", (int)(end - p), p, cmd);
		if (end > p && !access(buf, X_OK))
			return true;
	}
	return false;
}

bool leak_preload_wanted(const struct record_opts *o)
{
	return o->command && (o->types & PROBE_LEAK) && !o->leak_uprobes &&
	       !o->ntids && !o->comm[0] && !o->ncontainers && !o->npods && !o->cgroup[0];
}

char **leak_env__new(const struct record_opts *o, char *lib, size_t len, char *why,
		     size_t wlen)
{
	const char *old = getenv("LD_PRELOAD");
	size_t n = 0, k = 0, size;
	char **env, exe[4096];

	if (companion_path(LEAK_PRELOAD_LIB, "GALATOP_LEAK_LIB", lib, len)) {
		snprintf(why, wlen, "%s not found (next to galatop or in %s)", LEAK_PRELOAD_LIB, lib);
		return NULL;
	}
	if (command_path(o->command[0], exe, sizeof(exe)))
		for (size_t i = 0; i < sizeof(first_runtimes) / sizeof(first_runtimes[0]); i++)
			if (elf_needs(exe, first_runtimes[i]) == 1) {
				snprintf(why, wlen, "%s links %s, which must come first in it", exe,
					 first_runtimes[i]);
				return NULL;
			}
	if (strpbrk(lib, " :")) {
		snprintf(why, wlen, "%s has a space or colon in its path, which LD_PRELOAD cannot hold",
			 lib);
		return NULL;
	}
	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) &&
		    strncmp(environ[i], LEAK_PRELOAD_ENV "=", sizeof(LEAK_PRELOAD_ENV)))
			env[k++] = environ[i];
	size = strlen(lib) + (old ? strlen(old) : 0) + 16;
	env[k] = malloc(size);
	env[k + 1] = malloc(64);
	if (!env[k] || !env[k + 1]) {
		free(env[k]);
		free(env[k + 1]);
		free(env);
		return NULL;
	}
	snprintf(env[k], size, "LD_PRELOAD=%s%s%s", old && old[0] ? old : "", old && old[0] ? ":" : "",
		 lib);
	snprintf(env[k + 1], 64, LEAK_PRELOAD_ENV "=%llu",
		 (unsigned long long)(o->leak_sample ? o->leak_sample : LEAK_SAMPLE_DEFAULT));
	return env;
}

void leak_env__free(char **env)
{
	size_t n = 0;

	if (!env)
		return;
	while (env[n])
		n++;
	if (n >= 2) {
		free(env[n - 2]);
		free(env[n - 1]);
	}
	free(env);
}
