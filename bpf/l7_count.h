/* Requests counted in the kernel (bpf/l7_count.bpf.h), shared with the loader (bpf/l7_probe.c).
 * A busy HTTP/1 or RESP connection (a server's or a client's), once user space has seen it and
 * says so, sends no record for a plain exchange: a request that moved whole in one call, whose
 * key user space has named, answered with a success in time. Its count, bytes, segments and
 * latency go into per-CPU cells keyed by user space's numbers for the session and the endpoint
 * and by latency bucket; user space adds the cells' growth to its tables. Everything else (a
 * new key, an error, a slow answer, a request in pieces or pipelined) still goes as records,
 * the held request first. Compiles for -target bpf (with vmlinux.h) and the host. */
#ifndef GALATOP_BPF_L7_COUNT_H
#define GALATOP_BPF_L7_COUNT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "l7_event.h"

#define L7C_HOLD 256	    /* longest request counted (its bytes are held until its answer) */
#define L7C_BUF 520	    /* room for them: indices masked to 511, words read 8 past */
#define L7C_PATH_MAX 128    /* HTTP: longest method and target hashed */
#define L7C_ARGS_MAX 16	    /* RESP: most arguments of a counted command */
#define L7C_CMD_MAX 32	    /* RESP: longest command name */
#define L7C_SLOTS 8192	    /* connections counted at once */
#define L7C_MAX_EPS 16384   /* request keys user space has named */
#define L7C_MAX_CELLS 65536 /* (session, endpoint, latency bucket) cells in use */

/* User space's word that a connection is counted (gt_l7_cnt_names, keyed tgid << 32 | fd): the
 * generation it is for and the slot of gt_l7_cnt_slots it has. */
struct l7c_name {
	__u64 gen;
	__u32 slot;
	__u32 pad;
};

/* A counted connection's slot, set up by user space (gen and sess, the rest zero). */
struct l7c_conn {
	__u64 gen;  /* the connection it serves; another: the slot is not (or no more) its */
	__u32 sess; /* user space's number for its session */
	__u32 ep;   /* the held request's endpoint number */
	__u32 mode; /* enum l7c_mode */
	__u32 tid;  /* the thread that received the held request */
	__u32 req_len;
	__u32 eps_gen;	  /* the kernel's eps_gen when last_* was looked up */
	__u64 req_ts;	  /* the held request's receive's end */
	__u64 slow_ns;	  /* an answer later than this goes as records */
	__u64 resp_end;	  /* the answer's latest send's end */
	__u64 resp_bytes; /* bytes of the answer so far */
	__u64 last_h;	  /* the latest request key looked up, its endpoint and bound */
	__u64 last_slow;
	__u32 last_ep;
	/* TCP segments: the socket's counts at the connection's latest call, those the kernel
	 * counted (taken off the records' counts, so that user space counts the rest), and those
	 * of the exchange at hand. */
	__u32 segs_in_seen, segs_out_seen;
	__u32 segs_in_ctd, segs_out_ctd;
	__u32 segs_in_x, segs_out_x;
	__u32 client;	   /* the traced process is the client: its requests are sends */
	__u64 req_end;	   /* the held request's call's end (a client's starts before: req_ts) */
	__u8 req[L7C_BUF]; /* the held request */
};

enum l7c_mode {
	L7C_IDLE = 0,	  /* no request held */
	L7C_HELD = 1,	  /* a counted request waits for its answer */
	L7C_ANSWERED = 2, /* its answer began; counted at the next request or the close */
	L7C_EMIT = 3,	  /* this exchange goes as records until the next request */
};

/* A request key (hash) user space has named: its endpoint number and slowness bound. */
struct l7c_ep {
	__u32 ep;
	__u32 pad;
	__u64 slow_ns; /* answers later than this go as records (0: every one) */
};

/* Counted requests of one session and endpoint whose latency falls in one bucket of
 * model/hist.h (gt_l7_cnt_cells, per CPU, cumulative: user space adds the growth). */
struct l7c_cell_key {
	__u32 sess, ep, bucket, pad;
};

