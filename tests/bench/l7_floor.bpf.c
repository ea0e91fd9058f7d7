// SPDX-License-Identifier: GPL-2.0
/* The least a kernel-side L7 capture can cost, for tests/bench/l7_floor.sh: on the same two
 * tracepoints as galatop's L7 family (sock:sock_send_length, sock:sock_recv_length), each
 * target's socket call is tied to its connection and, for the server's requests (HTTP/1 and
 * RESP), the request's endpoint is hashed from its first bytes; each response's status (HTTP's
 * code, RESP's error reply) and latency go into the endpoint's counters and log-linear histogram
 * in a map. No record per message, no protocol guess, no framing of bodies, no addresses: a
 * lower bound of a design that keeps its tables in the kernel, not a capture. Measured against
 * galatop in the same rounds, it tells how much of galatop's cost any per-request counting
 * pays on this machine. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "kabi.h"
#include "msb.bpf.h"
#include "l7_floor.h"

#define PID_WORDS (1 << 16) /* one bit per pid up to 4M */

/* Set by the loader before load. fl_all: every process is a target, and each side of a
 * connection counts its own exchanges (a client's request as it is sent, its answer as it comes
 * in), as `galatop --type l7` with no target does. fl_noread (with fl_all): no byte of a call is
 * read; a call in the other direction than the one before closes an exchange, counted under one
 * endpoint: what is left once reading the messages is taken away. */
const volatile bool fl_all;
const volatile bool fl_noread;

/* One bit per target tgid, set by user space: an array lookup the verifier inlines. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PID_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} fl_pids SEC(".maps");

struct fl_conn {
	__u64 sk;
	__u64 req_ts; /* the open request's arrival, 0 when none */
	__u64 ep;     /* its endpoint's hash */
	__u64 req_bytes;
	__u64 last_recv; /* fl_noread: the direction of the connection's previous call */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* tgid << 32 | fd */
	__type(value, struct fl_conn);
} fl_conns SEC(".maps");

/* Per CPU, so that the two sides of a connection, running on two CPUs, never share a line. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct fl_ep);
} fl_eps SEC(".maps");

/* A zeroed endpoint to insert from (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fl_ep);
} fl_zero SEC(".maps");

static __always_inline bool is_target(__u32 tgid)
{
	__u32 w = (tgid >> 6) & (PID_WORDS - 1);
	__u64 *bits = bpf_map_lookup_elem(&fl_pids, &w);

	return bits && (*bits >> (tgid & 63) & 1);
}

/* A request's endpoint: HTTP's method and path up to the query, or RESP's command name (after
 * "*N\r\n$L\r\n", counts of one or two digits). Constant indices only (an unrolled loop). */
static __always_inline int request_hash(const __u8 *d, __u64 *h)
{
	__u64 x = 14695981039346656037ull;
	int i, start, stop, n = 0;

	if (d[0] == '*') {
		start = d[2] == '\r' ? 4 : 5;
		if (start == 4)
			start = d[4] == '$' ? (d[6] == '\r' ? 8 : 9) : 0;
		else
			start = d[5] == '$' ? (d[7] == '\r' ? 9 : 10) : 0;
		if (!start)
			return 0;
		stop = '\r';
	} else if (d[0] >= 'A' && d[0] <= 'Z') {
		start = 0;
		stop = '?';
	} else {
		return 0;
	}
#pragma unroll
	for (i = 0; i < 64; i++) {
		__u8 c = d[i];

		if (i < start)
			continue;
		if (c == stop || c == '\r' || (c == ' ' && ++n == 2))
			break;
		x = (x ^ c) * 1099511628211ull;
	}
	*h = x;
	return 1;
}

