/* leak: the command galatop starts gets the probe's in-process sampler (bpf/preload/leak.c,
 * docs/leak.md) through its environment: the library appended to LD_PRELOAD, the mean bytes
 * between samples in LEAK_PRELOAD_ENV. Used by engine/session.c. */
#ifndef GALATOP_ENGINE_LEAK_ENV_H
#define GALATOP_ENGINE_LEAK_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "record_opts.h"

/* Whether o's command gets the sampler: the leak probe was asked for (a live view that may
 * reach it with `o` later leaves the command's malloc alone: its CPU stacks would show the
 * sampler's frames), per process (no target that makes it probe every process), and
 * --leak-uprobes did not turn it down. */
bool leak_preload_wanted(const struct record_opts *o);

/* The environment for o's command: galatop's own with the sampler library appended to
 * LD_PRELOAD (a user's preloads stay first) and the mean in LEAK_PRELOAD_ENV; the library's
 * path into lib[len]. NULL when the library is not found or cannot be preloaded (why[wlen]
 * says so: a space in its path, a command linked with a sanitizer's runtime, which must come
 * first in it) or on ENOMEM (why left empty). Freed with leak_env__free. */
char **leak_env__new(const struct record_opts *o, char *lib, size_t len, char *why, size_t wlen);
/* Frees what leak_env__new made (galatop's own strings stay); NULL is a no-op. */
void leak_env__free(char **env);

#endif
