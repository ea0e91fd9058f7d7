/* capstone (the x86 disassembler) loaded the first time something disassembles rather than
 * at every galatop start: the library's 77,000 relocations cost a millisecond of each run.
 * Used by symbols/go_tls.c (Go's stack checks) and symbols/probe_spot.c (uprobe placement). */
#ifndef GALATOP_SYMBOLS_CAPSTONE_DL_H
#define GALATOP_SYMBOLS_CAPSTONE_DL_H

#include <capstone/capstone.h>
#include <stdbool.h>

struct capstone_fns {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	size_t (*disasm)(csh handle, const uint8_t *code, size_t size, uint64_t address,
			 size_t count, cs_insn **insn);
	void (*free)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
	bool (*insn_group)(csh handle, const cs_insn *insn, unsigned int group_id);
	cs_err (*regs_access)(csh handle, const cs_insn *insn, cs_regs regs_read,
			      uint8_t *regs_read_count, cs_regs regs_write,
			      uint8_t *regs_write_count);
};

/* capstone's functions (loaded once, thread-safe), or NULL when the library cannot be
 * loaded. */
const struct capstone_fns *capstone_dl(void);

#endif
