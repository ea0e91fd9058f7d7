/* Requests counted in the kernel (bpf/l7_count.h says what and why), included by
 * bpf/l7_probe.bpf.c after the record helpers it uses. Per counted request: the connection's
 * slot (an array entry: no hashing), the request key's endpoint (looked up once per key change,
 * or when user space moved a bound), one per-CPU cell update. */
#ifndef GALATOP_BPF_L7_COUNT_BPF_H
#define GALATOP_BPF_L7_COUNT_BPF_H

#include "msb.bpf.h"

#define L7C_LOOP(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)
#include "l7_count.h"

/* User space's word that a connection is counted, taken (and deleted) at one of its receives. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, L7C_SLOTS);
	__type(key, __u64); /* tgid << 32 | fd */
	__type(value, struct l7c_name);
} gt_l7_cnt_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, L7C_SLOTS);
	__type(key, __u32);
	__type(value, struct l7c_conn);
} gt_l7_cnt_slots SEC(".maps");

/* Request keys user space has named. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, L7C_MAX_EPS);
	__type(key, __u64);
	__type(value, struct l7c_ep);
} gt_l7_cnt_eps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, L7C_MAX_CELLS);
	__type(key, struct l7c_cell_key);
	__type(value, struct l7c_cell);
} gt_l7_cnt_cells SEC(".maps");

/* Bumped by user space whenever it changes gt_l7_cnt_eps: slots look their key up again. */
__u32 eps_gen = 0;

/* model/hist.h's bucket of v (HIST_SUB_BITS 5). */
static __always_inline __u32 l7c_bucket(__u64 v)
{
	__u32 e;

	if (v < 32)
		return (__u32)v;
	e = msb64(v);
	return (e - 4) * 32 + (__u32)(v >> (e - 5)) - 32;
}

/* Adds the answered request st holds to its cell. */
static __always_inline void l7c_finish(struct l7c_conn *st)
{
	__u64 lat = st->resp_end > st->req_ts ? st->resp_end - st->req_ts : 0;
	struct l7c_cell_key k = {st->sess, st->ep, l7c_bucket(lat)};
	struct l7c_cell *v, zero = {};

	st->mode = L7C_IDLE;
	v = bpf_map_lookup_elem(&gt_l7_cnt_cells, &k);
	if (!v) {
		bpf_map_update_elem(&gt_l7_cnt_cells, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&gt_l7_cnt_cells, &k);
		if (!v) {
			COUNT(count_lost);
			return;
		}
	}
	v->n++;
	v->lat_sum += lat;
	v->bytes_recv += st->client ? st->resp_bytes : st->req_len;
	v->bytes_sent += st->client ? st->req_len : st->resp_bytes;
	v->segs_recv += st->segs_in_x;
	v->segs_sent += st->segs_out_x;
	if (!v->first_ns || st->req_ts < v->first_ns)
		v->first_ns = st->req_ts;
	if (st->resp_end > v->last_ns)
		v->last_ns = st->resp_end;
}

/* Sends the request st holds as the record it would have been, its segment counts those of the
 * call that gives it up (segs_in, segs_out: the socket's counts that call read, not the live
 * ones, which may have grown since: the call's own record, sent next, would then carry fewer
 * than the one before it). */
static __always_inline void l7c_emit_held(struct l7_scratch *s, const struct conn *c, __u64 key,
					  struct l7c_conn *st, __u32 segs_in, __u32 segs_out)
{
	struct l7_event *e = &s->e;
	__u32 n = st->req_len;

	st->mode = L7C_EMIT;
	/* Its segments are the records' again. */
	st->segs_in_ctd -= st->segs_in_x;
	st->segs_out_ctd -= st->segs_out_x;
	st->segs_in_x = st->segs_out_x = 0;
	if (n > L7C_HOLD || bpf_probe_read_kernel(s->data, L7C_HOLD, st->req))
		return;
	__builtin_memset(e, 0, sizeof(*e));
	data_head(e, c, (__u32)(key >> 32), st->tid, (__s32)(__u32)key, st->req_ts, st->req_end, n,
		  n, st->client ? 0 : 1, L7_EVF_SEGS, 0);
	e->segs_in = segs_in - st->segs_in_ctd;
	e->segs_out = segs_out - st->segs_out_ctd;
	e->ustack_id = -1;
	output(s, n, counters());
}

/* The first bytes of an answer (n of them in d) begin a success: an HTTP/1 status 2xx or 3xx, a
 * RESP reply that is no error. */
