/* `galatop agent` lives in a library of its own (libgalatop-agent.so: the agent, its HTTP
 * servers and its sinks, with libcurl, librdkafka and libmicrohttpd), loaded only when the
 * agent runs: every other command starts without those libraries and their dozens of
 * dependencies (their loading and constructors cost a few milliseconds per start). */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/companion.h"

#define AGENT_LIB "libgalatop-agent.so"

int cmd_agent_loaded(int argc, char **argv)
{
	char path[PATH_MAX];
	int (*run)(int, char **);
	void *lib;

	if (companion_path(AGENT_LIB, "GALATOP_AGENT_LIB", path, sizeof(path))) {
		fprintf(stderr, "galatop agent: %s: not found (build it with make, or make install)\n",
			path);
		return 1;
	}
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "galatop agent: cannot load %s: %s\n", path, dlerror());
		return 1;
	}
	*(void **)&run = dlsym(lib, "cmd_agent");
	if (!run) {
		fprintf(stderr, "galatop agent: %s has no cmd_agent: %s\n", path, dlerror());
		dlclose(lib);
		return 1;
	}
	/* Never closed: the agent's threads and atexit handlers may outlive run's return. */
	return run(argc, argv);
}
