/* libbpf's own warnings, caught so that a probe family's loader can quote the first one since
 * its last reset in its own one-line message ("... (libbpf: reason)"). Per thread. */
#ifndef GALATOP_BPF_LOADLOG_H
#define GALATOP_BPF_LOADLOG_H

#include <stdarg.h>
#include <stddef.h>

/* Makes libbpf print through the catcher (its other messages are dropped); idempotent. */
void loadlog_install(void);
/* Forgets the caught warning. */
void loadlog_reset(void);
/* The first libbpf warning since the last reset, without its "libbpf: " prefix; "" if none. */
const char *loadlog_reason(void);

/* Appends one warning line (printf format) to the NUL-terminated buf of size bytes, quoting
 * the caught libbpf reason if any, then resets it; a full buf takes no more lines. */
void loadlog_vwarn(char *buf, size_t size, const char *fmt, va_list ap);

#endif
