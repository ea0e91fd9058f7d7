/* The shared libraries galatop ships beside its binary (the JVMTI agent, the node agent's
 * sinks): found next to the running binary as a build tree lays them out, else where
 * `make install` puts them. */
#ifndef GALATOP_UTIL_COMPANION_H
#define GALATOP_UTIL_COMPANION_H

#include <stddef.h>

/* Writes into buf the path of the readable library called name: $env when that variable is
 * set (and then only there), else beside /proc/self/exe, in its build/ or its parent, else
 * PREFIX/lib/galatop/name. 0, or -ENOENT with buf holding the installed path looked at. */
int companion_path(const char *name, const char *env, char *buf, size_t len);

#endif
