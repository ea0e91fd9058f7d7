/* Inside the perf.data reader: its state and the entry points shared by perfdata.c (the
 * file format: header, attributes, features, records, samples, samples seen before) and
 * perfdata_names.c (processes, comms, mappings and kernel symbols from the records, naming,
 * the perf script text). Not part of the API: include perfdata.h instead. */
#ifndef GALATOP_EXPORT_PERFDATA_INT_H
#define GALATOP_EXPORT_PERFDATA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "perfdata.h"

struct hmap;
struct unwinder;

#define PD_MAGIC "PERFILE2"
#define FILE_HEADER_SIZE 104 /* struct perf_file_header */
#define PIPE_HEADER_SIZE 16  /* struct perf_pipe_file_header */

/* Record types (linux/perf_event.h, perf's event.h). */
enum {
	REC_MMAP = 1,
	REC_LOST = 2,
	REC_COMM = 3,
	REC_EXIT = 4,
	REC_FORK = 7,
	REC_SAMPLE = 9,
	REC_MMAP2 = 10,
	REC_KSYMBOL = 17,
	REC_HEADER_ATTR = 64,
	REC_TRACING_DATA = 66,
	REC_BUILD_ID = 67,
	REC_AUXTRACE = 71,
	REC_EVENT_UPDATE = 78,
	REC_HEADER_FEATURE = 80,
	REC_COMPRESSED = 81,
};

enum {
	S_IDENTIFIER = 1 << 16,
	S_IP = 1 << 0,
	S_TID = 1 << 1,
	S_TIME = 1 << 2,
	S_ADDR = 1 << 3,
	S_READ = 1 << 4,
	S_CALLCHAIN = 1 << 5,
	S_ID = 1 << 6,
	S_CPU = 1 << 7,
	S_PERIOD = 1 << 8,
	S_STREAM_ID = 1 << 9,
	S_RAW = 1 << 10,
	S_BRANCH_STACK = 1 << 11,
	S_REGS_USER = 1 << 12,
	S_STACK_USER = 1 << 13,
};

enum { R_TOTAL_TIME_ENABLED = 1, R_TOTAL_TIME_RUNNING = 2, R_ID = 4, R_GROUP = 8, R_LOST = 16 };

#define MISC_CPUMODE_MASK 7
#define MISC_KERNEL 1
#define MISC_USER 2
#define MISC_COMM_EXEC (1 << 13)
#define MISC_MMAP_DATA (1 << 13)
#define MISC_MMAP_BUILD_ID (1 << 14)
#define MISC_BUILD_ID_SIZE (1 << 15)

#define CONTEXT_HV ((uint64_t)-32)
#define CONTEXT_KERNEL ((uint64_t)-128)
#define CONTEXT_USER ((uint64_t)-512)
#define CONTEXT_MAX ((uint64_t)-4095)

#define FEAT_BUILD_ID 2
#define FEAT_EVENT_DESC 12
#define FEAT_BITS 256

#define BRANCH_HW_INDEX (1ull << 17) /* branch_sample_type: a hw_idx before the entries */
#define REG_BP 6		     /* PERF_REG_X86_BP, SP, IP */
#define REG_SP 7
#define REG_IP 8
#define MAX_FRAMES 1024
#define PROT_EXEC_BIT 4

struct pd_attr {
	uint64_t sample_type, read_format, regs_mask, branch_type;
	bool sample_id_all;
	char name[128];
};

struct pd_id {
	uint64_t id;
	size_t attr;
};

struct pd_rec {
	uint64_t time;
	size_t off;
};

/* What perf's build-id table says a file (or the kernel) was. */
struct pd_bid {
	int pid;
	bool user; /* a user-space file (not the kernel or a module) */
	unsigned char id[20];
	size_t len;
	char *path;
};

/* A kernel symbol the file announced (BPF programs, trampolines): perf names them so. */
struct pd_ksym {
	uint64_t start, end;
	char *name;
};

struct pd_proc {
	uint32_t gen; /* bumped when its mappings change: cached names are then stale */
};