static __always_inline int l7c_success(const __u8 *d, __u32 n, __u8 proto)
{
	if (proto == L7_KPROTO_HTTP)
		return n >= 12 && d[0] == 'H' && d[1] == 'T' && d[2] == 'T' && d[3] == 'P' &&
		       d[4] == '/' && d[5] == '1' && d[8] == ' ' && (d[9] == '2' || d[9] == '3');
	return n >= 1 && (d[0] == '+' || d[0] == '$' || d[0] == ':' || d[0] == '*');
}

/* One socket call of len bytes on a connection (key: its tgid and fd) in direction dir, its data
 * at buf as kind says (K_BUF or K_IOV with n entries; K_SENDFILE: none), ended at now, made by
 * thread tid. */
struct l7c_call {
	__u64 key, len, buf, now;
	__u64 start; /* a send's beginning (a client's request starts there) */
	__u32 dir, kind, n, tid;
	/* in: the TCP socket's segment counts; out (a record): what of them its record carries */
	__u32 segs_in, segs_out;
};

/* The first bytes of a call's data (at most L7C_HEAD) into d, on the program's stack: a buffer
 * is one read, an iovec array two (its first entry, then that entry's bytes) when the entry
 * holds them all, else copy_iov's walk. Returns how many were read. */
#define L7C_HEAD 16
static __always_inline __u32 l7c_head(struct l7_scratch *s, const struct l7c_call *a, __u8 *d)
{
	__u32 n = a->len < L7C_HEAD ? (__u32)a->len : L7C_HEAD;
	struct iovec v;

	if (!n)
		return 0;
	asm volatile("%0 &= 0x1f" : "+r"(n));
	if (n > L7C_HEAD)
		return 0;
	if (a->kind == K_BUF)
		return bpf_probe_read_user(d, n, (const void *)a->buf) ? 0 : n;
	if (a->kind != K_IOV || !a->n ||
	    bpf_probe_read_user(&v, sizeof(v), (const void *)a->buf))
		return 0;
	if (v.iov_len >= n)
		return bpf_probe_read_user(d, n, v.iov_base) ? 0 : n;
	n = copy_iov(s, a->buf, a->n, n);
	if (n > L7C_HEAD || bpf_probe_read_kernel(d, L7C_HEAD, s->data))
		return 0;
	return n;
}

/* The segments since the connection's latest call: the kernel's when it counts this call, else
 * the record's (whose counts are then lowered by what the kernel counted). */
static __always_inline void l7c_segs(struct l7c_conn *st, struct l7c_call *a, int counted)
{
	__u32 din = a->segs_in - st->segs_in_seen, dout = a->segs_out - st->segs_out_seen;

	st->segs_in_seen = a->segs_in;
	st->segs_out_seen = a->segs_out;
	if (counted) {
		st->segs_in_ctd += din;
		st->segs_out_ctd += dout;
		st->segs_in_x += din;
		st->segs_out_x += dout;
	}
	a->segs_in -= st->segs_in_ctd;
	a->segs_out -= st->segs_out_ctd;
}

/* The slot of connection c (key), taking user space's word when it is there; NULL when c is
 * not counted (yet, or any more). */
static __always_inline struct l7c_conn *l7c_slot(struct conn *c, __u64 key)
{
	struct l7c_conn *st;
	struct l7c_name *nm;
	__u32 slot;

	if (c->counted == 1) {
		slot = c->slot;
		st = bpf_map_lookup_elem(&gt_l7_cnt_slots, &slot);
		if (st && st->gen == c->gen)
			return st;
		c->counted = 2; /* user space took it back: it wants every record now */
		return NULL;
	}
	nm = bpf_map_lookup_elem(&gt_l7_cnt_names, &key);
	if (!nm || nm->gen != c->gen)
		return NULL;
	slot = nm->slot;
	st = bpf_map_lookup_elem(&gt_l7_cnt_slots, &slot);
	if (!st || st->gen != c->gen)
		return NULL;
	c->counted = 1;
	c->slot = slot;
	bpf_map_delete_elem(&gt_l7_cnt_names, &key);
	return st;
}

/* Call a on connection c: 1 when it was counted here and needs no record, 0 when it goes as a
 * record. A global function: verified once, not on every path of the socket programs. */
static __always_inline int l7c_call(struct conn *c, struct l7c_call *a, struct l7c_conn **out);