/* A response's status and latency into its request's endpoint. */
static __always_inline void count(struct fl_conn *c, __u64 now, int ret, __u32 err)
{
	struct fl_ep *e;
	__u64 lat, h = c->ep;
	__u32 b;

	e = bpf_map_lookup_elem(&fl_eps, &h);
	if (!e) {
		__u32 zero = 0;
		struct fl_ep *z = bpf_map_lookup_elem(&fl_zero, &zero);

		if (!z)
			return;
		bpf_map_update_elem(&fl_eps, &h, z, BPF_NOEXIST);
		e = bpf_map_lookup_elem(&fl_eps, &h);
		if (!e)
			return;
	}
	lat = now - c->req_ts;
	b = msb64(lat | 8);
	e->count++;
	e->err += err;
	e->sum += lat;
	e->bytes += c->req_bytes + ret;
	e->hist[(b << 3 | (__u32)(lat >> (b - 3)) & 7) & (FL_BUCKETS - 1)]++;
	c->req_ts = 0;
}

/* A response's first bytes: 1 for an error, 0 for a success, -1 for no response. */
static __always_inline int response_err(const __u8 *d)
{
	if (d[0] == 'H' && d[1] == 'T' && d[2] == 'T' && d[3] == 'P')
		return d[9] >= '4';
	if (d[0] == '-')
		return 1;
	if (d[0] == '$' || d[0] == '+' || d[0] == ':' || d[0] == '*')
		return 0;
	return -1;
}

static __always_inline int on_sock(struct sock *sk, int ret, int recv)
{
	__u64 id = bpf_get_current_pid_tgid(), key, now, buf, h;
	struct fl_conn *c;
	struct pt_regs *regs;
	long nr;
	int err;

	if (ret <= 0 || (!fl_all && !is_target(id >> 32)))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	nr = regs->orig_ax;
	buf = regs->si;
	if (nr == GT_NR_READV || nr == GT_NR_WRITEV) {
		struct iovec v;

		if (fl_noread)
			goto known;
		if (bpf_probe_read_user(&v, sizeof(v), (void *)buf))
			return 0;
		buf = (__u64)v.iov_base;
	} else if (nr != GT_NR_READ && nr != GT_NR_WRITE && nr != GT_NR_SENDTO &&
		   nr != GT_NR_RECVFROM) {
		return 0;
	}
known:
	key = (id >> 32) << 32 | (__u32)regs->di;
	c = bpf_map_lookup_elem(&fl_conns, &key);
	if (!c || c->sk != (__u64)sk) {
		struct fl_conn n = {.sk = (__u64)sk};

		bpf_map_update_elem(&fl_conns, &key, &n, BPF_ANY);
		c = bpf_map_lookup_elem(&fl_conns, &key);
		if (!c)
			return 0;
	}
	now = bpf_ktime_get_ns();
	if (fl_all && fl_noread) {
		if (c->req_ts && c->last_recv != (__u64)recv)
			count(c, now, ret, 0);
		else if (!c->req_ts) {
			c->req_ts = now;
			c->req_bytes = ret;
		}
		c->last_recv = recv;
	} else {
		/* Traced servers: a request comes in, its answer goes out (a 16-byte read);
		 * every process: either side, a request starts an exchange, an answer ends it. */
		bool in = fl_all || recv, out = fl_all || !recv;
		__u32 n = in ? 64 : 16;
		__u8 d[64] = {};

		if ((!in && !c->req_ts) ||
		    bpf_probe_read_user(d, ret < n ? (ret & 63) : n, (void *)buf))
			return 0;
		if (out && c->req_ts && (err = response_err(d)) >= 0) {
			count(c, now, ret, err);
		} else if (in && request_hash(d, &h)) {
			c->req_ts = now;
			c->ep = h;
			c->req_bytes = ret;
		}
	}
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(gt_l7_fl_send, struct sock *sk, int ret, int flags)
{
	return on_sock(sk, ret, 0);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(gt_l7_fl_recv, struct sock *sk, int ret, int flags)
{
	return on_sock(sk, ret, 1);
}

char LICENSE[] SEC("license") = "GPL";
