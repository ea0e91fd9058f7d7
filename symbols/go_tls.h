/* Where to put uprobes on a Go program's crypto/tls: the starts of (*Conn).Write and
 * (*Conn).Read and every RET instruction of Read (Go moves goroutine stacks, so uretprobes,
 * which rewrite the return address on the stack, cannot be used), found through .gopclntab
 * (present in stripped binaries too) and a disassembly of Read with capstone; and the field
 * offsets that lead from a *tls.Conn to its socket's fd, from DWARF when the binary has it,
 * else the layout every Go release since 1.9 has used. x86_64, Go 1.18 and later (the
 * register ABI, 1.17+, with the function table format of 1.18+). */
#ifndef GALATOP_SYMBOLS_GO_TLS_H
#define GALATOP_SYMBOLS_GO_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GO_TLS_MAX_RETS 32 /* RET instructions of Read probed at most */

struct go_tls_info {
	/* File offsets of crypto/tls.(*Conn).Write's and Read's stack check's conditional jump
	 * (JBE: taken, to runtime.morestack, when the goroutine's stack must grow, after which
	 * the function restarts at its entry; the arguments are still in their registers there),
	 * with *_on_check true; else of their entry, with *_on_check false. */
	uint64_t write_off;
	uint64_t read_off;
	bool write_on_check;
	bool read_on_check;
	uint64_t read_rets[GO_TLS_MAX_RETS]; /* file offsets of Read's RET instructions */
	size_t nread_rets;
	/* *tls.Conn -> conn (a net.Conn interface: itab, data) -> data, a *net.TCPConn or
	 * *net.UnixConn, whose embedded net.conn holds fd (*net.netFD) -> pfd (internal/poll.FD)
	 * -> Sysfd (int). */
	uint16_t conn_off;  /* of conn in crypto/tls.Conn */
	uint16_t fd_off;    /* of fd in net.conn */
	uint16_t pfd_off;   /* of pfd in net.netFD */
	uint16_t sysfd_off; /* of Sysfd in internal/poll.FD */
	bool dwarf;	    /* the offsets come from the binary's DWARF */
	char version[16];   /* "go1.19.8" as .go.buildinfo says, "" when unknown */
};

/* Inspects the ELF file open at fd (borrowed, not closed). 0; -ENOENT when it is no Go
 * x86_64 binary of 1.18 or later linking crypto/tls (or capstone, loaded on first use, is
 * missing); -ENOEXEC when it is no ELF file; -ENOMEM. */
int go_tls_inspect(int fd, struct go_tls_info *out);

#endif
