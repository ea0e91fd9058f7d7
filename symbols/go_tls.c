#include "go_tls.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "symbols/capstone_dl.h"
#include "symbols/elf_syms.h"
#include "symbols/gopclntab.h"

static const char WRITE_FN[] = "crypto/tls.(*Conn).Write";
static const char READ_FN[] = "crypto/tls.(*Conn).Read";
/* What copies the plaintext out in Read: bytes.(*Reader).Read, inlined there with its call
 * to runtime.memmove. */
static const char *const COPY_FNS[] = { "runtime.memmove", "bytes.(*Reader).Read" };
#define NCOPY (sizeof(COPY_FNS) / sizeof(COPY_FNS[0]))

/* The PT_LOAD segments of elf over its raw bytes (size bytes at raw) into *segs (caller
 * frees); 0 or -ENOMEM. */
static int load_segs(Elf *elf, const char *raw, size_t size, struct gopcln_seg **segs, size_t *n)
{
	size_t nph;

	*segs = NULL;
	*n = 0;
	if (elf_getphdrnum(elf, &nph) || !nph)
		return 0;
	*segs = calloc(nph, sizeof(**segs));
	if (!*segs)
		return -ENOMEM;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_offset <= size && ph.p_filesz <= size - ph.p_offset)
			(*segs)[(*n)++] = (struct gopcln_seg){
				ph.p_vaddr, (const uint8_t *)raw + ph.p_offset, ph.p_filesz};
	}
	return 0;
}

/* The file offset of link-time address vaddr, through the segment holding it; false when none
 * does. */
static bool file_off(const struct gopcln_seg *segs, size_t n, const char *raw, uint64_t vaddr,
		     uint64_t *off)
{
	for (size_t i = 0; i < n; i++)
		if (vaddr >= segs[i].vaddr && vaddr - segs[i].vaddr < segs[i].len) {
			*off = (uint64_t)((const char *)segs[i].data - raw) + vaddr - segs[i].vaddr;
			return true;
		}
	return false;
}

/* Whether the len bytes at link-time address vaddr lie in one segment's file contents; their
 * file offset in *off. */
static bool in_file(const struct gopcln_seg *segs, size_t n, const char *raw, uint64_t vaddr,
		    uint64_t len, uint64_t *off)
{
	uint64_t last;

	return file_off(segs, n, raw, vaddr, off) && file_off(segs, n, raw, vaddr + len - 1, &last) &&
	       last - *off == len - 1;
}

/* The Go version .go.buildinfo carries inline (Go 1.18+: flag 2, then a varint length and
 * the string) into buf; "" when it cannot be read. */
static void build_version(Elf *elf, const char *raw, size_t size, char *buf, size_t cap)
{
	static const char magic[] = "\xff Go buildinf:";
	GElf_Shdr sh;
	const uint8_t *p;
	size_t len;

	buf[0] = 0;
	if (!elf_find_section(elf, ".go.buildinfo", &sh) || sh.sh_offset > size ||
	    sh.sh_size > size - sh.sh_offset || sh.sh_size < 34)
		return;
	p = (const uint8_t *)raw + sh.sh_offset;
	if (memcmp(p, magic, 14) || !(p[15] & 2) || p[32] >= 0x80)
		return;
	len = p[32];
	if (len + 33 > sh.sh_size || len >= cap)
		return;
	memcpy(buf, p + 33, len);
	buf[len] = 0;
}

/* Opens capstone (x86_64, with details) on cs and disassembles at most count instructions
 * (0: all) of code[0..len) at address addr into *insn; their number, or -ENOENT (capstone
 * cannot be loaded) or -ENOMEM. undis() frees what it gave. */
static ssize_t dis(const uint8_t *code, size_t len, uint64_t addr, size_t count, csh *cs,
		   cs_insn **insn)
{
	const struct capstone_fns *cs_fn = capstone_dl();

	if (!cs_fn)
		return -ENOENT;
	if (cs_fn->open(CS_ARCH_X86, CS_MODE_64, cs) != CS_ERR_OK)
		return -ENOMEM;
	cs_fn->option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	return (ssize_t)cs_fn->disasm(*cs, code, len, addr, count, insn);
}

static void undis(csh *cs, cs_insn *insn, size_t n)
{
	if (n)
		capstone_dl()->free(insn, n);
	capstone_dl()->close(cs);
}

#define PROLOGUE_INSNS 8 /* the stack check is among a function's first instructions */
/* Disassembles the function code[0..len) at file offset off: *probe gets the offset of its
 * stack check's conditional jump (JBE, to runtime.morestack when the goroutine's stack must
 * grow, which copies the stack and restarts the function at its entry: a probe on the entry
 * would fire twice for one call; the probe on the jump knows from the flags whether it is
 * taken) and *on_check true, else the entry and false; rets, when not NULL, every RET. The
 * kernel emulates a conditional jump under a uprobe (about 1 us a hit here), but single-steps
 * most other instructions out of line, the one after the check included (about 9.5 us).
 * 0, -ENOENT (capstone cannot be loaded) or -ENOMEM. */