/* One named address, as perf script prints it: the strings belong to the symbol cache. */
struct pd_sym {
	const char *name, *module;
	uint32_t name_len, module_len;
	uint64_t pc; /* what perf prints: map-relative for files, the address otherwise (of the
		      * first process that mapped a file with a name there: the script keeps no
		      * address of a named frame) */
	uint64_t off;
	bool known;
	/* what its frame line adds to a stack, by perfscript__frame_mode: PD_FRAME_* and, for
	 * PD_FRAME_ADDS, the text at frame_at[mode] in pd->arena */
	uint8_t parsed[2];
	uint32_t frame_len[2];
	size_t frame_at[2];
};

enum { PD_FRAME_UNPARSED, PD_FRAME_ADDS, PD_FRAME_NOTHING };

/* A slot of the table of named addresses: (pid_gen, addr) -> pd->syms[idx]. Small, so that
 * the table of a busy machine's capture (tens of thousands of addresses) stays in cache. */
struct pd_sym_slot {
	uint64_t hash;		/* of (pid_gen, addr), never 0; 0: a free slot */
	uint64_t pid_gen, addr; /* pids are stored + 2, the kernel has the top bit */
	uint64_t idx;
};

/* A slot of the table of named file offsets: (file, offset) -> pd->syms[idx], the name of that
 * offset in any process that maps the file (a compiler run a hundred times names its
 * addresses once). The file is its path as mapped (interned by the symbol cache: one pointer
 * per path) and its (dev, inode). */
struct pd_file_slot {
	uint64_t hash; /* 0: a free slot */
	const char *path;
	uint64_t dev, inode, off;
	uint64_t idx;
};

/* A kernel address of the samples, named ahead of the replay. */
struct pd_kaddr {
	uint64_t hash; /* 0: a free slot */
	uint64_t addr;
};

/* A sample seen before: the same event, process image, comm and call chain collapse to the
 * same stack, which is passed on again without naming or parsing anything. */
struct pd_seen {
	uint64_t hash; /* 0: a free slot */
	const unsigned char *chain; /* its call chain, read in place in the file (NULL: none) */
	size_t key, stack;	    /* offsets into pd->arena: the rest of its key; its stack */
	uint32_t key_len, stack_len;
	uint64_t nchain;
	bool filtered; /* of an event the filter drops */
};

struct pd {
	const unsigned char *buf;
	size_t len;
	const char *label;
	char *err;
	size_t errlen;
	bool pipe;

	struct pd_attr *attrs;
	size_t nattrs, attrs_cap;
	struct pd_id *ids;
	size_t nids, ids_cap;
	bool ids_sorted;
	struct {
		uint64_t id;
		size_t attr; /* 1 + its attribute's index; 0: empty */
	} id_cache[4];	     /* ids looked up lately (a CPU's each), by id % 4 */

	struct pd_bid *bids;
	size_t nbids, bids_cap;

	struct pd_rec *recs;
	size_t nrecs, recs_cap;

	struct sym_cache *sc, *own_sc;
	struct unwinder *uw;
	struct hmap *comms; /* tid -> malloc'ed comm */
	struct hmap *procs; /* pid -> struct pd_proc */
	struct hmap *files; /* host path -> resolved path (or "" for none) */
	/* module of unknown frames -> 1 + the index in syms of one of them that stands for all:
	 * the line perf script prints for an unknown address differs by the address only,
	 * which the script drops without --addrs (call chains that end in junk addresses) */
	struct hmap *unknowns;
	const char *unk_module; /* the module unknowns last answered for, and its answer */
	void *unk_rep;
	struct pd_sym_slot *sym_slots;
	size_t nsym_slots, sym_slots_cap;
	struct pd_file_slot *file_slots;
	size_t nfile_slots, file_slots_cap;
	struct pd_sym *syms;
	size_t nsyms, syms_cap;

	struct perfscript *ps;
	const struct perfscript_opts *o;
	perfscript_stack_fn fn;
	void *ctx;
	char *text; /* perf script text waiting to be fed */
	size_t tlen, tcap;
	struct perfdata_stats st;

	struct pd_ksym *ksyms;
	size_t nksyms, ksyms_cap;
	uint32_t kgen; /* bumped when they change: cached kernel names are then stale */