struct l7c_cell {
	__u64 n, lat_sum;
	__u64 bytes_recv, bytes_sent;
	__u64 segs_recv, segs_sent;
	__u64 first_ns, last_ns; /* earliest request, latest answer */
};

/* The request shape both sides agree on, read from L7C_BUF bytes that hold the request and
 * zeros or anything after it: L7C_AT(d, i) reads byte i and L7C_WORD(d, i) the 8 bytes from i
 * (indices masked into the buffer, which the BPF verifier sees); L7C_LOOP(n, fn, ctx) calls
 * fn(i, ctx) for i < n until it returns 1 (bpf_loop on the BPF side, which defines it). */
#define L7C_AT(d, i) ((d)[(i)&511])
#ifdef __VMLINUX_H__
#define L7C_WORD(d, i) (*(const __u64 *)((d) + ((i)&511)))
#else
#include <string.h>
#define L7C_WORD(d, i) l7c_word_host((d) + ((i)&511))
#define L7C_LOOP(n, fn, ctx) for (__u64 l7c_i = 0; l7c_i < (n) && !(fn)(l7c_i, (ctx)); l7c_i++)
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
static inline __u64 l7c_word_host(const __u8 *p)
{
	__u64 w;

	memcpy(&w, p, sizeof(w));
	return w;
}
#endif

#define L7C_FNV0 14695981039346656037ull
#define L7C_FNV(x, c) (((x) ^ (__u8)(c)) * 1099511628211ull)

/* The 0x80 bit of every byte of w that is zero, exactly (no borrow between bytes). */
static __always_inline __u64 l7c_zero_bytes(__u64 w)
{
	const __u64 lo7 = 0x7f7f7f7f7f7f7f7full;

	return ~(((w & lo7) + lo7) | w | lo7);
}

/* Whether HTTP method m (at the start of d) has no body: the requests counted. */
static __always_inline int l7c_http_method(const __u8 *d)
{
	__u32 w = (__u32)L7C_AT(d, 0) | (__u32)L7C_AT(d, 1) << 8 | (__u32)L7C_AT(d, 2) << 16 |
		  (__u32)L7C_AT(d, 3) << 24;

	if (w == 0x20544547u) /* "GET " */
		return 4;
	if (w == 0x44414548u && L7C_AT(d, 4) == ' ') /* "HEAD " */
		return 5;
	return 0;
}

/* Whether d[0..n) holds exactly one HTTP/1 request head with no body: "\r\n\r\n" at its end
 * and nowhere before (a "\n\r" only ends the head). */
static __always_inline int l7c_http_whole(const __u8 *d, __u32 n)
{
	const __u64 nl = 0x0a0a0a0a0a0a0a0aull, cr = 0x0d0d0d0d0d0d0d0dull;
	__u32 i;

	if (n < 18 || n > L7C_HOLD || L7C_AT(d, n - 4) != '\r' || L7C_AT(d, n - 3) != '\n' ||
	    L7C_AT(d, n - 2) != '\r' || L7C_AT(d, n - 1) != '\n')
		return 0;
	/* A '\n' at p with a '\r' at p + 1, for p < n - 3. */
	for (i = 0; i < L7C_HOLD / 8; i++) {
		__u32 p = i * 8, valid;
		__u64 hit;

		if (p >= n - 3)
			break;
		hit = l7c_zero_bytes(L7C_WORD(d, p) ^ nl) & l7c_zero_bytes(L7C_WORD(d, p + 1) ^ cr);
		valid = n - 3 - p;
		if (valid < 8)
			hit &= (1ull << (valid * 8)) - 1;
		if (hit)
			return 0;
	}
	return 1;
}

/* HTTP: the hash of the method and the target up to '?', '#' or its end. 0 when the target is
 * longer than L7C_PATH_MAX. */
static __always_inline int l7c_http_key(const __u8 *d, __u32 n, __u64 *h)
{
	__u64 x = L7C_FNV0;
	__u32 i, spaces = 0;

	for (i = 0; i < L7C_PATH_MAX && i < n; i++) {
		__u8 c = L7C_AT(d, i);

		if (c == '?' || c == '#' || c == '\r' || (c == ' ' && ++spaces == 2)) {
			*h = x;
			return 1;
		}
		x = L7C_FNV(x, c);
	}
	return 0;
}

