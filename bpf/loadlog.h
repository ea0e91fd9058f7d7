/* Loader support. libbpf's own warnings, caught so that a probe family's loader can quote the first one since
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

/* The start of every probe family's loader: whether this process may load BPF programs
 * (root, or CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN), then the catcher installed and reset.
 * 0, or -1 with err set to one line naming the missing privilege, prefixed by family
 * (e.g. "l7: ", or ""). libbpf lifts the locked-memory limit itself where the kernel needs it. */
int loader_begin(const char *family, char *err, size_t errlen);

#endif