	struct {
		int pid;
		struct pd_proc *proc; /* NULL: empty */
	} proc_cache[64];	      /* pd_proc_get's last answers, by pid % 64 */
	struct {
		int tid; /* 0: empty (the idle task's comm is never cached) */
		const char *comm;
	} comm_cache[64]; /* tid -> its comm in comms, by tid % 64 */

	struct pd_seen *seen;
	size_t nseen, seen_cap;
	char *arena; /* keys and stacks of seen samples */
	size_t alen, acap;
	uint64_t *upcs; /* the user stack unwound from a sample's stack copy */
	char *key;   /* the key being built */
	size_t klen, kcap;
	bool passed; /* the parser passed the sample on (else the filter dropped it) */
	bool kprefetch; /* kernel frames named ahead from perf's copy of kallsyms */
	struct pd_kaddr *kset; /* the samples' kernel addresses (with a cache of its own) */
	size_t nkset, kset_cap;
	size_t passed_at, passed_len; /* its stack, in the arena */
};

/* The parsed fields of a sample that matter here. */
struct pd_sample {
	uint64_t ip, time, period;
	const char *comm; /* its thread's, when it was taken */
	int pid, tid;
	uint32_t cpu;
	const unsigned char *chain;
	uint64_t nchain;
	const unsigned char *regs;
	uint64_t regs_abi;
	const unsigned char *stack;
	uint64_t stack_size, stack_dyn;
};

static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint16_t rd16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* perfdata.c */
/* Makes room in an open-addressing table (*tab, *cap entries of esize bytes, each starting
 * with its uint64_t hash, 0 for a free slot, placed at hash & (cap - 1) and after) for one
 * more entry beyond n: doubled (from first) when half full. 0 or -ENOMEM. */
int pd_table_room(void *tab, size_t *cap, size_t n, size_t esize, size_t first);
/* Copies a name from the file into dst[0..room): at most max bytes, up to a NUL, control
 * bytes and spaces as '_'. */
void pd_set_name(char *dst, size_t room, const unsigned char *s, size_t max);

/* perfdata_names.c. The record handlers return 0, 1 for a record too short for its fields
 * (counted bad, skipped) or -ENOMEM. */
/* pid's state, made on first sight, when pid is also made known to the symbol cache as a
 * process followed from the file alone. NULL on ENOMEM. */
struct pd_proc *pd_proc_get(struct pd *pd, int pid);
int pd_on_comm(struct pd *pd, const unsigned char *r, size_t size, uint16_t misc);
int pd_on_fork(struct pd *pd, const unsigned char *r, size_t size);
int pd_on_mmap(struct pd *pd, const unsigned char *r, size_t size, uint16_t misc, bool v2);
int pd_on_ksymbol(struct pd *pd, const unsigned char *r, size_t size);
/* Makes room for n more bytes of perf script text. 0 or -ENOMEM. */
int pd_text_reserve(struct pd *pd, size_t n);
/* Appends the callchain line perf script prints for addr of pid (kernel: a kernel address). */
int pd_frame(struct pd *pd, int pid, uint64_t addr, bool kernel);
/* Feeds the text made so far to the parser. 0, the callback's value or -ENOMEM. */
int pd_flush_text(struct pd *pd);
/* Copies s[0..n) to the end of pd->arena, at offset *at. 0 or -ENOMEM. */
int pd_arena_put(struct pd *pd, const void *s, size_t n, size_t *at);
/* Unwinds the sample's user stack from its registers and stack copy into pcs[0..max): how
 * many frames (0 when it cannot be unwound). */
size_t pd_unwind_user(struct pd *pd, const struct pd_attr *a, const struct pd_sample *s,
		      uint64_t *pcs, size_t max);
/* The comm of tid, or perf's name for a thread it never saw (":TID", in a static buffer). */
const char *pd_comm_of(struct pd *pd, int tid);
/* Appends the sample header line perf script prints for s. */
int pd_put_header(struct pd *pd, const struct pd_attr *a, const struct pd_sample *s);
/* Chooses the kallsyms of the recorded kernel: perf's copy of it (pd->kprefetch, read for the
 * samples' kernel addresses once they are listed) or the running kernel's. 0 or -ENOMEM. */
int pd_choose_kallsyms(struct pd *pd);

#endif