/* RESP: a bulk string's length at d[*pos] ("$L\r\n", 1 to 3 digits), *pos moved past it; -1
 * when it is none. */
static __always_inline int l7c_resp_len(const __u8 *d, __u32 *pos, __u8 lead)
{
	__u32 p = *pos, v = 0, k;

	if (p >= L7C_HOLD || L7C_AT(d, p) != lead)
		return -1;
	p++;
	for (k = 0; k < 4; k++) {
		__u8 c = L7C_AT(d, p + k);

		if (c == '\r')
			break;
		if (c < '0' || c > '9' || k == 3)
			return -1;
		v = v * 10 + (c - '0');
	}
	if (!k || L7C_AT(d, p + k + 1) != '\n')
		return -1;
	*pos = p + k + 2;
	return (int)v;
}

struct l7c_walk {
	const __u8 *d;
	__u32 n, pos, argc, bad;
};

/* RESP: the argument after the command (the a-th of the rest); 1 ends the walk. */
static long l7c_resp_step(__u64 a, void *ctx)
{
	struct l7c_walk *w = ctx;
	int len;

	if (a + 1 >= w->argc)
		return 1;
	len = l7c_resp_len(w->d, &w->pos, '$');
	if (len < 0 || len > L7C_HOLD) {
		w->bad = 1;
		return 1;
	}
	w->pos += (__u32)len;
	if (w->pos + 2 > w->n || L7C_AT(w->d, w->pos) != '\r' || L7C_AT(w->d, w->pos + 1) != '\n') {
		w->bad = 1;
		return 1;
	}
	w->pos += 2;
	return 0;
}

/* RESP: whether d[0..n) is exactly one command (an array of bulk strings), with the hash of its
 * name. */
static __always_inline int l7c_resp_key(const __u8 *d, __u32 n, __u64 *h)
{
	struct l7c_walk w = {.d = d, .n = n};
	__u32 k;
	int argc = l7c_resp_len(d, &w.pos, '*'), len;
	__u64 x = L7C_FNV0;

	if (argc < 1 || argc > L7C_ARGS_MAX)
		return 0;
	w.argc = (__u32)argc;
	len = l7c_resp_len(d, &w.pos, '$');
	if (len < 1 || len > L7C_CMD_MAX)
		return 0;
	for (k = 0; k < L7C_CMD_MAX; k++) {
		if (k >= (__u32)len)
			break;
		x = L7C_FNV(x, L7C_AT(d, w.pos + k));
	}
	w.pos += (__u32)len;
	if (L7C_AT(d, w.pos) != '\r' || L7C_AT(d, w.pos + 1) != '\n')
		return 0;
	w.pos += 2;
	L7C_LOOP(L7C_ARGS_MAX - 1, l7c_resp_step, &w);
	if (w.bad || w.pos != n)
		return 0;
	*h = x;
	return 1;
}

/* Whether d[0..n) is one whole request of protocol proto (L7_KPROTO_*) the kernel may count,
 * with the hash of what its endpoint is made of (the protocol mixed in). */
static __always_inline int l7c_request(const __u8 *d, __u32 n, __u8 proto, __u64 *h)
{
	if (n > L7C_HOLD)
		return 0;
	if (proto == L7_KPROTO_HTTP) {
		if (!l7c_http_method(d) || !l7c_http_whole(d, n) || !l7c_http_key(d, n, h))
			return 0;
	} else if (proto == L7_KPROTO_REDIS) {
		if (!l7c_resp_key(d, n, h))
			return 0;
	} else {
		return 0;
	}
	*h = L7C_FNV(*h, proto);
	return 1;
}

#ifndef __VMLINUX_H__
/* l7c_request on the host: len bytes at data (any length), copied into a zeroed buffer first. */
static inline int l7c_request_copy(const void *data, __u64 len, __u8 proto, __u64 *h)
{
	__u8 buf[L7C_BUF] = {0};

	if (len > L7C_HOLD)
		return 0;
	memcpy(buf, data, len);
	return l7c_request(buf, (__u32)len, proto, h);
}
#endif

#endif
