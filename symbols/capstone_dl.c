/* capstone loaded on first use: see capstone_dl.h. */
#include "capstone_dl.h"

#include <dlfcn.h>
#include <pthread.h>

#define STR_(x) #x
#define STR(x) STR_(x)
/* The capstone whose header this is compiled against (its soname carries the API major). */
#define CAPSTONE_LIB "libcapstone.so." STR(CS_API_MAJOR)

static struct capstone_fns fns;
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *lib = dlopen(CAPSTONE_LIB, RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		return;
	/* never closed: loaded once for the life of the process */
	*(void **)&fns.open = dlsym(lib, "cs_open");
	*(void **)&fns.option = dlsym(lib, "cs_option");
	*(void **)&fns.disasm = dlsym(lib, "cs_disasm");
	*(void **)&fns.free = dlsym(lib, "cs_free");
	*(void **)&fns.close = dlsym(lib, "cs_close");
	*(void **)&fns.insn_group = dlsym(lib, "cs_insn_group");
	*(void **)&fns.regs_access = dlsym(lib, "cs_regs_access");
	loaded = fns.open && fns.option && fns.disasm && fns.free && fns.close && fns.insn_group &&
		 fns.regs_access;
}

const struct capstone_fns *capstone_dl(void)
{
	pthread_once(&once, load);
	return loaded ? &fns : NULL;
}
