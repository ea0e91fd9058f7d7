// SPDX-License-Identifier: GPL-2.0
/* galatop's L7 capture without kprobes and without system call tracepoints (enabling any of
 * those puts every system call of every task on the slow path): the kernel's
 * sock:sock_send_length and sock:sock_recv_length tracepoints fire once a socket call has
 * moved its bytes, with the socket; the call's arguments (fd, buffer, iovec, msghdr) are in the
 * task's user registers (bpf_task_pt_regs), so the bytes are read from the caller's buffers
 * right there. One entry per (tgid, fd) with a generation (a new socket on the fd starts a new
 * one, so fd reuse never mixes two connections), the protocol guessed from the first bytes,
 * the first capture_bytes of each message of a traced connection sent to a ring buffer.
 * TCP state changes give the role (connect vs accept) and the end of a connection; a datagram
 * received on an unconnected socket waits for the thread's next socket call, when its source
 * is in the caller's sockaddr. OpenSSL's SSL_read/SSL_write (and
 * _ex) uprobes report plaintext instead of the ciphertext the socket calls inside them move;
 * those calls only tell which fd the SSL object uses. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kabi.h"
#include "l7_event.h"
#include "targets.bpf.h"

/* The kernel's cast of a pointer to a type of its BTF (kernel 6.2 and later): a verifier
 * rewrite, no call. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* The current task's user registers, at a fixed offset from its kernel stack (the top of it):
 * the offset learnt from bpf_task_pt_regs at the first call, the rest a cast (no helper call per
 * socket call). Loads through it are the kernel's checked ones. */
static __u64 regs_off;

static __always_inline struct pt_regs *user_regs(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 stack = (__u64)t->stack;

	if (!regs_off)
		regs_off = (__u64)bpf_task_pt_regs(t) - stack;
	return bpf_rdonly_cast((void *)(stack + regs_off), bpf_core_type_id_kernel(struct pt_regs));
}

const volatile __u32 capture_bytes = L7_CAPTURE_DEFAULT;
const volatile __u32 proto_mask = ~0u; /* bits 1 << L7_KPROTO_* that are traced */
const volatile bool want_stacks = true;
const volatile __u64 wakeup_bytes = 0;
const volatile bool follow_children = false; /* `record -- CMD`: its children are targets too */
const volatile bool count_on = false; /* plain exchanges of busy servers counted here */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by user space */
} gt_l7_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l7_counters);
} gt_l7_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, L7_STACK_DEPTH * sizeof(__u64));
} gt_l7_stacks SEC(".maps");

enum conn_state { CONN_UNDECIDED = 0, CONN_TRACED, CONN_IGNORED };

/* Messages looked at before a connection that matches no protocol is ignored: 4 from its
 * start; one opened before the capture may first show responses and the tails of long
 * messages, so it gets 32 (each costs a copy of the capture and the guess). */
#define TRIES_NEW 4
#define TRIES_OLD 32

struct conn {
	__u64 gen;
	__u64 sk; /* struct sock *, 0 for an fd that is no inet socket */
	__u8 role;
	__u8 proto;
	__u8 state;
	__u8 ssl;
	__u8 tries; /* messages looked at while undecided */
	__u8 udp;
	__u8 v6;
	__u8 requests; /* request messages seen, wrapping: every L7_STACK_EVERY-th gets a stack */
	/* The socket's addresses, read once when the connection is first seen. */
	__u16 lport, rport; /* host byte order */
	__u8 af_unix;	    /* a Unix-domain socket: its peer goes in an L7_EV_PEER record */
	__u8 counted;	    /* requests counted here: 0 not yet, 1 yes, 2 no (bpf/l7_count.h) */
	__u8 ctries;	    /* receives since user space's word was last looked for */
	__u8 tcp;	    /* a TCP socket (stream, IPPROTO_TCP): its sk is a struct tcp_sock */
	__u32 slot; /* counted: its slot in gt_l7_cnt_slots */
	__u32 pad3;
	__u8 laddr[16], raddr[16];
	/* The process's, when the connection was first seen (asked once, not per message). */
	__u64 cgroup_id;
	char comm[16];
	__u64 last_io_ns; /* when the latest message on it (either way) was moved */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* tgid << 32 | fd */
	__type(value, struct conn);
} gt_l7_conns SEC(".maps");

/* How a socket call passes its data (from the system call number in the task's registers). */
enum call_kind { K_NONE, K_BUF, K_IOV, K_MSG, K_MMSG, K_SENDFILE };

/* What TCP state changes tell about a socket: its role (connect or accept) and, once a
 * message on it was seen, the connection entry to end when it closes. */
struct sock_info {
	__u64 conn; /* key in gt_l7_conns, 0 until a message was seen */
	__u8 role;
	__u8 pad[7];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* struct sock * */
	__type(value, struct sock_info);
} gt_l7_socks SEC(".maps");

struct ssl_args {
	__u64 ts; /* entry time */
	__u64 ssl;
	__u64 buf;
	__u64 nptr; /* SSL_read_ex/SSL_write_ex: where the byte count goes */
	__s32 fd;   /* learned from the syscall inside the call, -1 until then */
	__u8 dir;
	__u8 ex;
	__u8 pad[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct ssl_args);
} gt_l7_ssl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);   /* SSL * */
	__type(value, __s32); /* fd */
} gt_l7_sslfd SEC(".maps");

/* When the thread's Unix-domain send in progress queued its bytes to the peer
 * (gt_l7_send_ready), 0 when none did: sock_send_length, at the send's end, takes it. A
 * client's request starts there rather than after the send has woken the server. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} gt_l7_send_t0 SEC(".maps");

/* One record under construction per CPU: the data part is twice the capture limit so that
 * copies at a bounded offset of a bounded size stay inside. Sized to the CPUs by user space. */
struct l7_scratch {
	struct l7_event e;
	__u8 data[2 * L7_CAPTURE_MAX];
	__u64 peer_uaddr; /* in gt_l7_pending: the user sockaddr the datagram's source goes to */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l7_scratch);
} gt_l7_scratch SEC(".maps");

/* A datagram received on an unconnected socket, per thread, held until the thread's next socket
 * call: its source is copied to the caller's sockaddr only after sock_recv_length, and is read
 * from there then. pending_n (approximate) spares the lookup while none is held. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 64);
	__type(key, __u32); /* tid */
	__type(value, struct l7_scratch);
} gt_l7_pending SEC(".maps");

/* Where a thread's sendmmsg/recvmmsg is in its vector: the kernel sends or receives the messages
 * one by one, in order, each firing the tracepoint; the registers name the vector only. The
 * position restarts at 0 for another call: another vector, fd or system call, past its length
 * (the entry is dropped after the last message), or after a failed message (which ends the call;
 * mmsg_n, approximate, spares the lookup while no thread has one). */
struct mmsg_pos {
	__u64 vec;
	__s32 fd;
	__u32 nr;
	__u32 vlen;
	__u32 next;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct mmsg_pos);
} gt_l7_mmsg SEC(".maps");

__u64 pending_n = 0;
/* Set by user space once it attached gt_l7_send_ready (at the first traced Unix-domain
 * connection): until then no send looks for a start in gt_l7_send_t0. */
