/* C++ and Rust symbol demangling through libiberty. */
#ifndef GALATOP_SYMBOLS_DEMANGLE_H
#define GALATOP_SYMBOLS_DEMANGLE_H

#include <stdbool.h>

/* Demangles an Itanium C++ (_Z...) or Rust legacy/v0 (_ZN...h<hash>E, _R...) name, with its
 * parameters when params (without: as perf names symbols, a template function's return type
 * left out too); returns a malloc'ed string the caller frees, or NULL when name is not mangled
 * (or on ENOMEM: the caller shows the raw name). */
char *sym_demangle(const char *name, bool params);

#endif