static int disasm(const uint8_t *code, size_t len, uint64_t off, uint64_t *probe, bool *on_check,
		  struct go_tls_info *rets)
{
	csh cs;
	cs_insn *insn;
	ssize_t n = dis(code, len, off, rets ? 0 : PROLOGUE_INSNS, &cs, &insn);

	*probe = off;
	*on_check = false;
	if (n < 0)
		return (int)n;
	for (ssize_t i = 0; i + 1 < n && i < PROLOGUE_INSNS; i++)
		if (insn[i].id == X86_INS_JBE) {
			*probe = insn[i].address;
			*on_check = true;
			break;
		}
	for (ssize_t i = 0; rets && i < n && rets->nread_rets < GO_TLS_MAX_RETS; i++)
		if (insn[i].id == X86_INS_RET)
			rets->read_rets[rets->nread_rets++] = insn[i].address;
	undis(&cs, insn, (size_t)n);
	return 0;
}

/* The offset of member in the structure type die, or -1. */
static int member_off(Dwarf_Die *die, const char *member)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child))
		return -1;
	do {
		Dwarf_Attribute a;
		Dwarf_Word w;
		const char *name = dwarf_diename(&child);

		if (dwarf_tag(&child) == DW_TAG_member && name && !strcmp(name, member) &&
		    dwarf_attr(&child, DW_AT_data_member_location, &a) && !dwarf_formudata(&a, &w) &&
		    w < 0x10000)
			return (int)w;
	} while (!dwarf_siblingof(&child, &child));
	return -1;
}

/* The four offsets from DWARF, when the binary has it and names all four. */
static void dwarf_offsets(Elf *elf, struct go_tls_info *out)
{
	static const char *const types[4][2] = {{"crypto/tls.Conn", "conn"},
						{"net.conn", "fd"},
						{"net.netFD", "pfd"},
						{"internal/poll.FD", "Sysfd"}};
	int found[4] = {-1, -1, -1, -1}, left = 4;
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (!dw)
		return;
	while (left && !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(dw, off + hsize, &cu) && !dwarf_child(&cu, &die)) {
			do {
				const char *name;

				if (dwarf_tag(&die) != DW_TAG_structure_type ||
				    !(name = dwarf_diename(&die)))
					continue;
				for (int i = 0; i < 4; i++)
					if (found[i] < 0 && !strcmp(name, types[i][0]) &&
					    (found[i] = member_off(&die, types[i][1])) >= 0)
						left--;
			} while (left && !dwarf_siblingof(&die, &die));
		}
		off = next;
	}
	dwarf_end(dw);
	if (left)
		return;
	out->conn_off = (uint16_t)found[0];
	out->fd_off = (uint16_t)found[1];
	out->pfd_off = (uint16_t)found[2];
	out->sysfd_off = (uint16_t)found[3];
	out->dwarf = true;
}

/* capstone's 64-bit general registers as enum go_tls_reg; -1 for any other (and RSP, R14:
 * Go's goroutine). */
static int gp_reg(x86_reg r)
{
	switch (r) {
	case X86_REG_RAX: return GO_REG_AX;
	case X86_REG_RBX: return GO_REG_BX;
	case X86_REG_RCX: return GO_REG_CX;
	case X86_REG_RDX: return GO_REG_DX;
	case X86_REG_RSI: return GO_REG_SI;
	case X86_REG_RDI: return GO_REG_DI;
	case X86_REG_RBP: return GO_REG_BP;
	case X86_REG_R8: return GO_REG_R8;
	case X86_REG_R9: return GO_REG_R9;
	case X86_REG_R10: return GO_REG_R10;
	case X86_REG_R11: return GO_REG_R11;
	case X86_REG_R12: return GO_REG_R12;
	case X86_REG_R13: return GO_REG_R13;
	case X86_REG_R15: return GO_REG_R15;
	default: return -1;
	}
}

