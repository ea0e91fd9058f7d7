/* Thin wrapper: libiberty's auto style tries Rust (legacy and v0) before GNU v3. */
#include <libiberty/demangle.h>

#include "demangle.h"

char *sym_demangle(const char *name, bool params)
{
	/* only names that look mangled: cplus_demangle in auto style also accepts other
	 * schemes (e.g. D, GNAT) that plain C names can collide with */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, params ? DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO : DMGL_AUTO);
}
