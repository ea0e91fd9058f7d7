/* Where an entry uprobe goes in a function: see probe_spot.h. */
#include "probe_spot.h"

#include <stdbool.h>

#include "capstone_dl.h"

/* Length of the instruction at b if the kernel runs it for the probe (x86 uprobes emulate a
 * push of a register, jumps, calls, conditional jumps and nops), else 0: any other
 * instruction is single-stepped out of line, a debug trap that costs ten times the probe
 * here (40 us against 3 us on a 6.18 VM). */
static unsigned insn_emulated(const uint8_t *b)
{
	if ((b[0] >= 0x50 && b[0] <= 0x57) || b[0] == 0x90)
		return 1;
	if (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57)
		return 2;
	if ((b[0] >= 0x70 && b[0] <= 0x7f) || b[0] == 0xeb)
		return 2;
	if (b[0] == 0xe8 || b[0] == 0xe9)
		return 5;
	if (b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f)
		return 6;
	return 0;
}

/* Whether register r (any width) is the stack pointer, the instruction pointer or one of the
 * first nargs argument registers. */
static bool reg_kept(unsigned r, unsigned nargs)
{
	static const unsigned args[4][5] = {
		{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, X86_REG_RDI },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, X86_REG_RSI },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
		{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
	};

	if (r == X86_REG_RSP || r == X86_REG_ESP || r == X86_REG_SP || r == X86_REG_SPL ||
	    r == X86_REG_RIP || r == X86_REG_EIP || r == X86_REG_IP)
		return true;
	for (unsigned a = 0; a < nargs && a < 4; a++)
		for (int k = 0; k < 5; k++)
			if (r == args[a][k])
				return true;
	return false;
}

/* Whether the instruction can run before the probe without the probe noticing: no control
 * flow, no memory written, and neither the stack pointer nor an argument the probe reads
 * changed (it may read memory and set other registers and the flags). */
static bool insn_harmless(const struct capstone_fns *c, csh cs, const cs_insn *in,
			  unsigned nargs)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;
	const cs_x86 *x = &in->detail->x86;

	if (c->insn_group(cs, in, CS_GRP_JUMP) || c->insn_group(cs, in, CS_GRP_CALL) ||
	    c->insn_group(cs, in, CS_GRP_RET) || c->insn_group(cs, in, CS_GRP_INT) ||
	    c->insn_group(cs, in, CS_GRP_IRET) || x->prefix[0] != 0 ||
	    c->regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return false;
	for (uint8_t i = 0; i < nwr; i++)
		if (reg_kept(wr[i], nargs))
			return false;
	for (uint8_t i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && (x->operands[i].access & CS_AC_WRITE))
			return false;
	return true;
}

uint64_t probe_spot(const uint8_t *code, size_t len, unsigned nargs)
{
	const struct capstone_fns *c = capstone_dl();
	cs_insn *in = NULL;
	uint64_t at = 0;
	size_t n;
	csh cs;

	if (!c || c->open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return 0;
	c->option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = c->disasm(cs, code, len, 0, 16, &in);
	for (size_t i = 0; i < n; i++) {
		if (insn_emulated(in[i].bytes)) {
			at = in[i].address;
			break;
		}
		if (!insn_harmless(c, cs, &in[i], nargs))
			break;
	}
	if (n)
		c->free(in, n);
	c->close(&cs);
	return at;
}

