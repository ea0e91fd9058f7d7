/* Loader of bpf/l7_probe.bpf.c: the syscall tracepoints of the L7 capture and the OpenSSL uprobes,
 * attached per libssl file mapped on the box (containers included, through /proc/PID/root)
 * and to libraries mapped later. Delivers struct l7_event records (bpf/l7_event.h) to a callback.
 * Nothing is pinned; everything detaches when freed or when the process exits. */
#ifndef GALATOP_BPF_L7_PROBE_H
#define GALATOP_BPF_L7_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/l7_event.h"
#include "bpf/probes.h"

struct l7_probe_opts {
	const struct probe_opts *targets; /* pids, tids, comm, cgroups; NULL = every task */
	unsigned capture;		  /* bytes copied per message; 0 = L7_CAPTURE_DEFAULT */
	unsigned proto_mask;		  /* bit 1 << p per enum l7_proto p traced; 0 = all */
	bool no_tls;			  /* no OpenSSL or Go crypto/tls uprobes */
	/* A command about to be started (`record -- CMD`), as execvp finds it: its executable
	 * gets the Go crypto/tls probes before it runs; NULL = none. */
	const char *exec_file;
	bool no_stacks;			  /* no user stack per message */
	size_t ringbuf_bytes;		  /* 0 = 16 MiB */
};

/* Summed kernel counters plus the loader's own. */
struct l7_probe_stats {
	struct l7_counters k;
	uint64_t tls_files; /* libssl files with uprobes attached */
	uint64_t go_files;  /* Go executables with crypto/tls uprobes attached */
	uint64_t malformed; /* records dropped by user space as malformed */
};

/* Called for every record; data holds e->cap bytes. Both live in the ring buffer and are valid
 * only during the call. */
typedef void (*l7_event_fn)(void *ctx, const struct l7_event *e, const uint8_t *data);

struct l7_probes;

/* Loads and attaches the L7 capture (root). NULL with a one-line reason in err when it cannot.
 * TLS problems (no libssl found, a file whose symbols cannot be attached) are warnings. */
struct l7_probes *l7_probes__open(const struct l7_probe_opts *o, l7_event_fn fn, void *ctx,
				  char *err, size_t errlen);
/* Newline-separated warnings, "" if none; owned by p. */
const char *l7_probes__warnings(const struct l7_probes *p);
/* Whether size bytes at data make a well-formed record of the L7 ring buffer (struct
 * l7_event and the cap bytes it announces). 0 or -EINVAL. */
int l7_event_check(const void *data, size_t size);
/* An fd that becomes readable when records wait; owned by p. */
int l7_probes__fd(const struct l7_probes *p);
/* Waits up to timeout_ms and drains the ring buffer; every few seconds also attaches the TLS
 * uprobes to libssl files mapped since. Number of records or -errno. */
int l7_probes__poll(struct l7_probes *p, int timeout_ms);
/* As l7_probes__poll without waiting, until deadline_ns (see drain__consume). */
int l7_probes__consume(struct l7_probes *p, uint64_t deadline_ns);
/* Reads user stack id into ips (innermost first); the number of frames, 0 when gone. */
size_t l7_probes__stack(struct l7_probes *p, int32_t id, uint64_t *ips, size_t max);
/* Adds a target process at run time (pid filter on). 0 or -errno. */
int l7_probes__add_pid(struct l7_probes *p, int tgid);
void l7_probes__stats(const struct l7_probes *p, struct l7_probe_stats *st);
/* Detaches and frees everything; NULL is a no-op. */
void l7_probes__free(struct l7_probes *p);

#endif