__u32 unix_starts = 0;
__u64 mmsg_n = 0;
/* OpenSSL calls in progress (approximate): while none is, socket calls skip gt_l7_ssl. */
__u64 ssl_inflight = 0;

static __always_inline struct l7_counters *counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gt_l7_counters, &zero);
}

#define COUNT(field)                                                                               \
	do {                                                                                       \
		struct l7_counters *_c = counters();                                               \
		if (_c)                                                                            \
			_c->field++;                                                               \
	} while (0)

static __always_inline __u64 conn_key(__u32 tgid, int fd)
{
	return (__u64)tgid << 32 | (__u32)fd;
}

/* The bound address of a Unix-domain socket, NULL when it has none. */
static __always_inline struct unix_address *unix_addr(struct sock *sk)
{
	return sk ? BPF_CORE_READ((struct unix_sock *)sk, addr) : NULL;
}

/* Reads the socket's addresses into c. */
static __always_inline void sock_ident(struct conn *c, struct sock *sk)
{
	c->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	c->rport = __builtin_bswap16(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (BPF_CORE_READ(sk, __sk_common.skc_family) == GT_AF_INET6) {
		c->v6 = 1;
		BPF_CORE_READ_INTO(&c->laddr, sk, __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&c->raddr, sk, __sk_common.skc_v6_daddr);
	} else {
		BPF_CORE_READ_INTO((__u32 *)c->laddr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO((__u32 *)c->raddr, sk, __sk_common.skc_daddr);
	}
}

/* A record of type about connection (tgid, fd, c) with extra bytes of room after it,
 * reserved in the ring buffer (the caller submits it); NULL (a drop) when full. */
static __always_inline struct l7_event *conn_record(__u32 type, __u32 tgid, int fd,
						   const struct conn *c, __u32 extra)
{
	struct l7_event *e = bpf_ringbuf_reserve(&gt_l7_events, sizeof(*e) + extra, 0);

	if (!e) {
		COUNT(drops);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->tgid = tgid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->fd = fd;
	e->gen = c->gen;
	e->ts_ns = bpf_ktime_get_ns();
	e->role = c->role;
	e->proto = c->proto;
	return e;
}

struct l7_scratch;
__noinline int gt_count_close(struct l7_scratch *s, struct conn *c, __u64 key);
static __always_inline struct l7_scratch *scratch(void);

/* Reports the end of a traced connection's generation (a request counted in the kernel and
 * waiting for it is settled first). */
static __always_inline void emit_close(__u32 tgid, int fd, struct conn *c)
{
	struct l7_event *e;

	if (c->state != CONN_TRACED)
		return;
	if (c->counted == 1)
		gt_count_close(scratch(), c, conn_key(tgid, fd));
	e = conn_record(L7_EV_CLOSE, tgid, fd, c, 0);
	if (e)
		bpf_ringbuf_submit(e, 0);
}

/* Reports the peer of a Unix-domain connection: the path the two sides meet at (the peer's
 * bound address; else the path the call at hand sends to, uaddr, a user sockaddr, when it
 * names one: an unconnected datagram client; else the socket's own: a client's peer is the
 * accepted socket, which carries the listener's path) and the peer's pid as SO_PEERCRED has
 * it. */
static __always_inline void emit_peer(__u32 tgid, int fd, const struct conn *c, __u64 uaddr)
{
	struct sock *sk = (struct sock *)c->sk;
	struct unix_address *ua = unix_addr(BPF_CORE_READ((struct unix_sock *)sk, peer));
	struct l7_event *e;
	struct pid *pp;
	__u8 to[3] = {};
	int len;

	/* A path (not an abstract name, whose length only the call's addrlen says): user
	 * space ends it at its NUL. */
	if (ua || !uaddr || bpf_probe_read_user(to, sizeof(to), (const void *)uaddr) ||
	    (to[0] | to[1] << 8) != GT_AF_UNIX || !to[2])
		uaddr = 0;
	if (!ua && !uaddr)
		ua = unix_addr(sk);
	e = conn_record(L7_EV_PEER, tgid, fd, c, L7_UNIX_PATH_MAX);
	if (!e)
		return;
	e->flags = L7_EVF_UNIX | (c->udp ? L7_EVF_UDP : 0);
	pp = BPF_CORE_READ(sk, sk_peer_pid);
	if (pp)
		e->peer_pid = BPF_CORE_READ(pp, numbers[0].nr);
	if (uaddr) {
		e->cap = bpf_probe_read_user(e + 1, L7_UNIX_PATH_MAX, (const void *)(uaddr + 2))
				 ? 0
				 : L7_UNIX_PATH_MAX;
		bpf_ringbuf_submit(e, 0);
		return;
	}
	len = ua ? BPF_CORE_READ(ua, len) - (int)sizeof(__u16) : 0;
	if (len < 0)
		len = 0;
	if (len > L7_UNIX_PATH_MAX)
		len = L7_UNIX_PATH_MAX;
	if (ua && bpf_probe_read_kernel(e + 1, L7_UNIX_PATH_MAX, &ua->name[0].sun_path))
		len = 0;
	e->cap = len;
	bpf_ringbuf_submit(e, 0);
}

/* The connection entry of (tgid, fd) on socket sk, made on first sight or afresh when the fd
 * now holds another socket (ending the old one's generation). Sockets of other families than
 * inet and Unix-domain get an entry in state CONN_IGNORED, so that their calls cost one lookup.
 * NULL only when the map is full. */
static __always_inline struct conn *conn_get(__u32 tgid, int fd, struct sock *sk)
{
	__u64 key = conn_key(tgid, fd), skey = (__u64)sk;
	struct conn *c = bpf_map_lookup_elem(&gt_l7_conns, &key);
	struct sock_info *si, fresh = {};
	struct conn n = {};
	__u16 family;

	if (c && c->sk == skey)
		return c;
	if (c)
		emit_close(tgid, fd, c);
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	n.gen = bpf_ktime_get_ns();
	n.sk = skey;
	n.cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(n.comm, sizeof(n.comm));
	si = bpf_map_lookup_elem(&gt_l7_socks, &skey);
	n.role = si ? si->role : L7_KROLE_UNKNOWN;
	if (family == GT_AF_INET || family == GT_AF_INET6) {
		sock_ident(&n, sk);
		n.state = CONN_UNDECIDED;
		n.udp = BPF_CORE_READ(sk, sk_type) == GT_SOCK_DGRAM;
		n.tcp = BPF_CORE_READ(sk, sk_type) == GT_SOCK_STREAM &&
			BPF_CORE_READ(sk, sk_protocol) == GT_IPPROTO_TCP;
	} else if (family == GT_AF_UNIX) {
		/* No addresses: the path and the peer's pid go in an L7_EV_PEER record. An
		 * accepted socket carries its listener's path, a client's has none: that is the
		 * role (no TCP state tells it). A datagram client needs an address of its own
		 * for the answers: one connected to a bound socket is a client, the others
		 * (unconnected, or a socketpair) are left to the first message's kind. No close
		 * either: the entry ends when the fd holds another socket, or idle (user space). */
		n.af_unix = 1;
		n.role = unix_addr(sk) ? L7_KROLE_SERVER : L7_KROLE_CLIENT;
		n.state = CONN_UNDECIDED;
		n.udp = BPF_CORE_READ(sk, sk_type) == GT_SOCK_DGRAM;
		if (n.udp)
			n.role = unix_addr(BPF_CORE_READ((struct unix_sock *)sk, peer))
					 ? L7_KROLE_CLIENT
					 : L7_KROLE_UNKNOWN;
	} else {
		n.state = CONN_IGNORED;
	}
	bpf_map_update_elem(&gt_l7_conns, &key, &n, BPF_ANY);
	/* The socket's close ends this entry (gt_l7_state). */
	if (si) {
		si->conn = key;
	} else if (n.state == CONN_UNDECIDED && !n.udp && !n.af_unix) {
		fresh.conn = key;
		bpf_map_update_elem(&gt_l7_socks, &skey, &fresh, BPF_ANY);
	}
	return bpf_map_lookup_elem(&gt_l7_conns, &key);
}

static __always_inline __u32 be32(const __u8 *d)
{
	return (__u32)d[0] << 24 | (__u32)d[1] << 16 | (__u32)d[2] << 8 | d[3];
}

static __always_inline bool is_digit(__u8 c)
{
	return c >= '0' && c <= '9';
}

/* A DNS header: standard query opcode, one question; a query carries no answers. */
static __always_inline bool dns_header(const __u8 *d)
{
	bool qr = d[2] & 0x80;
	__u8 opcode = (d[2] >> 3) & 0xf;

	if (opcode != 0 || d[4] != 0 || d[5] != 1)
		return false;
	return qr || (!d[6] && !d[7] && !d[8] && !d[9] && !d[10] && d[11] <= 1);
}

/* Whether an HTTP/2 frame header (9 bytes: length flen, type, stream id with its reserved bit)
 * is one a peer could send: a known type with its stream and length rules. A global function,
 * so the verifier checks it once rather than on every path of every caller. */
__noinline int gt_h2_frame(__u32 flen, __u32 type, __u32 sid)
{
	if (sid & 0x80000000u || flen > 16384)
		return 0;
	switch (type) {
	case 0: /* DATA */
	case 1: /* HEADERS */
	case 5: /* PUSH_PROMISE */
	case 9: /* CONTINUATION */
		return sid != 0;
	case 2: /* PRIORITY */
		return sid && flen == 5;
	case 3: /* RST_STREAM */
		return sid && flen == 4;
	case 4: /* SETTINGS */
		return !sid && flen % 6 == 0;
	case 6: /* PING */
		return !sid && flen == 8;
	case 7: /* GOAWAY */
		return !sid && flen >= 8;
	case 8: /* WINDOW_UPDATE */
		return flen == 4;
	}
	return 0;
}

static __always_inline __u32 be24(const __u8 *d)
{
	return (__u32)d[0] << 16 | (__u32)d[1] << 8 | d[2];
}

/* HTTP/2: the client's connection preface, or (a connection older than the capture, or the
 * server's first SETTINGS) a frame that ends the message or is followed by another. */
static __always_inline bool h2_start(const __u8 *d, __u32 cap, __u64 len)
{
	__u32 next;

	if (d[0] == 'P' && d[1] == 'R' && d[2] == 'I' && d[3] == ' ' && d[4] == '*')
		return true;
	if (!gt_h2_frame(be24(d), d[3], be32(d + 5)))
		return false;
	next = 9 + be24(d);
	if (next == len)
		return true;
	if (next + 9 > cap || next > 0x3fff)
		return false;
	/* The mask the verifier sees: the next header lies within the scratch buffer. */
	asm volatile("%0 &= 0x3fff" : "+r"(next));
	return gt_h2_frame(be24(d + next), d[next + 3], be32(d + next + 5));
}

/* The protocol the first bytes of a message look like (L7_KPROTO_*), 0 if none, 0xff for a
 * TLS record (ciphertext: never parsed). A loose first filter so that unrelated traffic is
 * not copied; user space confirms with the parsers' l7_infer. An inet datagram carries DNS
 * only; a Unix-domain one (uds) any protocol, a message per datagram, DNS after the others. */
static __always_inline __u8 kinfer(const __u8 *d, __u32 cap, __u64 len, bool udp, bool uds)
{
	__u32 mlen;

	if (cap < 12)
		return 0;
	if (udp && !uds)
		return dns_header(d) ? L7_KPROTO_DNS : 0;
	if (d[0] == 0x16 && d[1] == 3 && d[2] <= 4)
		return 0xff;
	/* HTTP request methods and responses. */
	if ((d[0] == 'G' && d[1] == 'E' && d[2] == 'T' && d[3] == ' ') ||
	    (d[0] == 'P' && d[1] == 'O' && d[2] == 'S' && d[3] == 'T') ||
	    (d[0] == 'P' && d[1] == 'U' && d[2] == 'T' && d[3] == ' ') ||
	    (d[0] == 'H' && d[1] == 'E' && d[2] == 'A' && d[3] == 'D') ||
	    (d[0] == 'D' && d[1] == 'E' && d[2] == 'L' && d[3] == 'E') ||
	    (d[0] == 'P' && d[1] == 'A' && d[2] == 'T' && d[3] == 'C') ||
	    (d[0] == 'O' && d[1] == 'P' && d[2] == 'T' && d[3] == 'I') ||
	    (d[0] == 'H' && d[1] == 'T' && d[2] == 'T' && d[3] == 'P' && d[4] == '/'))
		return L7_KPROTO_HTTP;
	/* RESP: an array of bulk strings ("*3\r\n$3\r\nSET..."). */
	if (d[0] == '*' && is_digit(d[1]) &&
	    ((d[2] == '\r' && d[3] == '\n' && d[4] == '$') ||
	     (is_digit(d[2]) && d[3] == '\r' && d[4] == '\n' && d[5] == '$')))
		return L7_KPROTO_REDIS;
	/* PostgreSQL: StartupMessage v3, SSLRequest/GSSENCRequest, or a query message. */
	mlen = be32(d);
	if (mlen == len && ((d[4] == 0 && d[5] == 3 && d[6] == 0 && d[7] == 0) ||
			    (mlen == 8 && d[4] == 0x04 && d[5] == 0xd2 && d[6] == 0x16 &&
			     (d[7] == 0x2f || d[7] == 0x30))))
		return L7_KPROTO_PGSQL;
	if ((d[0] == 'Q' || d[0] == 'P') && d[1] == 0 && be32(d + 1) + 1 <= len && be32(d + 1) >= 5)
		return L7_KPROTO_PGSQL;
	/* MySQL: a packet that fills the call: the server greeting (protocol 10) or a command
	 * (COM_QUERY, COM_STMT_PREPARE, COM_STMT_EXECUTE) with sequence 0. */
	mlen = d[0] | (__u32)d[1] << 8 | (__u32)d[2] << 16;
	if (mlen + 4 == len && d[3] == 0 &&
	    (d[4] == 10 || d[4] == 3 || d[4] == 0x16 || d[4] == 0x17))
		return L7_KPROTO_MYSQL;
	/* DNS over TCP: a length prefix that fills the call. */
	if (((__u32)d[0] << 8 | d[1]) + 2 == len && dns_header(d + 2))
		return L7_KPROTO_DNS;
	/* Binary protocols whose calls carry one request (or its start): */
	/* MongoDB: little-endian length, responseTo 0, OP_MSG (defined flag bits only, when the
	 * call goes past the 16-byte header: servers read it alone), OP_QUERY or OP_COMPRESSED. */
	mlen = d[0] | (__u32)d[1] << 8 | (__u32)d[2] << 16 | (__u32)d[3] << 24;
	if (cap >= 16 && mlen >= 21 && mlen <= (48u << 20) && mlen >= len && !d[8] && !d[9] &&
	    !d[10] && !d[11] && d[13] == 0x07 && !d[14] && !d[15] &&
	    ((d[12] == 0xdd &&
	      (cap < 20 || (!(d[16] & 0xfc) && !d[17] && !(d[18] & 0xfe) && !d[19]))) ||
	     d[12] == 0xd4 || d[12] == 0xdc))
		return L7_KPROTO_MONGO;
	mlen = be32(d);
	if (mlen + 4 >= len && mlen <= (1u << 30)) {
		__u32 hl = be32(d + 4) & 0xffffff;

		/* RocketMQ remoting: length, serialize type 0 (JSON header) or 1 (binary: a
		 * request's flag has bit 0 clear), header length within the frame. */
		if (cap >= 16 && mlen >= 8 && hl + 4 <= mlen && hl >= 8 &&
		    ((d[4] == 0 && d[8] == '{' && d[9] == '"') ||
		     (d[4] == 1 && cap >= 21 && d[10] <= 32 && !(d[20] & 1))))
			return L7_KPROTO_ROCKETMQ;
		/* Kafka: size, api_key < 76, api_version <= 20, correlation_id >= 0, then a
		 * client_id that is null or starts printable (brokers read the first 12 bytes on
		 * their own). */
		if (mlen >= 10 && !d[4] && d[5] < 76 && !d[6] && d[7] <= 20 && !(d[8] & 0x80) &&
		    (cap < 15 || (d[12] == 0xff && d[13] == 0xff) ||
		     (!d[12] && d[13] && d[14] >= 0x20 && d[14] < 0x7f)))
			return L7_KPROTO_KAFKA;
	}
	if (h2_start(d, cap, len))
		return L7_KPROTO_HTTP2;
	return udp && dns_header(d) ? L7_KPROTO_DNS : 0;
}

/* kinfer on the record under construction in s: a global function, so that the verifier
 * checks the guess once rather than on every path that leads to it (which doubled the socket
 * programs' verification, close to its limit). */
__noinline int gt_kinfer(struct l7_scratch *s, __u32 cap, __u64 len, int udp, int uds)
{
	return s ? kinfer(s->data, cap, len, udp, uds) : 0;
}

static __always_inline struct l7_scratch *scratch(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&gt_l7_scratch, &cpu);
}

/* Copies up to want bytes from user address src to s->data at off (both bounded). */
static __always_inline __u32 copy_at(struct l7_scratch *s, __u32 off, __u64 src, __u64 want)
{
	__u32 n;

	__u64 o = off;

	if (off >= L7_CAPTURE_MAX || !want)
		return 0;
	n = want > L7_CAPTURE_MAX ? L7_CAPTURE_MAX : (__u32)want;
	/* Masks the verifier sees on the registers it uses (clang would drop plain ones). */
	asm volatile("%0 &= 0x3fff" : "+r"(o));
	asm volatile("%0 &= 0x7fff" : "+r"(n));
	if (n > L7_CAPTURE_MAX)
		return 0;
	if (bpf_probe_read_user(s->data + o, n, (const void *)src))
		return 0;
	return n;
}

struct iov_walk {
	struct l7_scratch *s;
	__u64 iov;
	__u32 cnt, cap, off;
};

/* Two iovec entries of copy_iov (i-th pair), read with one copy: 1 stops the walk. */
static long iov_step(__u64 i, void *ctx)
{
	struct iov_walk *w = ctx;
	struct iovec v[2];
	__u32 size = i * 2 + 1 < w->cnt ? sizeof(v) : sizeof(v[0]);

	i *= 2;
	if (i >= w->cnt || w->off >= w->cap)
		return 1;
	if (bpf_probe_read_user(v, size, (const void *)(w->iov + i * sizeof(v[0]))))
		return 1;
	w->off += copy_at(w->s, w->off, (__u64)v[0].iov_base,
			  v[0].iov_len < w->cap - w->off ? v[0].iov_len : w->cap - w->off);
	if (size == sizeof(v) && w->off < w->cap)
		w->off += copy_at(w->s, w->off, (__u64)v[1].iov_base,
				  v[1].iov_len < w->cap - w->off ? v[1].iov_len : w->cap - w->off);
	return 0;
}

/* Copies the first `cap` bytes spread over an iovec array, two entries per step (a server's
 * header and body, a frame's header and payload take one read of the array): a bpf_loop rather
 * than an unrolled loop, as gRPC writes a batch of frames in many entries. */
static __always_inline __u32 copy_iov(struct l7_scratch *s, __u64 iov, __u32 cnt, __u32 cap)
{
	struct iov_walk w = { .s = s, .iov = iov, .cnt = cnt, .cap = cap };

	bpf_loop((L7_MAX_IOV + 1) / 2, iov_step, &w, 0);
	return w.off < cap ? w.off : cap;
}

/* Sets the record's peer from the user sockaddr at uaddr (a datagram's destination or source). */
static __always_inline void peer_from_user(struct l7_event *e, __u64 uaddr)
{
	struct sockaddr_in6 sa = {};

	if (!uaddr || bpf_probe_read_user(&sa, sizeof(sa), (const void *)uaddr))
		return;
	if (sa.sin6_family == GT_AF_INET) {
		struct sockaddr_in *in = (void *)&sa;

		e->rport = __builtin_bswap16(in->sin_port);
		__builtin_memset(e->raddr, 0, 16);
		__builtin_memcpy(e->raddr, &in->sin_addr, 4);
	} else if (sa.sin6_family == GT_AF_INET6) {
		e->rport = __builtin_bswap16(sa.sin6_port);
		__builtin_memcpy(e->raddr, &sa.sin6_addr, 16);
	}
}

/* Fills the address part of the record from the connection and, for datagrams, from the
 * sockaddr the call named (sendto/sendmsg destination). */
static __always_inline void fill_addrs(struct l7_event *e, const struct conn *c, __u64 uaddr)
{
	e->lport = c->lport;
	e->rport = c->rport;
	__builtin_memcpy(e->laddr, c->laddr, 16);
	__builtin_memcpy(e->raddr, c->raddr, 16);
	if (c->v6)
		e->flags |= L7_EVF_V6;
	peer_from_user(e, uaddr);
}

/* The header of a data record of connection c (a socket call's, or a held request's that the
 * kernel gave up counting): who moved how much and when, and the connection's identity; the
 * datagram peer from uaddr. The caller adds the segments and the stack. */
static __always_inline void data_head(struct l7_event *e, const struct conn *c, __u32 tgid,
				      __u32 tid, int fd, __u64 start_ns, __u64 end_ns, __u64 len,
				      __u32 cap, __u8 dir, __u32 flags, __u64 uaddr)
{
	e->type = L7_EV_DATA;
	e->tgid = tgid;
	e->tid = tid;
	e->fd = fd;
	e->ts_ns = end_ns;
	e->start_ns = start_ns;
	e->gen = c->gen;
	e->len = len;
	e->cgroup_id = c->cgroup_id;
	e->cap = cap;
	e->flags = flags | (c->udp ? L7_EVF_UDP : 0) | (c->af_unix ? L7_EVF_UNIX : 0);
	e->dir = dir;
	e->role = c->role;
	e->proto = c->proto;
	fill_addrs(e, c, c->udp ? uaddr : 0);
	__builtin_memcpy(e->comm, c->comm, sizeof(e->comm));
}

/* Sends the record in s with its got bytes of data. Whether the ring holds enough to wake its
 * reader is asked for one record in 16 of each CPU (the answer reads the reader's position, a
 * cache line the reader writes: 4 % of the programs' time in a traced nginx): a wakeup comes at
 * most 15 records late, and the reader's poll reads the ring every 100 ms anyway. */
static __always_inline void output(struct l7_scratch *s, __u32 got, struct l7_counters *cnt)
{
	__u64 size = got, wake = BPF_RB_NO_WAKEUP;

	/* got <= L7_CAPTURE_MAX; the mask is what the verifier can see. */
	asm volatile("%0 &= 0x7fff" : "+r"(size));
	size += sizeof(struct l7_event);
	if ((!cnt || !(cnt->events & 15)) &&
	    bpf_ringbuf_query(&gt_l7_events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		wake = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&gt_l7_events, s, size, wake)) {
		if (cnt)
			cnt->drops++;
	} else if (cnt) {
		cnt->events++;
	}
}

/* Sends the datagram thread tid holds, if any, with its source now in the caller's sockaddr. */
static __always_inline void flush_pending(__u32 tid)
{
	struct l7_scratch *p;

	if (!pending_n)
		return;
	p = bpf_map_lookup_elem(&gt_l7_pending, &tid);
	if (!p)
		return;
	peer_from_user(&p->e, p->peer_uaddr);
	output(p, p->e.cap > L7_CAPTURE_MAX ? 0 : p->e.cap, counters());
	bpf_map_delete_elem(&gt_l7_pending, &tid);
	__sync_fetch_and_add(&pending_n, -1);
}

/* Builds and sends the record of one message of len bytes on connection c: data is copied
 * from buf (kind K_BUF) or an iovec array (K_IOV, n entries); the datagram peer is uaddr (a
 * user sockaddr), or will be in peer_later (a received datagram's source: the record is held
 * until the thread's next socket call) when either is given. segs: the TCP socket's segment
 * counts the record carries (out << 32 | in), -1 to read them through c->sk; cnt the counters. */
static __always_inline void emit_data(void *ctx, __u64 start_ns, __u64 end_ns, __u32 tgid, int fd,
				      struct conn *c,
				      __u8 dir, __u64 len, __u8 kind, __u64 buf, __u32 n,
				      __u64 uaddr, __u64 peer_later, __u32 flags,
				      __s64 segs, struct l7_counters *cnt)
{
	struct l7_scratch *s = scratch();
	struct l7_event *e;
	__u32 cap = capture_bytes, got = 0;
	__u8 guess;

	if (!s)
		return;
	e = &s->e;
	if (cap > L7_CAPTURE_MAX)
		cap = L7_CAPTURE_MAX;
	if (cap > len)
		cap = (__u32)len;
	if (kind == K_BUF)
		got = copy_at(s, 0, buf, cap);
	else if (kind == K_IOV)
		got = copy_iov(s, buf, n, cap);
	if (got > cap)
		got = cap;
	if (c->state == CONN_UNDECIDED) {
		if (kind == K_SENDFILE)
			return;
		guess = gt_kinfer(s, got, len, c->udp, c->af_unix);
		if (guess == 0xff) {
			c->state = CONN_IGNORED;
		} else if (guess && (proto_mask & (1u << guess))) {
			c->state = CONN_TRACED;
			c->proto = guess;
		} else if (guess || ++c->tries >= (c->role == L7_KROLE_UNKNOWN ? TRIES_OLD : TRIES_NEW)) {
			c->state = CONN_IGNORED;
		}
		if (c->state != CONN_TRACED) {
			if (cnt)
				cnt->skipped++;
			return;
		}
		if (c->af_unix)
			emit_peer(tgid, fd, c, dir == 0 && c->udp ? uaddr : 0);
	} else if (c->state != CONN_TRACED) {
		if (cnt)
			cnt->skipped++;
		return;
	}
	if (len > got && kind != K_SENDFILE && cnt)
		cnt->truncated++;
	data_head(e, c, tgid, (__u32)bpf_get_current_pid_tgid(), fd, start_ns,
		  end_ns ? end_ns : bpf_ktime_get_ns(), len, got, dir, flags, uaddr);
	if (!c->udp && !c->af_unix) {
		if (segs >= 0) {
			e->segs_in = (__u32)segs;
			e->segs_out = (__u32)((__u64)segs >> 32);
		} else {
			struct tcp_sock *t = (struct tcp_sock *)c->sk;

			e->segs_in = BPF_CORE_READ(t, segs_in);
			e->segs_out = BPF_CORE_READ(t, segs_out);
		}
		e->flags |= L7_EVF_SEGS;
	} else {
		e->segs_in = e->segs_out = 0;
	}
	/* The stack of the thread that sends (client) or receives (server) a request, for the
	 * slowest-requests list: walked for one request in L7_STACK_EVERY of a connection (the
	 * walk costs more than the rest of the record), the others show the latest one. */
	e->ustack_id = -1;
	if (want_stacks && c->role != L7_KROLE_UNKNOWN &&
	    (dir == 0) == (c->role == L7_KROLE_CLIENT) && c->requests++ % L7_STACK_EVERY == 0)
		e->ustack_id = bpf_get_stackid(ctx, &gt_l7_stacks, BPF_F_USER_STACK);
	if (c->udp && peer_later) {
		__u32 tid = e->tid;

		s->peer_uaddr = peer_later;
		if (!bpf_map_update_elem(&gt_l7_pending, &tid, s, BPF_ANY))
			__sync_fetch_and_add(&pending_n, 1);
		return;
	}
	output(s, got, cnt);
}

#include "l7_count.bpf.h"

/* The index in its vector of the message a sendmmsg/recvmmsg (system call nr) of thread tid on
 * fd is at. */
static __always_inline __u32 mmsg_index(__u32 tid, long nr, int fd, __u64 vec, __u32 vlen)
{
	struct mmsg_pos *p = bpf_map_lookup_elem(&gt_l7_mmsg, &tid), n = {};
	__u32 i;

	if (p && p->vec == vec && p->fd == fd && p->nr == (__u32)nr && p->next < p->vlen) {
		i = p->next++;
		if (p->next >= p->vlen && !bpf_map_delete_elem(&gt_l7_mmsg, &tid))
			__sync_fetch_and_add(&mmsg_n, -1);
		return i;
	}
	if (vlen > 1) {
		n.vec = vec;
		n.fd = fd;
		n.nr = (__u32)nr;
		n.vlen = vlen;
		n.next = 1;
		if (!bpf_map_update_elem(&gt_l7_mmsg, &tid, &n, p ? BPF_EXIST : BPF_NOEXIST) && !p)
			__sync_fetch_and_add(&mmsg_n, 1);
	} else if (p && !bpf_map_delete_elem(&gt_l7_mmsg, &tid)) {
		__sync_fetch_and_add(&mmsg_n, -1);
	}
	return 0;
}

/* A failed socket call of thread tid: a sendmmsg/recvmmsg in progress on it ends there. */
static __always_inline void mmsg_fail(__u32 tid)
{
	if (mmsg_n && !bpf_map_delete_elem(&gt_l7_mmsg, &tid))
		__sync_fetch_and_add(&mmsg_n, -1);
}

/* A socket call of ret bytes on sk has moved its data (dir 0 send, 1 recv): the system call
 * number and arguments in the task's registers say where the bytes are. */
static __always_inline int on_sock(void *ctx, struct sock *sk, int ret, __u8 dir)
{
	__u64 id = bpf_get_current_pid_tgid(), now, t0 = 0, buf, addr = 0, later = 0;
	__s64 segs = -1; /* the TCP socket's segment counts (out << 32 | in) when known */
	__u32 tgid = id >> 32, tid = (__u32)id, n = 0, flags = 0;
	struct ssl_args *ssl = NULL;
	struct l7_counters *cnt;
	struct tcp_sock *tp;
	struct pt_regs *regs;
	struct conn *c;
	__u8 kind;
	long nr;
	int fd;

	if (ret <= 0) {
		mmsg_fail(tid);
		/* A receive that moved nothing (EAGAIN on a non-blocking socket, a peer's end):
		 * nothing to read, no send's start to take; out before the target test. */
		if (dir == 1 || !unix_starts)
			return 0;
	}
	if (!current_passes(tgid, tid))
		return 0;
	if (dir == 0 && unix_starts) {
		/* Taken whatever the send's outcome, so that none is left for the next. */
		__u64 *begun = bpf_task_storage_get(&gt_l7_send_t0, bpf_get_current_task_btf(), 0, 0);

		if (begun) {
			t0 = *begun;
			*begun = 0;
		}
	}
	if (ret <= 0)
		return 0;
	flush_pending(tid);
	regs = user_regs();
	nr = regs->orig_ax;
	switch (nr) {
	case GT_NR_READ:
	case GT_NR_WRITE:
		kind = K_BUF;
		break;
	case GT_NR_SENDTO:
	case GT_NR_RECVFROM:
		kind = K_BUF;
		addr = regs->r8;
		break;
	case GT_NR_READV:
	case GT_NR_WRITEV:
		kind = K_IOV;
		n = (__u32)regs->dx;
		break;
	case GT_NR_SENDMSG:
	case GT_NR_RECVMSG:
		kind = K_MSG;
		break;
	case GT_NR_SENDMMSG:
	case GT_NR_RECVMMSG:
		kind = K_MMSG;
		break;
	case GT_NR_SENDFILE:
		kind = K_SENDFILE;
		break;
	default:
		return 0; /* io_uring, splice, a kernel thread's socket: not a call we can read */
	}
	fd = (int)regs->di;
	buf = regs->si;
	c = conn_get(tgid, fd, sk);
	if (!c)
		return 0;
	if (ssl_inflight)
		ssl = bpf_map_lookup_elem(&gt_l7_ssl, &tid);
	if (ssl) {
		/* Ciphertext of an SSL call: only the fd matters; the uretprobe reports the
		 * plaintext. */
		ssl->fd = fd;
		return 0;
	}
	if (c->ssl)
		return 0;
	if (c->state == CONN_IGNORED) {
		COUNT(skipped);
		return 0;
	}
	/* A cast, not bpf_skc_to_tcp_sock: no helper call (its tests were made once, when the
	 * connection was first seen); the loads through it are the kernel's checked ones. */
	tp = c->tcp ? bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock)) : NULL;
	if (tp)
		segs = (__s64)((__u64)tp->segs_out << 32 | tp->segs_in);
	/* A datagram received on an unconnected socket: its source is written to the caller's
	 * sockaddr after this, and read from there at the thread's next socket call. */
	if (dir == 1) {
		later = c->udp && !c->rport && !c->af_unix ? addr : 0;
		addr = 0;
	}
	/* The call's end. A TCP send's beginning: when it put its last segment on the wire
	 * (tcp_wstamp_ns, the same clock), before the receiver's TCP path ran inside the send on
	 * loopback; unless no segment left in this call (held by Nagle or the window: the stamp
	 * is then older than the connection's previous message). A Unix-domain send's: when it
	 * queued its bytes to the peer (t0, gt_l7_send_ready), else its end. */
	now = bpf_ktime_get_ns();
	if (dir == 0 && tp) {
		__u64 w = tp->tcp_wstamp_ns;

		if (w > c->last_io_ns && w <= now)
			t0 = w;
	}
	if (!t0 || t0 > now)
		t0 = now;
	c->last_io_ns = now;
	/* One emit_data for every kind: each inlined copy would be verified on its own. */
	if (kind == K_MSG || kind == K_MMSG) {
		struct user_msghdr m;

		/* sendmmsg/recvmmsg: the vector's message this one is (vlen in the third
		 * argument), each a struct mmsghdr, a msghdr with the count after it. */
		if (kind == K_MMSG)
			buf += (__u64)mmsg_index(tid, nr, fd, buf, (__u32)regs->dx) *
			       sizeof(struct mmsghdr);
		if (bpf_probe_read_user(&m, sizeof(m), (const void *)buf))
			return 0;
		kind = K_IOV;
		buf = (__u64)m.msg_iov;
		n = (__u32)m.msg_iovlen;
		addr = dir ? 0 : (__u64)m.msg_name;
		later = dir && c->udp && !c->rport && !c->af_unix ? (__u64)m.msg_name : 0;
	} else if (kind == K_SENDFILE) {
		/* sendfile moves file pages: bytes counted, none copied. */
		buf = addr = later = 0;
		n = 0;
		flags = L7_EVF_SENDFILE;
	}
	/* A busy connection's plain exchange is counted here once user space has said so (looked
	 * for at one request in 16 until then: a server's receive, a client's send). */
	if (count_on && c->role != L7_KROLE_UNKNOWN && c->state == CONN_TRACED && !c->udp &&
	    !c->af_unix && (c->proto == L7_KPROTO_HTTP || c->proto == L7_KPROTO_REDIS) &&
	    (c->counted == 1 ||
	     (!c->counted && dir == (c->role == L7_KROLE_SERVER) && !(c->ctries++ & 15)))) {
		struct l7c_call a = {conn_key(tgid, fd), ret, buf, now, t0, dir, kind, n, tid};

		if (tp) {
			a.segs_in = (__u32)segs;
			a.segs_out = (__u32)((__u64)segs >> 32);
		}
		if (gt_count(c, &a))
			return 0;
		/* A counted connection's records carry its segments less the kernel's. */
		if (tp)
			segs = (__s64)((__u64)a.segs_out << 32 | a.segs_in);
	}
	/* The counters only for calls that go on (a counted one needs none of them). */
	cnt = counters();
	emit_data(ctx, t0, now, tgid, fd, c, dir, ret, kind, buf, n, addr, later, flags, segs, cnt);
	return 0;
}

