/* Records shared by bpf/l7_probe.bpf.c and its loader bpf/l7_probe.c: what one system call (or one
 * OpenSSL call) moved on one socket, with the socket's identity and the first bytes.
 * Fixed-width fields, no pointers: compiles for -target bpf (with vmlinux.h) and the host. */
#ifndef GALATOP_BPF_L7_EVENT_H
#define GALATOP_BPF_L7_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define L7_CAPTURE_MAX 16384 /* most bytes copied per message (--l7-capture) */
#define L7_CAPTURE_DEFAULT 4096
#define L7_UNIX_PATH_MAX 108 /* sizeof(sockaddr_un.sun_path) */
#define L7_MAX_IOV 64	  /* iovec entries copied per readv/writev/sendmsg/recvmsg */
#define L7_STACK_DEPTH 32 /* user frames kept per request (the walk costs per frame) */
#define L7_STACK_EVERY 16 /* a stack is walked for one request in 16 per connection */

enum l7_ev_type {
	L7_EV_DATA = 1, /* bytes moved: len, the first cap of them follow */
	/* The connection (tgid, fd, gen) ended: its TCP socket closed, or a new socket on the fd. */
	L7_EV_CLOSE = 2,
	/* A Unix-domain connection's peer, sent before its first traced message: the socket
	 * path (cap bytes of sun_path follow, abstract names starting with a NUL) and in
	 * peer_pid the peer process the kernel knows (SO_PEERCRED), 0 if none. */
	L7_EV_PEER = 3,
};

/* Kernel protocol guesses: the numbers of enum l7_proto in model/l7/proto.h (asserted in
 * bpf/l7_probe.c); its registry says which protocols each guess leads to. */
#define L7_KPROTO_HTTP 1
#define L7_KPROTO_REDIS 2
#define L7_KPROTO_PGSQL 3
#define L7_KPROTO_MYSQL 4
#define L7_KPROTO_DNS 5
#define L7_KPROTO_HTTP2 6
#define L7_KPROTO_KAFKA 8 /* 7 is gRPC, which the kernel guesses as HTTP/2 */
#define L7_KPROTO_MONGO 9
#define L7_KPROTO_ROCKETMQ 10

#define L7_EVF_SSL 1u	   /* plaintext from an OpenSSL call, not the wire */
#define L7_EVF_UDP 2u	   /* a datagram socket: one message per record */
#define L7_EVF_V6 4u	   /* addresses are IPv6 (else IPv4 in the first 4 bytes) */
#define L7_EVF_SENDFILE 8u /* sendfile, sendmmsg, recvmmsg: bytes counted, none copied */
#define L7_EVF_SEGS 16u	   /* segs_in/segs_out are the TCP socket's counters */
#define L7_EVF_UNIX 32u	   /* a Unix-domain socket: no addresses, the peer in L7_EV_PEER */

/* Roles as in enum l7_role. */
#define L7_KROLE_UNKNOWN 0
#define L7_KROLE_CLIENT 1
#define L7_KROLE_SERVER 2

struct l7_event {
	__u32 type; /* enum l7_ev_type */
	__u32 tgid;
	__u32 tid;
	__s32 fd;
	__u64 ts_ns; /* bpf_ktime_get_ns() once the call moved its bytes */
	__u64 start_ns; /* the same for socket calls; an OpenSSL call's entry */
	__u64 gen;   /* connection generation: fd reuse starts a new one */
	__u64 len;   /* bytes the call moved */
	__u64 cgroup_id;
	__u32 cap;   /* bytes of data[] that follow */
	__u32 flags; /* L7_EVF_* */
	__u8 dir;    /* 0 send, 1 recv (as enum l7_dir) */
	__u8 role;   /* L7_KROLE_* from accept vs connect */
	__u8 proto;  /* the kernel's protocol guess, L7_KPROTO_*, 0 unknown */
	__u8 pad;
	__u16 lport, rport; /* host byte order */
	__u8 laddr[16], raddr[16];
	__u32 segs_in, segs_out; /* TCP segments the socket received / sent so far */
	__s32 ustack_id;	 /* user stack in gt_l7_stacks, < 0 when none */
	__u32 peer_pid;		 /* L7_EV_PEER: the peer's pid, 0 when unknown */
	char comm[16];
	/* cap bytes of data follow the record */
};

#define L7_EVENT_HDR_SIZE sizeof(struct l7_event)

/* Per-CPU counters summed by user space. */
struct l7_counters {
	__u64 events;	 /* records written */
	__u64 drops;	 /* records lost: ring buffer full */
	__u64 skipped;	 /* messages on connections whose protocol is not traced */
	__u64 ssl_calls; /* OpenSSL and Go crypto/tls calls seen */
	__u64 truncated; /* messages longer than the capture size */
	__u64 count_lost; /* requests the kernel could not count: its maps full */
};

#endif