int go_tls_read_result(const uint8_t *code, size_t len, uint64_t addr, const uint64_t *copy_fns,
		       size_t ncopy, uint64_t *jcc, enum go_tls_reg *reg)
{
	bool copied = false;
	int err = -ENOENT;
	csh cs;
	cs_insn *insn;
	ssize_t n = dis(code, len, addr, 0, &cs, &insn);

	if (n < 0)
		return (int)n;
	for (ssize_t i = 0; i + 1 < n && err; i++) {
		const cs_x86 *x = &insn[i].detail->x86;
		int r;

		if (insn[i].id == X86_INS_CALL && x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
			for (size_t f = 0; f < ncopy; f++)
				copied |= (uint64_t)x->operands[0].imm == copy_fns[f];
		if (copied && insn[i].id == X86_INS_TEST && x->op_count == 2 &&
		    x->operands[0].type == X86_OP_REG && x->operands[1].type == X86_OP_REG &&
		    x->operands[0].reg == x->operands[1].reg &&
		    (r = gp_reg(x->operands[0].reg)) >= 0 &&
		    (insn[i + 1].id == X86_INS_JE || insn[i + 1].id == X86_INS_JNE)) {
			*jcc = insn[i + 1].address;
			*reg = (enum go_tls_reg)r;
			err = 0;
		}
	}
	undis(&cs, insn, (size_t)n);
	return err;
}

/* Finds Write and Read in the Go function table g and fills their offsets, and Read's result
 * check or its RETs. */
static int find_funcs(struct gopcln *g, const struct gopcln_seg *segs, size_t nsegs,
		      const char *raw, struct go_tls_info *out)
{
	uint64_t rlen = 0, wlen = 0, copy_fns[NCOPY] = { 0 };
	int have = 0, err;

	for (size_t i = 0; i < gopcln__count(g) && have != (1 << (2 + NCOPY)) - 1; i++) {
		struct gopcln_name name;
		uint64_t entry, end;

		if (gopcln__func(g, i, &entry, &end, &name))
			continue;
		if (name.len == sizeof(WRITE_FN) - 1 && !memcmp(name.s, WRITE_FN, name.len) &&
		    end > entry && in_file(segs, nsegs, raw, entry, end - entry < 64 ? end - entry : 64,
					   &out->write_off))
			wlen = end - entry < 64 ? end - entry : 64, have |= 1;
		else if (name.len == sizeof(READ_FN) - 1 && !memcmp(name.s, READ_FN, name.len) &&
			 end > entry && end - entry < (1u << 20) &&
			 in_file(segs, nsegs, raw, entry, end - entry, &out->read_off))
			rlen = end - entry, have |= 2;
		else
			for (size_t f = 0; f < NCOPY; f++)
				if (name.len == strlen(COPY_FNS[f]) &&
				    !memcmp(name.s, COPY_FNS[f], name.len) &&
				    file_off(segs, nsegs, raw, entry, &copy_fns[f]))
					have |= 4 << f;
	}
	if ((have & 3) != 3)
		return -ENOENT;
	err = go_tls_read_result((const uint8_t *)raw + out->read_off, rlen, out->read_off,
				 copy_fns, NCOPY, &out->read_result_off, &out->read_result_reg);
	if (err == -ENOMEM)
		return err;
	err = disasm((const uint8_t *)raw + out->read_off, rlen, out->read_off, &out->read_off,
		     &out->read_on_check, out->read_result_off ? NULL : out);
	err = err ?: disasm((const uint8_t *)raw + out->write_off, wlen, out->write_off,
			    &out->write_off, &out->write_on_check, NULL);
	return err ? err : out->read_result_off || out->nread_rets ? 0 : -ENOENT;
}

int go_tls_inspect(int fd, struct go_tls_info *out)
{
	Elf *elf;
	GElf_Ehdr eh;
	GElf_Shdr sh, text;
	struct gopcln_seg *segs = NULL;
	struct gopcln *g = NULL;
	size_t size = 0, nsegs = 0;
	const char *raw;
	int err;

	memset(out, 0, sizeof(*out));
	/* The layout of Go 1.9 and later: every field first, but Sysfd after poll's fdMutex. */
	out->sysfd_off = 16;
	elf_version(EV_CURRENT);
	/* Read, not mapped: the kernel puts the breakpoints of uprobes already attached to the
	 * file (another galatop's) into every new private mapping of it, read-only ones too, and
	 * a RET under a breakpoint reads as INT3. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -ENOEXEC;
	}
	raw = elf_rawfile(elf, &size);
	err = -ENOENT;
	if (!raw || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    (!elf_find_section(elf, ".gopclntab", &sh) && !elf_find_section(elf, ".data.rel.ro.gopclntab", &sh)) ||
	    sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
		goto out;
	if (!elf_find_section(elf, ".text", &text))
		text.sh_addr = 0;
	err = load_segs(elf, raw, size, &segs, &nsegs);
	if (err)
		goto out;
	err = gopcln__new((const uint8_t *)raw + sh.sh_offset, sh.sh_size, sh.sh_addr,
			  text.sh_addr, segs, nsegs, &g);
	if (err) {
		err = err == -ENOMEM ? err : -ENOENT;
		goto out;
	}
	err = -ENOENT;
	if (gopcln__version(g) < GOPCLN_118)
		goto out;
	err = find_funcs(g, segs, nsegs, raw, out);
	if (err)
		goto out;
	build_version(elf, raw, size, out->version, sizeof(out->version));
	dwarf_offsets(elf, out);
out:
	gopcln__free(g);
	free(segs);
	elf_end(elf);
	return err;
}
