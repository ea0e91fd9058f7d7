/* Loader of bpf/l7_probe.bpf.c: the syscall tracepoints of the L7 capture and the OpenSSL uprobes,
 * attached per libssl file mapped on the box (containers included, through /proc/PID/root)
 * and to libraries mapped later. Delivers struct l7_event records (bpf/l7_event.h) to a callback.
 * Nothing is pinned; everything detaches when freed or when the process exits. */
#ifndef GALATOP_BPF_L7_PROBE_H
#define GALATOP_BPF_L7_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/l7_count.h"
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
	/* Plain exchanges of connections user space names (l7_probes__count_conn) counted in
	 * the kernel (bpf/l7_count.h). */
	bool count;
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
/* Requests counted in the kernel (opts.count): connection (tgid, fd, gen), a server's HTTP/1 or
 * RESP one, is counted from now on under session number sess (its slot is freed at its close
 * record). 0 or -errno (-ENOSPC: every slot is taken). */
int l7_probes__count_conn(struct l7_probes *p, uint32_t tgid, int32_t fd, uint64_t gen,
			  uint32_t sess);
/* Requests with key hash h (bpf/l7_count.h's l7c_request) belong to endpoint number ep; those
 * answered later than slow_ns go as records (0: every one). 0 or -errno. */
int l7_probes__count_endpoint(struct l7_probes *p, uint64_t h, uint32_t ep, uint64_t slow_ns);
/* No connection is counted any more (every message goes as a record again); a request held
 * at that moment is lost. */
void l7_probes__count_stop(struct l7_probes *p);

/* The growth of the counted requests of one session and endpoint whose latency falls in one
 * bucket since the last read; first_ns and last_ns are the cell's earliest request and latest
 * answer so far, not a growth. */
struct l7_count_bucket {
	uint32_t sess, ep;
	uint32_t bucket; /* model/hist.h's index */
	uint64_t n, lat_sum, bytes_recv, bytes_sent, segs_recv, segs_sent, first_ns, last_ns;
};
/* Called with the buckets that grew of one (session, endpoint) pair (nb of them). */
typedef void (*l7_count_fn)(void *ctx, uint32_t sess, uint32_t ep,
			    const struct l7_count_bucket *b, size_t nb);
/* Calls fn for every pair whose counts grew since the last call. 0 or -errno. */
int l7_probes__count_read(struct l7_probes *p, l7_count_fn fn, void *ctx);

/* The end of a recording: every named connection's request answered but not yet counted (the
 * kernel counts it at the connection's next request or close) is passed to fn as a bucket of
 * one, and left out of the kernel's counts. 0 or -errno. */
int l7_probes__count_pending(struct l7_probes *p, l7_count_fn fn, void *ctx);

/* Detaches and frees everything; NULL is a no-op. */
void l7_probes__free(struct l7_probes *p);

#endif
