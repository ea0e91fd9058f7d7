/* Where to put uprobes on a Go program's crypto/tls: the starts of (*Conn).Write and
 * (*Conn).Read, and where Read has its result: the test of n just after it copied the
 * plaintext out (`n, _ := c.input.Read(b); if n != 0 && ...`), else every RET instruction of
 * Read (Go moves goroutine stacks, so uretprobes, which rewrite the return address on the
 * stack, cannot be used), found through .gopclntab (present in stripped binaries too) and a
 * disassembly of Read with capstone; and the field
 * offsets that lead from a *tls.Conn to its socket's fd, from DWARF when the binary has it,
 * else the layout every Go release since 1.9 has used. x86_64, Go 1.18 and later (the
 * register ABI, 1.17+, with the function table format of 1.18+). */
#ifndef GALATOP_SYMBOLS_GO_TLS_H
#define GALATOP_SYMBOLS_GO_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GO_TLS_MAX_RETS 32 /* RET instructions of Read probed at most */

/* x86_64 registers as the index of their 8-byte word in the kernel's struct pt_regs, which a
 * uprobe program reads (bpf/l7_probe.bpf.c's go_reg). R14 (Go's goroutine) and RSP never hold
 * a result. */
enum go_tls_reg {
	GO_REG_R15, GO_REG_R14, GO_REG_R13, GO_REG_R12, GO_REG_BP, GO_REG_BX, GO_REG_R11,
	GO_REG_R10, GO_REG_R9, GO_REG_R8, GO_REG_AX, GO_REG_CX, GO_REG_DX, GO_REG_SI, GO_REG_DI,
};

struct go_tls_info {
	/* File offsets of crypto/tls.(*Conn).Write's and Read's stack check's conditional jump
	 * (JBE: taken, to runtime.morestack, when the goroutine's stack must grow, after which
	 * the function restarts at its entry; the arguments are still in their registers there),
	 * with *_on_check true; else of their entry, with *_on_check false. */
	uint64_t write_off;
	uint64_t read_off;
	bool write_on_check;
	bool read_on_check;
	/* Read's result: the file offset of the conditional jump after its `TEST r, r` of n
	 * (the kernel emulates the jump: about 1 us a hit, where a RET is single-stepped out of
	 * line, about 10 us after the probe's clock, which the program's own timing pays), and
	 * r; read_result_off 0 when Read has none: then its RETs, the result in RAX. */
	uint64_t read_result_off;
	enum go_tls_reg read_result_reg;
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

/* Finds Read's result check in its code[0..len) at address addr: the first `TEST r, r` (r
 * 64-bit) directly followed by JE or JNE after a direct CALL to one of the ncopy addresses
 * copy_fns (runtime.memmove, where bytes.(*Reader).Read is inlined, as every Go from 1.18 to
 * 1.23 does, and that function itself). The compiler tests n right after the copy: line
 * `if n != 0 && c.input.Len() == 0 ...`. *jcc gets the jump's address and *reg r. 0; -ENOENT
 * when there is none (or capstone cannot be loaded); -ENOMEM. */
int go_tls_read_result(const uint8_t *code, size_t len, uint64_t addr, const uint64_t *copy_fns,
		       size_t ncopy, uint64_t *jcc, enum go_tls_reg *reg);

/* Inspects the ELF file open at fd (borrowed, not closed). 0; -ENOENT when it is no Go
 * x86_64 binary of 1.18 or later linking crypto/tls (or capstone, loaded on first use, is
 * missing); -ENOEXEC when it is no ELF file; -ENOMEM. */
int go_tls_inspect(int fd, struct go_tls_info *out);

#endif