/* A Unix-domain send has no TCP path: the first moment a tracepoint sees within it is the
 * receiver's wakeup (sock_def_readable), once the bytes are queued to it, before the send
 * wakes the receiver and returns. Only within a send system call of the thread (a connect
 * wakes its listener too). Every socket's data-ready passes here (the family is the first
 * test), so user space attaches it only once a Unix-domain connection is traced. */
SEC("tp_btf/sk_data_ready")
int BPF_PROG(gt_l7_send_ready, const struct sock *sk)
{
	__u64 id = bpf_get_current_pid_tgid(), *begun;
	struct pt_regs *regs;
	long nr;

	if (sk->__sk_common.skc_family != GT_AF_UNIX || !current_passes(id >> 32, (__u32)id))
		return 0;
	regs = user_regs();
	nr = regs->orig_ax;
	if (nr != GT_NR_WRITE && nr != GT_NR_WRITEV && nr != GT_NR_SENDTO && nr != GT_NR_SENDMSG)
		return 0;
	begun = bpf_task_storage_get(&gt_l7_send_t0, bpf_get_current_task_btf(), 0,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (begun && !*begun)
		*begun = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(gt_l7_send, struct sock *sk, int ret, int flags)
{
	return on_sock(ctx, sk, ret, 0);
}

/* A peek (MSG_PEEK) moves nothing: the read that follows reports the bytes. */
SEC("tp_btf/sock_recv_length")
int BPF_PROG(gt_l7_recv, struct sock *sk, int ret, int flags)
{
	if (flags & GT_MSG_PEEK)
		return 0;
	return on_sock(ctx, sk, ret, 1);
}

/* TCP state changes: an established connection's role (from SYN_SENT: it connected; from
 * SYN_RECV: it was accepted), and its close, which ends its connection entry. */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(gt_l7_state, struct sock *sk, int oldstate, int newstate)
{
	__u64 skey = (__u64)sk;
	struct sock_info *si, n = {};
	struct conn *c;

	if (newstate == GT_TCP_ESTABLISHED) {
		n.role = oldstate == GT_TCP_SYN_SENT   ? L7_KROLE_CLIENT
			 : oldstate == GT_TCP_SYN_RECV ? L7_KROLE_SERVER
						       : L7_KROLE_UNKNOWN;
		if (n.role != L7_KROLE_UNKNOWN)
			bpf_map_update_elem(&gt_l7_socks, &skey, &n, BPF_ANY);
		return 0;
	}
	if (newstate != GT_TCP_CLOSE)
		return 0;
	si = bpf_map_lookup_elem(&gt_l7_socks, &skey);
	if (!si)
		return 0;
	if (si->conn) {
		__u64 key = si->conn;

		c = bpf_map_lookup_elem(&gt_l7_conns, &key);
		if (c && c->sk == skey) {
			emit_close((__u32)(key >> 32), (int)(__u32)key, c);
			/* Ended in place, not deleted: by now the process may have closed the fd
			 * and given it to a new socket on another CPU, whose entry a delete by key
			 * would remove (its messages then lost, or split from their requests).
			 * The next socket on this fd replaces the entry. */
			c->sk = 0;
			c->state = CONN_IGNORED;
		}
	}
	bpf_map_delete_elem(&gt_l7_socks, &skey);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(gt_l7_fork, struct task_struct *parent, struct task_struct *child)
{
	if (follow_children)
		targets_follow_fork(parent, child);
	return 0;
}

/* Reports len bytes of plaintext at buf that a TLS library moved on socket fd (dir as
 * l7_event.dir, start_ns when the call began). */
static __always_inline void tls_plain(void *ctx, __u64 start_ns, __u32 tgid, int fd, __u8 dir,
				      __u64 len, __u64 buf)
{
	__u64 key = conn_key(tgid, fd);
	struct conn *c;

	if (!len)
		return;
	/* The socket calls inside the TLS call (or its handshake) made the entry. */
	c = bpf_map_lookup_elem(&gt_l7_conns, &key);
	if (!c || !c->sk)
		return;
	if (!c->ssl) {
		/* The first plaintext: what the socket calls saw was the TLS handshake. */
		c->ssl = 1;
		c->state = CONN_UNDECIDED;
		c->tries = 0;
	}
	emit_data(ctx, start_ns, 0, tgid, fd, c, dir, len, K_BUF, buf, 0, 0, 0, L7_EVF_SSL, -1,
		  counters());
}

/* OpenSSL: SSL_read/SSL_write(ssl, buf, num) return the byte count; the _ex variants return 1
 * and store the count through their fourth argument. */
static __always_inline int ssl_enter(void *ssl, void *buf, void *nptr, __u8 dir, __u8 ex)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct ssl_args s = {};

	if (!current_passes(tgid, tid))
		return 0;
	s.ts = bpf_ktime_get_ns();
	s.ssl = (__u64)ssl;
	s.buf = (__u64)buf;
	s.nptr = (__u64)nptr;
	s.fd = -1;
	s.dir = dir;
	s.ex = ex;
	if (!bpf_map_update_elem(&gt_l7_ssl, &tid, &s, BPF_NOEXIST))
		__sync_fetch_and_add(&ssl_inflight, 1);
	return 0;
}

static __always_inline int ssl_exit(void *ctx, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct ssl_args *sp = bpf_map_lookup_elem(&gt_l7_ssl, &tid), s;
	__s32 *known;
	struct conn *c;
	__u64 len;

	if (!sp)
		return 0;
	s = *sp;
	if (!bpf_map_delete_elem(&gt_l7_ssl, &tid))
		__sync_fetch_and_add(&ssl_inflight, -1);
	COUNT(ssl_calls);
	if (s.fd >= 0) {
		bpf_map_update_elem(&gt_l7_sslfd, &s.ssl, &s.fd, BPF_ANY);
	} else {
		/* Served from OpenSSL's buffer without a syscall: the fd seen before. */
		known = bpf_map_lookup_elem(&gt_l7_sslfd, &s.ssl);
		if (!known)
			return 0;
		s.fd = *known;
	}
	if (ret <= 0)
		return 0;
	len = (__u64)ret;
	if (s.ex) {
		size_t n = 0;

		if (ret != 1 || bpf_probe_read_user(&n, sizeof(n), (const void *)s.nptr))
			return 0;
		len = n;
	}
	tls_plain(ctx, s.ts, tgid, s.fd, s.dir, len, s.buf);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gt_l7_ssl_read, void *ssl, void *buf, int num)
{
	return ssl_enter(ssl, buf, NULL, 1, 0);
}

SEC("uprobe")
int BPF_KPROBE(gt_l7_ssl_write, void *ssl, void *buf, int num)
{
	return ssl_enter(ssl, buf, NULL, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(gt_l7_ssl_read_ex, void *ssl, void *buf, size_t num, size_t *nread)
{
	return ssl_enter(ssl, buf, nread, 1, 1);
}

SEC("uprobe")
int BPF_KPROBE(gt_l7_ssl_write_ex, void *ssl, void *buf, size_t num, size_t *nwritten)
{
	return ssl_enter(ssl, buf, nwritten, 0, 1);
}

SEC("uretprobe")
int BPF_KRETPROBE(gt_l7_ssl_ret, int ret)
{
	return ssl_exit(ctx, ret);
}

/* Go's crypto/tls (symbols/go_tls.h finds the places): uprobes at the start of
 * (*Conn).Write and of (*Conn).Read (on their stack check's conditional jump, which the kernel
 * emulates rather than single-steps), and where Read has its result: on the conditional jump
 * of its test of n after the copy (also emulated), else on each RET of Read; never
 * uretprobes (Go moves goroutine stacks). Go's register ABI: the receiver in RAX, the slice's
 * pointer and length in RBX and RCX; Read returns n in RAX; R14 holds the goroutine (g),
 * which keys a Read in flight (its goroutine may resume on another thread). The attach
 * cookie holds the offsets from a *tls.Conn to its fd (struct go_tls_info): conn, fd, and
 * pfd + Sysfd, 16 bits each, then GO_ON_CHECK when the probe is on the stack check's JBE, and
 * from bit 56 the register holding Read's result (enum go_tls_reg: its word in pt_regs). */
#define GO_ON_CHECK (1ull << 48)
#define GO_REG_SHIFT 56
#define GT_X86_CF 0x1
#define GT_X86_ZF 0x40

/* Whether the call is about to branch to runtime.morestack (its stack check's JBE taken: CF
 * or ZF set by the comparison): it restarts at its entry once the stack has grown and passes
 * the probe again, so this pass is not the call's. */
static __always_inline bool go_stack_grows(struct pt_regs *ctx, __u64 cookie)
{
	return (cookie & GO_ON_CHECK) && (ctx->flags & (GT_X86_CF | GT_X86_ZF));
}

struct go_read_key {
	__u64 g;
	__u32 tgid;
	__u32 pad;
};

struct go_read {
	__u64 ts;
	__u64 buf;
	__s32 fd;
	__u32 len; /* of the slice read into (at most 4 GiB - 1) */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct go_read_key);
	__type(value, struct go_read);
} gt_l7_go_reads SEC(".maps");

#define GO_WRAP_DEPTH 3 /* net.Conn wrappers looked through (gRPC-Go's, ...) */

/* The socket fd of the *tls.Conn at tc in process tgid, or -1: conn is a net.Conn
 * interface (itab, data); its data, a *net.TCPConn or *net.UnixConn, holds fd (*netFD) whose
 * pfd holds Sysfd. A wrapper (a struct whose first field is the net.Conn it wraps) is looked
 * through: a candidate counts when it is a socket the capture has seen this process use (the
 * handshake's socket calls made its entry). */
static __always_inline int go_fd(__u32 tgid, __u64 tc, __u64 cookie)
{
	__u64 data = 0, nfd = 0, off_fd = (cookie >> 16) & 0xffff, off_sysfd = (cookie >> 32) & 0xffff;
	__s64 sysfd = -1;

	if (bpf_probe_read_user(&data, sizeof(data), (const void *)(tc + (cookie & 0xffff) + 8)))
		return -1;
#pragma unroll
	for (int i = 0; i < GO_WRAP_DEPTH; i++) {
		if (!bpf_probe_read_user(&nfd, sizeof(nfd), (const void *)(data + off_fd)) &&
		    !bpf_probe_read_user(&sysfd, sizeof(sysfd), (const void *)(nfd + off_sysfd)) &&
		    sysfd >= 0 && sysfd < (1 << 24)) {
			__u64 key = conn_key(tgid, (int)sysfd);

			if (bpf_map_lookup_elem(&gt_l7_conns, &key))
				return (int)sysfd;
		}
		if (bpf_probe_read_user(&data, sizeof(data), (const void *)(data + 8)))
			break;
	}
	return -1;
}

SEC("uprobe")
int gt_l7_go_write(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u64 now, cookie;
	int fd;

	if (!current_passes(tgid, tid))
		return 0;
	/* Write sends all of b or fails: its entry, before the walk to the fd, is where the
	 * request starts and what it is. */
	now = bpf_ktime_get_ns();
	cookie = bpf_get_attach_cookie(ctx);
	if (go_stack_grows(ctx, cookie))
		return 0;
	COUNT(ssl_calls);
	fd = go_fd(tgid, ctx->ax, cookie);
	if (fd >= 0)
		tls_plain(ctx, now, tgid, fd, 0, ctx->cx, ctx->bx);
	return 0;
}

SEC("uprobe")
int gt_l7_go_read(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct go_read_key k = {.g = ctx->r14, .tgid = tgid};
	struct go_read r = {};
	__u64 cookie;

	if (!current_passes(tgid, tid))
		return 0;
	r.ts = bpf_ktime_get_ns(); /* the call's entry, before the walk to the fd */
	cookie = bpf_get_attach_cookie(ctx);
	if (go_stack_grows(ctx, cookie))
		return 0;
	r.fd = go_fd(tgid, ctx->ax, cookie);
	if (r.fd < 0)
		return 0;
	r.buf = ctx->bx;
	r.len = ctx->cx < 0xffffffff ? (__u32)ctx->cx : 0xffffffff;
	bpf_map_update_elem(&gt_l7_go_reads, &k, &r, BPF_ANY);
	return 0;
}

/* The register of pt_regs word w (enum go_tls_reg in symbols/go_tls.h), or -1. A read through
 * the helper: the verifier allows context loads at constant offsets only, and the compiler
 * folds a switch over the fields into one load at a computed offset. */
static __always_inline long go_reg(struct pt_regs *ctx, __u64 w)
{
	long v;

	if (w > 14 || bpf_probe_read_kernel(&v, sizeof(v), (const void *)ctx + w * 8))
		return -1;
	return v;
}

/* Read has its result: n in the cookie's register, at most the slice's length (a register
 * that is not n, if the compiler ever placed it so, is refused here rather than read as
 * bytes). */
SEC("uprobe")
int gt_l7_go_read_ret(struct pt_regs *ctx)
{
	struct go_read_key k = {.g = ctx->r14, .tgid = bpf_get_current_pid_tgid() >> 32};
	struct go_read *rp = bpf_map_lookup_elem(&gt_l7_go_reads, &k), r;
	long n;

	if (!rp)
		return 0;
	n = go_reg(ctx, (bpf_get_attach_cookie(ctx) >> GO_REG_SHIFT) & 0x1f);
	r = *rp;
	bpf_map_delete_elem(&gt_l7_go_reads, &k);
	COUNT(ssl_calls);
	if (n > 0 && (__u64)n <= r.len)
		tls_plain(ctx, r.ts, k.tgid, r.fd, 1, (__u64)n, r.buf);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