__noinline int gt_count(struct conn *c, struct l7c_call *a)
{
	struct l7c_conn *st = NULL;
	int r, named;

	if (!c || !a)
		return 0;
	named = c->counted != 1;
	if (named) {
		/* The call that takes user space's word goes as a record, whose segment counts
		 * cover the connection up to here; the kernel counts from the next. */
		st = l7c_slot(c, a->key);
		if (st) {
			st->segs_in_seen = a->segs_in;
			st->segs_out_seen = a->segs_out;
			st->mode = L7C_EMIT;
			st->client = c->role == L7_KROLE_CLIENT;
		}
		return 0;
	}
	r = l7c_call(c, a, &st);
	if (st)
		l7c_segs(st, a, r);
	return r;
}

/* gt_count's work; *out is the connection's slot when it has one. */
static __always_inline int l7c_call(struct conn *c, struct l7c_call *a, struct l7c_conn **out)
{
	struct l7_scratch *s = scratch();
	__u8 head[L7C_HEAD] = {};
	struct l7c_conn *st;
	__u64 h, len, now;
	__u32 got = 0, n;

	if (!s || !c || !a)
		return 0;
	st = l7c_slot(c, a->key);
	if (!st)
		return 0;
	*out = st;
	len = a->len;
	now = a->now;
	if (a->dir == (st->client ? 0 : 1)) {
		if (st->mode == L7C_ANSWERED) {
			l7c_finish(st);
		} else if (st->mode == L7C_HELD) {
			/* More of the request, or a pipelined one: all of it as records. */
			l7c_emit_held(s, c, a->key, st, a->segs_in, a->segs_out);
			return 0;
		}
		st->mode = L7C_EMIT;
		if (!len || len > L7C_HOLD)
			return 0;
		n = (__u32)len - 1;
		asm volatile("%0 &= 0xff" : "+r"(n));
		n++;
		if (a->kind == K_BUF) {
			if (bpf_probe_read_user(st->req, n, (const void *)a->buf))
				return 0;
		} else if (a->kind == K_IOV) {
			if (copy_iov(s, a->buf, a->n, n) != n ||
			    bpf_probe_read_kernel(st->req, L7C_HOLD, s->data))
				return 0;
		} else {
			return 0;
		}
		if (!l7c_request(st->req, n, c->proto, &h))
			return 0;
		if (st->last_h != h || st->eps_gen != eps_gen) {
			struct l7c_ep *ep = bpf_map_lookup_elem(&gt_l7_cnt_eps, &h);

			if (!ep)
				return 0;
			st->last_h = h;
			st->last_ep = ep->ep;
			st->last_slow = ep->slow_ns;
			st->eps_gen = eps_gen;
		}
		st->mode = L7C_HELD;
		st->segs_in_x = st->segs_out_x = 0;
		st->ep = st->last_ep;
		st->slow_ns = st->last_slow;
		st->req_len = n;
		st->req_ts = st->client ? a->start : now;
		st->req_end = now;
		st->tid = a->tid;
		return 1;
	}
	if (st->mode == L7C_ANSWERED) {
		st->resp_end = now;
		st->resp_bytes += len;
		return 1;
	}
	if (st->mode != L7C_HELD)
		return 0;
	/* The answer's first bytes: a success in time is counted, the rest go as records. */
	got = l7c_head(s, a, head);
	if (!l7c_success(head, got, c->proto) || now - st->req_ts > st->slow_ns) {
		l7c_emit_held(s, c, a->key, st, a->segs_in, a->segs_out);
		return 0;
	}
	st->mode = L7C_ANSWERED;
	st->resp_end = now;
	st->resp_bytes = len;
	return 1;
}

/* Connection c (key) ends: an answered request is counted, a held one goes as a record before
 * the close. */
__noinline int gt_count_close(struct l7_scratch *s, struct conn *c, __u64 key)
{
	struct tcp_sock *t;
	struct l7c_conn *st;

	if (!s || !c || c->counted != 1)
		return 0;
	t = (struct tcp_sock *)c->sk;
	st = l7c_slot(c, key);
	c->counted = 2;
	if (!st)
		return 0;
	if (st->mode == L7C_ANSWERED)
		l7c_finish(st);
	else if (st->mode == L7C_HELD)
		l7c_emit_held(s, c, key, st, BPF_CORE_READ(t, segs_in), BPF_CORE_READ(t, segs_out));
	st->mode = L7C_IDLE;
	return 0;
}

#endif
